// libnvrtc, opened on first use; its functions bound on their first call.
import type { LibrarySpec } from './loader';
import { lazyLibrary } from './binding';
import { lazyDeclarations } from './lazy-declarations';
import type * as Declarations from './nvrtc.gen';
import { CUDA_MAJOR } from './cudart-lib';

export const nvrtcSpec: LibrarySpec = {
  label: 'libnvrtc',
  envVar: 'CUDA_BINDINGS_NVRTC',
  linuxNames: [`libnvrtc.so.${CUDA_MAJOR}`],
  windowsNames: [`nvrtc64_${CUDA_MAJOR}0_0.dll`],
  hint: `Install NVRTC from the CUDA ${CUDA_MAJOR} toolkit (the cuda-nvrtc package)`,
  check(lib) {
    let version: ReturnType<typeof lib.func>;
    try {
      version = lib.func('int nvrtcVersion(_Out_ int *major, _Out_ int *minor)');
    } catch {
      throw new Error('not an NVRTC library (no nvrtcVersion)');
    }
    const major = new Int32Array(1);
    const minor = new Int32Array(1);
    const err = version(major, minor);
    if (err !== 0) throw new Error(`nvrtcVersion failed with status ${err}`);
    if (major[0] !== CUDA_MAJOR) throw new Error(`NVRTC ${major[0]}.${minor[0]} found, but these bindings need CUDA ${CUDA_MAJOR}.x`);
    return major[0] * 1000 + minor[0] * 10;
  },
};

/** libnvrtc's functions, bound on first call (the library opens on the first of them). */
export const libnvrtc = lazyLibrary(
  nvrtcSpec,
  lazyDeclarations<typeof Declarations.declarations>(() => (require('./nvrtc.gen') as typeof Declarations).declarations),
  lazyDeclarations<typeof Declarations.perThreadSymbols>(() => (require('./nvrtc.gen') as typeof Declarations).perThreadSymbols),
);
/** Which file is in use and its version (loads it if needed). */
export const nvrtcLibraryInfo = () => libnvrtc.info();
