// CUDA graphs: work recorded once (stream.capture) and launched many times at a fraction of the
// cost of queuing it call by call.
import { cudart } from '../index';
import { check, runtimeError } from './errors';
import { Resource } from './lifetime';
import type { Device } from './Device';
import type { Stream } from './Stream';
import { debugDot } from './debug-dot';

export class Graph extends Resource {
  /** @internal Use stream.capture(). */
  constructor(
    readonly handle: cudart.cudaGraph_t,
    readonly device: Device,
  ) {
    super(() => void cudart.cudaGraphDestroy(handle), [device]);
  }

  /** How many nodes (kernels, copies, host functions, …) the graph has. */
  get nodeCount(): number {
    this.live('nodeCount');
    const [, n] = check(cudart.cudaGraphGetNodes(this.handle, 0), 'cudaGraphGetNodes');
    return n;
  }

  /** Writes the graph as Graphviz DOT to `path` (with every node's parameters when `verbose`). */
  debugDot(path: string, options: { verbose?: boolean } = {}): void {
    this.live('debugDot');
    debugDot(this.handle, path, options, 'Graph.debugDot');
  }

  /** Makes an executable graph of it, ready to launch. */
  instantiate(): GraphExec {
    this.live('instantiate');
    this.device.makeCurrent();
    return new GraphExec(check(cudart.cudaGraphInstantiate(this.handle, 0), 'cudaGraphInstantiate'), this.device);
  }
}

export class GraphExec extends Resource {
  /** @internal Use graph.instantiate(). */
  constructor(
    readonly handle: cudart.cudaGraphExec_t,
    readonly device: Device,
  ) {
    super(() => void cudart.cudaGraphExecDestroy(handle), [device]);
  }

  /** Queues the whole graph on `stream` (the legacy default stream when absent). */
  launch(stream?: Stream): void {
    this.live('launch');
    check(cudart.cudaGraphLaunch(this.handle, stream?.handle ?? null), 'cudaGraphLaunch');
  }

  /** Uploads the graph to the device ahead of its first launch, so that launch is as fast as the rest. */
  upload(stream?: Stream): void {
    this.live('upload');
    check(cudart.cudaGraphUpload(this.handle, stream?.handle ?? null), 'cudaGraphUpload');
  }

  /**
   * Takes the parameters of `graph` (same shape, other arguments or sizes) without instantiating
   * again; throws a CudaError when the shapes differ, and the exec then stays as it was.
   */
  update(graph: Graph): void {
    this.live('update');
    if (!(graph instanceof Graph) || graph.isClosed) throw new TypeError(`GraphExec.update: parameter 'graph' must be an open Graph, got ${graph instanceof Graph ? 'a closed one' : String(graph)}`);
    const [err] = cudart.cudaGraphExecUpdate(this.handle, graph.handle);
    if (err !== cudart.cudaError_t.cudaSuccess) {
      cudart.cudaGetLastError();
      const e = runtimeError(err, 'cudaGraphExecUpdate');
      e.message += ': the graph differs from the one this exec was made from in more than parameters (its nodes, their types or their order); instantiate it instead';
      throw e;
    }
  }
}
