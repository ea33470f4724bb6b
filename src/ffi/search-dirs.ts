// Where a library that does not ship with the CUDA toolkit (NCCL) is found besides its soname: the
// distribution's library folders and the folder of the Python wheel that carries it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The distribution's library folders (the libnccl2 package's), then `wheelDir` (`nvidia/nccl/lib` of
 * the `nvidia-nccl-cu*` wheels) under every Python's site-packages and dist-packages of the active
 * virtual or conda environment, /usr/local, /usr and ~/.local.
 */
export function packageDirs(wheelDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
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
    for (const py of pys) for (const pkgs of ['site-packages', 'dist-packages']) dirs.push(path.join(lib, py, pkgs, wheelDir));
  }
  return dirs;
}
