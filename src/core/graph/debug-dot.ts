// What Graph and GraphBuilder share: the DOT dump of a graph.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { describe } from '../../ffi/checks';

/** cudaGraphDebugDotPrint with the layer's checks (Graph.debugDot and GraphBuilder.debugDot). */
export function debugDot(graph: cudart.cudaGraph_t, path: string, options: { verbose?: boolean }, fn: string): void {
  if (typeof path !== 'string' || path === '') throw new TypeError(`${fn}: parameter 'path' must be a file path, got ${describe(path)}`);
  const flags = options?.verbose ? cudart.cudaGraphDebugDotFlags.cudaGraphDebugDotFlagsVerbose : 0;
  check(cudart.cudaGraphDebugDotPrint(graph, path, flags), `${fn} (cudaGraphDebugDotPrint)`);
}
