// libnvJitLink, opened on first use; its functions bound on their first call.
import type { LibrarySpec } from './loader';
import { lazyLibrary } from './binding';
import { lazyDeclarations } from './lazy-declarations';
import type { declarations as Declarations } from './nvjitlink.gen';
import { CUDA_MAJOR } from './cudart-lib';

export const nvjitlinkSpec: LibrarySpec = {
  label: 'libnvJitLink',
  envVar: 'CUDA_BINDINGS_NVJITLINK',
  linuxNames: [`libnvJitLink.so.${CUDA_MAJOR}`],
  windowsNames: [`nvJitLink_${CUDA_MAJOR}0_0.dll`],
  hint: `Install nvJitLink from the CUDA ${CUDA_MAJOR} toolkit (the libnvjitlink package)`,
  check(lib) {
    return checkVersionPair(lib, 'nvJitLinkVersion', 'nvJitLink', (major) => major === CUDA_MAJOR);
  },
};

/**
 * Reads `int fn(unsigned *major, unsigned *minor)` (nvJitLinkVersion, nvFatbinVersion, nvvmVersion)
 * and refuses a library whose major version `accept` does not take; returns major * 1000 + minor * 10.
 */
export function checkVersionPair(
  lib: import('koffi').LibraryHandle,
  fnName: string,
  what: string,
  accept: (major: number) => boolean,
  need = `CUDA ${CUDA_MAJOR}.x`,
): number {
  let version: ReturnType<typeof lib.func>;
  try {
    version = lib.func(`int ${fnName}(_Out_ int *major, _Out_ int *minor)`);
  } catch {
    throw new Error(`not a ${what} library (no ${fnName})`);
  }
  const major = new Int32Array(1);
  const minor = new Int32Array(1);
  const err = version(major, minor);
  if (err !== 0) throw new Error(`${fnName} failed with status ${err}`);
  if (!accept(major[0])) throw new Error(`${what} ${major[0]}.${minor[0]} found, but these bindings need ${need}`);
  return major[0] * 1000 + minor[0] * 10;
}

/** libnvJitLink's functions, bound on first call (the library opens on the first of them). */
export const libnvjitlink = lazyLibrary(
  nvjitlinkSpec,
  lazyDeclarations<typeof Declarations>(() => require('./nvjitlink.gen').declarations),
  {},
);
/** Which file is in use and its version (loads it if needed). */
export const nvjitlinkLibraryInfo = () => libnvjitlink.info();
