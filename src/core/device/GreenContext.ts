// A green context (cuGreenCtxCreate): a context limited to a group of the device's SMs. Work on its
// streams runs only there.
import * as cuda from '../../driver';
import type { Device } from './Device';
import { Context } from './Context';
import { driverGet } from '../base/driver-check';
import { Resource } from '../base/lifetime';
import { Stream, STREAM_OPTIONS, type StreamOptions } from './Stream';
import type { SMResource } from './SMResource';
import type { cudaStream_t } from '../../runtime';
import { checkOptions } from '../base/options';

/**
 * A green context: a context restricted to groups of a device's SMs (made by
 * `DeviceResources.createGreenContext`). Streams made from it run their work on those SMs only.
 *
 * Lifetime: close() destroys it (cuGreenCtxDestroy) along with the streams it made that are still
 * open; its Context view then throws Error. Driver failures throw {@link CudaError}.
 */
export class GreenContext extends Resource {
  private ctx?: Context;
  private readonly streams = new Set<WeakRef<Stream>>();

  /** @internal Use DeviceResources.createGreenContext(). */
  constructor(
    /** The driver handle (CUgreenCtx), for the `cuda-bindings/driver` facade; valid until close(). */
    readonly handle: cuda.CUgreenCtx,
    /** The device it is on. */
    readonly device: Device,
    /** The SM groups it was made from. */
    readonly resources: readonly SMResource[],
  ) {
    super(() => void cuda.cuGreenCtxDestroy(handle), [device]);
  }

  /** How many SMs the context may use. */
  get smCount(): number {
    this.live('smCount');
    return this.resources.reduce((n, r) => n + r.smCount, 0);
  }

  /** The context as a Context (cuCtxFromGreenCtx), to push, pop or query; it keeps this green context alive. */
  get context(): Context {
    this.live('context');
    return (this.ctx ??= Context.borrow(
      driverGet(cuda.cuCtxFromGreenCtx(this.handle), 'GreenContext.context (cuCtxFromGreenCtx)'),
      this.device,
      this,
    ));
  }

  /** A stream whose work runs on this context's SMs only (cuGreenCtxStreamCreate); it keeps the context alive. */
  createStream(options: StreamOptions = {}): Stream {
    checkOptions('GreenContext.createStream', options, STREAM_OPTIONS);
    this.live('createStream');
    const priority = options.priority ?? 0;
    if (!Number.isInteger(priority))
      throw new RangeError(`GreenContext.createStream: option 'priority' must be an integer, got ${priority}`);
    // Green context streams must be non-blocking (CU_STREAM_NON_BLOCKING).
    const h = driverGet(
      cuda.cuGreenCtxStreamCreate(this.handle, cuda.CUstream_flags.CU_STREAM_NON_BLOCKING, priority),
      'GreenContext.createStream (cuGreenCtxStreamCreate)',
    );
    const stream = Stream.adopt(h as unknown as cudaStream_t, this.device, [this.device, this]);
    this.streams.add(new WeakRef(stream));
    return stream;
  }

  /** Closes the streams made on it that are still open, then destroys the green context. */
  override close(): void {
    if (this.isClosed) return;
    for (const ref of this.streams) ref.deref()?.close();
    this.streams.clear();
    super.close();
  }
}
