// A CUDA event: a marker in a stream, for waits and timing.
import * as cudart from '../../runtime';
import { eventSynchronize } from '../../runtime/async';
import type { WaitOptions } from '../../ffi/waits';
import { check } from '../base/errors';
import { Resource, openArg, openOptionalArg } from '../base/lifetime';
import type { Device } from './Device';
import type { Stream } from './Stream';
import type { OptionKeys } from '../base/options';

/** How {@link Device.createEvent} makes an event. */
export interface EventOptions {
  /** Records timestamps for elapsedSince (on by default; off is cheaper). */
  timing?: boolean;
  /** Waits on it yield the CPU rather than spin (cudaEventBlockingSync). */
  blockingSync?: boolean;
  /** Shareable with other processes through IpcEventHandle (cudaEventInterprocess; needs `timing: false`). */
  interprocess?: boolean;
}

/** The keys of EventOptions, for checkOptions. */
export const EVENT_OPTIONS: OptionKeys<EventOptions> = { timing: true, blockingSync: true, interprocess: true };

/**
 * A CUDA event: a marker recorded in a stream, to wait for (from the host or from another stream)
 * and to time work between two markers. Made by {@link Device.createEvent}.
 *
 * Lifetime: close() destroys the event (cudaEventDestroy); `using` closes it at the end of the block.
 * An event keeps its Device alive. Methods on a closed event throw Error; CUDA failures throw
 * {@link CudaError}.
 *
 * @example
 * ```ts
 * using start = dev.createEvent();
 * using end = dev.createEvent();
 * start.record(stream);
 * buf.copyFrom(host, { stream });
 * end.record(stream);
 * await end.synchronize();
 * console.log(`${end.elapsedSince(start).toFixed(3)} ms`);
 * ```
 */
export class Event extends Resource {
  private constructor(
    /** The runtime handle, for calls into the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaEvent_t,
    /** The device the event was created on. */
    readonly device: Device,
    /** Whether the event records timestamps (EventOptions.timing), as elapsedSince needs. */
    readonly timing: boolean,
  ) {
    super(() => void cudart.cudaEventDestroy(handle), [device]);
  }

  /** @internal Use device.createEvent(). */
  static create(device: Device, o: EventOptions): Event {
    const timing = o.timing ?? !o.interprocess;
    if (o.interprocess && timing)
      throw new RangeError(
        "Device.createEvent: option 'interprocess' needs { timing: false } (CUDA cannot share an event that records timestamps)",
      );
    const flags =
      (timing ? 0 : cudart.cudaEventDisableTiming) |
      (o.blockingSync ? cudart.cudaEventBlockingSync : 0) |
      (o.interprocess ? cudart.cudaEventInterprocess : 0);
    return Event.fromHandle(
      check(cudart.cudaEventCreateWithFlags(flags), 'cudaEventCreateWithFlags'),
      device,
      timing,
      o.interprocess ?? false,
    );
  }

  /** @internal An event another process shared (IpcEventHandle.open): destroyed at close() like one made here. */
  static fromHandle(handle: cudart.cudaEvent_t, device: Device, timing: boolean, interprocess = false): Event {
    const e = new Event(handle, device, timing);
    e.interprocessFlag = interprocess;
    return e;
  }

  private interprocessFlag = false;

  /** Whether the event can be shared with other processes (created with `interprocess: true`, or opened from a handle). */
  get interprocess(): boolean {
    return this.interprocessFlag;
  }

  /**
   * Marks the point reached by the work queued so far on `stream` (the legacy default stream when
   * absent; cudaEventRecord); recording again moves the mark. Returns this event.
   */
  record(stream?: Stream): this {
    this.live('record');
    openOptionalArg(stream, 'Stream', 'Event.record', 'stream');
    check(cudart.cudaEventRecord(this.handle, stream?.handle ?? null), 'cudaEventRecord');
    return this;
  }

  /**
   * Waits, without blocking the event loop or holding a pool thread, until the work before the event
   * is done. `options.signal`/`timeout` reject with an AbortError/TimeoutError; the GPU work is not cancelled.
   */
  async synchronize(options?: WaitOptions): Promise<void> {
    this.live('synchronize');
    check(await eventSynchronize('Event.synchronize', this.handle, options), 'cudaEventSynchronize');
  }

  /** Whether the work before the recorded point is done (cudaEventQuery; true for an event never recorded), without waiting. */
  query(): boolean {
    this.live('query');
    const [err] = cudart.cudaEventQuery(this.handle);
    if (err === cudart.cudaError_t.cudaErrorNotReady) return false;
    check([err], 'cudaEventQuery');
    return true;
  }

  /**
   * Milliseconds (with a resolution of about 0.5 µs) from `start` to this event, both recorded and
   * complete (cudaEventElapsedTime). Throws Error when either was created with `timing: false`,
   * CudaError (`cudaErrorNotReady`) when one is not complete yet.
   */
  elapsedSince(start: Event): number {
    this.live('elapsedSince');
    openArg(start, 'Event', 'Event.elapsedSince', 'start');
    if (!this.timing || !start.timing) throw new Error('Event.elapsedSince: both events need timing (create them with { timing: true })');
    return check(cudart.cudaEventElapsedTime(start.handle, this.handle), 'cudaEventElapsedTime');
  }
}
