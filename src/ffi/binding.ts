// Opens a library on first use and binds its generated declarations once.
// koffi's types are an ES module's: a CommonJS consumer of these declarations can import them only so.
import type { LibraryHandle, TypeObject } from 'koffi' with { 'resolution-mode': 'import' };
import { openLibrary, type FoundVia, type LibrarySpec, type LoadedLibrary } from './loader';
import { currentVersion } from './versions';

export type KoffiFunction = ReturnType<LibraryHandle['func']>;
type Decl = readonly [symbol: string, result: string | TypeObject, params: (string | TypeObject)[], split?: string[]];

/** Which library file is loaded, where it resolved, and its version: what libraryInfo() returns. */
export interface LibraryInfo {
  /** The candidate that loaded: a path or a soname. */
  file: string;
  /** Where the dynamic linker found it. */
  path: string;
  /** How the search found it: its variable (`env`), already `loaded`, a Python wheel (`site-packages`), `conda`, the `system` search, `cuda-home` or the `toolkit`'s default folder. */
  foundVia: FoundVia;
  /**
   * The version its check read: CUDA's numbering (13000 for 13.0), NCCL's (22809 for 2.28.9), or 0 for
   * a library recognised by its symbols whose version is not known yet.
   */
  version: number;
  /** Whether the per-thread default stream variants (`_ptsz`/`_ptds`) are bound (`CUDA_BINDINGS_PER_THREAD_DEFAULT_STREAM=1`). */
  perThreadDefaultStream: boolean;
}

/** Whether the per-thread default stream variants (_ptsz/_ptds) are bound. */
export function perThreadDefaultStream(): boolean {
  return process.env.CUDA_BINDINGS_PER_THREAD_DEFAULT_STREAM === '1';
}

/**
 * Whether small structs of integers passed by value can be passed as their 8-byte words: true
 * where the C calling convention passes them in integer registers word by word (x86-64 System V,
 * AArch64), false on Windows, which passes a 12-byte struct by reference.
 */
export const splitSmallStructs = process.platform !== 'win32' && (process.arch === 'x64' || process.arch === 'arm64');

/** A library opened on first use, whose functions are bound one by one on their first call. */
export interface LazyLibrary<D> {
  /** Whether bound functions take small integer structs as their 8-byte words (see splitSmallStructs). */
  readonly splitSmallStructs: boolean;
  /**
   * The koffi function for `name`; one whose symbol the library lacks throws when called. The
   * `void *` parameters at the indexes `addresses` (of the declaration as bound) are bound as `uint64_t` (see addressParams).
   */
  bind(name: keyof D & string, addresses?: readonly number[]): KoffiFunction;
  info(): LibraryInfo;
}

/**
 * A declaration's parameters with the `void *` ones at the indexes `at` as `uint64_t`, for a caller
 * that passes them addresses as numbers (exact below 2^53; never null, a bigint, a typed array or a
 * string): the same register on every 64-bit platform (CUDA has no other), and koffi converts a
 * number for an integer parameter in a few ns less than an address for a pointer (bench/README.md,
 * "Two versions of core in one run"). Throws if a parameter at `at` is not a `void *`.
 */
export function addressParams(params: readonly (string | TypeObject)[], at: readonly number[]): (string | TypeObject)[] {
  for (const i of at) if (params[i] !== 'void *') throw new Error(`addressParams: parameter ${i} is not a void * (${String(params[i])})`);
  return params.map((p, i) => (at.includes(i) ? 'uint64_t' : p));
}

/** What a library's generated declarations module (src/ffi/<lib>.gen.ts) exports. */
export interface Declarations<D> {
  declarations: D;
  /** The symbol each function is bound to when the per-thread default stream is chosen. */
  perThreadSymbols: Partial<Record<keyof D, string>>;
}

/** What a library's loader adds to its spec. */
export interface LazyLibraryOptions {
  /**
   * A function `int fn(int *version)` that gives the version once the library's own init has run
   * (NVML's): info() reads it on each call, and says the version the check returned where it fails.
   */
  versionAfterInit?: string;
}

/**
 * A library opened on the first bind, with its declarations: `load` reads its generated declarations
 * module (a `require`), so that a program that never calls the library pays nothing for them.
 */
export function lazyLibrary<D extends Record<string, Decl>>(
  spec: LibrarySpec,
  load: () => Declarations<D>,
  options: LazyLibraryOptions = {},
): LazyLibrary<D> {
  let loaded: LoadedLibrary | undefined;
  let decls: Declarations<D> | undefined;
  const open = () => (loaded ??= openLibrary(spec));
  return {
    splitSmallStructs,
    bind(name, addresses) {
      const { lib, resolvedPath } = open();
      const { declarations, perThreadSymbols } = (decls ??= load());
      const [symbol, ret, structParams, split] = declarations[name];
      const declared = splitSmallStructs && split ? split : structParams;
      const params = addresses ? addressParams(declared, addresses) : declared;
      const sym = (perThreadDefaultStream() && perThreadSymbols[name]) || symbol;
      try {
        return lib.func(sym, ret, params);
      } catch (e) {
        // An older library that lacks a newer function: the rest of the API still works.
        const why = (e as Error).message;
        const missing = (() => {
          throw new Error(`${name}: ${spec.label} at ${resolvedPath} does not export ${sym} (${why})`);
        }) as unknown as KoffiFunction;
        return missing;
      }
    },
    info() {
      const l = open();
      const later = options.versionAfterInit === undefined ? undefined : currentVersion(l.lib, options.versionAfterInit);
      return {
        file: l.file,
        path: l.resolvedPath,
        foundVia: l.via,
        version: later ?? l.version,
        perThreadDefaultStream: perThreadDefaultStream(),
      };
    },
  };
}
