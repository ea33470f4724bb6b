// Runtime functions that core's hot paths call themselves (issue #37). Their arguments are what core
// has already checked (an open object's handle, a size it checked, host memory it measured), so the
// tuple facade's checks and its result array would be work done twice: the koffi function, bound on
// first use as the facade binds its own, and a status check that throws what check() throws.
import { libcudart } from '../../ffi/cudart-lib.gen';
import type { KoffiFunction } from '../../ffi/binding';
import { runtimeError } from './errors';
import { slot } from '../../ffi/scratch';

/**
 * A libcudart function by its C name, bound on the first call of get(). An object with a method
 * rather than a closure per function: closures made by one factory share V8's "many closures"
 * feedback, which Turbofan never inlines, so each hot call paid a call of the getter.
 */
export class DirectFunction {
  private f: KoffiFunction | undefined = undefined;

  constructor(
    private readonly name: Parameters<typeof libcudart.bind>[0],
    private readonly addresses: readonly number[] | undefined,
  ) {}

  /** The koffi function, bound on the first call. */
  get(): KoffiFunction {
    return this.f ?? this.bind();
  }

  /** get()'s first call, apart (get() is then small enough for V8 to inline into every hot path). */
  private bind(): KoffiFunction {
    return (this.f = libcudart.bind(this.name, this.addresses));
  }
}

/** A libcudart function by its C name, bound on first use (`f.get()(…)`). */
export function direct(name: Parameters<typeof libcudart.bind>[0]): DirectFunction {
  return new DirectFunction(name, undefined);
}

/**
 * direct() of a function whose pointer parameters at the indexes `at` the caller passes as numbers
 * (SLOT0_ADDRESS, a handle's addressNumber()): they are bound as uint64_t, which koffi converts from a
 * number ~3.5 ns (~60 instructions) faster than a pointer from a bigint. A bigint for one costs ~5 ns
 * more than for a pointer, so the others stay pointers (issue #37: core-cpu.js, with and without).
 */
export function directByAddress(name: Parameters<typeof libcudart.bind>[0], at: readonly number[]): DirectFunction {
  return new DirectFunction(name, at);
}

/**
 * cudaLaunchKernel as core's launch fast paths call it, where dim3 goes as two 8-byte words (x86-64,
 * AArch64: `libcudart.splitSmallStructs`; bind it only there): the kernel handle, the `void **`
 * argument array and the stream as numbers (a Kernel's and a Stream's handleNumber, the address of
 * argument memory that stays put; 0 for NULL), where a bigint and a typed array cost koffi ~300
 * instructions more a launch (bench/README.md, "Launches by address").
 */
export const launchKernelByAddress = directByAddress('cudaLaunchKernel', [0, 5, 7]);

/** Scratch slot 0's address as a number (exact: a heap address is below 2^47), for directByAddress's parameters. */
export const SLOT0_ADDRESS = Number(slot[0]);

/**
 * A handle as the number directByAddress's parameters take; throws a RangeError naming `fn` and its
 * parameter 'handle' for one at or above 2^53, which a number cannot hold exactly (a handle the
 * driver made is a heap address, below 2^47: only a foreign one can be).
 */
export function addressNumber(handle: bigint, fn: string): number {
  if (handle < 0n || handle > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(
      `${fn}: parameter 'handle' is 0x${handle.toString(16)}, not an address below 2^53 (core passes handles to C as numbers)`,
    );
  return Number(handle);
}

/** Throws the CudaError of runtime status `err` (named by `fn`, as check() names it) unless it is cudaSuccess. */
export function checkStatus(err: unknown, fn: string): void {
  if (err !== 0) throw runtimeError(err as number, fn);
}
