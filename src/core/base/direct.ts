// Runtime functions that core's hot paths call themselves (issue #37). Their arguments are what core
// has already checked (an open object's handle, a size it checked, host memory it measured), so the
// tuple facade's checks and its result array would be work done twice: the koffi function, bound on
// first use as the facade binds its own, and a status check that throws what check() throws.
import { libcudart } from '../../ffi/cudart-lib.gen';
import type { KoffiFunction } from '../../ffi/binding';
import { runtimeError } from './errors';

/** A libcudart function by its C name, bound on the first call of the getter returned. */
export function direct(name: Parameters<typeof libcudart.bind>[0]): () => KoffiFunction {
  let f: KoffiFunction | undefined;
  return () => (f ??= libcudart.bind(name));
}

/** Throws the CudaError of runtime status `err` (named by `fn`, as check() names it) unless it is cudaSuccess. */
export function checkStatus(err: unknown, fn: string): void {
  if (err !== 0) throw runtimeError(err as number, fn);
}
