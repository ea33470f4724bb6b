// Errors of the core layer: a failed call throws instead of returning a status.
import * as cudart from '../runtime';
import * as cuda from '../driver';

/** A CUDA call failed: `code` is the status, `name` its C name, `fn` the call. */
export class CudaError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    readonly fn: string,
    explanation: string,
  ) {
    super(`${codeName}: ${explanation} (in ${fn})`);
    this.name = 'CudaError';
  }
}

/** CUDA C++ did not compile: `log` holds the compiler's log, `compiler` says which ran ('nvrtc' or 'nvcc'). */
export class CompileError extends Error {
  constructor(
    message: string,
    readonly compiler: 'nvrtc' | 'nvcc',
    readonly log: string,
  ) {
    super(message);
    this.name = 'CompileError';
  }
}

/** The first line of a compiler log that reports an error. */
export function firstError(log: string): string | undefined {
  return log.split('\n').find((l) => /error/.test(l))?.trim();
}

/** NVRTC could not compile: the message names the error, `log` holds the compiler's log. */
export class NvrtcError extends CompileError {
  constructor(
    readonly code: number,
    readonly codeName: string,
    log: string,
  ) {
    super(`${codeName}: ${firstError(log) ?? 'compilation failed'}`, 'nvrtc', log);
    this.name = 'NvrtcError';
  }
}

/** A CudaError for a runtime status. */
export function runtimeError(code: number, fn: string): CudaError {
  const [, name] = cudart.cudaGetErrorName(code);
  const [, text] = cudart.cudaGetErrorString(code);
  return new CudaError(code, name, fn, text);
}

/** A CudaError for a driver status. */
export function driverError(code: number, fn: string): CudaError {
  const [, name] = cuda.cuGetErrorName(code);
  const [, text] = cuda.cuGetErrorString(code);
  return new CudaError(code, name ?? `CUresult ${code}`, fn, text ?? 'unknown error');
}

type Unwrapped<T extends unknown[]> = T extends [] ? void : T extends [infer A] ? NonNullable<A> : { [K in keyof T]: NonNullable<T[K]> };

/**
 * Unwraps a runtime facade tuple: returns its one output (or its outputs as an array, or nothing),
 * or throws a CudaError for the status. `fn` names the call in the error.
 */
export function check<T extends unknown[]>(r: readonly [number, ...T], fn = 'a CUDA call'): Unwrapped<T> {
  if (r[0] !== 0) throw runtimeError(r[0], fn);
  // The common shapes without a copy: calls on hot paths go through here.
  if (r.length === 1) return undefined as Unwrapped<T>;
  if (r.length === 2) return r[1] as Unwrapped<T>;
  const out = r.slice(1);
  return (out.length === 0 ? undefined : out.length === 1 ? out[0] : out) as Unwrapped<T>;
}
