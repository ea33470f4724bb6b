// CUDA graphs: work recorded once (stream.capture) and launched many times at a fraction of the
// cost of queuing it call by call; a graph handle of another library, read the same way; the
// executable graph, whose nodes' parameters change without instantiating again.
import * as cudart from '../../runtime';
import { check, runtimeError } from '../base/errors';
import { Resource, holdAll, openArg, openOptionalArg } from '../base/lifetime';
import { checkOptions, type OptionKeys } from '../base/options';
import { addressNumber, directByAddress } from '../base/direct';
import { extend } from '../base/extend';
import { describe } from '../../ffi/checks';
import { launchHostFns, retainHostFns, releaseHostFns } from '../../ffi/host-callbacks';
import { Device } from '../device/Device';
import { Event } from '../device/Event';
import { Stream, openStreamArg } from '../device/Stream';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import {
  ChildGraphNode,
  CopyNode,
  EventNode,
  GraphDefinition,
  GraphNode,
  HostNode,
  KernelNode,
  MemAllocNode,
  MemsetNode,
  kernelParamsWith,
  type KernelNodeChanges,
} from './GraphNode';

declare module './GraphNode' {
  interface ChildGraphNode {
    /**
     * The child graph the node runs, as a Graph that does not own it: CUDA copied the graph given to
     * childGraph(), and the copy lives as long as the node. Read it as any graph; closing it frees nothing.
     */
    readonly childGraph: Graph;
  }
}

const graphLaunch = directByAddress('cudaGraphLaunch', [0, 1]);

/** How an executable graph is made (cudaGraphInstantiateFlags): `graph.instantiate(options)`, `builder.instantiate(options)`. */
export interface InstantiateOptions {
  /**
   * Frees, at each launch, what the graph's allocation nodes allocated at the previous launch and no
   * free node freed (cudaGraphInstantiateFlagAutoFreeOnLaunch). Without it, such memory must be freed
   * (cudaFreeAsync) before the next launch, which CUDA refuses otherwise.
   */
  autoFreeOnLaunch?: boolean;
  /** Schedules kernel nodes by their `priority` attribute rather than the launch stream's (cudaGraphInstantiateFlagUseNodePriority). */
  useNodePriority?: boolean;
  /** Uploads the executable graph on this stream at once (cudaGraphInstantiateFlagUpload), so its first launch is as fast as the rest. */
  upload?: Stream;
  /**
   * Makes a graph that device code can launch (cudaGraphInstantiateFlagDeviceLaunch): upload it
   * before; CUDA allows only kernel, copy and memset nodes on one device in such a graph.
   */
  deviceLaunch?: boolean;
}

/** @internal The keys of InstantiateOptions, for checkOptions. */
export const INSTANTIATE_OPTIONS: OptionKeys<InstantiateOptions> = {
  autoFreeOnLaunch: true,
  useNodePriority: true,
  upload: true,
  deviceLaunch: true,
};

const IF = cudart.cudaGraphInstantiateFlags;
const INSTANTIATE_RESULTS: Readonly<Record<number, string>> = {
  [cudart.cudaGraphInstantiateResult.cudaGraphInstantiateError]: 'an unexpected error',
  [cudart.cudaGraphInstantiateResult.cudaGraphInstantiateInvalidStructure]:
    'the graph is not a valid structure (a cycle, or a node CUDA refuses where it is)',
  [cudart.cudaGraphInstantiateResult.cudaGraphInstantiateNodeOperationNotSupported]:
    'a node does something this kind of instantiation does not support',
  [cudart.cudaGraphInstantiateResult.cudaGraphInstantiateMultipleDevicesNotSupported]: 'a device-launch graph has nodes on several devices',
  [cudart.cudaGraphInstantiateResult.cudaGraphInstantiateConditionalHandleUnused]:
    'a conditional handle is not used by any conditional node',
};

/**
 * @internal Instantiates `graph` (Graph.instantiate, GraphBuilder.instantiate): cudaGraphInstantiate
 * without options, else cudaGraphInstantiateWithParams, whose failure names the node CUDA points at.
 * The GraphExec holds `graph` open (and `held`, through `letGo`) so that its nodes stay valid.
 */
export function instantiateGraph(
  graph: GraphDefinition,
  options: InstantiateOptions,
  fn: string,
  hostFns: readonly bigint[],
  held: readonly unknown[],
): GraphExec {
  checkOptions(fn, options, INSTANTIATE_OPTIONS);
  let flags = 0;
  for (const [key, flag] of [
    ['autoFreeOnLaunch', IF.cudaGraphInstantiateFlagAutoFreeOnLaunch],
    ['useNodePriority', IF.cudaGraphInstantiateFlagUseNodePriority],
    ['deviceLaunch', IF.cudaGraphInstantiateFlagDeviceLaunch],
  ] as const) {
    const on = options[key];
    if (on !== undefined && typeof on !== 'boolean') throw new TypeError(`${fn}: option '${key}' must be a boolean, got ${describe(on)}`);
    if (on) flags |= flag;
  }
  openOptionalArg(options.upload, 'Stream', fn, 'options.upload');
  if (options.upload) flags |= IF.cudaGraphInstantiateFlagUpload;
  graph.device.makeCurrent();
  let handle: cudart.cudaGraphExec_t;
  if (flags === 0) {
    handle = check(cudart.cudaGraphInstantiate(graph.handle, 0), `${fn} (cudaGraphInstantiate)`);
  } else {
    const params = new cudart.cudaGraphInstantiateParams_st({ flags, uploadStream: options.upload?.handle ?? null });
    const [err, exec] = cudart.cudaGraphInstantiateWithParams(graph.handle, params);
    if (err !== cudart.cudaError_t.cudaSuccess || exec === null) {
      cudart.cudaGetLastError();
      const e = runtimeError(err, `${fn} (cudaGraphInstantiateWithParams)`);
      const why = INSTANTIATE_RESULTS[params.result_out];
      const at = params.errNode_out;
      if (why || at) {
        const node = at ? graph.nodeOf(at).label : null;
        e.message += `: ${why ?? 'CUDA refused the graph'}${node ? `; CUDA points at ${node}` : ''}`;
      }
      throw e;
    }
    handle = exec;
  }
  return new GraphExec(handle, graph.device, hostFns, holdAll([graph, ...held]), graph);
}

/** The Graph views of child graph nodes' graphs, made once per node. */
const childGraphs = new WeakMap<ChildGraphNode, Graph>();

/**
 * A CUDA graph recorded by {@link Stream.capture}, a child node's graph, or one of another library
 * wrapped with {@link Graph.fromHandle}: work recorded once, then instantiated into a
 * {@link GraphExec} and launched many times at a fraction of the cost of queuing it call by call.
 * It reads back as a builder's does: `nodes()`, `edges()`, `rootNodes()`, each node's type,
 * predecessors, successors and parameters.
 *
 * Lifetime: close() destroys the graph (cudaGraphDestroy) unless it was borrowed (a child node's, or
 * `fromHandle` without `{ owned: true }`); GraphExecs made from it live on independently (the graph's
 * memory is freed when the last is closed). JS host functions captured into it are kept until it and
 * its GraphExecs are closed or collected. A captured graph does not know which buffers its work uses
 * (CUDA recorded their addresses): keep them open until its GraphExecs are closed ({@link GraphBuilder}
 * does that for you). Methods of a closed graph throw Error; CUDA failures throw {@link CudaError}.
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
export class Graph extends GraphDefinition {
  /**
   * @internal Use stream.capture() or Graph.fromHandle(). `hostFns` are the tokens of the JS host
   * functions captured into it: held until this graph is closed or collected. `owner` is the graph
   * whose node owns this one (a child graph), or null; `owned` says whether close() destroys it.
   */
  constructor(
    handle: cudart.cudaGraph_t,
    device: Device,
    /** @internal */ readonly hostFns: readonly bigint[] = [],
    /** @internal */ readonly owner: GraphDefinition | null = null,
    owned = true,
  ) {
    retainHostFns(hostFns);
    super(
      handle,
      device,
      () => {
        if (owned) cudart.cudaGraphDestroy(handle);
        releaseHostFns(hostFns);
      },
      owner ? [owner] : [device],
    );
  }

  /**
   * Wraps a cudaGraph_t made elsewhere (another library, the runtime facade) to read, instantiate
   * or add as a child. By default the Graph borrows it: close() leaves it to its owner, who must keep
   * it alive meanwhile; with `{ owned: true }` close() destroys it. `device` (default: the current
   * one) is where it is instantiated.
   */
  static fromHandle(handle: cudart.cudaGraph_t | bigint, options: { device?: Device; owned?: boolean } = {}): Graph {
    checkOptions('Graph.fromHandle', options, { device: true, owned: true });
    if (typeof handle !== 'bigint' || handle === 0n)
      throw new TypeError(`Graph.fromHandle: parameter 'handle' must be a cudaGraph_t (a non-zero bigint), got ${describe(handle)}`);
    const device = options.device ?? Device.current();
    if (!(device instanceof Device)) throw new TypeError(`Graph.fromHandle: option 'device' must be a Device, got ${describe(device)}`);
    if (options.owned !== undefined && typeof options.owned !== 'boolean')
      throw new TypeError(`Graph.fromHandle: option 'owned' must be a boolean, got ${describe(options.owned)}`);
    return new Graph(handle as cudart.cudaGraph_t, device, [], null, options.owned ?? false);
  }

  /** @internal Closed, or the graph whose child node owns it was. */
  override closedReason(): string | null {
    if (this.isClosed) return 'the Graph was closed';
    const up = this.owner?.closedReason();
    return up ? `the graph whose child node it is cannot be used (${up})` : null;
  }

  /**
   * Makes an executable graph of it, ready to launch (cudaGraphInstantiate, or
   * cudaGraphInstantiateWithParams with options); close the GraphExec when done. A failure names
   * the node CUDA points at.
   */
  instantiate(options: InstantiateOptions = {}): GraphExec {
    this.alive('instantiate');
    return instantiateGraph(this, options, 'Graph.instantiate', this.hostFns, []);
  }
}

extend(ChildGraphNode, {
  get childGraph(): Graph {
    let g = childGraphs.get(this);
    if (g === undefined) {
      g = new Graph(this.childGraphHandle, this.graph.device, [], this.graph, false);
      childGraphs.set(this, g);
    }
    return g;
  },
});

/** A node of the graph `exec` was made from, of class `cls`; throws naming `fn` and the parameter otherwise. */
function execNode<N extends GraphNode>(
  exec: GraphExec,
  node: unknown,
  cls: abstract new (...args: never[]) => N,
  what: string,
  fn: string,
): N {
  if (!(node instanceof GraphNode)) throw new TypeError(`${fn}: parameter 'node' must be a GraphNode, got ${describe(node)}`);
  if (!(node instanceof cls)) throw new TypeError(`${fn}: parameter 'node' is ${node.label}, not ${what}`);
  if (node.graph.root !== exec.source)
    throw new Error(`${fn}: parameter 'node' is ${node.label} of another graph than the one this GraphExec was made from`);
  return node;
}

/** A destination or source address of an exec update: a DeviceBuffer, a graph allocation or a bigint. */
function execAddress(v: unknown, fn: string, p: string): bigint {
  if (v instanceof DeviceBuffer) {
    const a = v.openAddress();
    if (a === null) throw new Error(`${fn}: '${p}' is a DeviceBuffer that was closed`);
    return a;
  }
  if (v instanceof MemAllocNode) return v.ptr;
  if (typeof v === 'bigint' && v !== 0n) return v;
  throw new TypeError(
    `${fn}: '${p}' must be a DeviceBuffer, a graph allocation (MemAllocNode) or a device address (bigint), got ${describe(v)}`,
  );
}

/**
 * An executable graph, made by `graph.instantiate()` or `builder.instantiate()`: launch it on a
 * stream as often as needed; `update()` swaps in the parameters of a graph of the same shape, and
 * `setKernelParams()` and kin change one node's (cudaGraphExec*SetParams) without instantiating again.
 *
 * Lifetime: close() destroys it (cudaGraphExecDestroy); it keeps the JS host functions alive and
 * holds open the graph it was made from and (for a builder's) what its nodes use: a module, buffer
 * (a tensor map's too), array, event or pinned buffer closed while the GraphExec lives reports closed
 * at once, but is freed only when the GraphExec is closed (or collected), so a launch never reaches
 * freed memory. What a node is given by a set-params call is held the same way. Methods after close
 * throw Error.
 */
export class GraphExec extends Resource {
  /** The handle as a number (exact: an address is below 2^53), for core's directByAddress calls. */
  private readonly handleNumber: number;
  /** The JS host functions its launches may run: its graph's, and those of graphs it was updated from. */
  private readonly hostFns: bigint[];
  /** Let-go functions of what set-params calls gave its nodes. */
  private readonly extraHolds: (() => void)[];

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
    /** @internal The graph it was made from (its nodes are the ones set-params calls take), or null. */
    readonly source: GraphDefinition | null = null,
  ) {
    retainHostFns(hostFns);
    const held = [...hostFns];
    const extra: (() => void)[] = [];
    super(() => {
      cudart.cudaGraphExecDestroy(handle);
      releaseHostFns(held);
      letGo();
      for (const f of extra) f();
    }, [device]);
    this.hostFns = held;
    this.extraHolds = extra;
    this.handleNumber = addressNumber(handle, 'GraphExec');
  }

  /** Queues the whole graph on `stream` (absent: the current stream of a {@link Stream.use}, else the legacy default stream). */
  launch(stream?: Stream): void {
    this.live('launch');
    const st = openStreamArg(stream, 'GraphExec.launch', 'stream');
    const s = st === null ? null : st.handle;
    // Its JS host functions are pending until they ran: a blocking wait meanwhile would deadlock.
    if (this.hostFns.length) launchHostFns(this.hostFns, s);
    const err = graphLaunch.get()(this.handleNumber, st === null ? 0 : st.handleNumber) as cudart.cudaError_t;
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
   * The options it was instantiated with that CUDA reports back (cudaGraphExecGetFlags): on CUDA 13.0
   * with an H100 it reports `autoFreeOnLaunch` and `deviceLaunch`, not `useNodePriority` nor
   * `upload` (an action at instantiation), so those two are not here.
   */
  get flags(): {
    /** cudaGraphInstantiateFlagAutoFreeOnLaunch: the graph's allocations are freed at each launch. */
    autoFreeOnLaunch: boolean;
    /** cudaGraphInstantiateFlagDeviceLaunch: it can be launched from device code. */
    deviceLaunch: boolean;
  } {
    this.live('flags');
    const f = Number(check(cudart.cudaGraphExecGetFlags(this.handle), 'GraphExec.flags (cudaGraphExecGetFlags)'));
    return {
      autoFreeOnLaunch: (f & IF.cudaGraphInstantiateFlagAutoFreeOnLaunch) !== 0,
      deviceLaunch: (f & IF.cudaGraphInstantiateFlagDeviceLaunch) !== 0,
    };
  }

  /**
   * Takes the parameters of `graph` (same shape, other arguments or sizes) without instantiating
   * again (cudaGraphExecUpdate): a captured Graph, or a GraphBuilder's graph built node by node,
   * whose buffers, modules and events the exec then holds open as instantiate() does. Throws a
   * CudaError when the shapes differ (the exec then stays as it was), Error when something the
   * builder's nodes use was closed.
   */
  update(graph: GraphDefinition): void {
    this.live('update');
    if (!(graph instanceof GraphDefinition))
      throw new TypeError(`GraphExec.update: parameter 'graph' must be a Graph or a GraphBuilder, got ${describe(graph)}`);
    openArg(graph, graph.constructor.name, 'GraphExec.update', 'graph');
    graph.checkUsable('GraphExec.update');
    const [err] = cudart.cudaGraphExecUpdate(this.handle, graph.handle);
    if (err !== cudart.cudaError_t.cudaSuccess) {
      cudart.cudaGetLastError();
      const e = runtimeError(err, 'cudaGraphExecUpdate');
      e.message +=
        ': the graph differs from the one this exec was made from in more than parameters (its nodes, their types or their order); instantiate it instead';
      throw e;
    }
    // The exec now runs the other graph's nodes: hold what they use, and its JS host functions.
    this.hold([graph]);
    if (!(graph instanceof Graph)) return;
    const added = graph.hostFns.filter((t) => !this.hostFns.includes(t));
    retainHostFns(added);
    this.hostFns.push(...added);
  }

  /** Holds `items` open while the exec lives (what a set-params call gave a node). */
  private hold(items: readonly unknown[]): void {
    if (items.length) this.extraHolds.push(holdAll(items));
  }

  /**
   * Changes a kernel node's kernel, grid, block, shared memory or arguments in this executable graph
   * only (cudaGraphExecKernelNodeSetParams): the next launches use them; the graph's node keeps its
   * own. The kernel must be of the same context; CUDA refuses a node of a conditional body.
   */
  setKernelParams(node: KernelNode, changes: KernelNodeChanges): void {
    const fn = `GraphExec.setKernelParams(${node instanceof KernelNode && node.kernel ? node.kernel.name : 'kernel'})`;
    this.live('setKernelParams');
    const n = execNode(this, node, KernelNode, 'a kernel node', fn);
    const [params, used] = kernelParamsWith(n, changes, fn, 'setKernelParams');
    check(cudart.cudaGraphExecKernelNodeSetParams(this.handle, n.handle, params), `${fn} (cudaGraphExecKernelNodeSetParams)`);
    this.hold(used);
  }

  /** Changes a memset node's destination or value in this executable graph only (cudaGraphExecMemsetNodeSetParams). */
  setMemsetParams(node: MemsetNode, changes: { dst?: DeviceBuffer | MemAllocNode | bigint; value?: number }): void {
    const fn = 'GraphExec.setMemsetParams';
    this.live('setMemsetParams');
    const n = execNode(this, node, MemsetNode, 'a memset node', fn);
    checkOptions(fn, changes, { dst: true, value: true }, 'changes');
    const p = n.params('setMemsetParams');
    if (changes.dst !== undefined) p.dst = execAddress(changes.dst, fn, 'changes.dst');
    if (changes.value !== undefined) {
      const max = 2 ** (8 * p.elementSize) - 1;
      if (!Number.isInteger(changes.value) || changes.value < 0 || changes.value > max)
        throw new RangeError(
          `${fn}: 'changes.value' must be an integer within [0, ${max}] for ${p.elementSize}-byte elements, got ${describe(changes.value)}`,
        );
      p.value = changes.value;
    }
    check(cudart.cudaGraphExecMemsetNodeSetParams(this.handle, n.handle, p), `${fn} (cudaGraphExecMemsetNodeSetParams)`);
    this.hold([changes.dst]);
  }

  /** Changes a copy node's destination or source in this executable graph only (cudaGraphExecMemcpyNodeSetParams); the extent stays. */
  setCopyParams(node: CopyNode, changes: { dst?: DeviceBuffer | MemAllocNode | bigint; src?: DeviceBuffer | MemAllocNode | bigint }): void {
    const fn = 'GraphExec.setCopyParams';
    this.live('setCopyParams');
    const n = execNode(this, node, CopyNode, 'a copy node', fn);
    checkOptions(fn, changes, { dst: true, src: true }, 'changes');
    const p = n.params('setCopyParams');
    if (changes.dst !== undefined) p.dstPtr.ptr = execAddress(changes.dst, fn, 'changes.dst');
    if (changes.src !== undefined) p.srcPtr.ptr = execAddress(changes.src, fn, 'changes.src');
    check(cudart.cudaGraphExecMemcpyNodeSetParams(this.handle, n.handle, p), `${fn} (cudaGraphExecMemcpyNodeSetParams)`);
    this.hold([changes.dst, changes.src]);
  }

  /**
   * Makes a host node call another function in this executable graph only
   * (cudaGraphExecHostNodeSetParams): a JS function, or a C function pointer with its `userData`.
   */
  setHostFunction(node: HostNode, fn: (() => void) | bigint, userData?: bigint): void {
    const where = 'GraphExec.setHostFunction';
    this.live('setHostFunction');
    const n = execNode(this, node, HostNode, 'a host node', where);
    const params = hostNodeParams(fn, userData, where);
    check(cudart.cudaGraphExecHostNodeSetParams(this.handle, n.handle, params), `${where} (cudaGraphExecHostNodeSetParams)`);
  }

  /** Makes an event record or wait node use another event in this executable graph only. */
  setEvent(node: EventNode, event: Event): void {
    const fn = 'GraphExec.setEvent';
    this.live('setEvent');
    const n = execNode(this, node, EventNode, 'an event node', fn);
    openArg(event, 'Event', fn, 'event');
    if (n.type === 'eventRecord')
      check(
        cudart.cudaGraphExecEventRecordNodeSetEvent(this.handle, n.handle, event.handle),
        `${fn} (cudaGraphExecEventRecordNodeSetEvent)`,
      );
    else
      check(cudart.cudaGraphExecEventWaitNodeSetEvent(this.handle, n.handle, event.handle), `${fn} (cudaGraphExecEventWaitNodeSetEvent)`);
    this.hold([event]);
  }

  /**
   * Gives a child graph node the parameters of `graph` (of the same shape as its child graph) in
   * this executable graph only (cudaGraphExecChildGraphNodeSetParams).
   */
  setChildGraph(node: ChildGraphNode, graph: GraphDefinition): void {
    const fn = 'GraphExec.setChildGraph';
    this.live('setChildGraph');
    const n = execNode(this, node, ChildGraphNode, 'a child graph node', fn);
    if (!(graph instanceof GraphDefinition))
      throw new TypeError(`${fn}: parameter 'graph' must be a Graph or a GraphBuilder, got ${describe(graph)}`);
    const why = graph.closedReason();
    if (why !== null) throw new Error(`${fn}: parameter 'graph' cannot be used: ${why}`);
    check(cudart.cudaGraphExecChildGraphNodeSetParams(this.handle, n.handle, graph.handle), `${fn} (cudaGraphExecChildGraphNodeSetParams)`);
    this.hold([graph]);
  }

  /** Turns a kernel, copy or memset node off (it does nothing at launch) or on again, in this executable graph (cudaGraphNodeSetEnabled). */
  setEnabled(node: GraphNode, enabled: boolean): void {
    const fn = 'GraphExec.setEnabled';
    this.live('setEnabled');
    const n = execNode(this, node, GraphNode, 'a node', fn);
    if (typeof enabled !== 'boolean') throw new TypeError(`${fn}: parameter 'enabled' must be a boolean, got ${describe(enabled)}`);
    check(cudart.cudaGraphNodeSetEnabled(this.handle, n.handle, enabled ? 1 : 0), `${fn} (cudaGraphNodeSetEnabled, ${n.label})`);
  }

  /** Whether a kernel, copy or memset node is on in this executable graph (cudaGraphNodeGetEnabled). */
  isEnabled(node: GraphNode): boolean {
    const fn = 'GraphExec.isEnabled';
    this.live('isEnabled');
    const n = execNode(this, node, GraphNode, 'a node', fn);
    return check(cudart.cudaGraphNodeGetEnabled(this.handle, n.handle), `${fn} (cudaGraphNodeGetEnabled, ${n.label})`) !== 0;
  }
}

/**
 * @internal A host node's parameters: a JS function, or a C function pointer (bigint) with its
 * `userData`. Throws TypeError naming `where` and the parameter.
 */
export function hostNodeParams(fn: unknown, userData: unknown, where: string): cudart.cudaHostNodeParams {
  if (typeof fn === 'function') {
    if (userData !== undefined)
      throw new TypeError(`${where}: 'userData' is for a C function pointer; a JS function takes its data from its closure`);
    return new cudart.cudaHostNodeParams({ fn: fn as (userData: bigint) => void, userData: 0n });
  }
  if (typeof fn === 'bigint' && fn !== 0n) {
    if (userData !== undefined && typeof userData !== 'bigint')
      throw new TypeError(`${where}: 'userData' must be a pointer (bigint), got ${describe(userData)}`);
    return new cudart.cudaHostNodeParams({ fn, userData: userData ?? 0n });
  }
  throw new TypeError(`${where}: parameter 'fn' must be a function or a C function pointer (a non-zero bigint), got ${describe(fn)}`);
}
