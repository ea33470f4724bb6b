// libcudart, opened on first use and bound once per thread.
import type { LibrarySpec } from './loader';
import { lazyLibrary, checkMajor } from './binding';
import { declarations, perThreadSymbols } from './cudart.gen';
import { CUDART_VERSION } from './constants.gen';

/** The CUDA major version these bindings were generated for (from the headers' CUDART_VERSION). */
export const CUDA_MAJOR = Math.floor(CUDART_VERSION / 1000);

export const cudartSpec: LibrarySpec = {
  label: 'libcudart',
  envVar: 'CUDA_BINDINGS_CUDART',
  linuxNames: [`libcudart.so.${CUDA_MAJOR}`],
  windowsNames: [`cudart64_${CUDA_MAJOR}.dll`, `cudart64_${CUDA_MAJOR}0.dll`],
  hint: `Install the CUDA ${CUDA_MAJOR} runtime (the toolkit or the cuda-cudart package)`,
  check: (lib) => checkMajor(lib, 'cudaRuntimeGetVersion', 'CUDA runtime', CUDA_MAJOR),
};

/** libcudart's functions, bound on first call (the library opens on the first of them). */
export const libcudart = lazyLibrary(cudartSpec, declarations, perThreadSymbols);
/** Which file is in use and its version (loads it if needed). */
export const cudartLibraryInfo = () => libcudart.info();
