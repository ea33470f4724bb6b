// PyCUDA's argument handlers: In(xs), Out(ys), InOut(zs) pass host TypedArrays to a kernel through
// temporary device buffers, copied in before the launch and back after it, on the launch's stream.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { describe } from '../../ffi/checks';
import { Device } from '../device/Device';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { allocateOn } from '../memory/CachingAllocator';
import { completion } from '../base/completion';
import type { LaunchConfig } from './launch-config';

/** What the In/Out/InOut launch needs of a Kernel (Kernel imports this module, so it is named by shape). */
interface Launchable {
  readonly name: string;
  launch(config: LaunchConfig, ...args: unknown[]): void;
}

/** Which way a HostArgument's data goes: to the device before the launch, back after it, or both. */
export type HostArgumentDirection = 'in' | 'out' | 'inout';

const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;

/** Host memory passed to a kernel as a pointer to a temporary device copy (make one with In, Out or InOut). */
export class HostArgument {
  /** @internal Use In(data), Out(data) or InOut(data). */
  constructor(
    /** The host memory (a TypedArray, Buffer or DataView; not copied). */
    readonly data: ArrayBufferView,
    /** Copied to the device before the launch ('in', 'inout') and back after it ('out', 'inout'). */
    readonly direction: HostArgumentDirection,
  ) {}

  /** Whether the data goes to the device before the launch. */
  get copiesIn(): boolean {
    return this.direction !== 'out';
  }

  /** Whether the data comes back after the launch. */
  get copiesOut(): boolean {
    return this.direction !== 'in';
  }
}

function make(data: ArrayBufferView, direction: HostArgumentDirection, name: string): HostArgument {
  if (!ArrayBuffer.isView(data))
    throw new TypeError(`${name}: parameter 'data' must be a TypedArray, Buffer or DataView, got ${describe(data)}`);
  return new HostArgument(data, direction);
}

/** Host data the kernel reads: copied to a temporary device buffer before the launch (PyCUDA's `In`). */
export function In(data: ArrayBufferView): HostArgument {
  return make(data, 'in', 'In');
}

/** Host memory the kernel writes: a temporary device buffer copied back after the launch (PyCUDA's `Out`). */
export function Out(data: ArrayBufferView): HostArgument {
  return make(data, 'out', 'Out');
}

/** Host data the kernel reads and writes: copied in before the launch and back after it (PyCUDA's `InOut`). */
export function InOut(data: ArrayBufferView): HostArgument {
  return make(data, 'inout', 'InOut');
}

/** Whether any of `args` is an In/Out/InOut. */
export function hasHostArguments(args: readonly unknown[]): boolean {
  for (let i = 0; i < args.length; i++) if (args[i] instanceof HostArgument) return true;
  return false;
}

interface Staged {
  args: unknown[];
  temps: { arg: HostArgument; buf: DeviceBuffer }[];
}

/** Temporary device buffers for the HostArguments of `args`, from the current allocator. */
function stage(fn: string, config: LaunchConfig, args: readonly unknown[]): Staged {
  if (config === null || typeof config !== 'object')
    throw new TypeError(`${fn}: the first parameter must be a launch config { grid, block, sharedMem?, stream? }, got ${describe(config)}`);
  const stream = config.stream;
  if (stream?.isClosed) throw new Error(`${fn}: parameter 'config.stream' is a Stream that was closed`);
  const device = stream?.device ?? Device.current();
  const staged: Staged = { args: args.slice(), temps: [] };
  try {
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (!(a instanceof HostArgument)) continue;
      const n = a.data.byteLength;
      const buf = allocateOn(device.makeCurrent(), n, stream, fn);
      staged.temps.push({ arg: a, buf });
      staged.args[i] = buf;
    }
  } catch (e) {
    release(staged);
    throw e;
  }
  return staged;
}

function release(s: Staged): void {
  for (const t of s.temps) t.buf.close();
}

function view(a: HostArgument): Uint8Array {
  return new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
}

/**
 * @internal kernel.launch with In/Out/InOut arguments: copies in on the launch's stream, launches,
 * copies back and waits for the stream (the host arrays hold the results on return).
 */
export function launchWithHostArguments(kernel: Launchable, config: LaunchConfig, args: readonly unknown[]): void {
  const fn = `Kernel.launch(${kernel.name})`;
  const s = stage(fn, config, args);
  try {
    const stream = config.stream?.handle ?? null;
    for (const { arg, buf } of s.temps)
      if (arg.copiesIn && buf.size > 0)
        check(cudart.cudaMemcpyAsync(buf.ptr, view(arg), buf.size, H2D, stream), `${fn} (cudaMemcpyAsync of an In argument)`);
    kernel.launch(config, ...s.args);
    for (const { arg, buf } of s.temps)
      if (arg.copiesOut && buf.size > 0)
        check(cudart.cudaMemcpyAsync(view(arg), buf.ptr, buf.size, D2H, stream), `${fn} (cudaMemcpyAsync of an Out argument)`);
    check(cudart.cudaStreamSynchronize(stream), `${fn} (cudaStreamSynchronize)`);
  } finally {
    release(s);
  }
}

/**
 * @internal kernel.launchAsync: the same with every wait off the JS thread; resolves once the
 * kernel is done and the Out/InOut data is back in the host arrays.
 */
export async function launchWithHostArgumentsAsync(kernel: Launchable, config: LaunchConfig, args: readonly unknown[]): Promise<void> {
  const fn = `Kernel.launchAsync(${kernel.name})`;
  const s = stage(fn, config, args);
  try {
    for (const { arg, buf } of s.temps) if (arg.copiesIn && buf.size > 0) await buf.copyFromAsync(arg.data);
    kernel.launch(config, ...s.args);
    await completion(config.stream?.handle ?? null);
    for (const { arg, buf } of s.temps) if (arg.copiesOut && buf.size > 0) await buf.copyToAsync(view(arg));
  } finally {
    release(s);
  }
}
