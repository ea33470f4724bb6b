// A CUDA stream: work queued in order; waits that do not block the event loop.
import * as cudart from '../../runtime';
import { streamSynchronize } from '../../runtime/async';
import type { WaitOptions } from '../../ffi/waits';
import { check } from '../base/errors';
import { Resource, openArg } from '../base/lifetime';
import type { Device } from './Device';
import { checkOptions, type OptionKeys } from '../base/options';
import { FOREIGN_OPTIONS, foreignDevice, foreignValue, type ForeignOptions } from './foreign';

/** How {@link Device.createStream} makes a stream. */
export interface StreamOptions {
  /** Does not synchronize with the legacy default stream (cudaStreamNonBlocking). */
  nonBlocking?: boolean;
  /** Lower numbers run first; see cudaDeviceGetStreamPriorityRange. */
  priority?: number;
}

/** The keys of StreamOptions, for checkOptions. */
export const STREAM_OPTIONS: OptionKeys<StreamOptions> = { nonBlocking: true, priority: true };

/**
 * A CUDA stream: work queued on it (copies, kernels, host functions) runs in order; work on
 * different streams may overlap. Made by {@link Device.createStream}.
 *
 * Lifetime: close() destroys the stream (cudaStreamDestroy) after the work queued on it; `using`
 * closes it at the end of the block, and the garbage collector is only a safety net. A stream keeps
 * its Device alive. Methods on a closed stream throw Error (`Stream.query: the Stream was closed`);
 * failures of CUDA calls throw {@link CudaError}.
 *
 * @example
 * ```ts
 * const dev = Device.get(0);
 * using stream = dev.createStream({ nonBlocking: true });
 * using start = dev.createEvent();
 * using end = dev.createEvent();
 * start.record(stream);
 * kernel.launch({ grid: 64, block: 256, stream }, buf, i32(n));
 * end.record(stream);
 * await stream.synchronize();
 * console.log(end.elapsedSince(start), 'ms');
 * ```
 */
export class Stream extends Resource {
  private constructor(
    /** The runtime handle, for calls into the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaStream_t,
    /** The device the stream was created on. */
    readonly device: Device,
    keep: unknown[] = [device],
    /** Whether close() destroys the stream: false for one wrapped with {@link Stream.fromHandle}, which another library owns. */
    readonly owned = true,
  ) {
    super(owned ? () => void cudart.cudaStreamDestroy(handle) : () => undefined, keep);
  }

  /** @internal A stream made elsewhere for this package (a green context's): destroyed at close(), keeping `keep` alive until then. */
  static adopt(handle: cudart.cudaStream_t, device: Device, keep: unknown[]): Stream {
    return new Stream(handle, device, keep);
  }

  /**
   * Wraps a stream another library made (CuPy's `stream.ptr`, PyTorch's `cuda_stream`, a native
   * addon's `cudaStream_t`) so core can queue work on it. The wrapper never destroys the stream:
   * close() only marks it closed. It holds `options.owner` (whatever owns the stream) alive while it
   * lives; the owner must not destroy the stream before the wrapper is done with it. `handle` 0 is the
   * legacy default stream.
   */
  static fromHandle(handle: cudart.cudaStream_t | bigint | number, options: ForeignOptions = {}): Stream {
    const fn = 'Stream.fromHandle';
    checkOptions(fn, options, FOREIGN_OPTIONS);
    const h = cudart.cudaStream_t(foreignValue(handle, fn, 'handle', true));
    const device = foreignDevice(options.device, fn);
    return new Stream(h, device, [device, options.owner], false);
  }

  /** @internal Use device.createStream(). */
  static create(device: Device, o: StreamOptions): Stream {
    const flags = o.nonBlocking ? cudart.cudaStreamNonBlocking : cudart.cudaStreamDefault;
    const h = check(cudart.cudaStreamCreateWithPriority(flags, o.priority ?? 0), 'cudaStreamCreateWithPriority');
    return new Stream(h, device);
  }

  /**
   * Waits, without blocking the event loop or holding a pool thread, until the work queued so far is
   * done. `options.signal`/`timeout` reject with an AbortError/TimeoutError; the GPU work is not cancelled.
   */
  async synchronize(options?: WaitOptions): Promise<void> {
    this.live('synchronize');
    check(await streamSynchronize('Stream.synchronize', this.handle, options), 'cudaStreamSynchronize');
  }

  /** Whether all the stream's work is done (cudaStreamQuery), without waiting; throws CudaError when queued work failed. */
  query(): boolean {
    this.live('query');
    const [err] = cudart.cudaStreamQuery(this.handle);
    if (err === cudart.cudaError_t.cudaErrorNotReady) return false;
    check([err], 'cudaStreamQuery');
    return true;
  }

  /**
   * Runs `fn` on the JS thread once the work queued so far is done (cudaLaunchHostFunc). Work queued
   * after it waits for `fn` to return, so do not wait synchronously on the stream meanwhile; an
   * exception thrown by `fn` ends the process (use {@link Stream.hostCallback} to get it back).
   */
  onComplete(fn: () => void): void {
    this.live('onComplete');
    check(
      cudart.cudaLaunchHostFunc(this.handle, () => fn(), null),
      'cudaLaunchHostFunc',
    );
  }

  /** Resolves with what `fn` returns once the work queued so far is done (a host function); rejects with what `fn` throws. */
  hostCallback<T>(fn: () => T): Promise<T> {
    return new Promise((resolve, reject) => {
      this.live('hostCallback');
      this.onComplete(() => {
        try {
          resolve(fn());
        } catch (e) {
          reject(e);
        }
      });
    });
  }
}

/**
 * The handle of an optional Stream parameter (null when absent) for a hot path: an open Stream of
 * this module at once, anything else through openArg, which throws as openOptionalArg does (or
 * accepts a Stream of another copy of this package).
 */
export function openStreamHandle(stream: unknown, where: string, param: string): cudart.cudaStream_t | null {
  if (stream === undefined) return null;
  if (stream instanceof Stream && !stream.isClosed) return stream.handle;
  openArg(stream, 'Stream', where, param);
  return (stream as Stream).handle;
}
