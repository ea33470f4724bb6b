// The value a conditional graph node (if, while, switch) reads: set on the device by a kernel
// (`cudaGraphSetConditional(handle, value)`), or to a default at each launch of the graph.
import type * as cudart from '../../runtime';
import type { GraphBuilder } from './GraphBuilder';

/**
 * The value a conditional graph node (if, while, switch) reads, made by
 * `builder.conditionalHandle({ default })`: pass it to a kernel node as an argument, and the kernel
 * sets it with `cudaGraphSetConditional(handle, value)`. It owns nothing; it lives with its graph.
 */
export class ConditionalHandle {
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
}
