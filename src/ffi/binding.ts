// Opens a library on first use and binds its generated declarations once.
import type { LibraryHandle, TypeObject } from 'koffi';
import { openLibrary, type LibrarySpec, type LoadedLibrary } from './loader';

export type KoffiFunction = ReturnType<LibraryHandle['func']>;
type Decl = readonly [symbol: string, result: string | TypeObject, params: (string | TypeObject)[], split?: string[]];

/** Which library file is loaded, where it resolved, and its version: what libraryInfo() returns. */
export interface LibraryInfo {
  /** The candidate that loaded: a path or a soname. */
  file: string;
  /** Where the dynamic linker found it. */
  path: string;
  version: number;
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
  /** The koffi function for `name`; one whose symbol the library lacks throws when called. */
  bind(name: keyof D & string): KoffiFunction;
  info(): LibraryInfo;
}

export function lazyLibrary<D extends Record<string, Decl>>(
  spec: LibrarySpec,
  declarations: D,
  perThreadSymbols: Partial<Record<keyof D, string>>,
): LazyLibrary<D> {
  let loaded: LoadedLibrary | undefined;
  const load = () => (loaded ??= openLibrary(spec));
  return {
    splitSmallStructs,
    bind(name) {
      const { lib, resolvedPath } = load();
      const [symbol, ret, structParams, split] = declarations[name];
      const params = splitSmallStructs && split ? split : structParams;
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
      const l = load();
      return { file: l.file, path: l.resolvedPath, version: l.version, perThreadDefaultStream: perThreadDefaultStream() };
    },
  };
}

/** Reads a CUDA version through `int fn(int *)` and refuses another major (or, with `orNewer`, an older one). */
export function checkMajor(lib: LibraryHandle, fnName: string, what: string, major: number, orNewer = false): number {
  let getVersion: KoffiFunction;
  try {
    getVersion = lib.func(`int ${fnName}(_Out_ int *v)`);
  } catch {
    throw new Error(`not a ${what} library (no ${fnName})`);
  }
  const v = new Int32Array(1);
  const err = getVersion(v);
  if (err !== 0) throw new Error(`${fnName} failed with status ${err}`);
  const found = Math.floor(v[0] / 1000);
  if (orNewer ? found < major : found !== major) {
    throw new Error(`${what} ${found}.${(v[0] % 1000) / 10} found, but these bindings need CUDA ${major}.x${orNewer ? ' or newer' : ''}`);
  }
  return v[0];
}
