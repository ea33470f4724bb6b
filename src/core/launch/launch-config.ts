// What a launch is given: its grid and block sizes (a Dim: a number, [x, y?, z?] or { x, y?, z? }),
// shared memory and stream, read once for every launch path: Kernel.launch, prepared launches and
// graph kernel nodes.
import type * as cudart from '../../runtime';
import { Stream } from '../device/Stream';
import type { Event } from '../device/Event';
import type { OptionKeys } from '../base/options';

/** A grid or block size: `n`, `[x, y, z]` (y and z default to 1), or `{ x, y, z }`. */
export type Dim =
  | number
  | readonly [number, number?, number?]
  | {
      /** The size along x. */
      x: number;
      /** The size along y (default 1). */
      y?: number;
      /** The size along z (default 1). */
      z?: number;
    };

/** An event a launch records when its kernel signals (programmatic dependent launch). */
export interface ProgrammaticEvent {
  /** The event (made with `{ timing: false }`: CUDA refuses one that records timestamps). */
  event: Event;
  /**
   * Records it once every block has started (true) rather than once every block has called
   * `cudaTriggerProgrammaticLaunchCompletion()` or exited (false, the default).
   */
  triggerAtBlockStart?: boolean;
}

/** The launch options that go to CUDA as launch attributes (cudaLaunchKernelExC): thread-block clusters, cooperative and dependent launches. */
export interface ExtendedLaunchOptions {
  /**
   * Blocks per thread-block cluster (compute capability 9.0+). When set, `grid` counts clusters, as
   * in cuda.core: the kernel runs `grid × cluster` blocks along each axis.
   */
  cluster?: Dim;
  /** A cooperative launch: every block resident at once, so the kernel may `grid.sync()`; the grid is checked against occupancy first. */
  cooperative?: boolean;
  /**
   * Programmatic dependent launch: this kernel may start before the previous kernel on the stream
   * has finished (once that one calls `cudaTriggerProgrammaticLaunchCompletion()` or exits); it
   * waits for it with `cudaGridDependencySynchronize()`.
   */
  programmaticStreamSerialization?: boolean;
  /** An event recorded when every block of this kernel has triggered (or started, see triggerAtBlockStart), for a dependent launch elsewhere. */
  programmaticEvent?: ProgrammaticEvent;
  /** An event recorded when every block of this kernel has exited or triggered, before its memory flush. */
  launchCompletionEvent?: Event;
}

/** Where and how big a launch is: `kernel.launch({ grid: 64, block: 256, stream }, ...args)`. */
export interface LaunchConfig extends ExtendedLaunchOptions {
  /** Blocks in the grid (clusters when `cluster` is set). */
  grid: Dim;
  /** Threads in a block. */
  block: Dim;
  /** Dynamic shared memory per block, in bytes (default 0). */
  sharedMem?: number;
  /** The stream to queue the launch on (default: the current stream of a {@link Stream.use}, else the legacy default stream). */
  stream?: Stream;
}

/** The keys of ExtendedLaunchOptions: a config with any of them goes through cudaLaunchKernelExC. */
export const EXTENDED_LAUNCH_KEYS: OptionKeys<ExtendedLaunchOptions> = {
  cluster: true,
  cooperative: true,
  programmaticStreamSerialization: true,
  programmaticEvent: true,
  launchCompletionEvent: true,
};

/** The keys a LaunchConfig may have, for checkOptions. */
export const LAUNCH_CONFIG_KEYS: OptionKeys<LaunchConfig> = {
  grid: true,
  block: true,
  sharedMem: true,
  stream: true,
  ...EXTENDED_LAUNCH_KEYS,
};

/**
 * Whether `config` has any extended option as a key (set or not): such a config always takes the
 * cudaLaunchKernelExC path, so a value changed in place later is still seen.
 */
export function hasExtendedKeys(config: object): boolean {
  for (const key in config) if ((EXTENDED_LAUNCH_KEYS as Record<string, unknown>)[key] === true) return true;
  return false;
}

/**
 * Whether an extended option is in use (a cluster, a cooperative or programmatic launch, an
 * event): read on every plain launch, five property loads and no allocation.
 */
export function usesExtendedOptions(c: ExtendedLaunchOptions): boolean {
  return (
    c.cluster !== undefined ||
    (c.cooperative !== undefined && c.cooperative !== false) ||
    (c.programmaticStreamSerialization !== undefined && c.programmaticStreamSerialization !== false) ||
    c.programmaticEvent !== undefined ||
    c.launchCompletionEvent !== undefined
  );
}

/**
 * Reads a Dim into out[0], out[1], out[2] (y and z default to 1) and returns true, or returns false
 * (out unchanged) when a size is not an integer within [1, 2^32 - 1]: the caller says where.
 */
export function readDim(v: Dim, out: number[]): boolean {
  let x: unknown,
    y: unknown = 1,
    z: unknown = 1;
  if (typeof v === 'number') x = v;
  else if (Array.isArray(v)) {
    x = v[0];
    if (v.length > 1 && v[1] !== undefined) y = v[1];
    if (v.length > 2 && v[2] !== undefined) z = v[2];
  } else if (v && typeof v === 'object') {
    const o = v as { x: unknown; y?: unknown; z?: unknown };
    x = o.x;
    if (o.y !== undefined) y = o.y;
    if (o.z !== undefined) z = o.z;
  }
  if (!isDim(x) || !isDim(y) || !isDim(z)) return false;
  out[0] = x;
  out[1] = y;
  out[2] = z;
  return true;
}

function isDim(n: unknown): n is number {
  return typeof n === 'number' && n >= 1 && n <= 0xffffffff && Math.floor(n) === n;
}

const xyz = [1, 1, 1];

/**
 * Sets `d` from a Dim, writing only what changed (launches in a loop mostly repeat their sizes);
 * throws a RangeError `<fn>: '<what>' must be …` naming the Dim.
 */
export function setDim(d: cudart.dim3, v: Dim, what: string, fn: string): cudart.dim3 {
  if (!readDim(v, xyz)) throw new RangeError(`${fn}: '${what}' must be a positive integer or [x, y, z] of them, got ${JSON.stringify(v)}`);
  if (d.x !== xyz[0]) d.x = xyz[0];
  if (d.y !== xyz[1]) d.y = xyz[1];
  if (d.z !== xyz[2]) d.z = xyz[2];
  return d;
}

/**
 * `config`, or (when it names no stream and a `stream.use(fn)` is in effect) a copy of it with the
 * current stream: one property test when a stream is given. Throws Error naming `where` when the
 * current stream was closed.
 */
export function withCurrentStream(config: LaunchConfig, where: string): LaunchConfig {
  if (config === null || typeof config !== 'object' || config.stream !== undefined) return config;
  const s = Stream.inScope(where);
  return s === undefined ? config : { ...config, stream: s };
}
