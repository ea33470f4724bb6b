// A node of a graph made with GraphBuilder: what later nodes name in `after` to depend on it.
import type * as cudart from '../../runtime';
import type { GraphBuilder } from './GraphBuilder';

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
