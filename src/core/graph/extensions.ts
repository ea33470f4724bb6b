// What the graph room adds to Stream (capturing its work into a Graph, or into a GraphBuilder's
// graph) and to Device (its graph memory pool: usage, trim). Stream.ts and Device.ts import nothing
// of graphs for it (see base/extend.ts).
import * as cudart from '../../runtime';
import { claimCapturedHostFns, releaseHostFns } from '../../ffi/host-callbacks';
import { describe, lookupName } from '../../ffi/checks';
import { check } from '../base/errors';
import { extend } from '../base/extend';
import { assertOpen, holdOpen } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { Device } from '../device/Device';
import { Stream } from '../device/Stream';
import { Graph } from './Graph';
import type { GraphNode } from './GraphNode';
import { CAPTURE_MODES, CAPTURE_OPTIONS, type CaptureOptions, type GraphBuilder, type NodeOptions } from './GraphBuilder';
import { StreamGraphBuilder } from './StreamGraphBuilder';

/** What a device's graph memory pool holds (cudaDeviceGetGraphMemAttribute), in bytes. */
export interface GraphMemoryUsage {
  /** Memory graphs' allocation nodes hold now (allocated and not yet freed). */
  used: number;
  /** The most `used` was since the last resetGraphMemoryHighWatermarks(). */
  usedHigh: number;
  /** Memory the pool holds from the device now, used or kept for reuse (trimGraphMemory() gives the unused back). */
  reserved: number;
  /** The most `reserved` was since the last resetGraphMemoryHighWatermarks(). */
  reservedHigh: number;
}

declare module '../device/Device' {
  interface Device {
    /** What the device's graph memory pool (the memory of graphs' allocation nodes) holds now, and the high watermarks. */
    graphMemoryUsage(): GraphMemoryUsage;
    /**
     * Gives the graph memory pool's memory that no graph uses (none of its launches is running or
     * queued) back to the device (cudaDeviceGraphMemTrim).
     */
    trimGraphMemory(): void;
    /** Resets `usedHigh` and `reservedHigh` of graphMemoryUsage() to zero (cudaDeviceSetGraphMemAttribute). */
    resetGraphMemoryHighWatermarks(): void;
    /** A builder that captures a graph on a new stream of this device (cuda.core's `create_graph_builder`); the builder closes the stream. */
    createGraphBuilder(): StreamGraphBuilder;
  }
}

declare module '../device/Stream' {
  interface Stream {
    /**
     * Records the work `work` queues on this stream (kernels, copies, host functions) into a Graph
     * instead of running it. If `work` throws, the capture ends, its graph is dropped and the error
     * is rethrown. JS host functions captured (onComplete, cudaLaunchHostFunc) run at every launch of
     * the graph and are kept until the Graph and the GraphExecs made from it are closed or collected.
     *
     * The stream is held open until the capture has ended: closing it while `work` runs (the work
     * itself, or other code while it awaits) marks it closed at once (nothing more can be queued on
     * it) but destroys it only after cudaStreamEndCapture, so the capture always ends and resolves
     * with the Graph of what was queued.
     */
    capture(work: (stream: this) => unknown, options?: CaptureOptions): Promise<Graph>;
    /**
     * Records the work `work` queues on this stream into `builder`'s graph (after `options.after`),
     * as `builder.capture(stream, work)` does; resolves with the nodes the captured work ends in.
     */
    captureInto(builder: GraphBuilder, work: (stream: this) => unknown, options?: NodeOptions & CaptureOptions): Promise<GraphNode[]>;
    /** A builder that captures a graph from the work queued on this stream (cuda.core's `create_graph_builder`); the stream stays yours. */
    createGraphBuilder(): StreamGraphBuilder;
  }
}

extend(Stream, {
  async capture(work: (stream: Stream) => unknown, options: CaptureOptions = {}): Promise<Graph> {
    assertOpen(this, 'capture');
    checkOptions('Stream.capture', options, CAPTURE_OPTIONS);
    const mode = lookupName(CAPTURE_MODES, options.mode ?? 'global', 'Stream.capture', "option 'mode'");
    if (typeof work !== 'function')
      throw new TypeError(`Stream.capture: parameter 'work' must be a function that queues work on the stream, got ${describe(work)}`);
    check(cudart.cudaStreamBeginCapture(this.handle, mode), 'cudaStreamBeginCapture');
    const letGo = this[holdOpen]();
    let failure: unknown = null;
    try {
      await work(this);
    } catch (e) {
      failure = e ?? new Error('Stream.capture: the work threw a nullish value');
    }
    const [err, graph] = cudart.cudaStreamEndCapture(this.handle);
    const hostFns = claimCapturedHostFns(this.handle);
    // A close() during the work destroys the stream now, its capture over.
    letGo();
    if (failure !== null || err !== cudart.cudaError_t.cudaSuccess) {
      if (graph !== null) cudart.cudaGraphDestroy(graph);
      releaseHostFns(hostFns);
    }
    if (failure !== null) {
      if (err !== cudart.cudaError_t.cudaSuccess) cudart.cudaGetLastError();
      throw failure;
    }
    return new Graph(check([err, graph], 'cudaStreamEndCapture'), this.device, hostFns);
  },

  captureInto(builder: GraphBuilder, work: (stream: Stream) => unknown, options: NodeOptions & CaptureOptions = {}): Promise<GraphNode[]> {
    assertOpen(this, 'captureInto');
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
    return builder.capture(this, work, options);
  },

  createGraphBuilder(): StreamGraphBuilder {
    assertOpen(this, 'createGraphBuilder');
    return StreamGraphBuilder.create(this, false);
  },
});

const GM = cudart.cudaGraphMemAttributeType;

extend(Device, {
  graphMemoryUsage(): GraphMemoryUsage {
    const get = (attr: cudart.cudaGraphMemAttributeType, name: string) =>
      Number(
        check(
          cudart.cudaDeviceGetGraphMemAttribute(this.ordinal, attr),
          `Device.graphMemoryUsage (cudaDeviceGetGraphMemAttribute ${name})`,
        ),
      );
    return {
      used: get(GM.cudaGraphMemAttrUsedMemCurrent, 'cudaGraphMemAttrUsedMemCurrent'),
      usedHigh: get(GM.cudaGraphMemAttrUsedMemHigh, 'cudaGraphMemAttrUsedMemHigh'),
      reserved: get(GM.cudaGraphMemAttrReservedMemCurrent, 'cudaGraphMemAttrReservedMemCurrent'),
      reservedHigh: get(GM.cudaGraphMemAttrReservedMemHigh, 'cudaGraphMemAttrReservedMemHigh'),
    };
  },

  createGraphBuilder(): StreamGraphBuilder {
    return StreamGraphBuilder.create(this.createStream(), true);
  },

  trimGraphMemory(): void {
    check(cudart.cudaDeviceGraphMemTrim(this.ordinal), 'Device.trimGraphMemory (cudaDeviceGraphMemTrim)');
  },

  resetGraphMemoryHighWatermarks(): void {
    for (const [attr, name] of [
      [GM.cudaGraphMemAttrUsedMemHigh, 'cudaGraphMemAttrUsedMemHigh'],
      [GM.cudaGraphMemAttrReservedMemHigh, 'cudaGraphMemAttrReservedMemHigh'],
    ] as const)
      check(
        cudart.cudaDeviceSetGraphMemAttribute(this.ordinal, attr, 0n),
        `Device.resetGraphMemoryHighWatermarks (cudaDeviceSetGraphMemAttribute ${name})`,
      );
  },
});
