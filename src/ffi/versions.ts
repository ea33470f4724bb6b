// The versions the loaders demand, and how an opened library's version is read and checked. Every
// generated loader (src/ffi/<lib>-lib.gen.ts) takes these from here, so that no library's loader
// reaches into another's for them.
// koffi's types are an ES module's: a CommonJS consumer of these declarations can import them only so.
import type { LibraryHandle } from 'koffi' with { 'resolution-mode': 'import' };
import { CUDART_VERSION } from './constants.gen';

/** The CUDA major version these bindings were generated for (from the headers' CUDART_VERSION). */
export const CUDA_MAJOR = Math.floor(CUDART_VERSION / 1000);

/**
 * How a library is recognised and its version read, as its record (tools/codegen/libraries.ts) says.
 * `what` names it in messages (`not a CUDA runtime library`; `article: 'an'` gives `not an NVRTC library`).
 */
export type VersionCheck =
  /** `int fn(int *version)`, CUDA's numbering (major * 1000 + minor * 10): CUDA_MAJOR, or newer with `orNewer`. */
  | { kind: 'cudaVersion'; fn: string; what: string; article?: 'an'; orNewer?: boolean }
  /** `int fn(int *major, int *minor)`: CUDA_MAJOR, or with `atLeast` a numbering of its own from that major on. */
  | { kind: 'majorMinor'; fn: string; what: string; article?: 'an'; atLeast?: number }
  /** `int fn(int *version)`, NCCL's numbering (major * 10000 + minor * 100 + patch): `major`, from `minMinor` on. */
  | { kind: 'ncclVersion'; fn: string; what: string; article?: 'an'; major: number; minMinor: number }
  /** No version at load: the library is recognised by these symbols (its version may be read later). */
  | { kind: 'symbols'; symbols: string[]; what: string; article?: 'an' };

type KoffiFunction = ReturnType<LibraryHandle['func']>;

/** A library that is the one looked for but of a version these bindings cannot use; `found` is its version in the check's numbering. */
export class VersionRefused extends Error {
  /** Makes the error: why the version is refused, and the version found. */
  constructor(
    message: string,
    /** The version the library reported (CUDA's major * 1000 + minor * 10, NCCL's major * 10000 + minor * 100 + patch). */
    readonly found: number,
  ) {
    super(message);
    this.name = 'VersionRefused';
  }
}
type Check<K extends VersionCheck['kind']> = (lib: LibraryHandle, c: Extract<VersionCheck, { kind: K }>) => number;

/** `fn` of the library, with its C prototype; refuses a library that lacks it. */
function versionFunction(lib: LibraryHandle, c: VersionCheck & { fn: string }, params: string): KoffiFunction {
  try {
    return lib.func(`int ${c.fn}(${params})`);
  } catch {
    throw new Error(`not ${c.article ?? 'a'} ${c.what} library (no ${c.fn})`);
  }
}

/** Calls `fn` with `outs` (each an Int32Array of one) and throws on a status other than 0. */
function call(fn: KoffiFunction, name: string, ...outs: Int32Array[]): void {
  const err = fn(...outs);
  if (err !== 0) throw new Error(`${name} failed with status ${err}`);
}

const CHECKS: { [K in VersionCheck['kind']]: Check<K> } = {
  cudaVersion(lib, c) {
    const v = new Int32Array(1);
    call(versionFunction(lib, c, '_Out_ int *v'), c.fn, v);
    const found = Math.floor(v[0] / 1000);
    if (c.orNewer ? found < CUDA_MAJOR : found !== CUDA_MAJOR)
      throw new VersionRefused(
        `${c.what} ${found}.${(v[0] % 1000) / 10} found, but these bindings need CUDA ${CUDA_MAJOR}.x${c.orNewer ? ' or newer' : ''}`,
        v[0],
      );
    return v[0];
  },
  majorMinor(lib, c) {
    const major = new Int32Array(1);
    const minor = new Int32Array(1);
    call(versionFunction(lib, c, '_Out_ int *major, _Out_ int *minor'), c.fn, major, minor);
    const ok = c.atLeast === undefined ? major[0] === CUDA_MAJOR : major[0] >= c.atLeast;
    const need = c.atLeast === undefined ? `CUDA ${CUDA_MAJOR}.x` : `${c.what} ${c.atLeast}.x or newer`;
    if (!ok)
      throw new VersionRefused(`${c.what} ${major[0]}.${minor[0]} found, but these bindings need ${need}`, major[0] * 1000 + minor[0] * 10);
    return major[0] * 1000 + minor[0] * 10;
  },
  ncclVersion(lib, c) {
    const v = new Int32Array(1);
    call(versionFunction(lib, c, '_Out_ int *version'), c.fn, v);
    const major = Math.floor(v[0] / 10000);
    const minor = Math.floor(v[0] / 100) % 100;
    if (major !== c.major || minor < c.minMinor)
      throw new VersionRefused(
        `${c.what} ${major}.${minor}.${v[0] % 100} found, but these bindings need ${c.what} ${c.major}.${c.minMinor} or newer`,
        v[0],
      );
    return v[0];
  },
  symbols(lib, c) {
    for (const sym of c.symbols) {
      try {
        lib.func(`int ${sym}()`);
      } catch {
        throw new Error(`not ${c.article ?? 'a'} ${c.what} library (no ${sym})`);
      }
    }
    return 0;
  },
};

/** Checks an opened library as `check` says; returns its version, or throws with the reason to refuse it. */
export function checkVersion(lib: LibraryHandle, check: VersionCheck): number {
  return (CHECKS[check.kind] as Check<VersionCheck['kind']>)(lib, check);
}

/**
 * The version `int fn(int *version)` reports now, or undefined when it fails: for a library that says
 * its version only after its own init (NVML's nvmlSystemGetCudaDriverVersion_v2, after nvmlInit).
 */
export function currentVersion(lib: LibraryHandle, fn: string): number | undefined {
  try {
    const v = new Int32Array(1);
    return lib.func(`int ${fn}(_Out_ int *version)`)(v) === 0 ? v[0] : undefined;
  } catch {
    return undefined;
  }
}
