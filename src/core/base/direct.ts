// Runtime functions that core's hot paths call themselves (issue #37). Their arguments are what core
// has already checked (an open object's handle, a size it checked, host memory it measured), so the
// tuple facade's checks and its result array would be work done twice: the koffi function, bound on
// first use as the facade binds its own, and a status check that throws what check() throws.
import { libcudart } from '../../ffi/cudart-lib.gen';
import type { KoffiFunction } from '../../ffi/binding';
import { runtimeError } from './errors';

/**
 * A libcudart function by its C name, bound on the first call of get(). An object with a method
 * rather than a closure per function: closures made by one factory share V8's "many closures"
 * feedback, which Turbofan never inlines, so each hot call paid a call of the getter.
 */
export class DirectFunction {
  private f: KoffiFunction | undefined = undefined;

  constructor(private readonly name: Parameters<typeof libcudart.bind>[0]) {}

  /** The koffi function, bound on the first call. */
  get(): KoffiFunction {
    return this.f ?? this.bind();
  }

  /** get()'s first call, apart (get() is then small enough for V8 to inline into every hot path). */
  private bind(): KoffiFunction {
    return (this.f = libcudart.bind(this.name));
  }
}

/** A libcudart function by its C name, bound on first use (`f.get()(…)`). */
export function direct(name: Parameters<typeof libcudart.bind>[0]): DirectFunction {
  return new DirectFunction(name);
}

/** Throws the CudaError of runtime status `err` (named by `fn`, as check() names it) unless it is cudaSuccess. */
export function checkStatus(err: unknown, fn: string): void {
  if (err !== 0) throw runtimeError(err as number, fn);
}
