// The one family of this package's errors. Its base lives here, in the lowest layer, because the
// loader's LibraryLoadError is one of them; core's errors (CudaError, NvmlError, NcclError, …) and
// the CLI's extend it, so a user catches every failure of the package with one instanceof.

/** The eight libraries, as the loader names them (each LibrarySpec's `label`). */
export const LIBRARIES = ['libcudart', 'libcuda', 'libnvrtc', 'libnvJitLink', 'libnvvm', 'libnvfatbin', 'libnccl', 'libnvidia-ml'] as const;

/** One of the eight libraries: `'libcudart'`, `'libcuda'`, `'libnvrtc'`, `'libnvJitLink'`, `'libnvvm'`, `'libnvfatbin'`, `'libnccl'`, `'libnvidia-ml'`. */
export type CudaLibrary = (typeof LIBRARIES)[number];

/** Whether a name is one of the eight libraries' labels. */
export function isCudaLibrary(name: string): name is CudaLibrary {
  return (LIBRARIES as readonly string[]).includes(name);
}

/** What an error knows of its failure; an absent field stays absent on the error. */
export interface CudaBindingsErrorDetails {
  /** The status as a number, or null where the failure has none. */
  code?: number | null;
  /** The status's C name. */
  codeName?: string;
  /** The call (or method) that failed. */
  fn?: string;
  /** The library that failed or gave the status. */
  library?: CudaLibrary;
}

/**
 * The base of every error this package throws for a failure of its own (a CUDA status, a library
 * that did not load, a compile or link that failed, a bad command line): catch it once.
 * (Bad arguments stay TypeError and RangeError, as JavaScript's own.)
 *
 * @example
 * ```ts
 * try {
 *   work();
 * } catch (e) {
 *   if (e instanceof CudaBindingsError) console.error(e.library, e.codeName, e.message);
 *   else throw e;
 * }
 * ```
 */
export class CudaBindingsError extends Error {
  /** The status as a number (a cudaError_t, CUresult, nvrtcResult, nvJitLinkResult, nvvmResult, ncclResult_t or nvmlReturn_t), where there is one. */
  declare readonly code?: number | null;
  /** The status's C name, e.g. `'cudaErrorMemoryAllocation'`, where there is one. */
  declare readonly codeName?: string;
  /** The C call (or method) that failed, e.g. `'cudaMalloc'`, where known. */
  declare readonly fn?: string;
  /** Which of the eight libraries failed or gave the status, where known. */
  declare readonly library?: CudaLibrary;

  /** Makes the error: `message` as it reads, `details` the fields it knows (an absent one stays absent). */
  constructor(message: string, details: CudaBindingsErrorDetails = {}) {
    super(message);
    // Own properties only for what is known, so an error without a status shows no empty fields.
    if (details.code !== undefined) this.code = details.code;
    if (details.codeName !== undefined) this.codeName = details.codeName;
    if (details.fn !== undefined) this.fn = details.fn;
    if (details.library !== undefined) this.library = details.library;
    this.name = 'CudaBindingsError';
  }
}

/**
 * A facade call returned a failing status to a check helper (`cudart.checkCudaErrors`,
 * `nvml.checkCudaErrors`, …). The message reads `CODE_NAME: explanation (in fn)`, e.g.
 * `cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version (in cudaGetDeviceCount)`.
 *
 * @example
 * ```ts
 * try {
 *   checkCudaErrors(cudart.cudaMalloc(2 ** 50));
 * } catch (e) {
 *   if (e instanceof StatusError && e.codeName === 'cudaErrorMemoryAllocation') console.log('too big');
 *   else throw e;
 * }
 * ```
 */
export class StatusError extends CudaBindingsError {
  /** The status as a number (a cudaError_t, CUresult, nvrtcResult, nvJitLinkResult, nvvmResult, nvFatbinResult, ncclResult_t or nvmlReturn_t). */
  declare readonly code: number;
  /** The status's C name, e.g. `'cudaErrorMemoryAllocation'` or `'NVML_ERROR_UNINITIALIZED'`. */
  declare readonly codeName: string;
  /** The C call that returned the status, e.g. `'cudaMalloc'`. */
  declare readonly fn: string;

  /** Makes the error; `explanation` is the library's text for the status (cudaGetErrorString's, nvmlErrorString's, …), `library` its label (`library` is set where it is one of the eight). */
  constructor(code: number, codeName: string, fn: string, explanation: string, library: string) {
    super(statusMessage(codeName, explanation, fn), { code, codeName, fn, library: isCudaLibrary(library) ? library : undefined });
    this.name = 'StatusError';
  }
}

/** The message of a failed status: `codeName: explanation (in fn)` (CudaError's, NvmlError's, NcclError's, …). */
export function statusMessage(codeName: string, explanation: string, fn: string): string {
  return `${codeName}: ${explanation} (in ${fn})`;
}

/**
 * A library's text for a status, or `fallback` when the library cannot give it (it did not load, or
 * lacks the function): an error being built never hides the failure it reports behind another.
 */
export function statusText(lookup: () => string | null | undefined, fallback: string): string {
  try {
    return lookup() ?? fallback;
  } catch {
    return fallback;
  }
}
