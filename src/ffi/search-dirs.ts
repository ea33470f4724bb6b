// The folders the loader searches besides a variable and the system's own search: the active Python
// environment's site-packages (where NVIDIA's wheels put their libraries), a conda prefix, CUDA_HOME
// and the toolkit's default folders. Only folders that exist on this machine are named, so that the
// error of a library that is nowhere lists what was really tried.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A folder that exists (following links). */
function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The Python environments to look in: `$VIRTUAL_ENV` and `$CONDA_PREFIX` (both when both are set);
 * with neither, the user's (`~/.local`, where `pip install --user` writes) and the system's
 * (`/usr/local`, `/usr`).
 */
export function pythonPrefixes(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] {
  const active = [env.VIRTUAL_ENV, env.CONDA_PREFIX].filter((p): p is string => !!p);
  if (active.length) return [...new Set(active)];
  if (platform === 'win32') return [];
  return [path.join(env.HOME || os.homedir(), '.local'), '/usr/local', '/usr'];
}

/**
 * The site-packages (and Debian's dist-packages) folders of a Python prefix that exist: every
 * `lib/python3.X/` on Linux, `Lib/site-packages` on Windows.
 */
export function sitePackages(prefix: string, platform: NodeJS.Platform = process.platform): string[] {
  if (platform === 'win32') return [path.join(prefix, 'Lib', 'site-packages')].filter(isDir);
  const lib = path.join(prefix, 'lib');
  let pythons: string[];
  try {
    pythons = fs
      .readdirSync(lib)
      .filter((d) => /^python3(\.\d+)?$/.test(d))
      .sort(newestFirst);
  } catch {
    return [];
  }
  return pythons.flatMap((py) => ['site-packages', 'dist-packages'].map((d) => path.join(lib, py, d))).filter(isDir);
}

/**
 * A wheel's library folder as the record gives it for Linux (`nvidia/cu13/lib`, `nvidia/nccl/lib`),
 * on this platform: on Windows NVIDIA's CUDA 13 wheels keep DLLs in `nvidia/cu13/bin/x86_64`, the
 * others in `bin` where Linux has `lib` (`nvidia/cuda_nvcc/nvvm/bin`).
 */
export function wheelDirOn(dir: string, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'win32') return dir;
  if (/^nvidia\/cu\d+\/lib$/.test(dir)) return dir.replace(/lib$/, 'bin/x86_64');
  return dir.replace(/lib(64)?$/, 'bin');
}

/** The toolkit's default installs: /usr/local/cuda, then /usr/local/cuda-X.Y newest first (those that exist; none on Windows). */
export function defaultToolkits(platform: NodeJS.Platform = process.platform, root = '/usr/local'): string[] {
  if (platform === 'win32') return [];
  let names: string[];
  try {
    names = fs.readdirSync(root).filter((d) => /^cuda(-\d+(\.\d+)*)?$/.test(d));
  } catch {
    return [];
  }
  // /usr/local/cuda is most often a link to one of the others: each install once, under its first name.
  const real = new Set<string>();
  return names
    .sort((a, b) => (a === 'cuda' ? -1 : b === 'cuda' ? 1 : newestFirst(a, b)))
    .map((d) => path.join(root, d))
    .filter((d) => {
      if (!isDir(d)) return false;
      const r = fs.realpathSync(d);
      return !real.has(r) && !!real.add(r);
    });
}

/** Sorts names with versions in them newest first: python3.12 before python3.9, cuda-13.0 before cuda-12.4. */
function newestFirst(a: string, b: string): number {
  const v = (s: string) => (s.match(/\d+/g) ?? []).map(Number);
  const [x, y] = [v(a), v(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? -1) !== (y[i] ?? -1)) return (y[i] ?? -1) - (x[i] ?? -1);
  return 0;
}

/** Whether a toolkit folder of a record (`nvvm/lib64`, `nvvm/bin/x64`) is one of this platform's: Windows keeps DLLs in `bin`. */
export function isFolderOf(dir: string, platform: NodeJS.Platform = process.platform): boolean {
  return dir.split('/').includes('bin') === (platform === 'win32');
}
