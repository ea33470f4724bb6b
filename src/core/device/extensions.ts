// What the device room adds to its own lower classes: Device makes streams and events, and a Stream
// waits for an Event. Device.ts and Stream.ts import neither Stream nor Event for it (see base/extend.ts).
import * as cudart from '../../runtime';
import * as cuda from '../../driver';
import { check } from '../base/errors';
import { driverGet } from '../base/driver-check';
import { describe } from '../../ffi/checks';
import { extend } from '../base/extend';
import { assertOpen, openArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { Device } from './Device';
import { Stream, STREAM_OPTIONS, type StreamOptions } from './Stream';
import { Event, EVENT_OPTIONS, type EventOptions } from './Event';
import { Context } from './Context';
import { foreignValue } from './foreign';

/**
 * A stream another library made, offered through cuda.core's stream protocol: `__cuda_stream__()`
 * returns `[version, handle]` (version 0, the handle as a bigint or a safe integer). A core Stream
 * has it too.
 */
export interface StreamProtocol {
  /** The protocol's version (0) and the stream's handle. */
  __cuda_stream__(): readonly [number, bigint | number];
}

declare module './Device' {
  interface Device {
    /**
     * A new stream on this device (cudaStreamCreateWithPriority); close it, or let `using` do so,
     * when done. Given an object with `__cuda_stream__()` (cuda.core's stream protocol, see
     * StreamProtocol) instead of options, it wraps that stream without owning it, as
     * Stream.fromHandle does, holding the object alive; close() then destroys nothing.
     */
    createStream(options?: StreamOptions | StreamProtocol): Stream;
    /** A new event on this device (cudaEventCreateWithFlags); by default it records timing. Close it when done. */
    createEvent(options?: EventOptions): Event;
    /** The device's legacy default stream (cuda.core's `default_stream`; {@link Stream.null} of this device): one object, never closed. */
    readonly defaultStream: Stream;
  }
}

declare module './Stream' {
  interface Stream {
    /**
     * Makes work queued on this stream from now on wait until `event`'s recorded point is reached
     * (cudaStreamWaitEvent); the JS thread does not wait. Throws TypeError unless `event` is an open Event.
     */
    waitEvent(event: Event): void;
    /**
     * The context the stream belongs to (cuStreamGetCtx), borrowed: closing it does nothing, and it
     * reads as closed once the stream is.
     */
    readonly context: Context;
  }
}

/** The handle an object offers through `__cuda_stream__()`, or a TypeError naming what was wrong. */
function protocolHandle(obj: StreamProtocol, fn: string): bigint {
  const r: unknown = obj.__cuda_stream__();
  if (!Array.isArray(r) || r.length !== 2 || typeof r[0] !== 'number')
    throw new TypeError(`${fn}: the object's __cuda_stream__() must return [version, handle], got ${describe(r)}`);
  if (r[0] !== 0)
    throw new RangeError(`${fn}: the object's __cuda_stream__() speaks version ${r[0]} of the protocol; this layer reads version 0`);
  return foreignValue(r[1], fn, '__cuda_stream__()[1]', true);
}

extend(Device, {
  createStream(options: StreamOptions | StreamProtocol = {}): Stream {
    if (options !== null && typeof options === 'object' && typeof (options as Partial<StreamProtocol>).__cuda_stream__ === 'function') {
      const h = protocolHandle(options as StreamProtocol, 'Device.createStream');
      return Stream.fromHandle(h, { owner: options, device: this });
    }
    checkOptions('Device.createStream', options, STREAM_OPTIONS);
    this.makeCurrent();
    return Stream.create(this, options as StreamOptions);
  },

  createEvent(options: EventOptions = {}): Event {
    checkOptions('Device.createEvent', options, EVENT_OPTIONS);
    this.makeCurrent();
    return Event.create(this, options);
  },

  get defaultStream(): Stream {
    return Stream.defaultOf(this, cudart.cudaStreamLegacy);
  },
});

extend(Stream, {
  waitEvent(event: Event): void {
    assertOpen(this, 'waitEvent');
    openArg(event, 'Event', 'Stream.waitEvent', 'event');
    check(cudart.cudaStreamWaitEvent(this.handle, event.handle, 0), 'cudaStreamWaitEvent');
  },

  get context(): Context {
    assertOpen(this, 'context');
    const ctx = driverGet(cuda.cuStreamGetCtx(cuda.CUstream(BigInt(this.handle))), 'Stream.context (cuStreamGetCtx)');
    return Context.borrow(ctx, this.device, this);
  },
});
