// libnvfatbin, opened on first use; its functions bound on their first call.
import type { LibrarySpec } from './loader';
import { lazyLibrary } from './binding';
import { lazyDeclarations } from './lazy-declarations';
import type { declarations as Declarations } from './nvfatbin.gen';
import { CUDA_MAJOR } from './cudart-lib';
import { checkVersionPair } from './nvjitlink-lib';

export const nvfatbinSpec: LibrarySpec = {
  label: 'libnvfatbin',
  envVar: 'CUDA_BINDINGS_NVFATBIN',
  linuxNames: [`libnvfatbin.so.${CUDA_MAJOR}`],
  windowsNames: [`nvfatbin_${CUDA_MAJOR}0_0.dll`],
  hint: `Install nvFatbin from the CUDA ${CUDA_MAJOR} toolkit (the libnvfatbin package)`,
  check(lib) {
    return checkVersionPair(lib, 'nvFatbinVersion', 'nvFatbin', (major) => major === CUDA_MAJOR);
  },
};

/** libnvfatbin's functions, bound on first call (the library opens on the first of them). */
export const libnvfatbin = lazyLibrary(
  nvfatbinSpec,
  lazyDeclarations<typeof Declarations>(() => require('./nvfatbin.gen').declarations),
  {},
);
/** Which file is in use and its version (loads it if needed). */
export const nvfatbinLibraryInfo = () => libnvfatbin.info();
