// The one conversion of a kernel argument from core's objects to what the runtime facade's
// KernelArgs takes: Kernel.launch, GraphBuilder.kernel and a prepared launch's unusual cases all
// call it, so each accepts the same objects and refuses a closed one in the same words.
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { HostBuffer } from '../memory/HostBuffer';
import { StridedView } from '../memory/StridedView';
import { HostArgument } from './HostArgument';
import { TextureObject, closedObject } from '../texture/TextureObject';
import { SurfaceObject } from '../texture/SurfaceObject';
import { TensorMapDescriptor } from '../texture/TensorMapDescriptor';

/**
 * The method through which an object of a room above launch (a graph's ConditionalHandle) passes
 * itself to a kernel: launch cannot name those classes (they import launch), so they come to it.
 */
export const asKernelArgument: unique symbol = Symbol('cuda-bindings.asKernelArgument');

/** An object that passes itself to a kernel (a graph's ConditionalHandle, as its 64-bit handle). */
export interface KernelArgumentObject {
  /** Argument `i` of the launch `where` as the runtime facade's KernelArgs takes it; throws Error, naming both, when the object can no longer be passed. */
  [asKernelArgument](i: number, where: string): cudart.KernelArgInput;
}

/**
 * One kernel argument: a DeviceBuffer or StridedView (its address), a mapped HostBuffer (its device address), a
 * pointer as a bigint, a typed scalar (`i32(n)`, `f32(x)`, …), a struct passed by value, a texture or
 * surface object, a tensor map, In/Out/InOut host arrays, or a graph's ConditionalHandle.
 */
export type KernelArgument =
  | DeviceBuffer
  | StridedView
  | HostBuffer
  | HostArgument
  | TextureObject
  | SurfaceObject
  | TensorMapDescriptor
  | KernelArgumentObject
  | cudart.KernelArgInput;

/**
 * A core object as a kernel argument, or undefined when `a` is not one of core's objects (a typed
 * scalar, a bigint, a struct, or a bad value: the caller decides). A DeviceBuffer (or a view of one),
 * a StridedView (the address of its element [0, …, 0]) and a mapped HostBuffer give their device address; a TextureObject, SurfaceObject or
 * ConditionalHandle its 64-bit handle as a `u64`; a TensorMapDescriptor itself (a 128-byte struct).
 * Throws Error for a closed one, TypeError for an unmapped HostBuffer or an In/Out/InOut (which only
 * Kernel.launch copies, before it gets here): `<where>: argument <i> is …`.
 */
export function coreArgument(a: unknown, i: number, where: string): cudart.KernelArgInput | undefined {
  if (a instanceof DeviceBuffer) {
    const p = a.openAddress();
    if (p === null) throw new Error(`${where}: argument ${i} is a DeviceBuffer that was closed`);
    return p;
  }
  if (a instanceof StridedView) {
    const p = a.openAddress();
    if (p === null) throw new Error(`${where}: argument ${i} is a StridedView that was closed (or whose DeviceBuffer was)`);
    return p;
  }
  if (a instanceof HostBuffer) {
    if (a.isClosed) throw new Error(`${where}: argument ${i} is a HostBuffer that was closed`);
    if (a.devicePtr === null)
      throw new TypeError(
        `${where}: argument ${i} is a HostBuffer that is not mapped; allocate it with { mapped: true } to pass it to a kernel`,
      );
    return a.devicePtr;
  }
  if (a instanceof TextureObject || a instanceof SurfaceObject) {
    if (a.isClosed) throw new Error(`${where}: argument ${i} is ${closedObject(a)}`);
    return cudart.u64(a.handle);
  }
  if (a !== null && typeof a === 'object' && asKernelArgument in a) return (a as KernelArgumentObject)[asKernelArgument](i, where);
  if (a instanceof TensorMapDescriptor) {
    if (a.isClosed) throw new Error(`${where}: argument ${i} is ${closedObject(a)}`);
    return a;
  }
  if (a instanceof HostArgument)
    throw new TypeError(
      `${where}: argument ${i} is an In/Out/InOut host array, which only Kernel.launch and launchAsync copy in and back; elsewhere pass a DeviceBuffer (in a graph, with copy nodes around the kernel)`,
    );
  return undefined;
}

/**
 * Argument `i` of a launch as the facade's KernelArgs takes it: a typed scalar or a bigint as it is,
 * a core object as {@link coreArgument} converts it, a struct (an object with `_u8` bytes) as it is.
 * Throws TypeError for a plain number (its C type is unknown) or anything else, naming `where`.
 */
export function kernelArgument(a: unknown, i: number, where: string): cudart.KernelArgInput {
  if (a instanceof cudart.KernelArg || typeof a === 'bigint') return a;
  const core = coreArgument(a, i, where);
  if (core !== undefined) return core;
  if (typeof a === 'number')
    throw new TypeError(`${where}: argument ${i} is a plain number (${a}); say its C type: i32(n), u32(n), f32(x), f64(x), …`);
  if (a !== null && typeof a === 'object' && (a as { _u8?: unknown })._u8 instanceof Uint8Array) return a as cudart.KernelArgInput;
  throw new TypeError(
    `${where}: argument ${i} must be a DeviceBuffer, a mapped HostBuffer, a TextureObject, SurfaceObject, TensorMapDescriptor or ConditionalHandle, a typed scalar (i32(n), f32(x), …), a pointer (bigint) or a struct, got ${describe(a)}`,
  );
}
