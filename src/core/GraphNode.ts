// A node of a graph made with GraphBuilder: what later nodes name in `after` to depend on it.
import type * as cudart from '../runtime';
import type { GraphBuilder } from './GraphBuilder';

/** What kind of work a node does. */
export type GraphNodeKind = 'kernel' | 'copy' | 'memset' | 'host' | 'eventRecord' | 'eventWait' | 'child' | 'empty' | 'if' | 'while' | 'switch' | 'captured';

export class GraphNode {
  /** @internal Made by GraphBuilder's node methods. */
  constructor(
    readonly handle: cudart.cudaGraphNode_t,
    readonly kind: GraphNodeKind,
    /** The builder whose graph holds the node. */
    readonly builder: GraphBuilder,
  ) {}
}
