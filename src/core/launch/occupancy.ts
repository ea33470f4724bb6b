// What the runtime says a kernel can do on a device at once: active blocks and clusters, the largest
// cluster, the largest cooperative grid (cuda.core's KernelOccupancy), and the cached limits that
// an extended launch is checked against before it reaches C.
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { check } from '../base/errors';
import { Device } from '../device/Device';
import { readDim, type Dim } from './launch-config';

/** What these queries need of a kernel (Kernel imports this module, so it is named by shape). */
export interface KernelRef {
  /** The runtime handle. */
  readonly handle: cudart.cudaKernel_t;
  /** Its name, for messages. */
  readonly name: string;
  /** Whether its module was closed. */
  readonly isClosed: boolean;
}

/** A cluster-occupancy query's sizes: blocks per cluster, threads per block, dynamic shared memory per block. */
export interface ClusterQuery {
  /** Blocks per cluster (default: none, the kernel's own or the largest portable one). */
  cluster?: Dim;
  /** Threads in a block. */
  block: Dim;
  /** Dynamic shared memory per block, in bytes (default 0). */
  sharedMem?: number;
}

/** Runs `fn` with `device` current (then makes the previous one current again); the current device when absent. */
export function onDevice<T>(device: Device | undefined, where: string, fn: (d: Device) => T): T {
  const current = Device.current();
  if (device === undefined || device === current) return fn(current);
  if (!(device instanceof Device)) throw new TypeError(`${where}: parameter 'device' must be a Device, got ${describe(device)}`);
  device.makeCurrent();
  try {
    return fn(device);
  } finally {
    current.makeCurrent();
  }
}

/** A Dim as [x, y, z], or a RangeError naming it. */
export function dims(v: Dim, what: string, where: string): [number, number, number] {
  const out = [1, 1, 1];
  if (!readDim(v, out))
    throw new RangeError(`${where}: '${what}' must be a positive integer or [x, y, z] of them, got ${JSON.stringify(v)}`);
  return out as [number, number, number];
}

/** A byte count of dynamic shared memory, or a RangeError naming it. */
export function sharedBytes(v: unknown, what: string, where: string): number {
  if (v === undefined) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return v;
  throw new RangeError(`${where}: '${what}' must be a byte count, got ${describe(v)}`);
}

/** Dynamic shared memory per block as a function of the block size: a constant byte count, or the caller's function, checked at each call. */
function sharedMemoryFunction(v: unknown, where: string): (blockSize: number) => number {
  if (typeof v !== 'function') {
    const bytes = sharedBytes(v, 'dynamicSharedMemory', where);
    return () => bytes;
  }
  return (blockSize) => sharedBytes((v as (n: number) => unknown)(blockSize), `dynamicSharedMemory(${blockSize})`, where);
}

/** A launch config for the cluster queries: grid = one cluster, the block, the shared memory, and the cluster as its only attribute. */
function clusterConfig(q: ClusterQuery, where: string): cudart.cudaLaunchConfig_st {
  const block = dims(q.block, 'block', where);
  const cluster = q.cluster === undefined ? null : dims(q.cluster, 'cluster', where);
  const c = new cudart.cudaLaunchConfig_st({
    gridDim: { x: cluster?.[0] ?? 1, y: cluster?.[1] ?? 1, z: cluster?.[2] ?? 1 },
    blockDim: { x: block[0], y: block[1], z: block[2] },
    dynamicSmemBytes: sharedBytes(q.sharedMem, 'sharedMem', where),
  });
  if (cluster) {
    c.attrs = [
      {
        id: cudart.cudaLaunchAttributeID.cudaLaunchAttributeClusterDimension,
        val: { clusterDim: { x: cluster[0], y: cluster[1], z: cluster[2] } },
      },
    ];
    c.numAttrs = 1;
  }
  return c;
}

/**
 * What a kernel can do on a device at once (cuda.core's `kernel.occupancy`): got with
 * `kernel.occupancy`. Each method asks the runtime about `device` (default: the current one).
 */
export class KernelOccupancy {
  /** @internal Use kernel.occupancy. */
  constructor(private readonly kernel: KernelRef) {}

  private live(what: string): string {
    const where = `Kernel.occupancy.${what}(${this.kernel.name})`;
    if (this.kernel.isClosed) throw new Error(`${where}: the Module the kernel belongs to was closed`);
    return where;
  }

  /** Blocks of `blockSize` threads (with `sharedMem` bytes of dynamic shared memory each) that fit on one multiprocessor at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor). */
  maxActiveBlocksPerMultiprocessor(blockSize: number, sharedMem = 0, device?: Device): number {
    const where = this.live('maxActiveBlocksPerMultiprocessor');
    const threads = dims(blockSize, 'blockSize', where)[0];
    const bytes = sharedBytes(sharedMem, 'sharedMem', where);
    return onDevice(device, where, () =>
      check(
        cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(this.kernel.handle, threads, bytes),
        'cudaOccupancyMaxActiveBlocksPerMultiprocessor',
      ),
    );
  }

  /** The most blocks of `block` a cooperative launch may have on the device: active blocks per multiprocessor times multiprocessors. */
  maxCooperativeGrid(block: Dim, sharedMem = 0, device?: Device): number {
    const where = this.live('maxCooperativeGrid');
    const b = dims(block, 'block', where);
    const bytes = sharedBytes(sharedMem, 'sharedMem', where);
    return onDevice(device, where, (d) => {
      const perSM = check(
        cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(this.kernel.handle, b[0] * b[1] * b[2], bytes),
        'cudaOccupancyMaxActiveBlocksPerMultiprocessor',
      );
      return perSM * d.attribute(cudart.cudaDeviceAttr.cudaDevAttrMultiProcessorCount);
    });
  }

  /** Dynamic shared memory each block may have, in bytes, for `numBlocks` blocks of `blockSize` threads per multiprocessor (cudaOccupancyAvailableDynamicSMemPerBlock). */
  availableDynamicSharedMemoryPerBlock(numBlocks: number, blockSize: number, device?: Device): number {
    const where = this.live('availableDynamicSharedMemoryPerBlock');
    const n = dims(numBlocks, 'numBlocks', where)[0];
    const threads = dims(blockSize, 'blockSize', where)[0];
    return onDevice(device, where, () =>
      check(cudart.cudaOccupancyAvailableDynamicSMemPerBlock(this.kernel.handle, n, threads), 'cudaOccupancyAvailableDynamicSMemPerBlock'),
    );
  }

  /**
   * The block size that keeps the most threads resident per multiprocessor, and the smallest grid
   * that fills the device at it (cudaOccupancyMaxPotentialBlockSizeVariableSMem's search, done here:
   * the runtime has it only as a C++ template). `dynamicSharedMemory` is bytes per block, or a
   * function of the block size giving them; `blockSizeLimit` caps the block size (0: none). Throws
   * Error, and asks the runtime nothing more, when that function closes the kernel's module.
   */
  maxPotentialBlockSize(
    dynamicSharedMemory: number | ((blockSize: number) => number) = 0,
    blockSizeLimit = 0,
    device?: Device,
  ): {
    /** Blocks that fill every multiprocessor at `maxBlockSize`: resident blocks per multiprocessor times their count. */
    minGridSize: number;
    /** The block size (threads) with the most threads resident per multiprocessor; the largest such when several tie. */
    maxBlockSize: number;
  } {
    const where = this.live('maxPotentialBlockSize');
    const smemOf = sharedMemoryFunction(dynamicSharedMemory, where);
    if (!Number.isInteger(blockSizeLimit) || blockSizeLimit < 0)
      throw new RangeError(
        `${where}: parameter 'blockSizeLimit' must be a non-negative integer (0: no limit), got ${describe(blockSizeLimit)}`,
      );
    return onDevice(device, where, (d) => {
      const A = cudart.cudaDeviceAttr;
      const perSM = d.attribute(A.cudaDevAttrMaxThreadsPerMultiProcessor);
      const warp = d.attribute(A.cudaDevAttrWarpSize);
      const kernelMax = check(cudart.cudaFuncGetAttributes(this.kernel.handle), 'cudaFuncGetAttributes').maxThreadsPerBlock;
      const maxBlock = Math.min(d.attribute(A.cudaDevAttrMaxThreadsPerBlock), kernelMax);
      const limit = blockSizeLimit === 0 ? maxBlock : Math.min(blockSizeLimit, maxBlock);
      let best = { threads: 0, blockSize: 0, blocks: 0 };
      for (let aligned = Math.ceil(limit / warp) * warp; aligned > 0; aligned -= warp) {
        const size = Math.min(aligned, limit);
        const bytes = smemOf(size);
        // The caller's dynamicSharedMemory function may have closed the kernel's module: its handle
        // would then reach C unloaded.
        this.live('maxPotentialBlockSize');
        const blocks = check(
          cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(this.kernel.handle, size, bytes),
          'cudaOccupancyMaxActiveBlocksPerMultiprocessor',
        );
        if (blocks * size > best.threads) best = { threads: blocks * size, blockSize: size, blocks };
        if (best.threads === perSM) break;
      }
      return { minGridSize: best.blocks * d.attribute(A.cudaDevAttrMultiProcessorCount), maxBlockSize: best.blockSize };
    });
  }

  /** The largest cluster (in blocks) the kernel can be launched with for these block and shared-memory sizes (cudaOccupancyMaxPotentialClusterSize). */
  maxPotentialClusterSize(query: ClusterQuery, device?: Device): number {
    const where = this.live('maxPotentialClusterSize');
    const c = clusterConfig(query, where);
    return onDevice(device, where, () =>
      check(cudart.cudaOccupancyMaxPotentialClusterSize(this.kernel.handle, c), 'cudaOccupancyMaxPotentialClusterSize'),
    );
  }

  /** How many clusters of `query.cluster` blocks can be resident on the device at once (cudaOccupancyMaxActiveClusters). */
  maxActiveClusters(query: ClusterQuery & { cluster: Dim }, device?: Device): number {
    const where = this.live('maxActiveClusters');
    if (query?.cluster === undefined) throw new TypeError(`${where}: parameter 'query' must have a 'cluster' size`);
    const c = clusterConfig(query, where);
    return onDevice(device, where, () =>
      check(cudart.cudaOccupancyMaxActiveClusters(this.kernel.handle, c), 'cudaOccupancyMaxActiveClusters'),
    );
  }
}

/**
 * The limits an extended launch is checked against, per device and block shape, asked once and
 * kept; `clear()` when the kernel's attributes change (Kernel.setAttribute does).
 */
export class LaunchLimits {
  private readonly known = new Map<string, number>();

  constructor(private readonly kernel: KernelRef) {}

  /** Forgets every limit (an attribute of the kernel changed). */
  clear(): void {
    this.known.clear();
  }

  private get(key: string, ask: () => number): number {
    let v = this.known.get(key);
    if (v === undefined) this.known.set(key, (v = ask()));
    return v;
  }

  /** A device attribute. */
  device(d: Device, attr: cudart.cudaDeviceAttr): number {
    return this.get(`${d.ordinal}/attr/${attr}`, () => d.attribute(attr));
  }

  /** The kernel's compile-time cluster dims (`__cluster_dims__`) on `d`, or null when it has none. */
  requiredCluster(d: Device): [number, number, number] | null {
    const packed = this.get(`${d.ordinal}/required`, () => {
      const a = check(cudart.cudaFuncGetAttributes(this.kernel.handle), 'cudaFuncGetAttributes');
      return a.requiredClusterWidth > 0 ? a.requiredClusterWidth * 2 ** 20 + a.requiredClusterHeight * 2 ** 10 + a.requiredClusterDepth : 0;
    });
    return packed === 0 ? null : [Math.floor(packed / 2 ** 20), Math.floor(packed / 2 ** 10) % 2 ** 10, packed % 2 ** 10];
  }

  /** The largest cluster the kernel can have with blocks of `block` and `sharedMem` bytes. */
  maxClusterSize(d: Device, block: readonly number[], sharedMem: number): number {
    return this.get(`${d.ordinal}/cluster/${block.join(',')}/${sharedMem}`, () => {
      const c = new cudart.cudaLaunchConfig_st({
        gridDim: { x: 1, y: 1, z: 1 },
        blockDim: { x: block[0], y: block[1], z: block[2] },
        dynamicSmemBytes: sharedMem,
      });
      return check(cudart.cudaOccupancyMaxPotentialClusterSize(this.kernel.handle, c), 'cudaOccupancyMaxPotentialClusterSize');
    });
  }

  /** Blocks of `threads` threads and `sharedMem` bytes resident per multiprocessor. */
  activeBlocks(d: Device, threads: number, sharedMem: number): number {
    return this.get(`${d.ordinal}/active/${threads}/${sharedMem}`, () =>
      check(
        cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(this.kernel.handle, threads, sharedMem),
        'cudaOccupancyMaxActiveBlocksPerMultiprocessor',
      ),
    );
  }
}
