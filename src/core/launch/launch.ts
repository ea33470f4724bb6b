// cuda.core's launch(stream | graph builder, config, kernel, *args): one function for a launch on a
// stream and a kernel node of a graph being built, with the same config.
import { describe } from '../../ffi/checks';
import { Stream } from '../device/Stream';
import { Kernel } from './Kernel';
import type { KernelArgument } from './kernel-argument';
import type { LaunchConfig } from './launch-config';

/** A launch config without its stream: core.launch's first parameter says where the launch goes. */
export type TargetedLaunchConfig = Omit<LaunchConfig, 'stream'>;

/**
 * What core.launch adds a kernel node to: a GraphBuilder (its `kernel(kernel, config, args)`
 * method); named by shape because graphs sit above launches.
 */
export interface KernelNodeTarget<N> {
  /** Adds a kernel node with typed arguments and returns it. */
  kernel(kernel: Kernel, config: TargetedLaunchConfig, args: readonly KernelArgument[]): N;
}

/**
 * Launches `kernel` with `args` on `stream` (as `kernel.launch({ ...config, stream }, ...args)`),
 * or adds it as a kernel node to a GraphBuilder (`builder.kernel(kernel, config, args)`), with one
 * config for both: grid, block, shared memory, and a cluster or a cooperative launch (a graph node
 * takes no programmatic options: capture a stream for those).
 *
 * @example
 * ```ts
 * core.launch(stream, { grid: 8, cluster: 2, block: 128 }, kernel, buf, i32(n));
 * const node = core.launch(builder, { grid: 64, block: 256 }, kernel, buf, i32(n));
 * ```
 */
export function launch(stream: Stream, config: TargetedLaunchConfig, kernel: Kernel, ...args: KernelArgument[]): void;
/** Adds `kernel` as a kernel node of `builder` (a GraphBuilder) and returns the node. */
export function launch<N>(builder: KernelNodeTarget<N>, config: TargetedLaunchConfig, kernel: Kernel, ...args: KernelArgument[]): N;
export function launch<N>(
  target: Stream | KernelNodeTarget<N>,
  config: TargetedLaunchConfig,
  kernel: Kernel,
  ...args: KernelArgument[]
): N | void {
  if (!(kernel instanceof Kernel)) throw new TypeError(`launch: parameter 'kernel' must be a Kernel, got ${describe(kernel)}`);
  if (config === null || typeof config !== 'object')
    throw new TypeError(`launch(${kernel.name}): parameter 'config' must be a launch config { grid, block, … }, got ${describe(config)}`);
  if ((config as LaunchConfig).stream !== undefined)
    throw new TypeError(`launch(${kernel.name}): 'config.stream' is not taken here; the stream is the first parameter`);
  if (target instanceof Stream) return kernel.launch({ ...config, stream: target }, ...args);
  if (target !== null && typeof target === 'object' && typeof (target as KernelNodeTarget<N>).kernel === 'function')
    return (target as KernelNodeTarget<N>).kernel(kernel, config, args);
  throw new TypeError(`launch(${kernel.name}): parameter 'target' must be a Stream or a GraphBuilder, got ${describe(target)}`);
}
