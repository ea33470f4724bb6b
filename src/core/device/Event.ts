// A CUDA event: a marker in a stream, for waits and timing.
import * as cudart from '../../runtime';
import { eventSynchronize } from '../../runtime/async';
import type { WaitOptions } from '../../ffi/waits';
import { check, runtimeError } from '../base/errors';
import { Resource, openArg, whileHeld } from '../base/lifetime';
import type { Device } from './Device';
import { openStreamArg, type Stream } from './Stream';
import { checkOptions, type OptionKeys } from '../base/options';
import { addressNumber, checkStatus, directByAddress } from '../base/direct';
import { FOREIGN_OPTIONS, foreignDevice, foreignValue, type ForeignOptions } from './foreign';

const eventRecord = directByAddress('cudaEventRecord', [0, 1]);
const eventQuery = directByAddress('cudaEventQuery', [0]);
const NOT_READY = cudart.cudaError_t.cudaErrorNotReady;

/** What {@link Event.fromHandle} takes: the owner and device of the event, and whether it records timestamps. */
export interface ForeignEventOptions extends ForeignOptions {
  /** Whether the event was created with timing (default true; CUDA refuses elapsedSince on one that was not). */
  timing?: boolean;
  /** Whether the event was created with cudaEventBlockingSync (default false): what {@link Event.isSyncBusyWaited} reports. */
  blockingSync?: boolean;
}

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
  /** @internal The handle as a number (exact: an address is below 2^53), for core's directByAddress calls. */
  declare private readonly handleNumber: number;

  private constructor(
    /** The runtime handle, for calls into the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaEvent_t,
    /** The device the event was created on. */
    readonly device: Device,
    /** Whether the event records timestamps (EventOptions.timing), as elapsedSince needs. */
    readonly timing: boolean,
    keep: unknown[] = [device],
    /** Whether close() destroys the event: false for one wrapped with {@link Event.fromHandle}, which another library owns. */
    readonly owned = true,
  ) {
    super(owned ? () => void cudart.cudaEventDestroy(handle) : () => undefined, keep);
    this.handleNumber = addressNumber(handle, 'Event.fromHandle');
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
    const e = Event.adopt(
      check(cudart.cudaEventCreateWithFlags(flags), 'cudaEventCreateWithFlags'),
      device,
      timing,
      o.interprocess ?? false,
    );
    e.blockingSyncFlag = o.blockingSync ?? false;
    return e;
  }

  /** @internal An event made for this package (createEvent, IpcEventHandle.open): destroyed at close(). */
  static adopt(handle: cudart.cudaEvent_t, device: Device, timing: boolean, interprocess = false): Event {
    const e = new Event(handle, device, timing);
    e.interprocessFlag = interprocess;
    return e;
  }

  /**
   * Wraps an event another library made (CuPy's `event.ptr`, a native addon's `cudaEvent_t`) so core
   * can record it and wait on it. The wrapper never destroys the event: close() only marks it
   * closed. It holds `options.owner` (whatever owns the event) alive while it lives.
   */
  static fromHandle(handle: cudart.cudaEvent_t | bigint | number, options: ForeignEventOptions = {}): Event {
    const fn = 'Event.fromHandle';
    checkOptions(fn, options, { ...FOREIGN_OPTIONS, timing: true, blockingSync: true });
    const h = cudart.cudaEvent_t(foreignValue(handle, fn, 'handle'));
    const device = foreignDevice(options.device, fn);
    if (options.timing !== undefined && typeof options.timing !== 'boolean')
      throw new TypeError(`${fn}: option 'timing' must be a boolean, got ${String(options.timing)}`);
    if (options.blockingSync !== undefined && typeof options.blockingSync !== 'boolean')
      throw new TypeError(`${fn}: option 'blockingSync' must be a boolean, got ${String(options.blockingSync)}`);
    const e = new Event(h, device, options.timing ?? true, [device, options.owner], false);
    e.blockingSyncFlag = options.blockingSync ?? false;
    return e;
  }

  private interprocessFlag = false;
  private blockingSyncFlag = false;
  /** Whether record() was called on it here (a hint for elapsedSince's error: CUDA may have recorded it otherwise, in a graph). */
  private recordedHere = false;

  /** Whether a wait on the event yields the CPU (made with `blockingSync: true`, cudaEventBlockingSync). */
  get blockingSync(): boolean {
    return this.blockingSyncFlag;
  }

  /** Whether a wait on the event spins rather than yields the CPU (cuda.core's `is_sync_busy_waited`): made without `blockingSync`. */
  get isSyncBusyWaited(): boolean {
    return !this.blockingSyncFlag;
  }

  /** Whether the event can be shared with other processes (created with `interprocess: true`, or opened from a handle). */
  get interprocess(): boolean {
    return this.interprocessFlag;
  }

  /**
   * Marks the point reached by the work queued so far on `stream` (absent: the current stream of a
   * {@link Stream.use}, else the legacy default stream; cudaEventRecord); recording again moves the mark. Returns this event.
   */
  record(stream?: Stream): this {
    this.live('record');
    const s = openStreamArg(stream, 'Event.record', 'stream');
    checkStatus(eventRecord.get()(this.handleNumber, s === null ? 0 : s.handleNumber), 'cudaEventRecord');
    this.recordedHere = true;
    return this;
  }

  /**
   * Waits, without blocking the event loop or holding a pool thread, until the work before the event
   * is done. `options.signal`/`timeout` reject with an AbortError/TimeoutError; the GPU work is not cancelled.
   * close() during the wait marks the event closed at once and destroys it only once the wait is over.
   */
  async synchronize(options?: WaitOptions): Promise<void> {
    this.live('synchronize');
    // Held open while the wait polls the handle: a close() meanwhile destroys it after the last poll.
    check(await whileHeld([this], () => eventSynchronize('Event.synchronize', this.handle, options)), 'cudaEventSynchronize');
  }

  /** Whether the work before the recorded point is done (cudaEventQuery; true for an event never recorded), without waiting. */
  query(): boolean {
    this.live('query');
    // Called directly: the handle is an open event's (the facade's checks and result array would be work done twice).
    const err = eventQuery.get()(this.handleNumber);
    if (err === NOT_READY) return false;
    checkStatus(err, 'cudaEventQuery');
    return true;
  }

  /**
   * Milliseconds (with a resolution of about 0.5 µs) from `start` to this event, both recorded and
   * complete (cudaEventElapsedTime). Throws Error when either was created with `timing: false`,
   * CudaError (`cudaErrorNotReady`) when one is not complete yet, and CudaError naming which of
   * the two (`start`, this end event, or both) was never recorded when CUDA says one was not.
   */
  elapsedSince(start: Event): number {
    this.live('elapsedSince');
    openArg(start, 'Event', 'Event.elapsedSince', 'start');
    if (!this.timing || !start.timing) throw new Error('Event.elapsedSince: both events need timing (create them with { timing: true })');
    const [err, ms] = cudart.cudaEventElapsedTime(start.handle, this.handle);
    if (err === cudart.cudaError_t.cudaSuccess) return ms!;
    const e = runtimeError(err, 'Event.elapsedSince (cudaEventElapsedTime)');
    if (err === cudart.cudaError_t.cudaErrorInvalidResourceHandle) {
      cudart.cudaGetLastError();
      const never = [!start.recordedHere && "the start event (parameter 'start')", !this.recordedHere && 'the end event (this one)'].filter(
        (x): x is string => x !== false,
      );
      e.message += `: ${never.length ? `${never.join(' and ')} ${never.length > 1 ? 'were' : 'was'} never recorded here` : 'an event was not recorded'}; record both (event.record(stream)) before timing`;
    }
    throw e;
  }
}
