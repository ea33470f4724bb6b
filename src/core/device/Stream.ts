// A CUDA stream: work queued in order; waits that do not block the event loop.
import * as cudart from '../../runtime';
import { streamSynchronize } from '../../runtime/async';
import type { WaitOptions } from '../../ffi/waits';
import { check } from '../base/errors';
import { Resource, openArg } from '../base/lifetime';
import { claimCapturedHostFns, releaseHostFns } from '../../ffi/host-callbacks';
import type { Device } from './Device';
import type { Event } from './Event';
import { Graph } from '../graph/Graph';
import type { GraphBuilder, NodeOptions } from '../graph/GraphBuilder';
import type { GraphNode } from '../graph/GraphNode';
import { checkOptions, type OptionKeys } from '../base/options';
import { lookupName } from '../../ffi/checks';

/** How {@link Device.createStream} makes a stream. */
export interface StreamOptions {
  /** Does not synchronize with the legacy default stream (cudaStreamNonBlocking). */
  nonBlocking?: boolean;
  /** Lower numbers run first; see cudaDeviceGetStreamPriorityRange. */
  priority?: number;
}

/** The keys of StreamOptions, for checkOptions. */
export const STREAM_OPTIONS: OptionKeys<StreamOptions> = { nonBlocking: true, priority: true };

/** How {@link Stream.capture} records a graph. */
export interface CaptureOptions {
  /**
   * Which unsafe calls from other code are refused while capturing (cudaStreamCaptureMode):
   * 'global' (the default), 'threadLocal' or 'relaxed'.
   */
  mode?: 'global' | 'threadLocal' | 'relaxed';
}

/** The keys of CaptureOptions, for checkOptions. */
export const CAPTURE_OPTIONS: OptionKeys<CaptureOptions> = { mode: true };

const CAPTURE_MODES = {
  global: cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal,
  threadLocal: cudart.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal,
  relaxed: cudart.cudaStreamCaptureMode.cudaStreamCaptureModeRelaxed,
};

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
  ) {
    super(() => void cudart.cudaStreamDestroy(handle), keep);
  }

  /** @internal A stream made elsewhere (a green context's): destroyed at close(), keeping `keep` alive until then. */
  static fromHandle(handle: cudart.cudaStream_t, device: Device, keep: unknown[]): Stream {
    return new Stream(handle, device, keep);
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
   * Makes work queued on this stream from now on wait until `event`'s recorded point is reached
   * (cudaStreamWaitEvent); the JS thread does not wait. Throws TypeError unless `event` is an open Event.
   */
  waitEvent(event: Event): void {
    this.live('waitEvent');
    openArg(event, 'Event', 'Stream.waitEvent', 'event');
    check(cudart.cudaStreamWaitEvent(this.handle, event.handle, 0), 'cudaStreamWaitEvent');
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

  /**
   * Records the work `work` queues on this stream (kernels, copies, host functions) into a Graph
   * instead of running it. If `work` throws, the capture ends, its graph is dropped and the error
   * is rethrown. JS host functions captured (onComplete, cudaLaunchHostFunc) run at every launch of
   * the graph and are kept until the Graph and the GraphExecs made from it are closed or collected.
   */
  async capture(work: (stream: this) => unknown, options: CaptureOptions = {}): Promise<Graph> {
    this.live('capture');
    checkOptions('Stream.capture', options, CAPTURE_OPTIONS);
    const mode = lookupName(CAPTURE_MODES, options.mode ?? 'global', 'Stream.capture', "option 'mode'");
    if (typeof work !== 'function')
      throw new TypeError(`Stream.capture: parameter 'work' must be a function that queues work on the stream, got ${String(work)}`);
    check(cudart.cudaStreamBeginCapture(this.handle, mode), 'cudaStreamBeginCapture');
    let failure: unknown = null;
    try {
      await work(this);
    } catch (e) {
      failure = e ?? new Error('Stream.capture: the work threw a nullish value');
    }
    const [err, graph] = cudart.cudaStreamEndCapture(this.handle);
    const hostFns = claimCapturedHostFns(this.handle);
    if (failure !== null || err !== cudart.cudaError_t.cudaSuccess) {
      if (graph !== null) cudart.cudaGraphDestroy(graph);
      releaseHostFns(hostFns);
    }
    if (failure !== null) {
      if (err !== cudart.cudaError_t.cudaSuccess) cudart.cudaGetLastError();
      throw failure;
    }
    return new Graph(check([err, graph], 'cudaStreamEndCapture'), this.device, hostFns);
  }

  /**
   * Records the work `work` queues on this stream into `builder`'s graph (after `options.after`),
   * as `builder.capture(stream, work)` does; resolves with the nodes the captured work ends in.
   */
  captureInto(builder: GraphBuilder, work: (stream: this) => unknown, options: NodeOptions & CaptureOptions = {}): Promise<GraphNode[]> {
    this.live('captureInto');
    checkOptions('Stream.captureInto', options, { after: true, mode: true });
    if (
      builder === null ||
      typeof builder !== 'object' ||
      typeof (builder as { capture?: unknown }).capture !== 'function' ||
      builder.constructor?.name !== 'GraphBuilder'
    ) {
      throw new TypeError(
        `Stream.captureInto: parameter 'builder' must be a GraphBuilder, got ${builder === null ? 'null' : typeof builder === 'object' ? `a ${(builder as object).constructor?.name ?? 'object'}` : typeof builder}`,
      );
    }
    return builder.capture(this, work as (stream: Stream) => unknown, options);
  }
}
