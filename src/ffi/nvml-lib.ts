// libnvidia-ml (NVML), installed with the NVIDIA driver: opened on first use, and its generated
// declarations (src/ffi/nvml.gen.ts, 375 functions and their struct types) read only then, so that
// importing the package costs nothing for NVML.
import { lazyLibrary, splitSmallStructs, type KoffiFunction, type LazyLibrary, type LibraryInfo } from './binding';
import type { LibrarySpec } from './loader';
import type { declarations as Declarations } from './nvml.gen';

type Decls = typeof Declarations;

export const nvmlSpec: LibrarySpec = {
  label: 'libnvidia-ml',
  envVar: 'CUDA_BINDINGS_NVML',
  linuxNames: ['libnvidia-ml.so.1'],
  windowsNames: ['nvml.dll'],
  hint: 'Install the NVIDIA driver (NVML comes with it)',
  check(lib) {
    // Every NVML since the 2011 API has nvmlInit_v2; its version is read after nvmlInit.
    for (const sym of ['nvmlInit_v2', 'nvmlShutdown', 'nvmlErrorString']) {
      try {
        lib.func(`int ${sym}()`);
      } catch {
        throw new Error(`not an NVML library (no ${sym})`);
      }
    }
    return 0;
  },
};

let lib: LazyLibrary<Decls> | undefined;
const open = (): LazyLibrary<Decls> => (lib ??= lazyLibrary(nvmlSpec, (require('./nvml.gen') as { declarations: Decls }).declarations, {}));

/** libnvidia-ml's functions, bound on first call (the library opens on the first of them). */
export const libnvml: LazyLibrary<Decls> = {
  splitSmallStructs,
  bind: (name: keyof Decls & string): KoffiFunction => open().bind(name),
  info: (): LibraryInfo => open().info(),
};

/** Which libnvidia-ml file is in use (loads it if needed). */
export const nvmlLibraryInfo = (): LibraryInfo => libnvml.info();
