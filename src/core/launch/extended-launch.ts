// Launches with launch attributes (cudaLaunchKernelExC): thread-block clusters, cooperative launches
// and programmatic dependent launches. The config is read and checked here, against the kernel's and
// the device's limits, before anything reaches C; the plain launch path never comes here.
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { runtimeError, check } from '../base/errors';
import { Device } from '../device/Device';
import { Event } from '../device/Event';
import { Stream } from '../device/Stream';
import type { LaunchConfig, ExtendedLaunchOptions, Dim } from './launch-config';
import { dims, sharedBytes, type KernelRef, type LaunchLimits } from './occupancy';

const ID = cudart.cudaLaunchAttributeID;
const ATTR_SIZE = 72; // sizeof(cudaLaunchAttribute), proven against the header by the layout tests
const MAX_ATTRS = 5;

/** A launch's sizes and extended options, read and checked (the grid in blocks, whatever `cluster` says). */
export interface ResolvedLaunch {
  /** Blocks along x, y, z: the config's grid times its cluster. */
  grid: [number, number, number];
  /** Threads in a block along x, y, z. */
  block: [number, number, number];
  /** Blocks per cluster, or null. */
  cluster: [number, number, number] | null;
  /** Dynamic shared memory per block, in bytes. */
  sharedMem: number;
  /** A cooperative launch. */
  cooperative: boolean;
  /** Programmatic stream serialization allowed. */
  programmaticStreamSerialization: boolean;
  /** The programmatic event and when it triggers, or null. */
  programmaticEvent: { event: Event; triggerAtBlockStart: boolean } | null;
  /** The launch completion event, or null. */
  launchCompletionEvent: Event | null;
}

function flag(v: unknown, what: string, where: string): boolean {
  if (v === undefined || v === false) return false;
  if (v === true) return true;
  throw new TypeError(`${where}: 'config.${what}' must be true or false, got ${describe(v)}`);
}

function openEvent(v: unknown, what: string, where: string): Event {
  if (!(v instanceof Event)) throw new TypeError(`${where}: 'config.${what}' must be an Event, got ${describe(v)}`);
  if (v.isClosed) throw new Error(`${where}: 'config.${what}' is an Event that was closed`);
  return v;
}

/** Reads the sizes and extended options of a config (any launch path's), refusing bad values with the config key named. */
export function resolveLaunch(
  config: { grid: Dim; block: Dim; sharedMem?: number } & ExtendedLaunchOptions,
  where: string,
): ResolvedLaunch {
  const grid = dims(config.grid, 'config.grid', where);
  const block = dims(config.block, 'config.block', where);
  const cluster = config.cluster === undefined ? null : dims(config.cluster, 'config.cluster', where);
  if (cluster) {
    for (let i = 0; i < 3; i++) {
      const blocks = grid[i] * cluster[i];
      if (blocks > 0xffffffff)
        throw new RangeError(
          `${where}: 'config.grid' counts clusters when 'config.cluster' is set, and ${grid[i]} clusters of ${cluster[i]} blocks along ${'xyz'[i]} make ${blocks} blocks, more than 2^32 - 1`,
        );
      grid[i] = blocks;
    }
  }
  const pe = config.programmaticEvent;
  let programmaticEvent: ResolvedLaunch['programmaticEvent'] = null;
  if (pe !== undefined) {
    if (pe === null || typeof pe !== 'object')
      throw new TypeError(`${where}: 'config.programmaticEvent' must be { event, triggerAtBlockStart? }, got ${describe(pe)}`);
    programmaticEvent = {
      event: openEvent(pe.event, 'programmaticEvent.event', where),
      triggerAtBlockStart: flag(pe.triggerAtBlockStart, 'programmaticEvent.triggerAtBlockStart', where),
    };
  }
  return {
    grid,
    block,
    cluster,
    sharedMem: sharedBytes(config.sharedMem, 'config.sharedMem', where),
    cooperative: flag(config.cooperative, 'cooperative', where),
    programmaticStreamSerialization: flag(config.programmaticStreamSerialization, 'programmaticStreamSerialization', where),
    programmaticEvent,
    launchCompletionEvent:
      config.launchCompletionEvent === undefined ? null : openEvent(config.launchCompletionEvent, 'launchCompletionEvent', where),
  };
}

const product = (d: readonly number[]): number => d[0] * d[1] * d[2];
const show = (d: readonly number[]): string => `[${d.join(', ')}]`;

/**
 * Checks a cluster against the device and the kernel (support, compile-time dims, the largest
 * size), and a cooperative grid against what can be resident at once; throws naming the numbers.
 */
export function checkLimits(k: KernelRef, r: ResolvedLaunch, limits: LaunchLimits, where: string): void {
  if (!r.cluster && !r.cooperative) return;
  const d = Device.current();
  const threads = product(r.block);
  if (r.cluster) {
    if (!limits.device(d, cudart.cudaDeviceAttr.cudaDevAttrClusterLaunch)) {
      const cc = `${limits.device(d, cudart.cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor)}.${limits.device(d, cudart.cudaDeviceAttr.cudaDevAttrComputeCapabilityMinor)}`;
      throw new Error(
        `${where}: 'config.cluster' needs thread-block clusters (compute capability 9.0 or later); device ${d.ordinal} is ${cc}`,
      );
    }
    const required = limits.requiredCluster(d);
    if (required) {
      if (required.some((n, i) => n !== r.cluster![i]))
        throw new RangeError(
          `${where}: 'config.cluster' is ${show(r.cluster)} but the kernel was compiled with __cluster_dims__(${required.join(', ')}); give that, or no cluster`,
        );
    } else {
      const size = product(r.cluster);
      const max = limits.maxClusterSize(d, r.block, r.sharedMem);
      if (size > max)
        throw new RangeError(
          `${where}: a cluster of ${size} blocks (${show(r.cluster)}) is more than the ${max} this kernel can have on device ${d.ordinal} with blocks of ${threads} threads and ${r.sharedMem} bytes of dynamic shared memory` +
            (max <= 8 ? "; kernel.setAttribute('NonPortableClusterSizeAllowed', 1) allows more where the device can" : ''),
        );
    }
  }
  if (r.cooperative) {
    if (!limits.device(d, cudart.cudaDeviceAttr.cudaDevAttrCooperativeLaunch))
      throw new Error(`${where}: 'config.cooperative' needs a device that supports cooperative launches; device ${d.ordinal} does not`);
    const blocks = product(r.grid);
    const perSM = limits.activeBlocks(d, threads, r.sharedMem);
    const sms = limits.device(d, cudart.cudaDeviceAttr.cudaDevAttrMultiProcessorCount);
    if (blocks > perSM * sms)
      throw new RangeError(
        `${where}: a cooperative grid of ${blocks} blocks is more than device ${d.ordinal} can hold at once: ${perSM * sms} (${perSM} blocks of ${threads} threads with ${r.sharedMem} bytes of dynamic shared memory per multiprocessor × ${sms} multiprocessors)`,
      );
  }
}

/** A cudaLaunchConfig_t and its attribute array, reused by every extended launch of one launcher. */
export class ExtendedLauncher {
  private readonly config = new cudart.cudaLaunchConfig_st();
  private readonly memory = new Uint8Array(ATTR_SIZE * MAX_ATTRS);
  private readonly slots: cudart.cudaLaunchAttribute_st[] = [];

  constructor() {
    for (let i = 0; i < MAX_ATTRS; i++)
      this.slots.push(cudart.cudaLaunchAttribute_st.view(this.memory.subarray(i * ATTR_SIZE, (i + 1) * ATTR_SIZE)));
    this.config.attrs = this.memory;
  }

  /**
   * Checks `config` (its values, the stream, the limits) and launches `k` with `args` (packed as
   * cudaLaunchKernel takes them) through cudaLaunchKernelExC.
   */
  launch(
    k: KernelRef,
    limits: LaunchLimits,
    config: LaunchConfig,
    args: cudart.KernelArgs | cudart.KernelArgInput[] | null,
    where: string,
  ): void {
    const r = resolveLaunch(config, where);
    const s = config.stream;
    if (s !== undefined && s !== null) {
      if (!(s instanceof Stream)) throw new TypeError(`${where}: parameter 'config.stream' must be a Stream, got ${describe(s)}`);
      if (s.isClosed) throw new Error(`${where}: parameter 'config.stream' is a Stream that was closed`);
    }
    checkLimits(k, r, limits, where);
    const c = this.config;
    c.gridDim.x = r.grid[0];
    c.gridDim.y = r.grid[1];
    c.gridDim.z = r.grid[2];
    c.blockDim.x = r.block[0];
    c.blockDim.y = r.block[1];
    c.blockDim.z = r.block[2];
    c.dynamicSmemBytes = r.sharedMem;
    c.stream = s?.handle ?? null;
    c.numAttrs = this.attributes(r);
    const err = cudart.cudaLaunchKernelExC(c, k.handle, args ?? null)[0];
    if (err !== cudart.cudaError_t.cudaSuccess) throw runtimeError(err, `cudaLaunchKernelExC(${k.name})`);
  }

  /** Writes the attributes `r` asks for into the reused array; returns how many. */
  private attributes(r: ResolvedLaunch): number {
    this.memory.fill(0);
    let n = 0;
    if (r.cluster) {
      const a = this.slots[n++];
      a.id = ID.cudaLaunchAttributeClusterDimension;
      a.val.clusterDim.x = r.cluster[0];
      a.val.clusterDim.y = r.cluster[1];
      a.val.clusterDim.z = r.cluster[2];
    }
    if (r.cooperative) {
      const a = this.slots[n++];
      a.id = ID.cudaLaunchAttributeCooperative;
      a.val.cooperative = 1;
    }
    if (r.programmaticStreamSerialization) {
      const a = this.slots[n++];
      a.id = ID.cudaLaunchAttributeProgrammaticStreamSerialization;
      a.val.programmaticStreamSerializationAllowed = 1;
    }
    if (r.programmaticEvent) {
      const a = this.slots[n++];
      a.id = ID.cudaLaunchAttributeProgrammaticEvent;
      a.val.programmaticEvent.event = r.programmaticEvent.event.handle;
      a.val.programmaticEvent.triggerAtBlockStart = r.programmaticEvent.triggerAtBlockStart ? 1 : 0;
    }
    if (r.launchCompletionEvent) {
      const a = this.slots[n++];
      a.id = ID.cudaLaunchAttributeLaunchCompletionEvent;
      a.val.launchCompletionEvent.event = r.launchCompletionEvent.handle;
    }
    return n;
  }
}

/** A launch attribute for a graph's kernel node: its id and value. */
export type NodeAttribute = [cudart.cudaLaunchAttributeID, cudart.cudaLaunchAttributeValue];

/**
 * The attributes of `r` that a graph's kernel node can have (a cluster, a cooperative launch);
 * throws for the programmatic options and events, which a graph expresses as edges and event nodes.
 */
export function kernelNodeAttributes(r: ResolvedLaunch, where: string): NodeAttribute[] {
  if (r.programmaticStreamSerialization || r.programmaticEvent || r.launchCompletionEvent)
    throw new TypeError(
      `${where}: a graph's kernel node takes 'cluster' and 'cooperative' but not programmatic or event options; capture a stream launched with them instead (the capture makes the programmatic edges)`,
    );
  const out: NodeAttribute[] = [];
  if (r.cluster)
    out.push([
      ID.cudaLaunchAttributeClusterDimension,
      new cudart.cudaLaunchAttributeValue({ clusterDim: { x: r.cluster[0], y: r.cluster[1], z: r.cluster[2] } }),
    ]);
  if (r.cooperative) out.push([ID.cudaLaunchAttributeCooperative, new cudart.cudaLaunchAttributeValue({ cooperative: 1 })]);
  return out;
}

/** Gives a graph's kernel node its attributes (cudaGraphKernelNodeSetAttribute). */
export function setKernelNodeAttributes(node: cudart.cudaGraphNode_t, attributes: readonly NodeAttribute[], where: string): void {
  for (const [id, value] of attributes)
    check(cudart.cudaGraphKernelNodeSetAttribute(node, id, value), `${where} (cudaGraphKernelNodeSetAttribute)`);
}
