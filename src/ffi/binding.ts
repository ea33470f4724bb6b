// Opens a library on first use and binds its generated declarations once.
import type { LibraryHandle, TypeObject } from 'koffi';
import { openLibrary, type LibrarySpec, type LoadedLibrary } from './loader';

type KoffiFunction = ReturnType<LibraryHandle['func']>;
type Decl = readonly [symbol: string, result: string | TypeObject, params: (string | TypeObject)[]];

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

/** A library whose functions are bound on the first call of `fns()`. */
export function lazyLibrary<D extends Record<string, Decl>>(
  spec: LibrarySpec,
  declarations: D,
  perThreadSymbols: Partial<Record<keyof D, string>>,
): { fns: () => { [K in keyof D]: KoffiFunction }; info: () => LibraryInfo } {
  let loaded: LoadedLibrary | undefined;
  let fns: { [K in keyof D]: KoffiFunction } | undefined;
  const load = () => (loaded ??= openLibrary(spec));
  const bind = () => {
    const lib = load().lib;
    const pt = perThreadDefaultStream();
    const out: Record<string, KoffiFunction> = {};
    for (const [name, [symbol, ret, params]] of Object.entries(declarations)) {
      out[name] = lib.func((pt && perThreadSymbols[name]) || symbol, ret, params);
    }
    return (fns = out as { [K in keyof D]: KoffiFunction });
  };
  return {
    fns: () => fns ?? bind(),
    info: () => {
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
