// libnccl, opened on first use; its functions bound on their first call.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LibrarySpec } from './loader';
import { lazyLibrary, type KoffiFunction } from './binding';
import type * as Declarations from './nccl.gen';
import { lazyDeclarations } from './lazy-declarations';

/** The NCCL major version and the oldest minor accepted (bindings from nccl.h 2.28; a function an older library lacks fails when called). */
export const NCCL_MAJOR = 2;
export const NCCL_MIN_MINOR = 19;

/**
 * Where NCCL lives outside the CUDA toolkit: the distribution's library folders (the
 * libnccl2 package) and the `nvidia-nccl-cu*` Python wheels' `nvidia/nccl/lib`.
 */
export function ncclSearchDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = [
    '/lib/x86_64-linux-gnu',
    '/usr/lib/x86_64-linux-gnu',
    '/lib/aarch64-linux-gnu',
    '/usr/lib/aarch64-linux-gnu',
    '/usr/lib64',
    '/usr/local/lib',
  ];
  const prefixes = [env.VIRTUAL_ENV, env.CONDA_PREFIX, '/usr/local', '/usr', path.join(os.homedir(), '.local')].filter(Boolean) as string[];
  for (const prefix of prefixes) {
    const lib = path.join(prefix, 'lib');
    let pys: string[] = [];
    try {
      pys = fs
        .readdirSync(lib)
        .filter((d) => /^python3(\.\d+)?$/.test(d))
        .sort();
    } catch {
      continue;
    }
    for (const py of pys)
      for (const pkgs of ['site-packages', 'dist-packages']) dirs.push(path.join(lib, py, pkgs, 'nvidia', 'nccl', 'lib'));
  }
  return dirs;
}

export const ncclSpec: LibrarySpec = {
  label: 'libnccl',
  envVar: 'CUDA_BINDINGS_NCCL',
  linuxNames: [`libnccl.so.${NCCL_MAJOR}`],
  windowsNames: ['nccl.dll'],
  hint: 'Install NCCL 2 (2.19 or newer) (the libnccl2 package, or pip install nvidia-nccl-cu13)',
  extraDirs: ncclSearchDirs,
  check(lib) {
    let getVersion: KoffiFunction;
    try {
      getVersion = lib.func('int ncclGetVersion(_Out_ int *version)');
    } catch {
      throw new Error('not an NCCL library (no ncclGetVersion)');
    }
    const v = new Int32Array(1);
    const err = getVersion(v);
    if (err !== 0) throw new Error(`ncclGetVersion failed with status ${err}`);
    // NCCL_VERSION: major * 10000 + minor * 100 + patch since 2.9.
    const major = Math.floor(v[0] / 10000);
    const minor = Math.floor(v[0] / 100) % 100;
    if (major !== NCCL_MAJOR || minor < NCCL_MIN_MINOR)
      throw new Error(`NCCL ${major}.${minor}.${v[0] % 100} found, but these bindings need NCCL ${NCCL_MAJOR}.${NCCL_MIN_MINOR} or newer`);
    return v[0];
  },
};

// The koffi declarations (src/ffi/nccl.gen.ts) are read on the first call: importing cuda-bindings, whose
// `nccl` namespace and core's Communicator are always there, costs nothing of NCCL's.
const lazyDecls = lazyDeclarations<typeof Declarations.declarations>(() => (require('./nccl.gen') as typeof Declarations).declarations);

/** libnccl's functions, bound on first call (the library opens on the first of them). */
export const libnccl = lazyLibrary(ncclSpec, lazyDecls, {});
/** Which file is in use and its version (loads it if needed). */
export const ncclLibraryInfo = () => libnccl.info();
