// Graphs built node by node (cuda.core's GraphBuilder): kernels with typed arguments, copies,
// memsets, JS host functions, event records and waits, child graphs, and conditional nodes whose
// bodies are builders too; stream work captured into the graph; then instantiate().
import koffi from 'koffi';
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource, article, holdAll } from '../base/lifetime';
import { Device } from '../device/Device';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { HostBuffer } from '../memory/HostBuffer';
import { Event } from '../device/Event';
import { Graph, GraphExec } from './Graph';
import { Kernel } from '../launch/Kernel';
import { Stream } from '../device/Stream';
import { asKernelArgument, kernelArgument, type KernelArgument, type KernelArgumentObject } from '../launch/kernel-argument';
import { EXTENDED_LAUNCH_KEYS, type Dim } from '../launch/launch-config';
import { checkLimits, kernelNodeAttributes, resolveLaunch, setKernelNodeAttributes } from '../launch/extended-launch';
import { debugDot } from './debug-dot';
import { describe } from '../../ffi/checks';
import { closedObject } from '../texture/TextureObject';
import { checkOptions, type OptionKeys } from '../base/options';

/** What kind of work a node does. */
export type GraphNodeKind =
  'kernel' | 'copy' | 'memset' | 'host' | 'eventRecord' | 'eventWait' | 'child' | 'empty' | 'if' | 'while' | 'switch' | 'captured';

/**
 * A node of a graph made with {@link GraphBuilder}: pass it in a later node's `after` to make that
 * node wait for it. It owns nothing (the graph does) and is valid while its builder is open.
 */
export class GraphNode {
  /** @internal Made by GraphBuilder's node methods. */
  constructor(
    /** The runtime handle (cudaGraphNode_t), for the `cuda-bindings/runtime` facade. */
    readonly handle: cudart.cudaGraphNode_t,
    /** What the node does: 'kernel', 'copy', 'memset', 'host', 'if', … */
    readonly kind: GraphNodeKind,
    /** The builder whose graph holds the node. */
    readonly builder: GraphBuilder,
  ) {}
}

/**
 * The value a conditional graph node (if, while, switch) reads, made by
 * `builder.conditionalHandle({ default })`: pass it to a kernel node as an argument, and the kernel
 * sets it with `cudaGraphSetConditional(handle, value)`. It owns nothing; it lives with its graph.
 */
export class ConditionalHandle implements KernelArgumentObject {
  /** @internal Use builder.conditionalHandle(). */
  constructor(
    /** The 64-bit handle a kernel takes as a `cudaGraphConditionalHandle` (a `u64`) parameter. */
    readonly handle: cudart.cudaGraphConditionalHandle,
    /** The value set at each launch, or null when a kernel must set it each time. */
    readonly defaultValue: number | null,
    /** The builder whose graph it belongs to. */
    readonly builder: GraphBuilder,
  ) {}

  /** Whether the graph it belongs to was closed. */
  get isClosed(): boolean {
    return this.builder.isClosed;
  }

  /** Its 64-bit handle as a `u64` kernel argument (launch calls this); throws Error once its graph was closed. */
  [asKernelArgument](i: number, where: string): cudart.KernelArgInput {
    if (this.isClosed) throw new Error(`${where}: argument ${i} is a ConditionalHandle of a graph that was closed`);
    return cudart.u64(this.handle);
  }
}

/** How {@link Stream.capture} and {@link GraphBuilder.capture} record a graph. */
export interface CaptureOptions {
  /**
   * Which unsafe calls from other code are refused while capturing (cudaStreamCaptureMode):
   * 'global' (the default), 'threadLocal' or 'relaxed'.
   */
  mode?: 'global' | 'threadLocal' | 'relaxed';
}

/** The keys of CaptureOptions, for checkOptions. */
export const CAPTURE_OPTIONS: OptionKeys<CaptureOptions> = { mode: true };

/** @internal cudaStreamCaptureMode by the names CaptureOptions.mode takes. */
export const CAPTURE_MODES = {
  global: cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal,
  threadLocal: cudart.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal,
  relaxed: cudart.cudaStreamCaptureMode.cudaStreamCaptureModeRelaxed,
};

/** Where a node goes: after which nodes of the same graph (none: it may run first). */
export interface NodeOptions {
  /** The nodes (of this builder's graph) that must finish before this one starts; absent or []: none. */
  after?: readonly GraphNode[];
}

const NODE_OPTIONS: OptionKeys<NodeOptions> = { after: true };
const MEMSET_OPTIONS: OptionKeys<NodeOptions & { elementSize?: 1 | 2 | 4 }> = { after: true, elementSize: true };
const IF_OPTIONS: OptionKeys<NodeOptions & { else?: boolean }> = { after: true, else: true };
const CAPTURE_NODE_OPTIONS: OptionKeys<NodeOptions & CaptureOptions> = { after: true, mode: true };

/** A kernel node's sizes (a launch config without a stream: the graph's launch gives that). */
export interface KernelNodeConfig {
  /** Blocks in the grid. */
  grid: Dim;
  /** Threads in a block. */
  block: Dim;
  /** Dynamic shared memory per block, in bytes (default 0). */
  sharedMem?: number;
  /** Blocks per thread-block cluster (the node's cluster attribute); `grid` then counts clusters, as in a launch. */
  cluster?: Dim;
  /** A cooperative kernel node (the grid is checked against occupancy first). */
  cooperative?: boolean;
}

/** The bodies of an `if` node: `then` runs when the handle is non-zero, `else` (when asked for) when it is zero. */
export interface IfNode {
  /** The conditional node itself, for other nodes' `after`. */
  node: GraphNode;
  /** The body run when the handle is non-zero: add nodes to it as to any builder. */
  then: GraphBuilder;
  /** The body run when the handle is zero, or null unless `{ else: true }` was asked for. */
  else: GraphBuilder | null;
}

/** A `while` node: `body` runs again and again while the handle is non-zero (checked before each run). */
export interface WhileNode {
  /** The conditional node itself, for other nodes' `after`. */
  node: GraphNode;
  /** The loop's body: a kernel in it sets the handle to 0 to stop. */
  body: GraphBuilder;
}

/** A `switch` node: `cases[n]` runs when the handle is n; none when it is past the last case. */
export interface SwitchNode {
  /** The conditional node itself, for other nodes' `after`. */
  node: GraphNode;
  /** One body per case, `cases[0]` for value 0 and so on. */
  cases: GraphBuilder[];
}

const MEMCPY_DEFAULT = cudart.cudaMemcpyKind.cudaMemcpyDefault;
const COND = cudart.cudaGraphConditionalNodeType;

/**
 * A graph built node by node (cuda.core's GraphBuilder): kernels with typed arguments, copies,
 * memsets, JS host functions, event records and waits, child graphs, conditional nodes (if, while,
 * switch) whose bodies are builders too, and stream work captured into it; then `instantiate()`.
 * Each node method returns a {@link GraphNode} that later nodes name in `after`; without `after`
 * a node has no dependencies and may run first.
 *
 * Lifetime: close() destroys the graph; a body builder (of a conditional node) belongs to its parent's
 * graph and is freed with it. Nodes check what they use when they are added, and `instantiate()`
 * checks again that none of it was closed since. A GraphExec it instantiates holds open the builder
 * and every module, buffer, array, texture, event and pinned buffer its nodes (bodies and child
 * builders included) use: closing one of them while the GraphExec lives marks it closed at once but
 * frees it only when the GraphExec is closed, so a launch never reaches freed memory. Bad arguments
 * throw TypeError or RangeError naming the method; CUDA failures throw {@link CudaError}.
 *
 * @example
 * ```ts
 * using builder = GraphBuilder.create(dev);
 * const up = builder.copy(dBuf, pinned);
 * const run = builder.kernel(kernel, { grid: 64, block: 256 }, [dBuf, i32(n)], { after: [up] });
 * builder.copy(pinned, dBuf, undefined, { after: [run] });
 * using exec = builder.instantiate();
 * exec.launch(stream);
 * await stream.synchronize();
 * ```
 */
export class GraphBuilder extends Resource {
  /** What the nodes use that could be closed (and body or child builders), with the kind of the node that first used it. */
  private readonly uses = new Map<Resource | HostBuffer, GraphNodeKind>();

  private constructor(
    /** The runtime handle (cudaGraph_t) of the graph being built, for the `cuda-bindings/runtime` facade. */
    readonly handle: cudart.cudaGraph_t,
    /** The device the graph is built for. */
    readonly device: Device,
    /** The builder of the graph whose conditional node owns this body, or null for a graph of its own. */
    readonly parent: GraphBuilder | null,
    free: () => void,
  ) {
    super(free, parent ? [parent] : [device]);
  }

  /** An empty graph to build on `device` (default: the current one); throws TypeError when `device` is not a Device. */
  static create(device: Device = Device.current()): GraphBuilder {
    if (!(device instanceof Device))
      throw new TypeError(`GraphBuilder.create: parameter 'device' must be a Device, got ${describe(device)}`);
    device.makeCurrent();
    const g = check(cudart.cudaGraphCreate(0), 'GraphBuilder.create (cudaGraphCreate)');
    return new GraphBuilder(g, device, null, () => void cudart.cudaGraphDestroy(g));
  }

  /** Throws when this builder, or the graph a body belongs to, was closed. */
  private alive(what: string): void {
    this.live(what);
    for (let p = this.parent; p; p = p.parent)
      if (p.isClosed) throw new Error(`GraphBuilder.${what}: the graph this conditional body belongs to was closed`);
  }

  /** The handles of `options.after`, checked to be nodes of this graph. */
  private deps(
    options: NodeOptions | undefined,
    what: string,
    allowed: OptionKeys<object> = NODE_OPTIONS,
  ): cudart.cudaGraphNode_t[] | null {
    if (options === undefined) return null;
    checkOptions<object>(`GraphBuilder.${what}`, options, allowed);
    const after = options.after;
    if (after === undefined || after.length === 0) return null;
    if (!Array.isArray(after))
      throw new TypeError(`GraphBuilder.${what}: option 'after' must be an array of GraphNodes, got ${describe(after)}`);
    return after.map((n, i) => {
      if (!(n instanceof GraphNode))
        throw new TypeError(`GraphBuilder.${what}: option 'after[${i}]' must be a GraphNode, got ${describe(n)}`);
      if (n.builder !== this)
        throw new Error(
          `GraphBuilder.${what}: option 'after[${i}]' is a node of another graph; a node can only follow nodes of its own graph (or body)`,
        );
      return n.handle;
    });
  }

  private add(r: [cudart.cudaError_t, cudart.cudaGraphNode_t | null], kind: GraphNode['kind'], fn: string): GraphNode {
    return new GraphNode(check(r, fn), kind, this);
  }

  /**
   * Keeps `items` (what a `kind` node uses) alive with the builder, and notes those that can be
   * closed for instantiate() to check and its GraphExec to hold open. A captured Graph added as a
   * child is not noted: CUDA copied it, and closing it frees nothing the copy uses.
   */
  private use(kind: GraphNodeKind, ...items: unknown[]): void {
    this.keep.push(...items);
    for (const x of items)
      if (((x instanceof Resource && !(x instanceof Graph)) || x instanceof HostBuffer) && !this.uses.has(x)) this.uses.set(x, kind);
  }

  /** Throws when something a node uses (in this graph, a body or a child builder) was closed since the node was added. */
  private checkUses(seen: Set<GraphBuilder>): void {
    seen.add(this);
    for (const [x, kind] of this.uses) {
      if (x instanceof GraphBuilder) {
        if (!seen.has(x)) x.checkUses(seen);
      } else if (x.isClosed) {
        throw new Error(
          `GraphBuilder.instantiate: ${article(kind)} ${kind} node uses ${closedObject(x)}; close what a graph uses after the GraphExec (which keeps it alive), not before instantiate()`,
        );
      }
    }
  }

  /** A kernel launch with typed arguments, as kernel.launch takes them (the values are copied into the node). */
  kernel(kernel: Kernel, config: KernelNodeConfig, args: readonly KernelArgument[] = [], options?: NodeOptions): GraphNode {
    this.alive('kernel');
    if (!(kernel instanceof Kernel))
      throw new TypeError(`GraphBuilder.kernel: parameter 'kernel' must be a Kernel, got ${describe(kernel)}`);
    if (kernel.module.isClosed) throw new Error(`GraphBuilder.kernel(${kernel.name}): the Module the kernel belongs to was closed`);
    if (config === null || typeof config !== 'object')
      throw new TypeError(
        `GraphBuilder.kernel(${kernel.name}): parameter 'config' must be { grid, block, sharedMem? }, got ${describe(config)}`,
      );
    checkOptions(
      `GraphBuilder.kernel(${kernel.name})`,
      config,
      { grid: true, block: true, sharedMem: true, ...EXTENDED_LAUNCH_KEYS },
      'config',
    );
    if (!Array.isArray(args))
      throw new TypeError(
        `GraphBuilder.kernel(${kernel.name}): parameter 'args' must be an array of kernel arguments, got ${describe(args)}`,
      );
    const fn = `GraphBuilder.kernel(${kernel.name})`;
    const values = args.map((a, i) => kernelArgument(a, i, fn));
    // The sizes and launch attributes as a launch reads them (a cluster's grid counts clusters).
    const r = resolveLaunch(config, fn);
    const attributes = kernelNodeAttributes(r, fn);
    checkLimits(kernel, r, kernel.limits, fn);
    const params = new cudart.cudaKernelNodeParams({
      func: kernel.handle,
      gridDim: { x: r.grid[0], y: r.grid[1], z: r.grid[2] },
      blockDim: { x: r.block[0], y: r.block[1], z: r.block[2] },
      sharedMemBytes: r.sharedMem,
      kernelParams: values.length ? values : null,
    });
    const node = this.add(
      cudart.cudaGraphAddKernelNode(this.handle, this.deps(options, 'kernel'), options?.after?.length ?? 0, params),
      'kernel',
      `${fn} (cudaGraphAddKernelNode)`,
    );
    setKernelNodeAttributes(node.handle, attributes, fn);
    this.use('kernel', kernel, kernel.module, ...args.filter((a) => typeof a === 'object'));
    return node;
  }

  /**
   * A copy of `bytes` (default: all of `src`) between device buffers and pinned host memory
   * (HostBuffer); the direction follows from the addresses.
   */
  copy(dst: DeviceBuffer | HostBuffer, src: DeviceBuffer | HostBuffer, bytes?: number, options?: NodeOptions): GraphNode {
    this.alive('copy');
    const d = this.address(dst, 'dst', 'copy');
    const s = this.address(src, 'src', 'copy');
    const n = bytes ?? src.size;
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new RangeError(`GraphBuilder.copy: parameter 'bytes' must be a positive integer, got ${n}`);
    if (n > src.size || n > dst.size)
      throw new RangeError(
        `GraphBuilder.copy: ${n} bytes do not fit in the ${n > src.size ? `source's ${src.size}` : `destination's ${dst.size}`}`,
      );
    const node = this.add(
      cudart.cudaGraphAddMemcpyNode1D(this.handle, this.deps(options, 'copy'), options?.after?.length ?? 0, d, s, n, MEMCPY_DEFAULT),
      'copy',
      'GraphBuilder.copy (cudaGraphAddMemcpyNode1D)',
    );
    this.use('copy', dst, src);
    return node;
  }

  private address(b: unknown, p: string, what: string): bigint {
    if (b instanceof DeviceBuffer) {
      if (b.isClosed) throw new Error(`GraphBuilder.${what}: parameter '${p}' is a DeviceBuffer that was closed`);
      return b.ptr;
    }
    if (b instanceof HostBuffer) {
      if (b.isClosed) throw new Error(`GraphBuilder.${what}: parameter '${p}' is a HostBuffer that was closed`);
      return b.ptr;
    }
    throw new TypeError(
      `GraphBuilder.${what}: parameter '${p}' must be a DeviceBuffer or a HostBuffer (pinned memory: a graph copies at each launch, long after this call), got ${describe(b)}`,
    );
  }

  /** Sets every element of `dst` to `value`: bytes, or 2- or 4-byte elements (`elementSize`). */
  memset(dst: DeviceBuffer, value: number, options: NodeOptions & { elementSize?: 1 | 2 | 4 } = {}): GraphNode {
    this.alive('memset');
    const d = this.address(dst, 'dst', 'memset');
    if (!(dst instanceof DeviceBuffer)) throw new TypeError("GraphBuilder.memset: parameter 'dst' must be a DeviceBuffer");
    const size = options.elementSize ?? 1;
    if (size !== 1 && size !== 2 && size !== 4)
      throw new RangeError(`GraphBuilder.memset: option 'elementSize' must be 1, 2 or 4, got ${describe(size)}`);
    const max = 2 ** (8 * size) - 1;
    if (!Number.isInteger(value) || value < 0 || value > max)
      throw new RangeError(
        `GraphBuilder.memset: parameter 'value' must be an integer within [0, ${max}] for ${size}-byte elements, got ${value}`,
      );
    if (dst.size % size !== 0)
      throw new RangeError(`GraphBuilder.memset: the buffer's ${dst.size} bytes are not a whole number of ${size}-byte elements`);
    const params = new cudart.cudaMemsetParams({ dst: d, value, elementSize: size, width: dst.size / size, height: 1, pitch: 0 });
    const node = this.add(
      cudart.cudaGraphAddMemsetNode(this.handle, this.deps(options, 'memset', MEMSET_OPTIONS), options.after?.length ?? 0, params),
      'memset',
      'GraphBuilder.memset (cudaGraphAddMemsetNode)',
    );
    this.use('memset', dst);
    return node;
  }

  /**
   * A JS function run on the JS thread at this point of every launch. The CUDA thread waits for it,
   * so wait for a graph with host nodes with `await stream.synchronize()`, never a blocking wait.
   */
  hostFunction(fn: () => void, options?: NodeOptions): GraphNode {
    this.alive('hostFunction');
    if (typeof fn !== 'function') throw new TypeError(`GraphBuilder.hostFunction: parameter 'fn' must be a function, got ${describe(fn)}`);
    const params = new cudart.cudaHostNodeParams({ fn: fn as (userData: bigint) => void, userData: 0n });
    const node = this.add(
      cudart.cudaGraphAddHostNode(this.handle, this.deps(options, 'hostFunction'), options?.after?.length ?? 0, params),
      'host',
      'GraphBuilder.hostFunction (cudaGraphAddHostNode)',
    );
    this.keep.push(fn);
    return node;
  }

  /** Records `event` at this point of every launch. */
  recordEvent(event: Event, options?: NodeOptions): GraphNode {
    this.alive('recordEvent');
    this.checkEvent(event, 'recordEvent');
    const node = this.add(
      cudart.cudaGraphAddEventRecordNode(this.handle, this.deps(options, 'recordEvent'), options?.after?.length ?? 0, event.handle),
      'eventRecord',
      'GraphBuilder.recordEvent (cudaGraphAddEventRecordNode)',
    );
    this.use('eventRecord', event);
    return node;
  }

  /** Waits for `event` (recorded elsewhere) at this point of every launch. */
  waitEvent(event: Event, options?: NodeOptions): GraphNode {
    this.alive('waitEvent');
    this.checkEvent(event, 'waitEvent');
    const node = this.add(
      cudart.cudaGraphAddEventWaitNode(this.handle, this.deps(options, 'waitEvent'), options?.after?.length ?? 0, event.handle),
      'eventWait',
      'GraphBuilder.waitEvent (cudaGraphAddEventWaitNode)',
    );
    this.use('eventWait', event);
    return node;
  }

  private checkEvent(event: unknown, what: string): void {
    if (!(event instanceof Event)) throw new TypeError(`GraphBuilder.${what}: parameter 'event' must be an Event, got ${describe(event)}`);
    if (event.isClosed) throw new Error(`GraphBuilder.${what}: parameter 'event' is an Event that was closed`);
  }

  /** A copy of another graph (a builder's or a captured Graph) as one node. */
  childGraph(graph: GraphBuilder | Graph, options?: NodeOptions): GraphNode {
    this.alive('childGraph');
    if (!(graph instanceof GraphBuilder || graph instanceof Graph))
      throw new TypeError(`GraphBuilder.childGraph: parameter 'graph' must be a GraphBuilder or a Graph, got ${describe(graph)}`);
    if (graph.isClosed) throw new Error(`GraphBuilder.childGraph: parameter 'graph' is a ${graph.constructor.name} that was closed`);
    if (graph === this) throw new Error('GraphBuilder.childGraph: a graph cannot contain itself');
    const node = this.add(
      cudart.cudaGraphAddChildGraphNode(this.handle, this.deps(options, 'childGraph'), options?.after?.length ?? 0, graph.handle),
      'child',
      'GraphBuilder.childGraph (cudaGraphAddChildGraphNode)',
    );
    // The copy launches the same kernels and reads the same buffers: a child builder's are checked and held with this one's.
    this.use('child', graph);
    return node;
  }

  /** A node that does nothing: a join point for dependencies. */
  empty(options?: NodeOptions): GraphNode {
    this.alive('empty');
    return this.add(
      cudart.cudaGraphAddEmptyNode(this.handle, this.deps(options, 'empty'), options?.after?.length ?? 0),
      'empty',
      'GraphBuilder.empty (cudaGraphAddEmptyNode)',
    );
  }

  /**
   * A handle for conditional nodes of this graph. With `default`, it is set to that value at the
   * start of every launch; without, a kernel must set it (`cudaGraphSetConditional(h, v)` in device
   * code, the handle passed as a `cudaGraphConditionalHandle`) before the node reads it.
   */
  conditionalHandle(options: { default?: number } = {}): ConditionalHandle {
    this.alive('conditionalHandle');
    checkOptions('GraphBuilder.conditionalHandle', options, { default: true });
    const dflt = options.default;
    if (dflt !== undefined && (!Number.isInteger(dflt) || dflt < 0 || dflt > 0xffffffff))
      throw new RangeError(`GraphBuilder.conditionalHandle: option 'default' must be an unsigned 32-bit integer, got ${dflt}`);
    const flags = dflt === undefined ? 0 : cudart.cudaGraphConditionalHandleFlags.cudaGraphCondAssignDefault;
    const h = check(
      cudart.cudaGraphConditionalHandleCreate(this.handle, dflt ?? 0, flags),
      'GraphBuilder.conditionalHandle (cudaGraphConditionalHandleCreate)',
    );
    return new ConditionalHandle(h, dflt ?? null, this);
  }

  /** An `if` node: `then` runs when the handle is non-zero; with `{ else: true }` an `else` body runs when it is zero. */
  if(handle: ConditionalHandle, options: NodeOptions & { else?: boolean } = {}): IfNode {
    const [node, bodies] = this.conditional(handle, COND.cudaGraphCondTypeIf, options.else ? 2 : 1, options, 'if');
    return { node, then: bodies[0], else: bodies[1] ?? null };
  }

  /** A `while` node: `body` runs while the handle is non-zero; a kernel in the body sets it for the next round. */
  while(handle: ConditionalHandle, options: NodeOptions = {}): WhileNode {
    const [node, bodies] = this.conditional(handle, COND.cudaGraphCondTypeWhile, 1, options, 'while');
    return { node, body: bodies[0] };
  }

  /** A `switch` node with `cases` bodies: body n runs when the handle is n. */
  switch(handle: ConditionalHandle, cases: number, options: NodeOptions = {}): SwitchNode {
    if (!Number.isInteger(cases) || cases < 1)
      throw new RangeError(`GraphBuilder.switch: parameter 'cases' must be a positive integer, got ${cases}`);
    const [node, bodies] = this.conditional(handle, COND.cudaGraphCondTypeSwitch, cases, options, 'switch');
    return { node, cases: bodies };
  }

  private conditional(
    handle: ConditionalHandle,
    type: cudart.cudaGraphConditionalNodeType,
    size: number,
    options: NodeOptions,
    what: 'if' | 'while' | 'switch',
  ): [GraphNode, GraphBuilder[]] {
    this.alive(what);
    if (!(handle instanceof ConditionalHandle))
      throw new TypeError(
        `GraphBuilder.${what}: parameter 'handle' must be a ConditionalHandle (builder.conditionalHandle()), got ${describe(handle)}`,
      );
    if (handle.isClosed) throw new Error(`GraphBuilder.${what}: parameter 'handle' belongs to a graph that was closed`);
    const params = new cudart.cudaGraphNodeParams({ type: cudart.cudaGraphNodeType.cudaGraphNodeTypeConditional });
    params.conditional = { handle: handle.handle, type, size };
    const deps = this.deps(options, what, what === 'if' ? IF_OPTIONS : NODE_OPTIONS);
    const node = this.add(
      cudart.cudaGraphAddNode(this.handle, deps, null, deps?.length ?? 0, params),
      what,
      `GraphBuilder.${what} (cudaGraphAddNode)`,
    );
    // CUDA fills an array of the bodies' graphs, which live as long as the node.
    const at = params.conditional.phGraph_out;
    const bodies = Array.from({ length: size }, (_, i) => {
      const g = cudart.cudaGraph_t(koffi.decode(at + BigInt(8 * i), 'uint64_t') as bigint);
      return new GraphBuilder(g, this.device, this, () => undefined);
    });
    this.use(what, handle, ...bodies);
    return [node, bodies];
  }

  /**
   * Records the work `work` queues on `stream` into this graph (cudaStreamBeginCaptureToGraph), after
   * `options.after`; resolves with the nodes the captured work ends in, for later nodes to follow.
   * If `work` throws, the capture ends and the error is rethrown. CUDA records the captured work's
   * buffers by address, so they are not checked or held open as other nodes' are: keep them open
   * until the GraphExec is closed.
   */
  async capture(stream: Stream, work: (stream: Stream) => unknown, options: NodeOptions & CaptureOptions = {}): Promise<GraphNode[]> {
    this.alive('capture');
    if (!(stream instanceof Stream))
      throw new TypeError(
        `GraphBuilder.capture: parameter 'stream' must be a Stream (the legacy default stream cannot be captured), got ${describe(stream)}`,
      );
    if (stream.isClosed) throw new Error("GraphBuilder.capture: parameter 'stream' is a Stream that was closed");
    if (typeof work !== 'function')
      throw new TypeError(
        `GraphBuilder.capture: parameter 'work' must be a function that queues work on the stream, got ${describe(work)}`,
      );
    const modes = { global: 0, threadLocal: 1, relaxed: 2 } as const;
    const mode = modes[options.mode ?? 'global'];
    if (mode === undefined)
      throw new RangeError(
        `GraphBuilder.capture: option 'mode' must be 'global', 'threadLocal' or 'relaxed', got ${describe(options.mode)}`,
      );
    const deps = this.deps(options, 'capture', CAPTURE_NODE_OPTIONS);
    check(
      cudart.cudaStreamBeginCaptureToGraph(stream.handle, this.handle, deps, null, deps?.length ?? 0, mode),
      'GraphBuilder.capture (cudaStreamBeginCaptureToGraph)',
    );
    let failure: unknown = null;
    let leaves: cudart.cudaGraphNode_t[] = [];
    try {
      await work(stream);
      const [err, , , , nodes] = cudart.cudaStreamGetCaptureInfo(stream.handle);
      if (err === 0 && nodes) leaves = nodes;
    } catch (e) {
      failure = e ?? new Error('GraphBuilder.capture: the work threw a nullish value');
    }
    const [err] = cudart.cudaStreamEndCapture(stream.handle);
    if (failure !== null) {
      if (err !== 0) cudart.cudaGetLastError();
      throw failure;
    }
    check([err], 'GraphBuilder.capture (cudaStreamEndCapture)');
    this.keep.push(work);
    return leaves.map((h) => new GraphNode(h, 'captured', this));
  }

  /** How many nodes the graph has (not counting those inside conditional bodies or child graphs). */
  get nodeCount(): number {
    this.alive('nodeCount');
    const [, n] = check(cudart.cudaGraphGetNodes(this.handle, 0), 'GraphBuilder.nodeCount (cudaGraphGetNodes)');
    return n;
  }

  /**
   * Makes an executable graph, ready to launch. Throws Error when something a node uses was closed
   * since the node was added. The GraphExec holds open this builder and all the graph uses: what is
   * closed meanwhile is freed when the GraphExec is closed.
   */
  instantiate(): GraphExec {
    this.alive('instantiate');
    if (this.parent)
      throw new Error('GraphBuilder.instantiate: this is the body of a conditional node; instantiate the graph it belongs to');
    this.checkUses(new Set());
    this.device.makeCurrent();
    const handle = check(cudart.cudaGraphInstantiate(this.handle, 0), 'GraphBuilder.instantiate (cudaGraphInstantiate)');
    return new GraphExec(handle, this.device, [], holdAll([this]));
  }

  /** Writes the graph as Graphviz DOT to `path` (with every node's parameters when `verbose`). */
  debugDot(path: string, options: { verbose?: boolean } = {}): void {
    checkOptions('GraphBuilder.debugDot', options, { verbose: true });
    this.alive('debugDot');
    debugDot(this.handle, path, options, 'GraphBuilder.debugDot');
  }
}
