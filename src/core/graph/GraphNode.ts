// A graph read back: what every graph shares (a GraphBuilder's, one recorded by stream.capture, one
// borrowed from another library's cudaGraph_t): its nodes, edges and roots, and for each node its
// type, predecessors and successors and the parameters CUDA keeps for it (a kernel node's grid and
// launch attributes, a memset's value, an allocation's address, a host node's function).
import * as cudart from '../../runtime';
import * as cuda from '../../driver';
import { check, checkDriver } from '../base/errors';
import { Resource, article } from '../base/lifetime';
import { checkOptions, type OptionKeys } from '../base/options';
import { describe } from '../../ffi/checks';
import type { Device } from '../device/Device';
import type { Event } from '../device/Event';
import { Kernel } from '../launch/Kernel';
import { asKernelArgument, kernelArgument, type KernelArgument, type KernelArgumentObject } from '../launch/kernel-argument';
import { setDim, type Dim } from '../launch/launch-config';
import { debugDot, type DebugDotOptions } from './debug-dot';

/** What a node is, as CUDA says (cudaGraphNodeType): 'kernel', 'copy', 'memset', 'alloc', … */
export type GraphNodeType =
  | 'kernel'
  | 'copy'
  | 'memset'
  | 'host'
  | 'child'
  | 'empty'
  | 'eventWait'
  | 'eventRecord'
  | 'extSemaphoreSignal'
  | 'extSemaphoreWait'
  | 'alloc'
  | 'free'
  | 'conditional';

/**
 * How a node was made: its type, or for a builder's conditional nodes 'if', 'while' or 'switch', and
 * 'captured' for the nodes stream work captured into a builder became.
 */
export type GraphNodeKind = GraphNodeType | 'if' | 'while' | 'switch' | 'captured';

const T = cudart.cudaGraphNodeType;
/** cudaGraphNodeType by the names GraphNodeType takes. */
const TYPES: Readonly<Record<number, GraphNodeType>> = {
  [T.cudaGraphNodeTypeKernel]: 'kernel',
  [T.cudaGraphNodeTypeMemcpy]: 'copy',
  [T.cudaGraphNodeTypeMemset]: 'memset',
  [T.cudaGraphNodeTypeHost]: 'host',
  [T.cudaGraphNodeTypeGraph]: 'child',
  [T.cudaGraphNodeTypeEmpty]: 'empty',
  [T.cudaGraphNodeTypeWaitEvent]: 'eventWait',
  [T.cudaGraphNodeTypeEventRecord]: 'eventRecord',
  [T.cudaGraphNodeTypeExtSemaphoreSignal]: 'extSemaphoreSignal',
  [T.cudaGraphNodeTypeExtSemaphoreWait]: 'extSemaphoreWait',
  [T.cudaGraphNodeTypeMemAlloc]: 'alloc',
  [T.cudaGraphNodeTypeMemFree]: 'free',
  [T.cudaGraphNodeTypeConditional]: 'conditional',
};

/** A dependency between two nodes of a graph: `to` starts after `from` finished. */
export interface GraphEdge {
  /** The node that runs first. */
  from: GraphNode;
  /** The node that waits for it. */
  to: GraphNode;
  /** 'default', or 'programmatic' for an edge that lets `to` start early (programmatic dependent launch). */
  type: 'default' | 'programmatic';
}

/**
 * What every readable graph shares: a {@link GraphBuilder}'s, and a {@link Graph} (recorded by
 * stream.capture, a child node's, or borrowed from another library). Reading a graph gives back the
 * node objects its builder returned (the same objects), and for nodes it did not make (captured
 * work, another library's graph) objects of the class of their type: {@link KernelNode},
 * {@link CopyNode}, {@link MemsetNode}, {@link HostNode}, {@link EventNode}, {@link ChildGraphNode},
 * {@link MemAllocNode}, {@link MemFreeNode}, or a plain {@link GraphNode}.
 */
export abstract class GraphDefinition extends Resource {
  /** The node objects made so far, by handle: reading the graph again gives the same ones. */
  private readonly known = new Map<bigint, GraphNode>();

  /** @internal Made by the subclasses. */
  protected constructor(
    /** The runtime handle (cudaGraph_t), for the `cuda-bindings/runtime` facade. */
    readonly handle: cudart.cudaGraph_t,
    /** The device the graph is for. */
    readonly device: Device,
    free: () => void,
    keep: unknown[],
  ) {
    super(free, keep);
  }

  /** @internal Why the graph cannot be used now (closed, or the graph it belongs to was), or null. */
  closedReason(): string | null {
    return this.isClosed ? `the ${this.constructor.name} was closed` : null;
  }

  /** Throws Error `<Class>.<what>: <why>` when the graph cannot be used now. */
  protected alive(what: string): void {
    const why = this.closedReason();
    if (why !== null) throw new Error(`${this.constructor.name}.${what}: ${why}`);
  }

  /** @internal Throws Error `<where>: …` when the graph cannot be instantiated or taken by an exec now (closed; for a builder, something a node uses was closed). */
  checkUsable(where: string): void {
    const why = this.closedReason();
    if (why !== null) throw new Error(`${where}: ${why}`);
  }

  /** @internal The graph at the top (a conditional body's, its parent's): an executable graph's nodes are its nodes. */
  get root(): GraphDefinition {
    return this;
  }

  /** @internal Keeps what a node now uses (a node's new arguments) alive with the graph. */
  noteUses(kind: GraphNodeKind, items: readonly unknown[]): void {
    void kind;
    this.keep.push(...items);
  }

  /** @internal Notes a node a method made, so that reading the graph back gives the same object. */
  protected adopt<N extends GraphNode>(node: N): N {
    this.known.set(node.handle, node);
    return node;
  }

  /** @internal The node object of `handle`: the one made for it, or a new one of its type (kind `kind` when given). */
  nodeOf(handle: cudart.cudaGraphNode_t, kind?: GraphNodeKind): GraphNode {
    let n = this.known.get(handle);
    if (n === undefined) {
      n = makeNode(handle, this, kind);
      this.known.set(handle, n);
    }
    return n;
  }

  /** How many nodes the graph has (not counting those inside conditional bodies or child graphs). */
  get nodeCount(): number {
    this.alive('nodeCount');
    return check(cudart.cudaGraphGetNodes(this.handle, 0), `${this.constructor.name}.nodeCount (cudaGraphGetNodes)`)[1];
  }

  /** How many edges (dependencies) join its nodes. */
  get edgeCount(): number {
    this.alive('edgeCount');
    return check(cudart.cudaGraphGetEdges(this.handle, 0), `${this.constructor.name}.edgeCount (cudaGraphGetEdges)`)[3];
  }

  /** Its nodes (cudaGraphGetNodes), in the order CUDA keeps them: the order they were added. */
  nodes(): GraphNode[] {
    this.alive('nodes');
    const fn = `${this.constructor.name}.nodes (cudaGraphGetNodes)`;
    const n = check(cudart.cudaGraphGetNodes(this.handle, 0), fn)[1];
    return n === 0 ? [] : check(cudart.cudaGraphGetNodes(this.handle, n), fn)[0].map((h) => this.nodeOf(h));
  }

  /** The nodes that wait for nothing (cudaGraphGetRootNodes): those a launch may start with. */
  rootNodes(): GraphNode[] {
    this.alive('rootNodes');
    const fn = `${this.constructor.name}.rootNodes (cudaGraphGetRootNodes)`;
    const n = check(cudart.cudaGraphGetRootNodes(this.handle, 0), fn)[1];
    return n === 0 ? [] : check(cudart.cudaGraphGetRootNodes(this.handle, n), fn)[0].map((h) => this.nodeOf(h));
  }

  /** Its edges (cudaGraphGetEdges, with their data): each `to` waits for its `from`. */
  edges(): GraphEdge[] {
    this.alive('edges');
    const fn = `${this.constructor.name}.edges (cudaGraphGetEdges)`;
    const n = check(cudart.cudaGraphGetEdges(this.handle, 0), fn)[3];
    if (n === 0) return [];
    const [from, to, data] = check(cudart.cudaGraphGetEdges(this.handle, n), fn);
    return from.map((f, i) => ({
      from: this.nodeOf(f),
      to: this.nodeOf(to[i]),
      type: data[i]?.type === cudart.cudaGraphDependencyType.cudaGraphDependencyTypeProgrammatic ? 'programmatic' : 'default',
    }));
  }

  /**
   * Writes the graph as Graphviz DOT to `path`; each option adds one kind of detail
   * (cudaGraphDebugDotFlags): `verbose` all of them, or `kernelParams`, `copyParams`, … one by one.
   */
  debugDot(path: string, options: DebugDotOptions = {}): void {
    this.alive('debugDot');
    debugDot(this.handle, path, options, `${this.constructor.name}.debugDot`);
  }
}

/** The node class of a type. */
function makeNode(handle: cudart.cudaGraphNode_t, graph: GraphDefinition, kind?: GraphNodeKind): GraphNode {
  const type = nodeType(handle, `${graph.constructor.name}.nodes`);
  const k = kind ?? type;
  switch (type) {
    case 'kernel':
      return new KernelNode(handle, k, graph, null);
    case 'copy':
      return new CopyNode(handle, k, graph);
    case 'memset':
      return new MemsetNode(handle, k, graph);
    case 'host':
      return new HostNode(handle, k, graph, null);
    case 'eventRecord':
    case 'eventWait':
      return new EventNode(handle, k, graph, null);
    case 'child':
      return new ChildGraphNode(handle, k, graph);
    case 'alloc': {
      const p = check(cudart.cudaGraphMemAllocNodeGetParams(handle), `${graph.constructor.name}.nodes (cudaGraphMemAllocNodeGetParams)`);
      return new MemAllocNode(handle, k, graph, p.dptr, p.bytesize);
    }
    case 'free':
      return new MemFreeNode(
        handle,
        k,
        graph,
        check(cudart.cudaGraphMemFreeNodeGetParams(handle), `${graph.constructor.name}.nodes (cudaGraphMemFreeNodeGetParams)`),
      );
    default:
      return new GraphNode(handle, k, graph);
  }
}

/** cudaGraphNodeGetType by its GraphNodeType name. */
function nodeType(handle: cudart.cudaGraphNode_t, where: string): GraphNodeType {
  const t = check(cudart.cudaGraphNodeGetType(handle), `${where} (cudaGraphNodeGetType)`);
  const name = TYPES[t];
  if (name === undefined)
    throw new RangeError(`${where}: CUDA reports a node of type ${t}, which this version of cuda-bindings does not know`);
  return name;
}

/**
 * A node of a graph: pass it in a later node's `after` (a builder's) to make that node wait for it;
 * read its `type`, `predecessors` and `successors`. It owns nothing (its graph does) and can be used
 * while its graph is open; its properties read CUDA each time, so they see what was changed since.
 * Nodes of a type with parameters are of a subclass that reads them ({@link KernelNode}, …).
 */
export class GraphNode {
  private cachedType: GraphNodeType | undefined;

  /** @internal Made by a builder's node methods, or when a graph is read. */
  constructor(
    /** The runtime handle (cudaGraphNode_t), for the `cuda-bindings/runtime` facade. */
    readonly handle: cudart.cudaGraphNode_t,
    /** How the node was made: 'kernel', 'copy', 'alloc', 'if', 'captured', … (its `type`, but for a builder's conditional and captured nodes). */
    readonly kind: GraphNodeKind,
    /** The graph that holds the node (a GraphBuilder, a conditional body's, or a Graph). */
    readonly graph: GraphDefinition,
  ) {}

  /** Throws Error `<Class>.<what>: …` when the node's graph cannot be used (closed). */
  protected live(what: string): void {
    const why = this.graph.closedReason();
    if (why !== null) throw new Error(`${this.constructor.name}.${what}: ${why}`);
  }

  /** What the node is, as CUDA says (cudaGraphNodeGetType): 'kernel', 'copy', 'memset', 'host', 'alloc', 'conditional', … */
  get type(): GraphNodeType {
    this.live('type');
    return (this.cachedType ??= nodeType(this.handle, `${this.constructor.name}.type`));
  }

  /** The nodes it waits for (cudaGraphNodeGetDependencies). */
  get predecessors(): GraphNode[] {
    this.live('predecessors');
    const fn = `${this.constructor.name}.predecessors (cudaGraphNodeGetDependencies)`;
    const n = check(cudart.cudaGraphNodeGetDependencies(this.handle, 0), fn)[2];
    return n === 0 ? [] : check(cudart.cudaGraphNodeGetDependencies(this.handle, n), fn)[0].map((h) => this.graph.nodeOf(h));
  }

  /** The nodes that wait for it (cudaGraphNodeGetDependentNodes). */
  get successors(): GraphNode[] {
    this.live('successors');
    const fn = `${this.constructor.name}.successors (cudaGraphNodeGetDependentNodes)`;
    const n = check(cudart.cudaGraphNodeGetDependentNodes(this.handle, 0), fn)[2];
    return n === 0 ? [] : check(cudart.cudaGraphNodeGetDependentNodes(this.handle, n), fn)[0].map((h) => this.graph.nodeOf(h));
  }

  /** @internal The node in words, for error messages: "the kernel node of saxpy", "a copy node". */
  get label(): string {
    return `${article(this.kind)} ${this.kind} node`;
  }
}

/** A grid or block size as CUDA keeps it. */
function dims(d: cudart.dim3): [number, number, number] {
  return [d.x, d.y, d.z];
}

/**
 * The launch attributes of a kernel node that core reads and sets (cudaLaunchAttributeID). A graph
 * says "start before the kernel before ends" with a programmatic edge (GraphEdge.type), not an attribute.
 */
export interface KernelNodeAttributes {
  /**
   * The node's scheduling priority (cudaLaunchAttributePriority), used when instantiated with
   * `{ useNodePriority: true }`: lower runs sooner, as for streams; CUDA clamps it to the device's
   * stream priority range (-5 to 0 on an H100).
   */
  priority: number;
  /** Whether its blocks run as a cooperative launch (all resident at once; cudaLaunchAttributeCooperative). */
  cooperative: boolean;
  /** Its thread block cluster size, [0, 0, 0] when it has none (cudaLaunchAttributeClusterDimension). */
  clusterDim: [number, number, number];
  /** The memory synchronization domain its memory operations use (cudaLaunchAttributeMemSyncDomain). */
  memSyncDomain: 'default' | 'remote';
}

const KERNEL_NODE_ATTRIBUTES: OptionKeys<KernelNodeAttributes> = {
  priority: true,
  cooperative: true,
  clusterDim: true,
  memSyncDomain: true,
};

const A = cudart.cudaLaunchAttributeID;

/** A kernel node's new parameters (absent: as they are): for `node.setParams()` and `exec.setKernelParams()`. */
export interface KernelNodeChanges {
  /** Another kernel of the same signature (of a module loaded in the same context). */
  kernel?: Kernel;
  /** Blocks in the grid. */
  grid?: Dim;
  /** Threads in a block. */
  block?: Dim;
  /** Dynamic shared memory per block, in bytes. */
  sharedMem?: number;
  /** All the arguments again, as a builder's kernel() takes them (copied into the node). */
  args?: readonly KernelArgument[];
}

/** @internal The keys of KernelNodeChanges, for checkOptions. */
export const KERNEL_NODE_CHANGES: OptionKeys<KernelNodeChanges> = { kernel: true, grid: true, block: true, sharedMem: true, args: true };

/**
 * A kernel node: its kernel, grid, block, shared memory and launch attributes, read from CUDA
 * (cudaGraphKernelNodeGetParams, cudaGraphKernelNodeGetAttribute); `setParams()` and
 * `setAttributes()` change the node (for graphs instantiated after), `exec.setKernelParams(node, …)`
 * an executable graph made from it.
 */
export class KernelNode extends GraphNode {
  /** @internal Made by builder.kernel(), or when a graph is read. */
  constructor(
    handle: cudart.cudaGraphNode_t,
    kind: GraphNodeKind,
    graph: GraphDefinition,
    /** The core Kernel it launches when a builder made it (null for a node read from a graph made elsewhere: see `func`). */
    readonly kernel: Kernel | null,
  ) {
    super(handle, kind, graph);
  }

  /** @internal "the kernel node of <name>", or "a kernel node" when the kernel is not known. */
  override get label(): string {
    return this.kernel ? `the kernel node of ${this.kernel.name}` : 'a kernel node';
  }

  /**
   * @internal Its parameters as CUDA keeps them (the argument pointers are CUDA's copies). The
   * runtime cannot name a library's kernel (a cudaKernel_t, as core's kernels are) as a function
   * (cudaErrorInvalidDeviceFunction): the driver reads those, and `func` is then the kernel handle.
   */
  params(what: string): cudart.cudaKernelNodeParams {
    this.live(what);
    const [err, p] = cudart.cudaGraphKernelNodeGetParams(this.handle);
    if (err === cudart.cudaError_t.cudaSuccess && p !== null) return p;
    if (err !== cudart.cudaError_t.cudaErrorInvalidDeviceFunction) check([err], `KernelNode.${what} (cudaGraphKernelNodeGetParams)`);
    cudart.cudaGetLastError();
    const d = checkDriver(
      cuda.cuGraphKernelNodeGetParams(this.handle as unknown as cuda.CUgraphNode),
      `KernelNode.${what} (cuGraphKernelNodeGetParams)`,
    );
    return new cudart.cudaKernelNodeParams({
      func: d.kern !== 0n ? BigInt(d.kern) : BigInt(d.func),
      gridDim: { x: d.gridDimX, y: d.gridDimY, z: d.gridDimZ },
      blockDim: { x: d.blockDimX, y: d.blockDimY, z: d.blockDimZ },
      sharedMemBytes: d.sharedMemBytes,
      kernelParams: d.kernelParams,
      extra: d.extra,
    });
  }

  /** The function it launches, as CUDA reports it (a cudaKernel_t or function address). */
  get func(): bigint {
    return this.params('func').func;
  }

  /** Blocks in its grid, [x, y, z]. */
  get grid(): [number, number, number] {
    return dims(this.params('grid').gridDim);
  }

  /** Threads in a block, [x, y, z]. */
  get block(): [number, number, number] {
    return dims(this.params('block').blockDim);
  }

  /** Dynamic shared memory per block, in bytes. */
  get sharedMem(): number {
    return this.params('sharedMem').sharedMemBytes;
  }

  /** Its launch attributes (priority, cooperative, cluster size, memory sync domain). */
  get attributes(): KernelNodeAttributes {
    this.live('attributes');
    const get = (id: cudart.cudaLaunchAttributeID, name: string) =>
      check(cudart.cudaGraphKernelNodeGetAttribute(this.handle, id), `KernelNode.attributes (cudaGraphKernelNodeGetAttribute ${name})`);
    const c = get(A.cudaLaunchAttributeClusterDimension, 'clusterDim').clusterDim;
    return {
      priority: get(A.cudaLaunchAttributePriority, 'priority').priority,
      cooperative: get(A.cudaLaunchAttributeCooperative, 'cooperative').cooperative !== 0,
      clusterDim: [c.x, c.y, c.z],
      memSyncDomain:
        get(A.cudaLaunchAttributeMemSyncDomain, 'memSyncDomain').memSyncDomain ===
        cudart.cudaLaunchMemSyncDomain.cudaLaunchMemSyncDomainRemote
          ? 'remote'
          : 'default',
    };
  }

  /** Sets the given launch attributes of the node (cudaGraphKernelNodeSetAttribute), for graphs instantiated after. */
  setAttributes(attributes: Partial<KernelNodeAttributes>): void {
    const fn = `KernelNode.setAttributes(${this.kernel?.name ?? 'kernel'})`;
    this.live('setAttributes');
    if (attributes === null || typeof attributes !== 'object')
      throw new TypeError(`${fn}: parameter 'attributes' must be an object of attributes, got ${describe(attributes)}`);
    checkOptions(fn, attributes, KERNEL_NODE_ATTRIBUTES, 'attributes');
    const sets: [cudart.cudaLaunchAttributeID, string, cudart.cudaLaunchAttributeValueInit][] = [];
    const bool = (v: unknown, name: string) => {
      if (typeof v !== 'boolean') throw new TypeError(`${fn}: attribute '${name}' must be a boolean, got ${describe(v)}`);
      return v ? 1 : 0;
    };
    const { priority, cooperative, clusterDim, memSyncDomain } = attributes;
    if (priority !== undefined) {
      if (!Number.isInteger(priority) || priority < -(2 ** 31) || priority >= 2 ** 31)
        throw new RangeError(`${fn}: attribute 'priority' must be a 32-bit integer, got ${describe(priority)}`);
      sets.push([A.cudaLaunchAttributePriority, 'priority', { priority }]);
    }
    if (cooperative !== undefined)
      sets.push([A.cudaLaunchAttributeCooperative, 'cooperative', { cooperative: bool(cooperative, 'cooperative') }]);
    if (clusterDim !== undefined) {
      const d = setDim(new cudart.dim3(), clusterDim as Dim, 'attributes.clusterDim', fn);
      sets.push([A.cudaLaunchAttributeClusterDimension, 'clusterDim', { clusterDim: { x: d.x, y: d.y, z: d.z } }]);
    }
    if (memSyncDomain !== undefined) {
      if (memSyncDomain !== 'default' && memSyncDomain !== 'remote')
        throw new RangeError(`${fn}: attribute 'memSyncDomain' must be 'default' or 'remote', got ${describe(memSyncDomain)}`);
      const D = cudart.cudaLaunchMemSyncDomain;
      sets.push([
        A.cudaLaunchAttributeMemSyncDomain,
        'memSyncDomain',
        { memSyncDomain: memSyncDomain === 'remote' ? D.cudaLaunchMemSyncDomainRemote : D.cudaLaunchMemSyncDomainDefault },
      ]);
    }
    for (const [id, name, value] of sets)
      check(
        cudart.cudaGraphKernelNodeSetAttribute(this.handle, id, new cudart.cudaLaunchAttributeValue(value)),
        `${fn} (cudaGraphKernelNodeSetAttribute ${name})`,
      );
  }

  /**
   * Changes the node's kernel, grid, block, shared memory or arguments (cudaGraphKernelNodeSetParams)
   * for graphs instantiated after; an executable graph made before keeps the old ones (see
   * `exec.setKernelParams`).
   */
  setParams(changes: KernelNodeChanges): void {
    const fn = `KernelNode.setParams(${this.kernel?.name ?? 'kernel'})`;
    const [params, used] = kernelParamsWith(this, changes, fn, 'setParams');
    check(cudart.cudaGraphKernelNodeSetParams(this.handle, params), `${fn} (cudaGraphKernelNodeSetParams)`);
    this.graph.noteUses('kernel', used);
  }
}

/**
 * @internal The node's parameters with `changes` made, and the objects the new ones use (to keep
 * alive): for KernelNode.setParams and GraphExec.setKernelParams. Throws TypeError or RangeError
 * naming `fn` and the parameter.
 */
export function kernelParamsWith(
  node: KernelNode,
  changes: KernelNodeChanges,
  fn: string,
  what: string,
): [cudart.cudaKernelNodeParams, unknown[]] {
  if (changes === null || typeof changes !== 'object')
    throw new TypeError(`${fn}: parameter 'changes' must be { kernel?, grid?, block?, sharedMem?, args? }, got ${describe(changes)}`);
  checkOptions(fn, changes, KERNEL_NODE_CHANGES, 'changes');
  const { kernel, grid, block, sharedMem, args } = changes;
  const used: unknown[] = [];
  if (kernel !== undefined) {
    if (!(kernel instanceof Kernel)) throw new TypeError(`${fn}: 'changes.kernel' must be a Kernel, got ${describe(kernel)}`);
    if (kernel.isClosed) throw new Error(`${fn}: 'changes.kernel' is a Kernel whose Module was closed`);
    used.push(kernel, kernel.module);
  }
  if (sharedMem !== undefined && (!Number.isSafeInteger(sharedMem) || sharedMem < 0 || sharedMem >= 2 ** 32))
    throw new RangeError(`${fn}: 'changes.sharedMem' must be a non-negative integer, got ${describe(sharedMem)}`);
  let values: cudart.KernelArgInput[] | undefined;
  if (args !== undefined) {
    if (!Array.isArray(args)) throw new TypeError(`${fn}: 'changes.args' must be an array of kernel arguments, got ${describe(args)}`);
    values = args.map((a, i) => kernelArgument(a, i, fn));
    used.push(...args.filter((a) => typeof a === 'object'));
  }
  const params = node.params(what);
  if (kernel !== undefined) params.func = kernel.handle;
  if (grid !== undefined) setDim(params.gridDim, grid, 'changes.grid', fn);
  if (block !== undefined) setDim(params.blockDim, block, 'changes.block', fn);
  if (sharedMem !== undefined) params.sharedMemBytes = sharedMem;
  if (values !== undefined) params.kernelParams = values.length ? values : null;
  return [params, used];
}

/** A copy node: its addresses and extent (cudaGraphMemcpyNodeGetParams; 0n for a CUDA array's side). */
export class CopyNode extends GraphNode {
  /** @internal Its parameters as CUDA keeps them. */
  params(what: string): cudart.cudaMemcpy3DParms {
    this.live(what);
    return check(cudart.cudaGraphMemcpyNodeGetParams(this.handle), `CopyNode.${what} (cudaGraphMemcpyNodeGetParams)`);
  }

  /** The destination address. */
  get dst(): bigint {
    return this.params('dst').dstPtr.ptr;
  }

  /** The source address. */
  get src(): bigint {
    return this.params('src').srcPtr.ptr;
  }

  /** Bytes copied: width × height × depth. */
  get bytes(): number {
    const e = this.params('bytes').extent;
    return e.width * Math.max(e.height, 1) * Math.max(e.depth, 1);
  }

  /** Its extent: `width` bytes per row, `height` rows, `depth` slices (1 and 1 for a plain copy). */
  get extent(): {
    /** Bytes per row. */
    width: number;
    /** Rows per slice. */
    height: number;
    /** Slices. */
    depth: number;
  } {
    const e = this.params('extent').extent;
    return { width: e.width, height: e.height, depth: e.depth };
  }

  /** Bytes from one row to the next at the destination and at the source. */
  get pitch(): {
    /** Bytes from one row to the next at the destination. */
    dst: number;
    /** Bytes from one row to the next at the source. */
    src: number;
  } {
    const p = this.params('pitch');
    return { dst: p.dstPtr.pitch, src: p.srcPtr.pitch };
  }
}

/** A memset node: its destination, value, element size and shape (cudaGraphMemsetNodeGetParams). */
export class MemsetNode extends GraphNode {
  /** @internal Its parameters as CUDA keeps them. */
  params(what: string): cudart.cudaMemsetParams {
    this.live(what);
    return check(cudart.cudaGraphMemsetNodeGetParams(this.handle), `MemsetNode.${what} (cudaGraphMemsetNodeGetParams)`);
  }

  /** The address it sets. */
  get dst(): bigint {
    return this.params('dst').dst;
  }

  /** The value each element is set to. */
  get value(): number {
    return this.params('value').value;
  }

  /** Bytes per element: 1, 2 or 4. */
  get elementSize(): number {
    return this.params('elementSize').elementSize;
  }

  /** Elements per row, rows, and bytes from one row to the next. */
  get shape(): {
    /** Elements per row. */
    width: number;
    /** Rows. */
    height: number;
    /** Bytes from one row to the next. */
    pitch: number;
  } {
    const p = this.params('shape');
    return { width: p.width, height: p.height, pitch: p.pitch };
  }
}

/** A host node: its C function and user data (cudaGraphHostNodeGetParams), and the JS function when a builder made it from one. */
export class HostNode extends GraphNode {
  /** @internal Made by builder.hostFunction(), or when a graph is read. */
  constructor(
    handle: cudart.cudaGraphNode_t,
    kind: GraphNodeKind,
    graph: GraphDefinition,
    /** The JS function it runs, when a builder made it from one (else null: see `fn`). */
    readonly jsFunction: (() => void) | null,
  ) {
    super(handle, kind, graph);
  }

  /** The C function it calls (for a JS function, the trampoline that calls it). */
  get fn(): bigint {
    this.live('fn');
    return check(cudart.cudaGraphHostNodeGetParams(this.handle), 'HostNode.fn (cudaGraphHostNodeGetParams)').fn;
  }

  /** The pointer the C function is given. */
  get userData(): bigint {
    this.live('userData');
    return check(cudart.cudaGraphHostNodeGetParams(this.handle), 'HostNode.userData (cudaGraphHostNodeGetParams)').userData;
  }
}

/** An event record or wait node: its event (cudaGraphEventRecordNodeGetEvent / cudaGraphEventWaitNodeGetEvent). */
export class EventNode extends GraphNode {
  /** @internal Made by builder.recordEvent() or waitEvent(), or when a graph is read. */
  constructor(
    handle: cudart.cudaGraphNode_t,
    kind: GraphNodeKind,
    graph: GraphDefinition,
    /** The core Event, when a builder made the node (else null: see `eventHandle`). */
    readonly event: Event | null,
  ) {
    super(handle, kind, graph);
  }

  /** The event's runtime handle, as CUDA reports it. */
  get eventHandle(): cudart.cudaEvent_t {
    this.live('eventHandle');
    return this.type === 'eventRecord'
      ? check(cudart.cudaGraphEventRecordNodeGetEvent(this.handle), 'EventNode.eventHandle (cudaGraphEventRecordNodeGetEvent)')
      : check(cudart.cudaGraphEventWaitNodeGetEvent(this.handle), 'EventNode.eventHandle (cudaGraphEventWaitNodeGetEvent)');
  }
}

/** A child graph node: `childGraph` (added by Graph) is the copy of the graph it runs. */
export class ChildGraphNode extends GraphNode {
  /** The runtime handle of the child graph the node owns (cudaGraphChildGraphNodeGetGraph). */
  get childGraphHandle(): cudart.cudaGraph_t {
    this.live('childGraphHandle');
    return check(cudart.cudaGraphChildGraphNodeGetGraph(this.handle), 'ChildGraphNode.childGraphHandle (cudaGraphChildGraphNodeGetGraph)');
  }
}

/**
 * A memory allocation node (builder.allocate()): `ptr` is the address its launches allocate, the
 * same at every launch, valid for the nodes after it until a free node (or the next launch, with
 * `{ autoFreeOnLaunch: true }`). Pass the node itself to later kernel, copy and memset nodes.
 */
export class MemAllocNode extends GraphNode implements KernelArgumentObject {
  /** @internal Made by builder.allocate(), or when a graph is read. */
  constructor(
    handle: cudart.cudaGraphNode_t,
    kind: GraphNodeKind,
    graph: GraphDefinition,
    /** The device address of the allocation (fixed when the node was added). */
    readonly ptr: bigint,
    /** Its size in bytes. */
    readonly size: number,
  ) {
    super(handle, kind, graph);
  }

  /** Its address as a kernel argument; throws Error once its graph was closed. */
  [asKernelArgument](i: number, where: string): cudart.KernelArgInput {
    if (this.graph.closedReason() !== null) throw new Error(`${where}: argument ${i} is the allocation of a graph that was closed`);
    return this.ptr;
  }
}

/** A memory free node: the address it frees (cudaGraphMemFreeNodeGetParams). */
export class MemFreeNode extends GraphNode {
  /** @internal Made by builder.deallocate(), or when a graph is read. */
  constructor(
    handle: cudart.cudaGraphNode_t,
    kind: GraphNodeKind,
    graph: GraphDefinition,
    /** The device address it frees. */
    readonly ptr: bigint,
  ) {
    super(handle, kind, graph);
  }
}
