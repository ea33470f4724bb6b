// libcuda (the driver), opened on first use and bound once per thread.
import type { LibrarySpec } from './loader';
import { lazyLibrary, checkMajor } from './binding';
import { declarations, perThreadSymbols } from './cuda.gen';
import { CUDA_MAJOR } from './cudart-lib';

export const cudaSpec: LibrarySpec = {
  label: 'libcuda',
  envVar: 'CUDA_BINDINGS_CUDA',
  linuxNames: ['libcuda.so.1'],
  windowsNames: ['nvcuda.dll'],
  // The driver's version is the newest CUDA it runs: 13.x or newer runs CUDA 13 code.
  hint: 'Install the NVIDIA driver (libcuda ships with it)',
  check: (lib) => checkMajor(lib, 'cuDriverGetVersion', 'CUDA driver', CUDA_MAJOR, true),
};

/** libcuda's functions, bound on first call (the library opens on the first of them). */
export const libcuda = lazyLibrary(cudaSpec, declarations, perThreadSymbols);
/** Which file is in use and its version (loads it if needed). */
export const cudaLibraryInfo = () => libcuda.info();
