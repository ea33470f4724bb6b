// Errors of the core layer: a failed call throws instead of returning a status.
import * as cudart from '../../runtime';
import type * as cuda from '../../driver';
import type * as nvrtc from '../../nvrtc';
import type { OkOutputs } from '../../ffi/result';
import { CudaBindingsError, statusMessage, statusText, type CudaLibrary } from '../../ffi/errors';

export { CudaBindingsError, type CudaBindingsErrorDetails, type CudaLibrary } from '../../ffi/errors';

// The driver and NVRTC facades are read only to name a failed status: loaded then, not with core
// (together they were most of `require('cuda-bindings/core')`'s start-up, issue #37).
let driverApi: typeof cuda | undefined;
let nvrtcApi: typeof nvrtc | undefined;
const driver = (): typeof cuda => (driverApi ??= require('../../driver') as typeof cuda);
const nvrtcFacade = (): typeof nvrtc => (nvrtcApi ??= require('../../nvrtc') as typeof nvrtc);

/**
 * A CUDA call failed. The message reads `CODE_NAME: explanation (in fn)`, e.g.
 * `cudaErrorMemoryAllocation: out of memory (in cudaMalloc)`.
 *
 * Thrown by every core method that reaches the runtime or driver, and by {@link check},
 * {@link checkDriver} and {@link checkNvrtc}. An error from work queued earlier (a kernel that
 * faulted) surfaces at the next call that reports it, often a synchronize.
 *
 * @example
 * ```ts
 * try {
 *   Device.get(0).allocate(2 ** 50);
 * } catch (e) {
 *   if (e instanceof CudaError && e.codeName === 'cudaErrorMemoryAllocation') console.log('too big');
 *   else throw e;
 * }
 * ```
 */
export class CudaError extends CudaBindingsError {
  /** The status as a number: a cudaError_t, CUresult or nvrtcResult value. */
  declare readonly code: number;
  /** The status's C name, e.g. `'cudaErrorInvalidValue'` or `'CUDA_ERROR_NOT_FOUND'`. */
  declare readonly codeName: string;
  /** The C call (or core method) that failed, e.g. `'cudaMalloc'`. */
  declare readonly fn: string;

  /** Makes the error; `explanation` is the library's text for the status (cudaGetErrorString); `library` the one that gave it, where known. */
  constructor(code: number, codeName: string, fn: string, explanation: string, library?: CudaLibrary) {
    super(statusMessage(codeName, explanation, fn), { code, codeName, fn, library });
    this.name = 'CudaError';
  }
}

/** CUDA C++ (or NVVM IR) did not compile: `log` holds the compiler's log, `compiler` says which ran ('nvrtc', 'nvcc' or 'nvvm'). */
export class CompileError extends CudaBindingsError {
  /** Makes the error; `message` is its first line (usually the first error of the log). */
  constructor(
    message: string,
    /** Which compiler ran: NVRTC, nvcc (a Program with `{ compiler: 'nvcc' }`) or libNVVM. */
    readonly compiler: 'nvrtc' | 'nvcc' | 'nvvm',
    /** The compiler's whole log, warnings included, as it printed it. */
    readonly log: string,
  ) {
    super(message, { library: compiler === 'nvrtc' ? 'libnvrtc' : compiler === 'nvvm' ? 'libnvvm' : undefined });
    this.name = 'CompileError';
  }
}

/** The first line of a compiler log that reports an error. */
export function firstError(log: string): string | undefined {
  return log
    .split('\n')
    .find((l) => /error/.test(l))
    ?.trim();
}

/** NVRTC could not compile: the message names the error, `log` holds the compiler's log. */
export class NvrtcError extends CompileError {
  /** Makes the error from NVRTC's status and log; the message is the log's first error line. */
  constructor(
    /** The nvrtcResult value, e.g. 6 (NVRTC_ERROR_COMPILATION). */
    readonly code: number,
    /** The nvrtcResult's C name, e.g. `'NVRTC_ERROR_COMPILATION'`. */
    readonly codeName: string,
    log: string,
  ) {
    super(`${codeName}: ${firstError(log) ?? 'compilation failed'}`, 'nvrtc', log);
    this.name = 'NvrtcError';
  }
}

/** A CudaError for a runtime status (named by cudaGetErrorName, or by the enum when libcudart cannot say). */
export function runtimeError(code: number, fn: string): CudaError {
  const name = statusText(() => cudart.cudaGetErrorName(code)[1], cudart.cudaError_t[code] ?? `cudaError_t ${code}`);
  const text = statusText(() => cudart.cudaGetErrorString(code)[1], 'unknown error');
  return new CudaError(code, name, fn, text, 'libcudart');
}

/** A CudaError for a driver status (CUresult), named by the driver's enum. */
export function driverError(code: number, fn: string): CudaError {
  const cuda = driver();
  const name = cuda.CUresult[code] ?? `CUresult ${code}`;
  return new CudaError(
    code,
    name,
    fn,
    statusText(() => cuda.cuGetErrorString(code)[1], 'unknown error'),
    'libcuda',
  );
}

/** A CudaError for an NVRTC status (nvrtcResult), named by NVRTC's enum. */
export function nvrtcError(code: number, fn: string): CudaError {
  const nvrtc = nvrtcFacade();
  const name = nvrtc.nvrtcResult[code] ?? `nvrtcResult ${code}`;
  return new CudaError(
    code,
    name,
    fn,
    statusText(() => nvrtc.nvrtcGetErrorString(code)[1], 'unknown error'),
    'libnvrtc',
  );
}

type Unwrapped<T extends unknown[]> = T extends [] ? void : T extends [infer A] ? NonNullable<A> : { [K in keyof T]: NonNullable<T[K]> };

/** The outputs of a successful tuple: its one output, its outputs as an array, or nothing. */
function outputs<T extends unknown[]>(r: readonly [number, ...unknown[]]): Unwrapped<T> {
  // The common shapes without a copy: calls on hot paths go through here.
  if (r.length === 1) return undefined as Unwrapped<T>;
  if (r.length === 2) return r[1] as Unwrapped<T>;
  const out = r.slice(1);
  return (out.length === 0 ? undefined : out.length === 1 ? out[0] : out) as Unwrapped<T>;
}

/** A link failed: the message names the status and the first error; `errorLog` and `infoLog` hold the linker's logs. */
export class LinkError extends CudaBindingsError {
  /** The status: an nvJitLinkResult or a CUresult, as `backend` says. */
  declare readonly code: number;
  /** The status's C name, e.g. `'NVJITLINK_ERROR_PTX_COMPILE'` or `'CUDA_ERROR_INVALID_IMAGE'`. */
  declare readonly codeName: string;
  /** The linker call that failed, e.g. `'nvJitLinkComplete'`. */
  declare readonly fn: string;

  /** Makes the error; `fn` names the linker call that failed (e.g. `'nvJitLinkComplete'`). */
  constructor(
    code: number,
    codeName: string,
    /** Which linker ran: 'nvJitLink' or 'cuLink' (the driver's). */
    readonly backend: 'nvJitLink' | 'cuLink',
    /** The linker's error log (undefined symbols, mismatched architectures, …); may be empty. */
    readonly errorLog: string,
    /** The linker's information log (register use, …); may be empty. */
    readonly infoLog: string,
    fn: string,
  ) {
    super(statusMessage(codeName, firstError(errorLog) ?? errorLog.split('\n').find((l) => l.trim()) ?? 'link failed', fn), {
      code,
      codeName,
      fn,
      library: backend === 'nvJitLink' ? 'libnvJitLink' : 'libcuda',
    });
    this.name = 'LinkError';
  }
}

/** libNVVM could not compile or verify NVVM IR: the message names the status, `log` holds NVVM's log. */
export class NvvmError extends CompileError {
  /** Makes the error; `fn` names the libNVVM call that failed (e.g. `'nvvmCompileProgram'`). */
  constructor(
    /** The nvvmResult value. */
    readonly code: number,
    /** The nvvmResult's C name, e.g. `'NVVM_ERROR_COMPILATION'`. */
    readonly codeName: string,
    /** The libNVVM call that failed, e.g. `'nvvmCompileProgram'`. */
    readonly fn: string,
    log: string,
  ) {
    super(
      statusMessage(
        codeName,
        log
          .split('\n')
          .find((l) => l.trim())
          ?.trim() ?? `${fn} failed`,
        fn,
      ),
      'nvvm',
      log,
    );
    this.name = 'NvvmError';
  }
}

/**
 * Unwraps a runtime facade tuple (`[cudaError_t, ...outputs]`): returns its one output (or its
 * outputs as an array, or nothing), or throws a CudaError named by cudaError_t. `fn` names the
 * call in the error. Driver tuples go to checkDriver, NVRTC tuples to checkNvrtc (a status of
 * another enum does not compile here).
 *
 * @example
 * ```ts
 * const stream = check(cudart.cudaStreamCreate(), 'cudaStreamCreate'); // a cudaStream_t, or throws
 * const [free, total] = check(cudart.cudaMemGetInfo(), 'cudaMemGetInfo');
 * ```
 */
export function check<R extends readonly [cudart.cudaError_t, ...unknown[]]>(r: R, fn = 'a CUDA call'): Unwrapped<OkOutputs<R>> {
  if (r[0] !== 0) throw runtimeError(r[0], fn);
  return outputs(r);
}

/** check() for a driver facade tuple (`[CUresult, ...outputs]`): the error is named by CUresult. */
export function checkDriver<R extends readonly [cuda.CUresult, ...unknown[]]>(r: R, fn = 'a CUDA driver call'): Unwrapped<OkOutputs<R>> {
  if (r[0] !== 0) throw driverError(r[0], fn);
  return outputs(r);
}

/** check() for an NVRTC facade tuple (`[nvrtcResult, ...outputs]`): the error is named by nvrtcResult. */
export function checkNvrtc<R extends readonly [nvrtc.nvrtcResult, ...unknown[]]>(r: R, fn = 'an NVRTC call'): Unwrapped<OkOutputs<R>> {
  if (r[0] !== 0) throw nvrtcError(r[0], fn);
  return outputs(r);
}
