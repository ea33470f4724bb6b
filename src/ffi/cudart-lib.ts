// libcudart, opened on first use and bound once per thread.
import type { LibraryHandle } from 'koffi';

type KoffiFunction = ReturnType<LibraryHandle['func']>;
import { openLibrary, type LibrarySpec, type LoadedLibrary } from './loader';
import { declarations, perThreadSymbols, type CudartFunctions } from './cudart';

/** The CUDA major version these bindings were generated for. */
export const CUDA_MAJOR = 13;

export const cudartSpec: LibrarySpec = {
  label: 'libcudart',
  envVar: 'CUDA_BINDINGS_CUDART',
  linuxNames: [`libcudart.so.${CUDA_MAJOR}`],
  windowsNames: [`cudart64_${CUDA_MAJOR}.dll`, `cudart64_${CUDA_MAJOR}0.dll`],
  check(lib) {
    let getVersion: KoffiFunction;
    try {
      getVersion = lib.func('int cudaRuntimeGetVersion(_Out_ int *v)');
    } catch {
      throw new Error('not a CUDA runtime library (no cudaRuntimeGetVersion)');
    }
    const v = new Int32Array(1);
    const err = getVersion(v);
    if (err !== 0) throw new Error(`cudaRuntimeGetVersion failed with status ${err}`);
    const major = Math.floor(v[0] / 1000);
    if (major !== CUDA_MAJOR) {
      throw new Error(`CUDA runtime ${major}.${(v[0] % 1000) / 10} found, but these bindings need CUDA ${CUDA_MAJOR}.x`);
    }
    return v[0];
  },
};

/** Whether the per-thread default stream variants (_ptsz/_ptds) are bound. */
export function perThreadDefaultStream(): boolean {
  return process.env.CUDA_BINDINGS_PER_THREAD_DEFAULT_STREAM === '1';
}

let loaded: LoadedLibrary | undefined;
let fns: CudartFunctions | undefined;

/** The bound functions of libcudart, loading it on the first call. */
export function cudart(): CudartFunctions {
  return fns ?? bind();
}

function bind(): CudartFunctions {
  loaded ??= openLibrary(cudartSpec);
  const pt = perThreadDefaultStream();
  const lib = loaded.lib;
  const out: Record<string, KoffiFunction> = {};
  for (const [name, [ret, params]] of Object.entries(declarations)) {
    const sym = (pt && perThreadSymbols[name as keyof typeof declarations]) || name;
    out[name] = lib.func(sym, ret, params);
  }
  fns = out as CudartFunctions;
  return fns;
}

/** Which libcudart file is in use and its version (loads it if needed). */
export function cudartLibraryInfo(): { file: string; path: string; version: number; perThreadDefaultStream: boolean } {
  loaded ??= openLibrary(cudartSpec);
  return { file: loaded.file, path: loaded.resolvedPath, version: loaded.version, perThreadDefaultStream: perThreadDefaultStream() };
}
