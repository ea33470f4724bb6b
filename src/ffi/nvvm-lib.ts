// libnvvm, opened on first use; its functions bound on their first call. The toolkit keeps it in
// nvvm/lib64 (nvvm/bin on Windows), where the system search does not look.
import type { LibrarySpec } from './loader';
import { lazyLibrary } from './binding';
import { lazyDeclarations } from './lazy-declarations';
import type { declarations as Declarations } from './nvvm.gen';
import { checkVersionPair } from './nvjitlink-lib';

/** The soname of the libNVVM that CUDA 13 ships (its API version 2.x). */
export const NVVM_SONAME_MAJOR = 4;

export const nvvmSpec: LibrarySpec = {
  label: 'libnvvm',
  envVar: 'CUDA_BINDINGS_NVVM',
  linuxNames: [`libnvvm.so.${NVVM_SONAME_MAJOR}`],
  windowsNames: [`nvvm64_${NVVM_SONAME_MAJOR}0_0.dll`],
  toolkitDirs: ['nvvm/lib64', 'nvvm/bin', 'nvvm/bin/x64'],
  hint: 'Install libNVVM from the CUDA 13 toolkit (the cuda-nvvm package)',
  check(lib) {
    return checkVersionPair(lib, 'nvvmVersion', 'libNVVM', (major) => major >= 2, 'libNVVM 2.x or newer');
  },
};

/** libnvvm's functions, bound on first call (the library opens on the first of them). */
export const libnvvm = lazyLibrary(
  nvvmSpec,
  lazyDeclarations<typeof Declarations>(() => require('./nvvm.gen').declarations),
  {},
);
/** Which file is in use and its version (loads it if needed). */
export const nvvmLibraryInfo = () => libnvvm.info();
