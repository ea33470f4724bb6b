// What Graph and GraphBuilder share: the DOT dump of a graph, with each of CUDA's detail flags.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { describe } from '../../ffi/checks';
import { checkOptions, type OptionKeys } from '../base/options';

/**
 * What a DOT dump shows beyond the nodes and edges (cudaGraphDebugDotFlags): each option adds one
 * kind of detail; `verbose` adds them all.
 */
export interface DebugDotOptions {
  /** Every node's parameters (cudaGraphDebugDotFlagsVerbose): all the options below at once. */
  verbose?: boolean;
  /** Kernel nodes' parameters: function, grid, block, shared memory, arguments. */
  kernelParams?: boolean;
  /** Kernel nodes' launch attributes (priority, cluster sizes, …). */
  kernelAttributes?: boolean;
  /** Copy nodes' parameters. */
  copyParams?: boolean;
  /** Memset nodes' parameters. */
  memsetParams?: boolean;
  /** Host nodes' parameters (function and user data). */
  hostParams?: boolean;
  /** Event record and wait nodes' events. */
  eventParams?: boolean;
  /** External semaphore signal nodes' parameters. */
  extSemaphoreSignalParams?: boolean;
  /** External semaphore wait nodes' parameters. */
  extSemaphoreWaitParams?: boolean;
  /** Conditional nodes' parameters (handle, type, bodies). */
  conditionalParams?: boolean;
  /** The handles of the nodes and of the graph (CUDA's addresses, to match them with other output). */
  handles?: boolean;
}

const F = cudart.cudaGraphDebugDotFlags;
/** Each option's flag. */
const DOT_FLAGS: Readonly<Record<keyof DebugDotOptions, number>> = {
  verbose: F.cudaGraphDebugDotFlagsVerbose,
  kernelParams: F.cudaGraphDebugDotFlagsKernelNodeParams,
  kernelAttributes: F.cudaGraphDebugDotFlagsKernelNodeAttributes,
  copyParams: F.cudaGraphDebugDotFlagsMemcpyNodeParams,
  memsetParams: F.cudaGraphDebugDotFlagsMemsetNodeParams,
  hostParams: F.cudaGraphDebugDotFlagsHostNodeParams,
  eventParams: F.cudaGraphDebugDotFlagsEventNodeParams,
  extSemaphoreSignalParams: F.cudaGraphDebugDotFlagsExtSemasSignalNodeParams,
  extSemaphoreWaitParams: F.cudaGraphDebugDotFlagsExtSemasWaitNodeParams,
  conditionalParams: F.cudaGraphDebugDotFlagsConditionalNodeParams,
  handles: F.cudaGraphDebugDotFlagsHandles,
};

/** The keys of DebugDotOptions, for checkOptions. */
const DEBUG_DOT_OPTIONS: OptionKeys<DebugDotOptions> = {
  verbose: true,
  kernelParams: true,
  kernelAttributes: true,
  copyParams: true,
  memsetParams: true,
  hostParams: true,
  eventParams: true,
  extSemaphoreSignalParams: true,
  extSemaphoreWaitParams: true,
  conditionalParams: true,
  handles: true,
};

/** The cudaGraphDebugDotFlags of `options` (checked: known keys, booleans), for the method `fn`. */
export function debugDotFlags(options: DebugDotOptions, fn: string): number {
  checkOptions(fn, options, DEBUG_DOT_OPTIONS);
  let flags = 0;
  for (const [key, on] of Object.entries(options ?? {})) {
    if (on === undefined) continue;
    if (typeof on !== 'boolean') throw new TypeError(`${fn}: option '${key}' must be a boolean, got ${describe(on)}`);
    if (on) flags |= DOT_FLAGS[key as keyof DebugDotOptions];
  }
  return flags;
}

/** cudaGraphDebugDotPrint with the layer's checks (Graph.debugDot and GraphBuilder.debugDot). */
export function debugDot(graph: cudart.cudaGraph_t, path: string, options: DebugDotOptions, fn: string): void {
  const flags = debugDotFlags(options, fn);
  if (typeof path !== 'string' || path === '') throw new TypeError(`${fn}: parameter 'path' must be a file path, got ${describe(path)}`);
  check(cudart.cudaGraphDebugDotPrint(graph, path, flags), `${fn} (cudaGraphDebugDotPrint)`);
}
