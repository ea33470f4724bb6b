// CUDA graphs: work recorded once (stream.capture) and launched many times at a fraction of the
// cost of queuing it call by call.
import * as cudart from '../../runtime';
import { check, runtimeError } from '../base/errors';
import { Resource, openArg, openOptionalArg } from '../base/lifetime';
import { launchHostFns, retainHostFns, releaseHostFns } from '../../ffi/host-callbacks';
import type { Device } from '../device/Device';
import type { Stream } from '../device/Stream';
import { debugDot } from './debug-dot';
import { checkOptions } from '../base/options';

/**
 * A CUDA graph recorded by {@link Stream.capture} (or {@link GraphBuilder}'s graph): work recorded
 * once, then instantiated into a {@link GraphExec} and launched many times at a fraction of the cost
 * of queuing it call by call.
 *
 * Lifetime: close() destroys the graph (cudaGraphDestroy); GraphExecs made from it live on
 * independently. JS host functions captured into it are kept until it and its GraphExecs are
 * closed or collected. A captured graph does not know which buffers its work uses (CUDA recorded
 * their addresses): keep them open until its GraphExecs are closed ({@link GraphBuilder} does that
 * for you). Methods of a closed graph throw Error; CUDA failures throw {@link CudaError}.
 *
 * @example
 * ```ts
 * using graph = await stream.capture((s) => {
 *   step.launch({ grid: 64, block: 256, stream: s }, state, i32(n));
 *   buf.copyTo(out, { stream: s });
 * });
 * using exec = graph.instantiate();
 * for (let i = 0; i < 1000; i++) exec.launch(stream);
 * await stream.synchronize();
 * ```
 */
export class Graph extends Resource {
  /**
   * @internal Use stream.capture(). `hostFns` are the tokens of the JS host functions captured
   * into it: held until this graph is closed or collected.
   */
  constructor(
    /** The runtime handle (cudaGraph_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaGraph_t,
    /** The device the graph was recorded on (where it is instantiated). */
    readonly device: Device,
    /** @internal */ readonly hostFns: readonly bigint[] = [],
  ) {
    retainHostFns(hostFns);
    super(() => {
      cudart.cudaGraphDestroy(handle);
      releaseHostFns(hostFns);
    }, [device]);
  }

  /** How many nodes (kernels, copies, host functions, …) the graph has. */
  get nodeCount(): number {
    this.live('nodeCount');
    const [, n] = check(cudart.cudaGraphGetNodes(this.handle, 0), 'cudaGraphGetNodes');
    return n;
  }

  /** Writes the graph as Graphviz DOT to `path` (with every node's parameters when `verbose`). */
  debugDot(path: string, options: { verbose?: boolean } = {}): void {
    checkOptions('Graph.debugDot', options, { verbose: true });
    this.live('debugDot');
    debugDot(this.handle, path, options, 'Graph.debugDot');
  }

  /** Makes an executable graph of it, ready to launch (cudaGraphInstantiate); close the GraphExec when done. */
  instantiate(): GraphExec {
    this.live('instantiate');
    this.device.makeCurrent();
    return new GraphExec(check(cudart.cudaGraphInstantiate(this.handle, 0), 'cudaGraphInstantiate'), this.device, this.hostFns);
  }
}

/**
 * An executable graph, made by `graph.instantiate()` or `builder.instantiate()`: launch it on a
 * stream as often as needed; `update()` swaps in the parameters of a graph of the same shape.
 *
 * Lifetime: close() destroys it (cudaGraphExecDestroy); it keeps the JS host functions alive and
 * (for a builder's) holds open what its nodes use: a module, buffer, array, event or pinned buffer
 * closed while the GraphExec lives reports closed at once, but is freed only when the GraphExec is
 * closed (or collected), so a launch never reaches freed memory. Methods after close throw Error.
 */
export class GraphExec extends Resource {
  /** The JS host functions its launches may run: its graph's, and those of graphs it was updated from. */
  private readonly hostFns: bigint[];

  /**
   * @internal Use graph.instantiate() or builder.instantiate(). `letGo` lets go of what the exec
   * holds open (holdAll of what its nodes use), after the exec is destroyed.
   */
  constructor(
    /** The runtime handle (cudaGraphExec_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaGraphExec_t,
    /** The device it was instantiated on. */
    readonly device: Device,
    hostFns: readonly bigint[] = [],
    letGo: () => void = () => undefined,
  ) {
    retainHostFns(hostFns);
    const held = [...hostFns];
    super(() => {
      cudart.cudaGraphExecDestroy(handle);
      releaseHostFns(held);
      letGo();
    }, [device]);
    this.hostFns = held;
  }

  /** Queues the whole graph on `stream` (the legacy default stream when absent). */
  launch(stream?: Stream): void {
    this.live('launch');
    openOptionalArg(stream, 'Stream', 'GraphExec.launch', 'stream');
    const s = stream?.handle ?? null;
    // Its JS host functions are pending until they ran: a blocking wait meanwhile would deadlock.
    if (this.hostFns.length) launchHostFns(this.hostFns, s);
    const [err] = cudart.cudaGraphLaunch(this.handle, s);
    if (err !== cudart.cudaError_t.cudaSuccess) {
      if (this.hostFns.length) launchHostFns(this.hostFns, s, true);
      check([err], 'cudaGraphLaunch');
    }
  }

  /** Uploads the graph to the device ahead of its first launch, so that launch is as fast as the rest. */
  upload(stream?: Stream): void {
    this.live('upload');
    openOptionalArg(stream, 'Stream', 'GraphExec.upload', 'stream');
    check(cudart.cudaGraphUpload(this.handle, stream?.handle ?? null), 'cudaGraphUpload');
  }

  /**
   * Takes the parameters of `graph` (same shape, other arguments or sizes) without instantiating
   * again; throws a CudaError when the shapes differ, and the exec then stays as it was.
   */
  update(graph: Graph): void {
    this.live('update');
    openArg(graph, 'Graph', 'GraphExec.update', 'graph');
    const [err] = cudart.cudaGraphExecUpdate(this.handle, graph.handle);
    if (err !== cudart.cudaError_t.cudaSuccess) {
      cudart.cudaGetLastError();
      const e = runtimeError(err, 'cudaGraphExecUpdate');
      e.message +=
        ': the graph differs from the one this exec was made from in more than parameters (its nodes, their types or their order); instantiate it instead';
      throw e;
    }
    // The exec now runs the other graph's host functions: hold them too.
    const added = graph.hostFns.filter((t) => !this.hostFns.includes(t));
    retainHostFns(added);
    this.hostFns.push(...added);
  }
}
