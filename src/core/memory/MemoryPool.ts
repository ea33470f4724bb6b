// A stream-ordered memory pool (cudaMallocAsync): allocations and frees are queued on a stream, and
// freed memory stays in the pool for the next allocation until it is trimmed.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource, openArg } from '../base/lifetime';
import { DeviceBuffer, checkSize } from './DeviceBuffer';
import type { Device } from '../device/Device';
import { Stream } from '../device/Stream';
import { freeWithHooks, hookedCudaAllocation, memoryHooksInstalled } from './MemoryHook';
import { SLOT0_ADDRESS, addressNumber, checkStatus, directByAddress } from '../base/direct';
import { U64, readSize } from '../../ffi/scratch';
import type { OptionKeys } from '../base/options';
import { describe, lookupName } from '../../ffi/checks';

/** How {@link Device.createMemoryPool} makes a pool (sizes in bytes). */
export interface MemoryPoolOptions {
  /** Bytes the pool keeps reserved after a synchronize instead of giving them back (default 0). */
  releaseThreshold?: number;
  /** The most the pool may reserve, in bytes (0 or absent: no limit but the device's memory). */
  maxSize?: number;
  /**
   * Where the pool's memory lives: `'device'` (the default), `'host'` (pinned host memory placed by
   * the OS) or `'hostNuma'` (pinned host memory on one host NUMA node: `numaNode`, else the node
   * nearest the device, its `HostNumaId` attribute). Host pools are read and written by the device.
   */
  location?: MemoryPoolLocation;
  /** The host NUMA node of a `'hostNuma'` pool (a non-negative integer); only with that location. */
  numaNode?: number;
}

/** Where a {@link MemoryPool}'s memory lives. */
export type MemoryPoolLocation = 'device' | 'host' | 'hostNuma';

/** The keys of MemoryPoolOptions, for checkOptions. */
export const MEMORY_POOL_OPTIONS: OptionKeys<MemoryPoolOptions> = { releaseThreshold: true, maxSize: true, location: true, numaNode: true };

const LOCATION_TYPES = {
  device: cudart.cudaMemLocationType.cudaMemLocationTypeDevice,
  host: cudart.cudaMemLocationType.cudaMemLocationTypeHost,
  hostNuma: cudart.cudaMemLocationType.cudaMemLocationTypeHostNuma,
} as const;

/** What a pool holds now and at most, in bytes. */
export interface MemoryPoolStats {
  /** Memory the pool has reserved from the device. */
  reservedBytes: number;
  /** The most it has reserved since the peaks were last reset. */
  reservedHighBytes: number;
  /** Memory in allocations the pool has handed out. */
  usedBytes: number;
  /** The most in use since the peaks were last reset. */
  usedHighBytes: number;
}

const A = cudart.cudaMemPoolAttr;
const mallocFromPoolAsync = directByAddress('cudaMallocFromPoolAsync', [0, 2, 3]);
const freeAsync = directByAddress('cudaFreeAsync', [0, 1]);

/**
 * A stream-ordered memory pool (cudaMallocAsync): an allocation and its free are queued on a stream,
 * so memory freed there is reused by later work on that stream without a synchronize, and freed
 * memory stays reserved in the pool (up to `releaseThreshold`) for the next allocation.
 * `device.memoryPool` is the device's default pool; {@link Device.createMemoryPool} makes others.
 *
 * Lifetime: close() destroys a created pool (cudaMemPoolDestroy) and does nothing to the default
 * pool; buffers allocated from it keep it alive and are freed (cudaFreeAsync) in their stream's order
 * at their own close(). Out of memory throws {@link CudaError}.
 *
 * @example
 * ```ts
 * const pool = dev.memoryPool;
 * pool.releaseThreshold = 1 << 30;           // keep up to 1 GiB reserved between synchronizes
 * using tmp = pool.allocate(64 << 20, stream); // 64 MiB, usable by work queued on `stream`
 * console.log(pool.stats.usedBytes);
 * ```
 */
export class MemoryPool extends Resource {
  /** @internal The handle as a number (exact: an address is below 2^53), for core's directByAddress calls. */
  declare readonly handleNumber: number;

  private constructor(
    /** The runtime handle (cudaMemPool_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaMemPool_t,
    /** The device whose memory the pool holds. */
    readonly device: Device,
    /** Whether this is the device's default pool (cudaMallocAsync's, unless cudaDeviceSetMemPool made another current; close() leaves it be). */
    readonly isDefault: boolean,
    /** Where the memory lives: the device's memory, or pinned host memory (see MemoryPoolOptions.location). */
    readonly location: MemoryPoolLocation = 'device',
    /** The host NUMA node of a `'hostNuma'` pool; null for other pools. */
    readonly numaNode: number | null = null,
  ) {
    super(isDefault ? () => undefined : () => void cudart.cudaMemPoolDestroy(handle), [device]);
    this.handleNumber = addressNumber(handle, 'MemoryPool');
  }

  /** @internal Use device.memoryPool. */
  static defaultFor(device: Device): MemoryPool {
    return new MemoryPool(check(cudart.cudaDeviceGetDefaultMemPool(device.ordinal), 'cudaDeviceGetDefaultMemPool'), device, true);
  }

  /** @internal Use device.createMemoryPool(). */
  static create(device: Device, o: MemoryPoolOptions): MemoryPool {
    if (o.maxSize !== undefined) checkSize(o.maxSize, 'Device.createMemoryPool (maxSize)');
    const where = poolLocation(device, o);
    const props = new cudart.cudaMemPoolProps({
      allocType: cudart.cudaMemAllocationType.cudaMemAllocationTypePinned,
      handleTypes: cudart.cudaMemAllocationHandleType.cudaMemHandleTypeNone,
      location: { type: LOCATION_TYPES[where.location], id: where.id },
      maxSize: o.maxSize ?? 0,
    });
    const handle = check(cudart.cudaMemPoolCreate(props), 'cudaMemPoolCreate');
    const pool = new MemoryPool(handle, device, false, where.location, where.location === 'hostNuma' ? where.id : null);
    if (where.location !== 'device') {
      // A host pool's memory is not mapped for any device until it is granted (cudaMemPoolSetAccess).
      const access = new cudart.cudaMemAccessDesc({
        location: { type: cudart.cudaMemLocationType.cudaMemLocationTypeDevice, id: device.ordinal },
        flags: cudart.cudaMemAccessFlags.cudaMemAccessFlagsProtReadWrite,
      });
      try {
        check(cudart.cudaMemPoolSetAccess(handle, [access], 1), 'Device.createMemoryPool (cudaMemPoolSetAccess)');
      } catch (e) {
        pool.close();
        throw e;
      }
    }
    if (o.releaseThreshold !== undefined) pool.releaseThreshold = o.releaseThreshold;
    return pool;
  }

  /**
   * `size` bytes from the pool, ready when the work queued on `stream` before it is done; close()
   * frees it on the same stream. Without `stream`: the current stream ({@link Stream.use}), else the
   * legacy default stream of the pool's device.
   */
  allocate(size: number, stream?: Stream): DeviceBuffer {
    stream ??= this.defaultStream();
    this.live('allocate');
    checkSize(size, 'MemoryPool.allocate');
    if (!(stream instanceof Stream) || stream.isClosed) openArg(stream, 'Stream', 'MemoryPool.allocate', 'stream');
    return allocateFromPool(this, size, stream, 'pool', 'MemoryPool', 'cudaMallocFromPoolAsync');
  }

  /** allocate's stream when none is given: the current stream of a {@link Stream.use}, else the legacy default stream. */
  private defaultStream(): Stream {
    return Stream.inScope('MemoryPool.allocate') ?? Stream.defaultOf(this.device, cudart.cudaStreamLegacy);
  }

  /** Gives reserved memory back to the device until the pool holds at most `keepBytes` (0: all it can). */
  trim(keepBytes = 0): void {
    this.live('trim');
    checkSize(keepBytes, 'MemoryPool.trim');
    check(cudart.cudaMemPoolTrimTo(this.handle, keepBytes), 'cudaMemPoolTrimTo');
  }

  /** Reserved and used bytes, now and at their peak. */
  get stats(): MemoryPoolStats {
    this.live('stats');
    return {
      reservedBytes: this.attribute(A.cudaMemPoolAttrReservedMemCurrent),
      reservedHighBytes: this.attribute(A.cudaMemPoolAttrReservedMemHigh),
      usedBytes: this.attribute(A.cudaMemPoolAttrUsedMemCurrent),
      usedHighBytes: this.attribute(A.cudaMemPoolAttrUsedMemHigh),
    };
  }

  /** Starts the peaks of `stats` again from the current figures. */
  resetPeaks(): void {
    this.live('resetPeaks');
    check(cudart.cudaMemPoolSetAttribute(this.handle, A.cudaMemPoolAttrReservedMemHigh, 0n), 'cudaMemPoolSetAttribute');
    check(cudart.cudaMemPoolSetAttribute(this.handle, A.cudaMemPoolAttrUsedMemHigh, 0n), 'cudaMemPoolSetAttribute');
  }

  /** Bytes the pool keeps reserved after a synchronize rather than give back. */
  get releaseThreshold(): number {
    this.live('releaseThreshold');
    return this.attribute(A.cudaMemPoolAttrReleaseThreshold);
  }

  /** Sets the bytes kept reserved (cudaMemPoolAttrReleaseThreshold); throws RangeError unless a byte count. */
  set releaseThreshold(bytes: number) {
    this.live('releaseThreshold');
    checkSize(bytes, 'MemoryPool.releaseThreshold');
    check(cudart.cudaMemPoolSetAttribute(this.handle, A.cudaMemPoolAttrReleaseThreshold, BigInt(bytes)), 'cudaMemPoolSetAttribute');
  }

  /** Whether a free may be reused by an allocation on another stream that waits on an event recorded after the free (cudaMemPoolReuseFollowEventDependencies; on by default). */
  get reuseFollowEventDependencies(): boolean {
    return this.flag('reuseFollowEventDependencies', A.cudaMemPoolReuseFollowEventDependencies);
  }

  /** Sets cudaMemPoolReuseFollowEventDependencies; throws TypeError unless a boolean. */
  set reuseFollowEventDependencies(on: boolean) {
    this.setFlag('reuseFollowEventDependencies', A.cudaMemPoolReuseFollowEventDependencies, on);
  }

  /** Whether memory freed on one stream may go to another once the free is seen complete, without a dependency (cudaMemPoolReuseAllowOpportunistic; on by default). */
  get reuseAllowOpportunistic(): boolean {
    return this.flag('reuseAllowOpportunistic', A.cudaMemPoolReuseAllowOpportunistic);
  }

  /** Sets cudaMemPoolReuseAllowOpportunistic; throws TypeError unless a boolean. */
  set reuseAllowOpportunistic(on: boolean) {
    this.setFlag('reuseAllowOpportunistic', A.cudaMemPoolReuseAllowOpportunistic, on);
  }

  /** Whether an allocation may reuse a free by making its stream wait on the freeing stream (cudaMemPoolReuseAllowInternalDependencies; on by default). */
  get reuseAllowInternalDependencies(): boolean {
    return this.flag('reuseAllowInternalDependencies', A.cudaMemPoolReuseAllowInternalDependencies);
  }

  /** Sets cudaMemPoolReuseAllowInternalDependencies; throws TypeError unless a boolean. */
  set reuseAllowInternalDependencies(on: boolean) {
    this.setFlag('reuseAllowInternalDependencies', A.cudaMemPoolReuseAllowInternalDependencies, on);
  }

  private flag(name: string, attr: cudart.cudaMemPoolAttr): boolean {
    this.live(name);
    return this.attribute(attr) !== 0;
  }

  private setFlag(name: string, attr: cudart.cudaMemPoolAttr, on: boolean): void {
    this.live(name);
    if (typeof on !== 'boolean') throw new TypeError(`MemoryPool.${name}: the value must be true or false, got ${describe(on)}`);
    check(cudart.cudaMemPoolSetAttribute(this.handle, attr, on ? 1 : 0), `MemoryPool.${name} (cudaMemPoolSetAttribute)`);
  }

  /** Destroys a pool made by createMemoryPool(); the default pool stays (it is the device's). */
  override close(): void {
    if (!this.isDefault) super.close();
  }

  private attribute(attr: cudart.cudaMemPoolAttr): number {
    return Number(check(cudart.cudaMemPoolGetAttribute(this.handle, attr), 'cudaMemPoolGetAttribute'));
  }
}

/** A pool that allocateFromPool takes memory from. */
type Pool = Resource & { readonly handle: cudart.cudaMemPool_t; readonly handleNumber: number; readonly device: Device };

/**
 * A pool buffer's keep list, which is also what frees it (freeFromPool's argument: one array per
 * buffer instead of a keep list, a closure and its context): the pool and the stream, kept alive,
 * then the address (a number, as freeAsync takes it: a device address is below 2^53), the size and
 * the allocator's name for the memory hooks.
 */
type PoolKeep = [pool: Pool, stream: Stream, address: number, size: number, hookName: string];

// V8 inlines at most 920 bytes of bytecode into one function (Node 20), and which parts of
// `pool.allocate(n, s).close()` it puts in line (allocate, this function, DeviceBuffer's and Resource's
// constructors, track(), close, freeFromPool) varies by process and by ~20 bytes of any of them: one
// arrangement, DeviceBuffer's constructor in line without Resource's, was slower (bench/README.md,
// "The pool rows: V8's inlining budget"). At 5b8b074 a trace had the whole chain in allocate. Check
// `core-cpu.js --callgrind --only pool.allocate` after changing any of them.
/**
 * `size` bytes of a cudaMemPool in `stream`'s order, seen by the memory hooks as allocator `hookName`;
 * close() frees them in the stream's order (once the stream is closed, the legacy default stream's).
 * `stream` is checked by the caller; the buffer keeps the pool and the stream alive.
 */
export function allocateFromPool(
  pool: Pool,
  size: number,
  stream: Stream,
  kind: 'pool' | 'managed',
  hookName: string,
  call: string,
): DeviceBuffer {
  let p: bigint;
  let at: number;
  if (memoryHooksInstalled()) at = Number((p = hookedMallocFrom(pool, size, stream, hookName, call)));
  else {
    // CUDA called directly (size and stream are checked, the pool open): no closure, no result array;
    // mallocFrom's lines in line (a function of their own, V8 counted them twice against what it inlines here);
    // the output slot's, the pool's and the stream's addresses passed as numbers (see directByAddress).
    checkStatus(mallocFromPoolAsync.get()(SLOT0_ADDRESS, size, pool.handleNumber, stream.handleNumber), call);
    p = U64[0];
    at = readSize(0);
  }
  const keep: PoolKeep = [pool, stream, at, size, hookName];
  return DeviceBuffer.fromAllocation(p, size, pool.device, kind, freeFromPool, keep, keep);
}

/** mallocFrom as the memory hooks see it (a function of its own, so that allocateFromPool makes no closure). */
function hookedMallocFrom(pool: Pool, size: number, stream: Stream, hookName: string, call: string): bigint {
  return hookedCudaAllocation(hookName, pool.device.ordinal, size, () => mallocFrom(pool.handleNumber, size, stream.handleNumber, call));
}

/** Frees a pool buffer (its PoolKeep) in its stream's order; as hookedFree's, it tells the hooks installed when it runs. */
function freeFromPool(k: unknown): void {
  const keep = k as PoolKeep;
  const stream = keep[1];
  const p = keep[2];
  if (!memoryHooksInstalled()) freeAsync.get()(p, stream.isClosed ? 0 : stream.handleNumber);
  else hookedFreeFromPool(keep);
}

/** freeFromPool as the memory hooks see it (apart: its closure would cost every free a context). */
function hookedFreeFromPool(keep: PoolKeep): void {
  const [pool, stream, p, size, hookName] = keep;
  freeWithHooks(
    hookName,
    pool.device.ordinal,
    size,
    size,
    BigInt(p),
    () => void freeAsync.get()(p, stream.isClosed ? 0 : stream.handleNumber),
  );
}

/** cudaMallocFromPoolAsync: the address, or throws the CudaError named `call`. */
function mallocFrom(pool: number, size: number, stream: number, call: string): bigint {
  checkStatus(mallocFromPoolAsync.get()(SLOT0_ADDRESS, size, pool, stream), call);
  return U64[0];
}

/** The location type and id a new pool asks cudaMemPoolCreate for, from its options (checked here). */
function poolLocation(device: Device, o: MemoryPoolOptions): { location: MemoryPoolLocation; id: number } {
  const location = o.location ?? 'device';
  lookupName(LOCATION_TYPES, location, 'Device.createMemoryPool', "option 'location'");
  if (o.numaNode !== undefined && location !== 'hostNuma')
    throw new TypeError(`Device.createMemoryPool: option 'numaNode' goes only with location 'hostNuma', not '${location}'`);
  if (o.numaNode !== undefined && (!Number.isSafeInteger(o.numaNode) || o.numaNode < 0))
    throw new RangeError(`Device.createMemoryPool: option 'numaNode' must be a non-negative integer, got ${o.numaNode}`);
  if (location === 'device') return { location, id: device.ordinal };
  if (location === 'host') return { location, id: 0 };
  if (o.numaNode !== undefined) return { location, id: o.numaNode };
  const nearest = device.attribute(cudart.cudaDeviceAttr.cudaDevAttrHostNumaId);
  if (nearest < 0)
    throw new RangeError(
      `Device.createMemoryPool: location 'hostNuma' without 'numaNode' needs the device's host NUMA node, and device ${device.ordinal} reports none (HostNumaId ${nearest}); pass 'numaNode'`,
    );
  return { location, id: nearest };
}
