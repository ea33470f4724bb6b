// Driver API tuples unwrapped the core way: a failed status throws a CudaError naming the call.
import { driverError } from './errors';

/** @internal Throws a CudaError for a failed driver status; `fn` names the call. */
export function driverOk(r: readonly [number, ...unknown[]], fn: string): void {
  if (r[0] !== 0) throw driverError(r[0], fn);
}

/** @internal The one output of a driver call, or a CudaError for its status. */
export function driverGet<T>(r: readonly [number, T | null, ...unknown[]], fn: string): T {
  if (r[0] !== 0 || r[1] === null) throw driverError(r[0], fn);
  return r[1];
}
