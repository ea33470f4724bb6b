// Managed memory as cuda.core 1.3 has it: the advice a range holds and where it was last prefetched
// (cudaMemRangeGetAttribute), discarding a range, and the batched prefetch and discard of many
// buffers in one call (the driver's cuMem*BatchAsync, CUDA 13.0). The single-buffer methods are
// added to DeviceBuffer here (see base/extend.ts); the batched forms are functions.
import * as cudart from '../../runtime';
import * as cuda from '../../driver';
import { describe } from '../../ffi/checks';
import { check, checkDriver } from '../base/errors';
import { extend } from '../base/extend';
import { Device } from '../device/Device';
import { Stream } from '../device/Stream';
import { DeviceBuffer, type MemoryLocation } from './DeviceBuffer';

declare module './DeviceBuffer' {
  interface DeviceBuffer {
    /** Whether the range is advised read-mostly (managed memory only; cudaMemRangeGetAttribute). */
    readonly readMostly: boolean;
    /** The preferred location advised for the range: a Device, 'host', or null when none was set (managed memory only). */
    readonly preferredLocation: MemoryLocation | null;
    /** The devices (and 'host') advised to access the range without faults (managed memory only). */
    readonly accessedBy: MemoryLocation[];
    /** Where the range was last prefetched to: a Device, 'host', or null when it never was or the range spans several prefetches (managed memory only). */
    readonly lastPrefetchLocation: MemoryLocation | null;
    /**
     * Tells the driver the contents no longer matter (cuMemDiscardBatchAsync), queued on `stream`
     * (the legacy default stream when absent): its pages may be dropped rather than migrated, and
     * reads after it see unspecified values until written. Managed memory only; needs CUDA 13.0's driver.
     */
    discard(stream?: Stream): this;
    /** Discards the contents and prefetches the (now empty) pages to `where` in one call (cuMemDiscardAndPrefetchBatchAsync). */
    discardPrefetch(where: MemoryLocation, stream?: Stream): this;
  }
}

const RANGE = cudart.cudaMemRangeAttribute;

/** Throws unless `b` is an open DeviceBuffer of managed memory. */
function managed(b: unknown, where: string, param: string): DeviceBuffer {
  if (!(b instanceof DeviceBuffer)) throw new TypeError(`${where}: parameter '${param}' must be a DeviceBuffer, got ${describe(b)}`);
  if (b.isClosed)
    throw new Error(`${where}: ${param === 'this' ? 'the buffer was closed' : `parameter '${param}' is a DeviceBuffer that was closed`}`);
  if (b.kind !== 'managed')
    throw new Error(
      `${where}: ${param === 'this' ? 'this buffer' : `parameter '${param}'`} must be managed memory (device.allocateManaged or a ManagedMemoryPool); it is ${b.kind} memory`,
    );
  return b;
}

/** A location as the driver's CUmemLocation. */
function location(where: unknown, fn: string, param: string): cuda.CUmemLocation_stInit {
  if (where === 'host') return { type: cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST, id: 0 };
  if (where instanceof Device) return { type: cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: where.ordinal };
  throw new TypeError(`${fn}: parameter '${param}' must be a Device or 'host', got ${describe(where)}`);
}

/** A stream parameter's handle for the driver (the same handle as the runtime's). */
function streamHandle(s: unknown, fn: string): cuda.CUstream | null {
  if (s === undefined || s === null) return null;
  if (!(s instanceof Stream)) throw new TypeError(`${fn}: parameter 'stream' must be a Stream, got ${describe(s)}`);
  if (s.isClosed) throw new Error(`${fn}: parameter 'stream' is a Stream that was closed`);
  return s.handle as unknown as cuda.CUstream;
}

/** A device ordinal as the range attributes give it: -1 the host, -2 none. */
function fromOrdinal(n: number): MemoryLocation | null {
  if (n === cudart.cudaCpuDeviceId) return 'host';
  if (n < 0) return null;
  return Device.get(n);
}

function rangeInt(b: DeviceBuffer, attr: cudart.cudaMemRangeAttribute, what: string): number {
  const buf = managed(b, `DeviceBuffer.${what}`, 'this');
  return check(cudart.cudaMemRangeGetAttribute(4, attr, buf.ptr, buf.size), `DeviceBuffer.${what} (cudaMemRangeGetAttribute)`) as number;
}

/** The driver's version as 'major.minor'. */
function driverVersion(): string {
  const [err, v] = cuda.cuDriverGetVersion();
  return err === cuda.CUresult.CUDA_SUCCESS && v !== null ? `${Math.floor(v / 1000)}.${(v % 1000) / 10}` : 'unknown';
}

/** Calls a batched driver entry point; a driver without it is an Error saying what it needs. */
function batch(name: string, fn: string, call: () => [cuda.CUresult]): void {
  let r: [cuda.CUresult];
  try {
    r = call();
  } catch (e) {
    if (!/does not export/.test((e as Error).message)) throw e;
    throw new Error(
      `${fn}: this driver (CUDA ${driverVersion()}) has no ${name}, which came with CUDA 13.0 (driver 580); update the driver, or prefetch buffer by buffer with buf.prefetch()`,
      { cause: e },
    );
  }
  checkDriver(r, `${fn} (${name})`);
}

/** The addresses and sizes of `buffers`, each checked to be open managed memory. */
function ranges(buffers: unknown, fn: string): { ptrs: bigint[]; sizes: number[] } {
  if (!Array.isArray(buffers) || buffers.length === 0)
    throw new TypeError(
      `${fn}: parameter 'buffers' must be a non-empty array of managed DeviceBuffers, got ${Array.isArray(buffers) ? 'an empty array' : describe(buffers)}`,
    );
  const bs = buffers.map((b, i) => managed(b, fn, `buffers[${i}]`));
  return { ptrs: bs.map((b) => b.ptr), sizes: bs.map((b) => b.size) };
}

/** One location for every buffer, or one per buffer: the driver's locations and the index each starts at. */
function locations(where: unknown, n: number, fn: string): { locs: cuda.CUmemLocation_stInit[]; starts: number[] } {
  if (!Array.isArray(where)) return { locs: [location(where, fn, 'locations')], starts: [0] };
  if (where.length !== n)
    throw new RangeError(`${fn}: parameter 'locations' has ${where.length} locations for ${n} buffers; give one, or one per buffer`);
  return { locs: where.map((w, i) => location(w, fn, `locations[${i}]`)), starts: where.map((_, i) => i) };
}

/**
 * Prefetches several managed buffers in one call (cuMemPrefetchBatchAsync), queued on `stream`:
 * all to one location, or each to its own (`locations[i]` for `buffers[i]`). Needs CUDA 13.0's
 * driver; an older one is an Error saying so.
 */
export function prefetchBatch(
  stream: Stream,
  buffers: readonly DeviceBuffer[],
  locations_: MemoryLocation | readonly MemoryLocation[],
): void {
  const fn = 'prefetchBatch';
  const h = streamHandle(stream, fn);
  const { ptrs, sizes } = ranges(buffers, fn);
  const { locs, starts } = locations(locations_, ptrs.length, fn);
  batch('cuMemPrefetchBatchAsync', fn, () => cuda.cuMemPrefetchBatchAsync(ptrs, sizes, ptrs.length, locs, starts, locs.length, 0, h));
}

/** Discards the contents of several managed buffers in one call (cuMemDiscardBatchAsync), queued on `stream`; CUDA 13.0's driver. */
export function discardBatch(stream: Stream, buffers: readonly DeviceBuffer[]): void {
  const fn = 'discardBatch';
  const h = streamHandle(stream, fn);
  const { ptrs, sizes } = ranges(buffers, fn);
  batch('cuMemDiscardBatchAsync', fn, () => cuda.cuMemDiscardBatchAsync(ptrs, sizes, ptrs.length, 0, h));
}

/** Discards several managed buffers and prefetches their pages to `locations` in one call (cuMemDiscardAndPrefetchBatchAsync); CUDA 13.0's driver. */
export function discardPrefetchBatch(
  stream: Stream,
  buffers: readonly DeviceBuffer[],
  locations_: MemoryLocation | readonly MemoryLocation[],
): void {
  const fn = 'discardPrefetchBatch';
  const h = streamHandle(stream, fn);
  const { ptrs, sizes } = ranges(buffers, fn);
  const { locs, starts } = locations(locations_, ptrs.length, fn);
  batch('cuMemDiscardAndPrefetchBatchAsync', fn, () =>
    cuda.cuMemDiscardAndPrefetchBatchAsync(ptrs, sizes, ptrs.length, locs, starts, locs.length, 0, h),
  );
}

extend(DeviceBuffer, {
  get readMostly(): boolean {
    return rangeInt(this, RANGE.cudaMemRangeAttributeReadMostly, 'readMostly') !== 0;
  },
  get preferredLocation(): MemoryLocation | null {
    return fromOrdinal(rangeInt(this, RANGE.cudaMemRangeAttributePreferredLocation, 'preferredLocation'));
  },
  get lastPrefetchLocation(): MemoryLocation | null {
    return fromOrdinal(rangeInt(this, RANGE.cudaMemRangeAttributeLastPrefetchLocation, 'lastPrefetchLocation'));
  },
  get accessedBy(): MemoryLocation[] {
    const b = managed(this, 'DeviceBuffer.accessedBy', 'this');
    // One slot per device and one for the host; unused slots read as cudaInvalidDeviceId.
    const slots = Device.count() + 1;
    const ids = check(
      cudart.cudaMemRangeGetAttribute(4 * slots, RANGE.cudaMemRangeAttributeAccessedBy, b.ptr, b.size),
      'DeviceBuffer.accessedBy (cudaMemRangeGetAttribute)',
    ) as number[];
    return ids.map(fromOrdinal).filter((x): x is MemoryLocation => x !== null);
  },
  discard(stream?: Stream): DeviceBuffer {
    const fn = 'DeviceBuffer.discard';
    const b = managed(this, fn, 'this');
    const h = streamHandle(stream, fn);
    batch('cuMemDiscardBatchAsync', fn, () => cuda.cuMemDiscardBatchAsync([b.ptr], [b.size], 1, 0, h));
    return this;
  },
  discardPrefetch(where: MemoryLocation, stream?: Stream): DeviceBuffer {
    const fn = 'DeviceBuffer.discardPrefetch';
    const b = managed(this, fn, 'this');
    const loc = location(where, fn, 'where');
    const h = streamHandle(stream, fn);
    batch('cuMemDiscardAndPrefetchBatchAsync', fn, () => cuda.cuMemDiscardAndPrefetchBatchAsync([b.ptr], [b.size], 1, [loc], [0], 1, 0, h));
    return this;
  },
});
