// Finds and opens a CUDA library on first use: an override variable, CUDA_HOME/CUDA_PATH, the
// system search by soname, then the toolkit's default folder. Nothing is opened at import.
import koffi from 'koffi';
// koffi's types are an ES module's: a CommonJS consumer of these declarations can import them only so.
import type { LibraryHandle } from 'koffi' with { 'resolution-mode': 'import' };
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CudaBindingsError, isCudaLibrary } from './errors';

/** What to look for. */
export interface LibrarySpec {
  /** What users call it in messages: 'libcudart'. */
  label: string;
  /** Environment variable with an explicit path. */
  envVar: string;
  /** File names on Linux (soname first) and on Windows. */
  linuxNames: string[];
  windowsNames: string[];
  /** Folders of a toolkit besides lib64, lib and bin where the library sits: libnvvm's `nvvm/lib64`. */
  toolkitDirs?: string[];
  /** What to do when nothing loads: 'Install the NVIDIA driver', … */
  hint: string;
  /** Folders tried after the soname and the toolkit's folder (libraries outside the CUDA toolkit: NCCL). */
  extraDirs?: (env: NodeJS.ProcessEnv) => string[];
  /** Checks the opened library; returns its version, or throws with the reason to refuse it. */
  check: (lib: LibraryHandle, file: string) => number;
}

export interface LoadedLibrary {
  lib: LibraryHandle;
  /** The path or soname that was opened. */
  file: string;
  /** The path the dynamic linker resolved it to, where it can tell. */
  resolvedPath: string;
  version: number;
}

/** Raised when no candidate could be opened; lists every one and why it failed. `library` is the label when it is one of the eight. */
export class LibraryLoadError extends CudaBindingsError {
  /** Makes the error from the library's label, every candidate tried with its reason, and the spec's hint. */
  constructor(
    /** The library as messages name it: `'libcudart'`. */
    readonly label: string,
    /** Every candidate tried, in order, and why it was refused. */
    readonly attempts: { candidate: string; reason: string }[],
    spec?: Pick<LibrarySpec, 'envVar' | 'hint'>,
  ) {
    super(
      `${label}: could not load the library. Tried:\n` +
        attempts.map((a) => `  - ${a.candidate}: ${a.reason}`).join('\n') +
        (spec ? `\n${spec.hint}, or set ${spec.envVar} to the library's path.` : ''),
      { library: isCudaLibrary(label) ? label : undefined },
    );
    this.name = 'LibraryLoadError';
  }
}

/** The candidates, in the order they are tried. */
export function candidates(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env, platform = process.platform): string[] {
  const out: string[] = [];
  const names = platform === 'win32' ? spec.windowsNames : spec.linuxNames;
  if (env[spec.envVar]) out.push(env[spec.envVar]!);
  for (const v of ['CUDA_HOME', 'CUDA_PATH']) {
    const home = env[v];
    if (!home) continue;
    for (const sub of ['lib64', 'lib', 'bin', path.join('bin', 'x64'), ...(spec.toolkitDirs ?? [])])
      for (const n of names) out.push(path.join(home, sub, n));
  }
  out.push(...names);
  if (platform !== 'win32')
    for (const dir of ['lib64', ...(spec.toolkitDirs ?? [])]) for (const n of names) out.push(path.join('/usr/local/cuda', dir, n));
  for (const d of spec.extraDirs?.(env) ?? []) for (const n of names) out.push(path.join(d, n));
  return [...new Set(out)];
}

export function openLibrary(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env): LoadedLibrary {
  const attempts: { candidate: string; reason: string }[] = [];
  for (const c of candidates(spec, env)) {
    const isPath = c.includes('/') || c.includes('\\');
    if (isPath && !fs.existsSync(c)) {
      attempts.push({ candidate: c, reason: 'no such file' });
      continue;
    }
    let lib: LibraryHandle;
    try {
      lib = koffi.load(c);
    } catch (e) {
      attempts.push({ candidate: c, reason: firstLine((e as Error).message) });
      continue;
    }
    let version: number;
    try {
      version = spec.check(lib, c);
    } catch (e) {
      attempts.push({ candidate: c, reason: (e as Error).message });
      try {
        lib.unload();
      } catch {
        /* the library stays mapped; nothing else to do */
      }
      continue;
    }
    pinLoaded(c);
    return { lib, file: c, resolvedPath: resolvedPath(c), version };
  }
  throw new LibraryLoadError(spec.label, attempts, spec);
}

const RTLD_NOW = 2;
const RTLD_NOLOAD = 4;
const RTLD_NODELETE = 0x1000;
let dlopen: ((file: string, flags: number) => unknown) | null | undefined;

/**
 * Keeps an accepted library mapped until the process ends. CUDA libraries run threads of their own
 * (the one that calls host functions, among others); koffi closes its libraries while the process
 * exits, and a library unmapped under its own running thread crashes the exit (a fake libcudart's
 * host-function thread did, about one exit in five). RTLD_NODELETE on the already loaded object
 * (RTLD_NOLOAD) makes the dynamic linker ignore that close. Linux only; elsewhere nothing to do.
 */
function pinLoaded(file: string): void {
  if (process.platform !== 'linux') return;
  if (dlopen === undefined) {
    dlopen = null;
    for (const libc of ['libc.so.6', 'libdl.so.2']) {
      try {
        dlopen = koffi.load(libc).func('void *dlopen(const char *file, int flags)') as (file: string, flags: number) => unknown;
        break;
      } catch {
        /* try the next */
      }
    }
  }
  dlopen?.(file, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}

/** Where the dynamic linker found a library, read from /proc/self/maps on Linux. */
function resolvedPath(file: string): string {
  if (path.isAbsolute(file)) return fs.realpathSync(file);
  try {
    // The soname (libnvidia-ml.so.1) often names a file with a longer version (libnvidia-ml.so.580.95.05).
    const stem = path.basename(file).replace(/\.so(\.\d+)*$/, '.so');
    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    const m = maps
      .split('\n')
      .map((l) => l.slice(l.indexOf('/')))
      .find((p) => p.includes('/') && path.basename(p).startsWith(stem));
    return m ?? file;
  } catch {
    return file;
  }
}
