// Finds and opens a CUDA library on first use, in this order: its variable; a copy already loaded in
// the process; the active Python environment's wheels, then a conda prefix; the system's search by
// soname; CUDA_HOME/CUDA_PATH; the toolkit's default folders. Nothing is opened at import.
import koffi from 'koffi';
// koffi's types are an ES module's: a CommonJS consumer of these declarations can import them only so.
import type { LibraryHandle } from 'koffi' with { 'resolution-mode': 'import' };
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CudaBindingsError, isCudaLibrary } from './errors';
import { defaultToolkits, isFolderOf, pythonPrefixes, sitePackages, wheelDirOn } from './search-dirs';
import { VersionRefused } from './versions';

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
  /**
   * The folders of site-packages where NVIDIA's Python wheels put the library, as on Linux
   * (`nvidia/cu13/lib`, then the per-package `nvidia/cuda_runtime/lib`). Absent for the driver's
   * libraries (libcuda, NVML), which come with the driver only: no wheel, conda package or toolkit has them.
   */
  wheelDirs?: string[];
  /** What to do when nothing loads: 'Install the NVIDIA driver', … */
  hint: string;
  /** Checks the opened library; returns its version, or throws with the reason to refuse it. */
  check: (lib: LibraryHandle, file: string) => number;
}

/**
 * How a library was found: `env` (its variable), `loaded` (already in the process), `site-packages`
 * (a Python wheel), `conda` (`$CONDA_PREFIX/lib`), `system` (the dynamic linker's search by soname),
 * `cuda-home` (`$CUDA_HOME`/`$CUDA_PATH`), `toolkit` (`/usr/local/cuda*`).
 */
export type FoundVia = 'env' | 'loaded' | 'site-packages' | 'conda' | 'system' | 'cuda-home' | 'toolkit';

/** One place to try: a path, or a soname for `loaded` and `system`; `skipped` says why a step had nothing to try. */
export interface Candidate {
  file: string;
  via: FoundVia;
  skipped?: string;
}

/** A candidate that did not load, and why. */
export interface LoadAttempt {
  /** The path or soname tried (for a skipped step, what it would have searched). */
  candidate: string;
  /** The step of the search it belongs to (absent in an error made by hand). */
  via?: FoundVia;
  /** Why it was refused: `no such file`, the dynamic linker's message, or the version check's. */
  reason: string;
  /** The version found where the file was the library looked for but of a version refused. */
  version?: number;
}

export interface LoadedLibrary {
  lib: LibraryHandle;
  /** The path or soname that was opened. */
  file: string;
  /** The path the dynamic linker resolved it to, where it can tell. */
  resolvedPath: string;
  version: number;
  /** Which step of the search found it. */
  via: FoundVia;
}

/** How each step names itself in the error: `CUDA_HOME` rather than `cuda-home`. */
const STEP_NAMES: Record<FoundVia, string> = {
  env: 'variable',
  loaded: 'already loaded',
  'site-packages': 'Python wheel',
  conda: 'conda',
  system: 'system search',
  'cuda-home': 'CUDA_HOME/CUDA_PATH',
  toolkit: 'toolkit',
};

/** Raised when no candidate could be opened; lists every one and why it failed. `library` is the label when it is one of the eight. */
export class LibraryLoadError extends CudaBindingsError {
  /** Makes the error from the library's label, every candidate tried with its reason, and the spec's hint. */
  constructor(
    /** The library as messages name it: `'libcudart'`. */
    readonly label: string,
    /** Every candidate tried, in order, and why it was refused. */
    readonly attempts: LoadAttempt[],
    spec?: Pick<LibrarySpec, 'envVar' | 'hint'>,
    /** Whether the variable named the one file tried. */
    overridden = false,
  ) {
    super(
      `${label}: could not load the library. Tried:\n` +
        attempts.map((a) => `  - ${a.via ? `${STEP_NAMES[a.via]}: ` : ''}${a.candidate}: ${a.reason}`).join('\n') +
        (!spec
          ? ''
          : overridden
            ? `\n${spec.envVar} names this file: point it at the library, or unset it to search the usual places.`
            : `\n${spec.hint}, or set ${spec.envVar} to the library's path.`),
      { library: isCudaLibrary(label) ? label : undefined },
    );
    this.name = 'LibraryLoadError';
  }
}

/** Whether a site-packages folder holds any of NVIDIA's wheels (they all install under `nvidia/`). */
function hasNvidiaWheels(site: string): boolean {
  try {
    return fs.statSync(path.join(site, 'nvidia')).isDirectory();
  } catch {
    return false;
  }
}

/** Folders under a root where the library may sit on this platform: `lib64`, `lib` (or `bin`) and the record's own. */
function foldersUnder(root: string, spec: LibrarySpec, platform: NodeJS.Platform, base: string[]): string[] {
  return [...base, ...(spec.toolkitDirs ?? []).filter((d) => isFolderOf(d, platform))].map((d) => path.join(root, d));
}

/** The search, in order, on `platform` with `env`: each candidate and how it would be found. */
export function searchPlan(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env, platform = process.platform): Candidate[] {
  if (env[spec.envVar]) return [{ file: env[spec.envVar]!, via: 'env' }];
  const names = platform === 'win32' ? spec.windowsNames : spec.linuxNames;
  const out: Candidate[] = [];
  const inDirs = (dirs: string[], via: FoundVia) => {
    for (const d of dirs) for (const n of names) out.push({ file: path.join(d, n), via });
  };
  if (platform === 'linux') for (const n of names) out.push({ file: n, via: 'loaded' });
  const toolkitLib = platform === 'win32' ? ['bin', path.join('bin', 'x64')] : ['lib64', 'lib'];
  if (spec.wheelDirs) {
    const prefixes = pythonPrefixes(env, platform);
    const sites = prefixes.flatMap((p) => sitePackages(p, platform));
    for (const site of sites) {
      if (hasNvidiaWheels(site))
        inDirs(
          spec.wheelDirs.map((w) => path.join(site, wheelDirOn(w, platform))),
          'site-packages',
        );
      else out.push({ file: site, via: 'site-packages', skipped: 'no NVIDIA wheels (no nvidia/ folder)' });
    }
    if (!sites.length) {
      const where =
        env.VIRTUAL_ENV || env.CONDA_PREFIX ? `no site-packages under ${prefixes.join(', ')}` : 'no Python with site-packages found';
      out.push({ file: spec.wheelDirs.join(', '), via: 'site-packages', skipped: where });
    }
    if (env.CONDA_PREFIX) {
      const root = platform === 'win32' ? path.join(env.CONDA_PREFIX, 'Library') : env.CONDA_PREFIX;
      inDirs(foldersUnder(root, spec, platform, [platform === 'win32' ? 'bin' : 'lib']), 'conda');
    }
  }
  for (const n of names) out.push({ file: n, via: 'system' });
  if (!spec.wheelDirs) return out;
  const homes = [...new Set(['CUDA_HOME', 'CUDA_PATH'].map((v) => env[v]).filter((h): h is string => !!h))];
  inDirs(
    homes.flatMap((h) => foldersUnder(h, spec, platform, toolkitLib)),
    'cuda-home',
  );
  const toolkits = defaultToolkits(platform);
  if (platform !== 'win32') {
    if (toolkits.length)
      inDirs(
        toolkits.flatMap((t) => foldersUnder(t, spec, platform, ['lib64'])),
        'toolkit',
      );
    else out.push({ file: '/usr/local/cuda*', via: 'toolkit', skipped: 'none installed' });
  }
  return out;
}

/** The files and sonames tried, in order (searchPlan without the steps that had nothing to try). */
export function candidates(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env, platform = process.platform): string[] {
  return [
    ...new Set(
      searchPlan(spec, env, platform)
        .filter((c) => !c.skipped)
        .map((c) => c.file),
    ),
  ];
}

/** Opens the first candidate of the search that is the library and of a version these bindings use; throws LibraryLoadError listing every attempt. */
export function openLibrary(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env): LoadedLibrary {
  const attempts: LoadAttempt[] = [];
  const seen = new Set<string>();
  for (const c of searchPlan(spec, env)) {
    if (c.skipped) {
      attempts.push({ candidate: c.file, via: c.via, reason: c.skipped });
      continue;
    }
    if (seen.has(`${c.via}:${c.file}`)) continue;
    seen.add(`${c.via}:${c.file}`);
    const loaded = tryCandidate(spec, c, attempts);
    if (loaded) return loaded;
  }
  throw new LibraryLoadError(spec.label, attempts, spec, !!env[spec.envVar]);
}

/** Opens and checks one candidate; records why it failed in `attempts`. */
function tryCandidate(spec: LibrarySpec, c: Candidate, attempts: LoadAttempt[]): LoadedLibrary | undefined {
  const fail = (reason: string, version?: number) => {
    attempts.push({ candidate: c.file, via: c.via, reason, ...(version === undefined ? {} : { version }) });
    return undefined;
  };
  const isPath = c.file.includes('/') || c.file.includes('\\');
  if (isPath && !fs.existsSync(c.file)) return fail('no such file');
  if (c.via === 'loaded' && !isLoaded(c.file)) return fail('not loaded in this process');
  let lib: LibraryHandle;
  try {
    lib = koffi.load(c.file);
  } catch (e) {
    return fail(firstLine((e as Error).message).replace(/^Failed to load shared library: /, ''));
  }
  let version: number;
  try {
    version = spec.check(lib, c.file);
  } catch (e) {
    if (c.via !== 'loaded')
      try {
        lib.unload();
      } catch {
        /* the library stays mapped; nothing else to do */
      }
    return fail((e as Error).message, e instanceof VersionRefused ? e.found : undefined);
  }
  pinLoaded(c.file);
  return { lib, file: c.file, resolvedPath: resolvedPath(c.file), version, via: c.via };
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
  libdl()?.(file, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/** Whether a library of this soname is already loaded in the process (dlopen with RTLD_NOLOAD; Linux only). */
function isLoaded(soname: string): boolean {
  const open = libdl();
  return !!open && open(soname, RTLD_NOW | RTLD_NOLOAD) !== null;
}

/** dlopen from the C library, or null where there is none (not Linux). */
function libdl(): ((file: string, flags: number) => unknown) | null {
  if (process.platform !== 'linux') return null;
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
  return dlopen;
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}

/** Where the dynamic linker found a library, read from /proc/self/maps on Linux. */
function resolvedPath(file: string): string {
  if (path.isAbsolute(file)) return fs.realpathSync(file);
  try {
    // The soname (libnvidia-ml.so.1) often names a file with a longer version (libnvidia-ml.so.580.95.05).
    const name = path.basename(file);
    const stem = name.replace(/\.so(\.\d+)*$/, '.so');
    const mapped = fs
      .readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((l) => l.includes('/'))
      .map((l) => l.slice(l.indexOf('/')));
    // The soname's own file (libcudart.so.13 → libcudart.so.13.0.96) before any of the same stem.
    const by = (ok: (base: string) => boolean) => mapped.find((p) => ok(path.basename(p)));
    return by((b) => b === name || b.startsWith(`${name}.`)) ?? by((b) => b.startsWith(stem)) ?? file;
  } catch {
    return file;
  }
}
