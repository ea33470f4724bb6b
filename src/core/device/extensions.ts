// What the device room adds to its own lower classes: Device makes streams and events, and a Stream
// waits for an Event. Device.ts and Stream.ts import neither Stream nor Event for it (see base/extend.ts).
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { extend } from '../base/extend';
import { assertOpen, openArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { Device } from './Device';
import { Stream, STREAM_OPTIONS, type StreamOptions } from './Stream';
import { Event, EVENT_OPTIONS, type EventOptions } from './Event';

declare module './Device' {
  interface Device {
    /** A new stream on this device (cudaStreamCreateWithPriority); close it, or let `using` do so, when done. */
    createStream(options?: StreamOptions): Stream;
    /** A new event on this device (cudaEventCreateWithFlags); by default it records timing. Close it when done. */
    createEvent(options?: EventOptions): Event;
  }
}

declare module './Stream' {
  interface Stream {
    /**
     * Makes work queued on this stream from now on wait until `event`'s recorded point is reached
     * (cudaStreamWaitEvent); the JS thread does not wait. Throws TypeError unless `event` is an open Event.
     */
    waitEvent(event: Event): void;
  }
}

extend(Device, {
  createStream(options: StreamOptions = {}): Stream {
    checkOptions('Device.createStream', options, STREAM_OPTIONS);
    this.makeCurrent();
    return Stream.create(this, options);
  },

  createEvent(options: EventOptions = {}): Event {
    checkOptions('Device.createEvent', options, EVENT_OPTIONS);
    this.makeCurrent();
    return Event.create(this, options);
  },
});

extend(Stream, {
  waitEvent(event: Event): void {
    assertOpen(this, 'waitEvent');
    openArg(event, 'Event', 'Stream.waitEvent', 'event');
    check(cudart.cudaStreamWaitEvent(this.handle, event.handle, 0), 'cudaStreamWaitEvent');
  },
});
