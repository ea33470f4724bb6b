// libcuda (the driver), opened on first use and bound once per thread.
import type { LibrarySpec } from './loader';
import { lazyLibrary, checkMajor } from './binding';
import { lazyDeclarations } from './lazy-declarations';
import type * as Declarations from './cuda.gen';
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

// The declarations (src/ffi/cuda.gen.ts, 110 kB) are read on the first bind: the runtime facade and core's
// host functions import this module, and a program that never calls the driver pays nothing for them.
/** libcuda's functions, bound on first call (the library opens on the first of them). */
export const libcuda = lazyLibrary(
  cudaSpec,
  lazyDeclarations<typeof Declarations.declarations>(() => (require('./cuda.gen') as typeof Declarations).declarations),
  lazyDeclarations<typeof Declarations.perThreadSymbols>(() => (require('./cuda.gen') as typeof Declarations).perThreadSymbols),
);
/** Which file is in use and its version (loads it if needed). */
export const cudaLibraryInfo = () => libcuda.info();
