// Graphs built node by node (cuda.core's GraphBuilder): kernels with typed arguments, copies and
// memsets on buffers, graph allocations or raw addresses, memory allocation and free nodes, host
// functions (JS or C), event records and waits, child graphs, and conditional nodes whose bodies are
// builders too; stream work captured into the graph; edges added after the fact; then instantiate().
import koffi from 'koffi';
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource, article, holdOpen } from '../base/lifetime';
import { extend } from '../base/extend';
import { Device } from '../device/Device';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { HostBuffer } from '../memory/HostBuffer';
import { Event } from '../device/Event';
import { Graph, GraphExec, hostNodeParams, instantiateGraph, type InstantiateOptions } from './Graph';
import {
  ChildGraphNode,
  CopyNode,
  EventNode,
  GraphDefinition,
  GraphNode,
  HostNode,
  KernelNode,
  MemAllocNode,
  MemFreeNode,
  MemsetNode,
  type GraphNodeKind,
} from './GraphNode';
import { Kernel } from '../launch/Kernel';
import { Stream } from '../device/Stream';
import { asKernelArgument, kernelArgument, type KernelArgument, type KernelArgumentObject } from '../launch/kernel-argument';
import { EXTENDED_LAUNCH_KEYS, type Dim } from '../launch/launch-config';
import { checkLimits, kernelNodeAttributes, resolveLaunch, setKernelNodeAttributes } from '../launch/extended-launch';
import { describe, lookupName } from '../../ffi/checks';
import { closedObject } from '../texture/TextureObject';
import { TensorMapDescriptor } from '../texture/TensorMapDescriptor';
import { checkOptions, type OptionKeys } from '../base/options';

declare module './GraphNode' {
  interface GraphNode {
    /** The builder whose graph holds the node (a conditional body's builder for a node of a body), or null for a node of a Graph. */
    readonly builder: GraphBuilder | null;
  }
}

extend(GraphNode, {
  get builder(): GraphBuilder | null {
    return this.graph instanceof GraphBuilder ? this.graph : null;
  },
});

/**
 * A conditional node (`builder.if()`, `while()`, `switch()`): its handle, its type and its bodies,
 * as the builder made them (CUDA 13.0 has no call that reads a conditional node's parameters back, so
 * a conditional node of a graph made elsewhere reads back as a plain GraphNode of type 'conditional').
 */
export class ConditionalNode extends GraphNode {
  /** @internal Made by builder.if(), while() and switch(). */
  constructor(
    handle: cudart.cudaGraphNode_t,
    kind: 'if' | 'while' | 'switch',
    graph: GraphBuilder,
    /** The handle whose value picks what runs. */
    readonly conditionalHandle: ConditionalHandle,
    /** The bodies: `[then]` or `[then, else]` for an if, `[body]` for a while, one per case for a switch. */
    readonly bodies: readonly GraphBuilder[],
  ) {
    super(handle, kind, graph);
  }

  /** 'if', 'while' or 'switch'. */
  get conditionalType(): 'if' | 'while' | 'switch' {
    return this.kind as 'if' | 'while' | 'switch';
  }
}

/**
 * The value a conditional graph node (if, while, switch) reads, made by
 * `builder.conditionalHandle({ default })`: pass it to a kernel node as an argument, and the kernel
 * sets it with `cudaGraphSetConditional(handle, value)`. It owns nothing; it lives with its graph
 * (for a conditional body's handle, the graph the body belongs to), and once that is closed it
 * reports `isClosed` and launches, kernel nodes and conditional nodes refuse it.
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

  /** Whether the graph it belongs to was closed (a body builder is never closed itself: its top builder is). */
  get isClosed(): boolean {
    return this.builder.closedReason() !== null;
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
/** A memset node's shape: `width` elements of `elementSize` bytes in each of `height` rows, `pitch` bytes apart. */
export interface MemsetOptions extends NodeOptions {
  /** Bytes per element: 1 (the default), 2 or 4. */
  elementSize?: 1 | 2 | 4;
  /** Elements per row (default: all of a buffer or allocation; needed for a raw address). */
  width?: number;
  /** Rows (default 1). */
  height?: number;
  /** Bytes from one row to the next (default: width × elementSize; needed when height > 1 and rows are padded). */
  pitch?: number;
}

const MEMSET_OPTIONS: OptionKeys<MemsetOptions> = { after: true, elementSize: true, width: true, height: true, pitch: true };

/** A 2D copy's shape: `width` bytes in each of `height` rows, rows `dstPitch` and `srcPitch` bytes apart. */
export interface Copy2DShape {
  /** Bytes per row. */
  width: number;
  /** Rows. */
  height: number;
  /** Bytes from one row to the next at the destination (default: width). */
  dstPitch?: number;
  /** Bytes from one row to the next at the source (default: width). */
  srcPitch?: number;
}

const COPY_2D_SHAPE: OptionKeys<Copy2DShape> = { width: true, height: true, dstPitch: true, srcPitch: true };
const HOST_OPTIONS: OptionKeys<NodeOptions & { userData?: bigint }> = { after: true, userData: true };

/** Where a copy or memset node reads or writes: a buffer, a graph allocation, or a raw device address. */
export type GraphMemory = DeviceBuffer | HostBuffer | MemAllocNode | bigint;
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
  node: ConditionalNode;
  /** The body run when the handle is non-zero: add nodes to it as to any builder. */
  then: GraphBuilder;
  /** The body run when the handle is zero, or null unless `{ else: true }` was asked for. */
  else: GraphBuilder | null;
}

/** A `while` node: `body` runs again and again while the handle is non-zero (checked before each run). */
export interface WhileNode {
  /** The conditional node itself, for other nodes' `after`. */
  node: ConditionalNode;
  /** The loop's body: a kernel in it sets the handle to 0 to stop. */
  body: GraphBuilder;
}

/** A `switch` node: `cases[n]` runs when the handle is n; none when it is past the last case. */
export interface SwitchNode {
  /** The conditional node itself, for other nodes' `after`. */
  node: ConditionalNode;
  /** One body per case, `cases[0]` for value 0 and so on. */
  cases: GraphBuilder[];
}

const MEMCPY_DEFAULT = cudart.cudaMemcpyKind.cudaMemcpyDefault;
const COND = cudart.cudaGraphConditionalNodeType;

/**
 * A graph built node by node (cuda.core's GraphBuilder): kernels with typed arguments, copies and
 * memsets (on buffers, graph allocations or raw addresses), memory allocation and free nodes, host
 * functions (JS or C), event records and waits, child graphs, conditional nodes (if, while, switch)
 * whose bodies are builders too, and stream work captured into it; then `instantiate()`. Each node
 * method returns a {@link GraphNode} (of the class of its type: {@link KernelNode},
 * {@link MemAllocNode}, …) that later nodes name in `after`; without `after` a node has no
 * dependencies and may run first. `addEdge()` adds a dependency later. The graph reads back as any
 * graph does: `nodes()`, `edges()`, each node's predecessors, successors and parameters.
 *
 * Lifetime: close() destroys the graph; a body builder (of a conditional node) belongs to its parent's
 * graph and is freed with it (its ConditionalHandles report closed then too). Nodes check what they
 * use when they are added, and `instantiate()` checks again that none of it was closed since. A
 * GraphExec it instantiates holds open the builder and every module, buffer (a tensor map's
 * included), array, texture, event and pinned buffer its nodes (bodies and child builders included)
 * use: closing one of them while the GraphExec lives marks it closed at once but frees it only when
 * the GraphExec is closed, so a launch never reaches freed memory. Bad arguments throw TypeError or
 * RangeError naming the method; CUDA failures throw {@link CudaError}.
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
export class GraphBuilder extends GraphDefinition {
  /**
   * What the nodes use that could be closed (and body or child builders), with the kind of the node
   * that first used it. A tensor map stands for its buffer (it is checked and held as the buffer).
   */
  private readonly uses = new Map<Resource | HostBuffer | TensorMapDescriptor, GraphNodeKind>();

  private constructor(
    handle: cudart.cudaGraph_t,
    device: Device,
    /** The builder of the graph whose conditional node owns this body, or null for a graph of its own. */
    readonly parent: GraphBuilder | null,
    free: () => void,
  ) {
    super(handle, device, free, parent ? [parent] : [device]);
  }

  /** An empty graph to build on `device` (default: the current one); throws TypeError when `device` is not a Device. */
  static create(device: Device = Device.current()): GraphBuilder {
    if (!(device instanceof Device))
      throw new TypeError(`GraphBuilder.create: parameter 'device' must be a Device, got ${describe(device)}`);
    device.makeCurrent();
    const g = check(cudart.cudaGraphCreate(0), 'GraphBuilder.create (cudaGraphCreate)');
    return new GraphBuilder(g, device, null, () => void cudart.cudaGraphDestroy(g));
  }

  /** @internal Closed, or the graph this conditional body belongs to was. */
  override closedReason(): string | null {
    if (this.isClosed) return 'the GraphBuilder was closed';
    for (let p = this.parent; p; p = p.parent) if (p.isClosed) return 'the graph this conditional body belongs to was closed';
    return null;
  }

  /** @internal The builder of the whole graph (a body's parent's, up to the top). */
  override get root(): GraphDefinition {
    return this.parent ? this.parent.root : this;
  }

  /** @internal See GraphDefinition.noteUses: what a node now uses is checked and held as a new node's is. */
  override noteUses(kind: GraphNodeKind, items: readonly unknown[]): void {
    this.use(kind, ...items);
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
      if (n.graph !== this)
        throw new Error(
          `GraphBuilder.${what}: option 'after[${i}]' is a node of another graph; a node can only follow nodes of its own graph (or body)`,
        );
      return n.handle;
    });
  }

  /** A node of this graph (for addEdge, removeEdge), checked. */
  private ownNode(n: unknown, what: string, p: string): GraphNode {
    if (!(n instanceof GraphNode)) throw new TypeError(`GraphBuilder.${what}: parameter '${p}' must be a GraphNode, got ${describe(n)}`);
    if (n.graph !== this) throw new Error(`GraphBuilder.${what}: parameter '${p}' is ${n.label} of another graph (or body)`);
    return n;
  }

  /** The node's handle, or the error `fn` names. */
  private added(r: [cudart.cudaError_t, cudart.cudaGraphNode_t | null], fn: string): cudart.cudaGraphNode_t {
    return check(r, fn);
  }

  /**
   * Keeps `items` (what a `kind` node uses) alive with the builder, and notes those that can be
   * closed for instantiate() to check and its GraphExec to hold open (a TensorMapDescriptor is its
   * buffer's address: it reports closed with the buffer, and holding it holds the buffer). A captured
   * Graph added as a child is not noted: CUDA copied it, and closing it frees nothing the copy uses.
   */
  private use(kind: GraphNodeKind, ...items: unknown[]): void {
    this.keep.push(...items);
    for (const x of items)
      if (
        ((x instanceof Resource && !(x instanceof Graph)) || x instanceof HostBuffer || x instanceof TensorMapDescriptor) &&
        !this.uses.has(x)
      )
        this.uses.set(x, kind);
  }

  /** Throws when something a node uses (in this graph, a body or a child builder) was closed since the node was added. */
  private checkUses(seen: Set<GraphBuilder>, where = 'GraphBuilder.instantiate'): void {
    seen.add(this);
    for (const [x, kind] of this.uses) {
      if (x instanceof GraphBuilder) {
        if (!seen.has(x)) x.checkUses(seen, where);
      } else if (x.isClosed) {
        throw new Error(
          `${where}: ${article(kind)} ${kind} node uses ${closedObject(x)}; close what a graph uses after the GraphExec (which keeps it alive), not before instantiate()`,
        );
      }
    }
  }

  /** @internal GraphDefinition's check, and that nothing a node uses was closed since it was added. */
  override checkUsable(where: string): void {
    super.checkUsable(where);
    this.checkUses(new Set(), where);
  }

  /** A kernel launch with typed arguments, as kernel.launch takes them (the values are copied into the node). */
  kernel(kernel: Kernel, config: KernelNodeConfig, args: readonly KernelArgument[] = [], options?: NodeOptions): KernelNode {
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
    const h = this.added(
      cudart.cudaGraphAddKernelNode(this.handle, this.deps(options, 'kernel'), options?.after?.length ?? 0, params),
      `${fn} (cudaGraphAddKernelNode)`,
    );
    setKernelNodeAttributes(h, attributes, fn);
    this.use('kernel', kernel, kernel.module, ...args.filter((a) => typeof a === 'object'));
    return this.adopt(new KernelNode(h, 'kernel', this, kernel));
  }

  /**
   * Where a copy or memset node reads or writes, and how many bytes are there (null for a raw
   * address): a DeviceBuffer, a pinned HostBuffer (copies only), a graph allocation, or a device
   * address (bigint).
   */
  private memory(b: unknown, p: string, what: string, host: boolean): { ptr: bigint; size: number | null } {
    if (b instanceof DeviceBuffer) {
      if (b.isClosed) throw new Error(`GraphBuilder.${what}: parameter '${p}' is a DeviceBuffer that was closed`);
      return { ptr: b.ptr, size: b.size };
    }
    if (b instanceof HostBuffer && host) {
      if (b.isClosed) throw new Error(`GraphBuilder.${what}: parameter '${p}' is a HostBuffer that was closed`);
      return { ptr: b.ptr, size: b.size };
    }
    if (b instanceof MemAllocNode) {
      const why = b.graph.closedReason();
      if (why !== null) throw new Error(`GraphBuilder.${what}: parameter '${p}' is the allocation of a graph that cannot be used (${why})`);
      return { ptr: b.ptr, size: b.size };
    }
    if (typeof b === 'bigint') {
      if (b <= 0n || b >= 2n ** 64n)
        throw new RangeError(`GraphBuilder.${what}: parameter '${p}' must be a device address (a non-zero 64-bit bigint), got ${b}n`);
      return { ptr: b, size: null };
    }
    throw new TypeError(
      host
        ? `GraphBuilder.${what}: parameter '${p}' must be a DeviceBuffer, a HostBuffer (pinned memory: a graph copies at each launch, long after this call), a graph allocation (builder.allocate()) or a device address (bigint), got ${describe(b)}`
        : `GraphBuilder.${what}: parameter '${p}' must be a DeviceBuffer, a graph allocation (builder.allocate()) or a device address (bigint), got ${describe(b)}`,
    );
  }

  /**
   * A copy of `bytes` (default: all of `src`) between device buffers, graph allocations, pinned host
   * memory (HostBuffer) and raw addresses (bigint: `bytes` is needed then); the direction follows
   * from the addresses.
   */
  copy(dst: GraphMemory, src: GraphMemory, bytes?: number, options?: NodeOptions): CopyNode {
    this.alive('copy');
    const d = this.memory(dst, 'dst', 'copy', true);
    const s = this.memory(src, 'src', 'copy', true);
    const n = bytes ?? s.size ?? d.size;
    if (n === null)
      throw new TypeError(
        "GraphBuilder.copy: parameter 'bytes' is needed when both 'dst' and 'src' are addresses (their sizes are unknown)",
      );
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new RangeError(`GraphBuilder.copy: parameter 'bytes' must be a positive integer, got ${n}`);
    if ((s.size !== null && n > s.size) || (d.size !== null && n > d.size))
      throw new RangeError(
        `GraphBuilder.copy: ${n} bytes do not fit in the ${s.size !== null && n > s.size ? `source's ${s.size}` : `destination's ${d.size}`}`,
      );
    const h = this.added(
      cudart.cudaGraphAddMemcpyNode1D(
        this.handle,
        this.deps(options, 'copy'),
        options?.after?.length ?? 0,
        d.ptr,
        s.ptr,
        n,
        MEMCPY_DEFAULT,
      ),
      'GraphBuilder.copy (cudaGraphAddMemcpyNode1D)',
    );
    this.use('copy', dst, src);
    return this.adopt(new CopyNode(h, 'copy', this));
  }

  /**
   * A 2D copy (cudaGraphAddMemcpyNode): `width` bytes of each of `height` rows, the rows `srcPitch`
   * bytes apart at the source and `dstPitch` at the destination (each defaults to `width`), between
   * buffers, graph allocations, pinned host memory and raw addresses.
   */
  copy2D(dst: GraphMemory, src: GraphMemory, shape: Copy2DShape, options?: NodeOptions): CopyNode {
    this.alive('copy2D');
    const fn = 'GraphBuilder.copy2D';
    const d = this.memory(dst, 'dst', 'copy2D', true);
    const s = this.memory(src, 'src', 'copy2D', true);
    if (shape === null || typeof shape !== 'object')
      throw new TypeError(`${fn}: parameter 'shape' must be { width, height, dstPitch?, srcPitch? }, got ${describe(shape)}`);
    checkOptions(fn, shape, COPY_2D_SHAPE, 'shape');
    const int = (v: unknown, name: string, min: number): number => {
      if (!Number.isSafeInteger(v) || (v as number) < min)
        throw new RangeError(`${fn}: 'shape.${name}' must be an integer of at least ${min}, got ${describe(v)}`);
      return v as number;
    };
    const width = int(shape.width, 'width', 1);
    const height = int(shape.height, 'height', 1);
    const dstPitch = int(shape.dstPitch ?? width, 'dstPitch', width);
    const srcPitch = int(shape.srcPitch ?? width, 'srcPitch', width);
    for (const [m, pitch, name] of [
      [s, srcPitch, 'source'],
      [d, dstPitch, 'destination'],
    ] as const) {
      const need = (height - 1) * pitch + width;
      if (m.size !== null && need > m.size)
        throw new RangeError(
          `${fn}: ${height} rows of ${width} bytes, ${pitch} bytes apart, need ${need} bytes; the ${name} has ${m.size}`,
        );
    }
    const params = new cudart.cudaMemcpy3DParms({
      srcPtr: { ptr: s.ptr, pitch: srcPitch, xsize: width, ysize: height },
      dstPtr: { ptr: d.ptr, pitch: dstPitch, xsize: width, ysize: height },
      extent: { width, height, depth: 1 },
      kind: MEMCPY_DEFAULT,
    });
    const h = this.added(
      cudart.cudaGraphAddMemcpyNode(this.handle, this.deps(options, 'copy2D'), options?.after?.length ?? 0, params),
      `${fn} (cudaGraphAddMemcpyNode)`,
    );
    this.use('copy', dst, src);
    return this.adopt(new CopyNode(h, 'copy', this));
  }

  /**
   * Sets `width` elements (bytes, or 2- or 4-byte elements: `elementSize`) in each of `height` rows
   * (`pitch` bytes apart) to `value`: all of a buffer or graph allocation by default; `width` is
   * needed for a raw device address (bigint).
   */
  memset(dst: DeviceBuffer | MemAllocNode | bigint, value: number, options: MemsetOptions = {}): MemsetNode {
    this.alive('memset');
    const fn = 'GraphBuilder.memset';
    const d = this.memory(dst, 'dst', 'memset', false);
    checkOptions(fn, options, MEMSET_OPTIONS);
    const size = options.elementSize ?? 1;
    if (size !== 1 && size !== 2 && size !== 4)
      throw new RangeError(`${fn}: option 'elementSize' must be 1, 2 or 4, got ${describe(size)}`);
    const max = 2 ** (8 * size) - 1;
    if (!Number.isInteger(value) || value < 0 || value > max)
      throw new RangeError(`${fn}: parameter 'value' must be an integer within [0, ${max}] for ${size}-byte elements, got ${value}`);
    const height = options.height ?? 1;
    if (!Number.isSafeInteger(height) || height < 1)
      throw new RangeError(`${fn}: option 'height' must be a positive integer, got ${describe(height)}`);
    let width = options.width;
    if (width === undefined) {
      if (d.size === null) throw new TypeError(`${fn}: option 'width' is needed when 'dst' is an address (its size is unknown)`);
      if (height !== 1) throw new TypeError(`${fn}: option 'width' is needed when 'height' is given`);
      if (d.size % size !== 0)
        throw new RangeError(
          `${fn}: the ${dst instanceof MemAllocNode ? "allocation's" : "buffer's"} ${d.size} bytes are not a whole number of ${size}-byte elements`,
        );
      width = d.size / size;
    }
    if (!Number.isSafeInteger(width) || width < 1)
      throw new RangeError(`${fn}: option 'width' must be a positive integer, got ${describe(width)}`);
    const pitch = options.pitch ?? width * size;
    if (!Number.isSafeInteger(pitch) || pitch < width * size)
      throw new RangeError(
        `${fn}: option 'pitch' must be an integer of at least width × elementSize (${width * size}), got ${describe(pitch)}`,
      );
    const need = (height - 1) * pitch + width * size;
    if (d.size !== null && need > d.size)
      throw new RangeError(
        `${fn}: ${height} rows of ${width} ${size}-byte elements, ${pitch} bytes apart, need ${need} bytes; the destination has ${d.size}`,
      );
    const params = new cudart.cudaMemsetParams({ dst: d.ptr, value, elementSize: size, width, height, pitch: height > 1 ? pitch : 0 });
    const h = this.added(
      cudart.cudaGraphAddMemsetNode(this.handle, this.deps(options, 'memset', MEMSET_OPTIONS), options.after?.length ?? 0, params),
      `${fn} (cudaGraphAddMemsetNode)`,
    );
    this.use('memset', dst);
    return this.adopt(new MemsetNode(h, 'memset', this));
  }

  /**
   * `size` bytes of device memory allocated at this point of every launch
   * (cudaGraphAddMemAllocNode), from the device's graph memory pool: the node's `ptr` is the same at
   * every launch, and the node itself passes as that address to later kernel, copy and memset nodes.
   * Free it with `builder.deallocate(node)` after its last use (or instantiate with
   * `{ autoFreeOnLaunch: true }`). CUDA allows one GraphExec at a time of a graph with allocation
   * nodes, and none in a conditional body.
   */
  allocate(size: number, options?: NodeOptions): MemAllocNode {
    this.alive('allocate');
    if (!Number.isSafeInteger(size) || size <= 0)
      throw new RangeError(`GraphBuilder.allocate: parameter 'size' must be a positive integer (bytes), got ${describe(size)}`);
    const params = new cudart.cudaMemAllocNodeParams({
      poolProps: {
        allocType: cudart.cudaMemAllocationType.cudaMemAllocationTypePinned,
        location: { type: cudart.cudaMemLocationType.cudaMemLocationTypeDevice, id: this.device.ordinal },
      },
      bytesize: size,
    });
    const h = this.added(
      cudart.cudaGraphAddMemAllocNode(this.handle, this.deps(options, 'allocate'), options?.after?.length ?? 0, params),
      'GraphBuilder.allocate (cudaGraphAddMemAllocNode)',
    );
    return this.adopt(new MemAllocNode(h, 'alloc', this, params.dptr, size));
  }

  /**
   * Frees graph memory at this point of every launch (cudaGraphAddMemFreeNode): an allocation node
   * of this graph or of another one, or its address. Nothing may use the memory after this node.
   */
  deallocate(allocation: MemAllocNode | bigint, options?: NodeOptions): MemFreeNode {
    this.alive('deallocate');
    let ptr: bigint;
    if (allocation instanceof MemAllocNode) ptr = allocation.ptr;
    else if (typeof allocation === 'bigint' && allocation > 0n) ptr = allocation;
    else
      throw new TypeError(
        `GraphBuilder.deallocate: parameter 'allocation' must be a MemAllocNode (builder.allocate()) or its address (bigint), got ${describe(allocation)}`,
      );
    const h = this.added(
      cudart.cudaGraphAddMemFreeNode(this.handle, this.deps(options, 'deallocate'), options?.after?.length ?? 0, ptr),
      'GraphBuilder.deallocate (cudaGraphAddMemFreeNode)',
    );
    return this.adopt(new MemFreeNode(h, 'free', this, ptr));
  }

  /**
   * A host function run at this point of every launch: a JS function (run on the JS thread; the CUDA
   * thread waits for it, so wait for a graph with JS host nodes with `await stream.synchronize()`,
   * never a blocking wait), or a C function pointer (a bigint: `void fn(void *userData)`) called
   * with `options.userData` on CUDA's thread.
   */
  hostFunction(fn: (() => void) | bigint, options?: NodeOptions & { userData?: bigint }): HostNode {
    this.alive('hostFunction');
    const params = hostNodeParams(fn, options?.userData, 'GraphBuilder.hostFunction');
    const h = this.added(
      cudart.cudaGraphAddHostNode(this.handle, this.deps(options, 'hostFunction', HOST_OPTIONS), options?.after?.length ?? 0, params),
      'GraphBuilder.hostFunction (cudaGraphAddHostNode)',
    );
    this.keep.push(fn);
    return this.adopt(new HostNode(h, 'host', this, typeof fn === 'function' ? fn : null));
  }

  /** Records `event` at this point of every launch. */
  recordEvent(event: Event, options?: NodeOptions): EventNode {
    this.alive('recordEvent');
    this.checkEvent(event, 'recordEvent');
    const h = this.added(
      cudart.cudaGraphAddEventRecordNode(this.handle, this.deps(options, 'recordEvent'), options?.after?.length ?? 0, event.handle),
      'GraphBuilder.recordEvent (cudaGraphAddEventRecordNode)',
    );
    this.use('eventRecord', event);
    return this.adopt(new EventNode(h, 'eventRecord', this, event));
  }

  /** Waits for `event` (recorded elsewhere) at this point of every launch. */
  waitEvent(event: Event, options?: NodeOptions): EventNode {
    this.alive('waitEvent');
    this.checkEvent(event, 'waitEvent');
    const h = this.added(
      cudart.cudaGraphAddEventWaitNode(this.handle, this.deps(options, 'waitEvent'), options?.after?.length ?? 0, event.handle),
      'GraphBuilder.waitEvent (cudaGraphAddEventWaitNode)',
    );
    this.use('eventWait', event);
    return this.adopt(new EventNode(h, 'eventWait', this, event));
  }

  private checkEvent(event: unknown, what: string): void {
    if (!(event instanceof Event)) throw new TypeError(`GraphBuilder.${what}: parameter 'event' must be an Event, got ${describe(event)}`);
    if (event.isClosed) throw new Error(`GraphBuilder.${what}: parameter 'event' is an Event that was closed`);
  }

  /** A copy of another graph (a builder's, a captured or borrowed Graph) as one node. */
  childGraph(graph: GraphBuilder | Graph, options?: NodeOptions): ChildGraphNode {
    this.alive('childGraph');
    if (!(graph instanceof GraphBuilder || graph instanceof Graph))
      throw new TypeError(`GraphBuilder.childGraph: parameter 'graph' must be a GraphBuilder or a Graph, got ${describe(graph)}`);
    if (graph.closedReason() !== null)
      throw new Error(`GraphBuilder.childGraph: parameter 'graph' is a ${graph.constructor.name} that was closed`);
    if (graph === this) throw new Error('GraphBuilder.childGraph: a graph cannot contain itself');
    const h = this.added(
      cudart.cudaGraphAddChildGraphNode(this.handle, this.deps(options, 'childGraph'), options?.after?.length ?? 0, graph.handle),
      'GraphBuilder.childGraph (cudaGraphAddChildGraphNode)',
    );
    // The copy launches the same kernels and reads the same buffers: a child builder's are checked and held with this one's.
    this.use('child', graph);
    return this.adopt(new ChildGraphNode(h, 'child', this));
  }

  /** A node that does nothing: a join point for dependencies. */
  empty(options?: NodeOptions): GraphNode {
    this.alive('empty');
    const h = this.added(
      cudart.cudaGraphAddEmptyNode(this.handle, this.deps(options, 'empty'), options?.after?.length ?? 0),
      'GraphBuilder.empty (cudaGraphAddEmptyNode)',
    );
    return this.adopt(new GraphNode(h, 'empty', this));
  }

  /** Makes `to` wait for `from` (cudaGraphAddDependencies), both nodes of this graph already added. */
  addEdge(from: GraphNode, to: GraphNode): void {
    this.alive('addEdge');
    const f = this.ownNode(from, 'addEdge', 'from');
    const t = this.ownNode(to, 'addEdge', 'to');
    if (f === t)
      throw new Error(`GraphBuilder.addEdge: parameters 'from' and 'to' are the same node (${f.label}); a node cannot wait for itself`);
    check(cudart.cudaGraphAddDependencies(this.handle, [f.handle], [t.handle], null, 1), 'GraphBuilder.addEdge (cudaGraphAddDependencies)');
  }

  /** Removes the dependency of `to` on `from` (cudaGraphRemoveDependencies); a CudaError when there is none. */
  removeEdge(from: GraphNode, to: GraphNode): void {
    this.alive('removeEdge');
    const f = this.ownNode(from, 'removeEdge', 'from');
    const t = this.ownNode(to, 'removeEdge', 'to');
    check(
      cudart.cudaGraphRemoveDependencies(this.handle, [f.handle], [t.handle], null, 1),
      'GraphBuilder.removeEdge (cudaGraphRemoveDependencies)',
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
  ): [ConditionalNode, GraphBuilder[]] {
    this.alive(what);
    if (!(handle instanceof ConditionalHandle))
      throw new TypeError(
        `GraphBuilder.${what}: parameter 'handle' must be a ConditionalHandle (builder.conditionalHandle()), got ${describe(handle)}`,
      );
    if (handle.isClosed) throw new Error(`GraphBuilder.${what}: parameter 'handle' belongs to a graph that was closed`);
    const params = new cudart.cudaGraphNodeParams({ type: cudart.cudaGraphNodeType.cudaGraphNodeTypeConditional });
    params.conditional = { handle: handle.handle, type, size };
    const deps = this.deps(options, what, what === 'if' ? IF_OPTIONS : NODE_OPTIONS);
    const h = this.added(
      cudart.cudaGraphAddNode(this.handle, deps, null, deps?.length ?? 0, params),
      `GraphBuilder.${what} (cudaGraphAddNode)`,
    );
    // CUDA fills an array of the bodies' graphs, which live as long as the node.
    const at = params.conditional.phGraph_out;
    const bodies = Array.from({ length: size }, (_, i) => {
      const g = cudart.cudaGraph_t(koffi.decode(at + BigInt(8 * i), 'uint64_t') as bigint);
      return new GraphBuilder(g, this.device, this, () => undefined);
    });
    this.use(what, handle, ...bodies);
    return [this.adopt(new ConditionalNode(h, what, this, handle, bodies)), bodies];
  }

  /**
   * Records the work `work` queues on `stream` into this graph (cudaStreamBeginCaptureToGraph), after
   * `options.after`; resolves with the nodes the captured work ends in, for later nodes to follow.
   * If `work` throws, the capture ends and the error is rethrown. CUDA records the captured work's
   * buffers by address, so they are not checked or held open as other nodes' are: keep them open
   * until the GraphExec is closed.
   *
   * The stream and the graph are held open until the capture has ended: closing either while `work`
   * runs (the work itself, or other code while it awaits) marks it closed at once, but CUDA's
   * handle is freed only after cudaStreamEndCapture, so the capture always ends and no stream is left
   * capturing. A stream closed meanwhile is destroyed then and the nodes are returned; a builder (or
   * the graph a body belongs to) closed meanwhile is destroyed then and the promise rejects with
   * Error, as no node of it can be used.
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
    const mode = lookupName(CAPTURE_MODES, options.mode ?? 'global', 'GraphBuilder.capture', "option 'mode'");
    const deps = this.deps(options, 'capture', CAPTURE_NODE_OPTIONS);
    check(
      cudart.cudaStreamBeginCaptureToGraph(stream.handle, this.handle, deps, null, deps?.length ?? 0, mode),
      'GraphBuilder.capture (cudaStreamBeginCaptureToGraph)',
    );
    // The top builder owns the graph (a body's included): it is the one whose close() would destroy it.
    const letGoStream = stream[holdOpen]();
    const letGoGraph = this.root[holdOpen]();
    try {
      return await this.captured(stream, work);
    } finally {
      letGoGraph();
      letGoStream();
    }
  }

  /** capture() once the capture has begun: runs the work, ends the capture, reads the nodes it made (while capture() holds the stream and the graph). */
  private async captured(stream: Stream, work: (stream: Stream) => unknown): Promise<GraphNode[]> {
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
    const why = failure === null ? this.closedReason() : null;
    if (failure !== null || why !== null) {
      if (err !== 0) cudart.cudaGetLastError();
      throw failure ?? new Error(`GraphBuilder.capture: ${why} while the work ran; the capture was ended and the graph destroyed`);
    }
    check([err], 'GraphBuilder.capture (cudaStreamEndCapture)');
    this.keep.push(work);
    // Every node the work became is 'captured' (the leaves first, for the order they come back in).
    const leafNodes = leaves.map((h) => this.nodeOf(h, 'captured'));
    const [, n] = check(cudart.cudaGraphGetNodes(this.handle, 0), 'GraphBuilder.capture (cudaGraphGetNodes)');
    if (n > 0)
      for (const h of check(cudart.cudaGraphGetNodes(this.handle, n), 'GraphBuilder.capture (cudaGraphGetNodes)')[0])
        this.nodeOf(h, 'captured');
    return leafNodes;
  }

  /**
   * Makes an executable graph, ready to launch; `options` are CUDA's instantiate flags
   * (`autoFreeOnLaunch`, `useNodePriority`, `upload: stream`, `deviceLaunch`). Throws Error when
   * something a node uses was closed since the node was added, and a CudaError naming the node CUDA
   * points at when it refuses the graph. The GraphExec holds open this builder and all the graph
   * uses: what is closed meanwhile is freed when the GraphExec is closed.
   */
  instantiate(options: InstantiateOptions = {}): GraphExec {
    this.alive('instantiate');
    if (this.parent)
      throw new Error('GraphBuilder.instantiate: this is the body of a conditional node; instantiate the graph it belongs to');
    this.checkUses(new Set());
    return instantiateGraph(this, options, 'GraphBuilder.instantiate', [], []);
  }
}
