// A caching allocator like CuPy's MemoryPool: a freed block is kept and handed out again without
// cudaMalloc/cudaFree (each of which costs microseconds, and cudaFree waits for the device).
// Install it with setAllocator() and device.allocate() uses it.
//
// As CuPy's pool does: sizes are rounded up to 512 bytes; each stream has its arena of free chunks;
// a request takes the smallest free chunk that fits (best fit) and splits off what it does not need;
// a freed chunk merges with its free neighbours of the same allocation and arena. A chunk is reused
// at once on its own stream only (work queued there later runs after the earlier work); with
// `shareAcrossStreams`, also on another stream once an event recorded at its free has completed.
import { describe } from '../../ffi/checks';
import * as cudart from '../../runtime';
import { check, CudaError, runtimeError } from '../base/errors';
import { DeviceBuffer, checkSize, type MemoryResource } from './DeviceBuffer';
import { openOptionalArg } from '../base/lifetime';
import type { Device } from '../device/Device';
import type { Stream } from '../device/Stream';
import { freshAllocation, hookedAllocation, hookedFree } from './MemoryHook';
import { checkOptions, type OptionKeys } from '../base/options';

/** Where an allocator's block is for: a device, and the stream whose order it is used in. */
export interface AllocateOptions {
  /** The device whose memory to allocate. */
  device: Device;
  /**
   * The stream the memory is used on (absent: the legacy default stream). Once freed, the block is
   * reused at once on this stream (and, with `shareAcrossStreams`, on others once the work queued here before the free is done).
   */
  stream?: Stream;
}

/** What device.allocate() calls; setAllocator() installs one. */
export interface Allocator {
  /** `size` bytes of device memory on `options.device`. */
  allocate(size: number, options: AllocateOptions): DeviceBuffer;
}

/** How a {@link CachingAllocator} is made. */
export interface CachingAllocatorOptions {
  /** The most the allocator may hold from the device, used and cached, in bytes (absent: no limit). */
  limit?: number;
  /** What it allocates: 'device' memory (cudaMalloc, the default) or 'managed' memory (cudaMallocManaged, as CuPy's `malloc_managed`). */
  memory?: 'device' | 'managed';
  /**
   * Whether a block freed on one stream may go to another once the work queued before its free is
   * done (an event recorded at the free tells). Default false, as CuPy: a block stays with its stream.
   */
  shareAcrossStreams?: boolean;
}

const CACHING_ALLOCATOR_OPTIONS: OptionKeys<CachingAllocatorOptions> = { limit: true, memory: true, shareAcrossStreams: true };

/** Blocks are rounded up to a multiple of this many bytes, as CuPy does. */
const UNIT = 512;
/** How many chunks of other streams an allocation asks about (with shareAcrossStreams) before it allocates anew. */
const CROSS_STREAM_TRIES = 4;

/** A piece of one cudaMalloc'd allocation, in use or free; its neighbours in address order are prev and next. */
interface Chunk {
  /** The allocation's address (what cudaFree takes). */
  base: bigint;
  offset: number;
  size: number;
  prev: Chunk | null;
  next: Chunk | null;
  /** The arena it goes back to when freed. */
  arena: Arena;
  isFree: boolean;
  /** With shareAcrossStreams: recorded on its stream at its free. */
  event: cudart.cudaEvent_t | null;
}

/** One stream's free chunks on one device. */
interface Arena {
  /** An id of ours for the stream (0: the legacy default stream). */
  sid: number;
  stream: Stream | undefined;
  /** Free chunks by size, then address (best fit is the first that is large enough). */
  free: Chunk[];
}

/** What the allocator holds on one device. */
interface DevicePool {
  arenas: Map<number, Arena>;
  /** Bytes in chunks handed out. */
  used: number;
  /** Bytes allocated from CUDA and not yet given back. */
  total: number;
  /** Events not recording anything now, for the next free (shareAcrossStreams). */
  events: cudart.cudaEvent_t[];
}

/** Ids of streams: a stream's handle can be reused by a later stream, the Stream object cannot. */
const streamIds = new WeakMap<Stream, number>();
let nextStreamId = 1;

function streamId(stream: Stream | undefined): number {
  if (stream === undefined) return 0;
  let id = streamIds.get(stream);
  if (id === undefined) streamIds.set(stream, (id = nextStreamId++));
  return id;
}

/** Orders free chunks: by size, then by address. */
function before(a: Chunk, b: Chunk): boolean {
  return a.size < b.size || (a.size === b.size && a.base + BigInt(a.offset) < b.base + BigInt(b.offset));
}

/** The first index in `free` whose chunk is not before `c` (binary search). */
function lowerBound(free: Chunk[], size: number, c?: Chunk): number {
  let lo = 0;
  let hi = free.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const m = free[mid];
    if (c ? before(m, c) : m.size < size) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertFree(arena: Arena, c: Chunk): void {
  c.isFree = true;
  c.arena = arena;
  arena.free.splice(lowerBound(arena.free, c.size, c), 0, c);
}

function removeFree(arena: Arena, c: Chunk): void {
  const i = lowerBound(arena.free, c.size, c);
  if (arena.free[i] === c) arena.free.splice(i, 1);
  c.isFree = false;
}

/** Splits `c` at `size`: `c` keeps the head, the tail (returned, or null when nothing is left over) follows it. */
function split(c: Chunk, size: number): Chunk | null {
  if (c.size === size) return null;
  const tail: Chunk = {
    base: c.base,
    offset: c.offset + size,
    size: c.size - size,
    prev: c,
    next: c.next,
    arena: c.arena,
    isFree: false,
    event: null,
  };
  if (c.next) c.next.prev = tail;
  c.next = tail;
  c.size = size;
  return tail;
}

/** Whether a neighbour can merge: free, and in the same arena. */
function mergeable(n: Chunk | null, arena: Arena): n is Chunk {
  return n !== null && n.isFree && n.arena === arena;
}
/**
 * A caching allocator of device (or managed) memory, like CuPy's MemoryPool: sizes are rounded up to
 * 512 bytes; a freed block is kept in its stream's arena and handed out again without a
 * cudaMalloc/cudaFree pair (which cost microseconds, and cudaFree synchronizes the device). A request
 * takes the smallest free chunk that fits and splits off the rest; a freed chunk merges with its free
 * neighbours. A block is reused at once on the stream it was freed on; with `shareAcrossStreams`, on
 * another once the work queued before the free is done. Install it with `setAllocator(alloc)` so
 * that {@link Device.allocate} uses it.
 *
 * Lifetime: a buffer's close() returns its block to the cache; `freeAllBlocks()` gives the cached
 * whole (unsplit) blocks back to CUDA. When cudaMalloc fails it frees the cache and tries once more
 * before throwing {@link CudaError}; going past `limit` throws it too (cudaErrorMemoryAllocation).
 *
 * @example
 * ```ts
 * const alloc = new CachingAllocator({ limit: 8 << 30 }); // at most 8 GiB per device
 * setAllocator(alloc);
 * for (let i = 0; i < 1000; i++) dev.allocate(1 << 20, { stream }).close(); // one cudaMalloc
 * console.log(alloc.usedBytes(), alloc.totalBytes(), alloc.nFreeBlocks());
 * ```
 */
export class CachingAllocator implements Allocator {
  private readonly pools = new Map<number, DevicePool>();
  private limitBytes: number;
  /** What it allocates: 'device' (cudaMalloc) or 'managed' (cudaMallocManaged) memory. */
  readonly memory: 'device' | 'managed';
  /** Whether a block freed on one stream goes to another once the work before its free is done. */
  readonly shareAcrossStreams: boolean;

  /** An empty cache; `options.limit` caps what it may hold per device, in bytes. */
  constructor(options: CachingAllocatorOptions = {}) {
    checkOptions('new CachingAllocator', options, CACHING_ALLOCATOR_OPTIONS);
    if (options.memory !== undefined && options.memory !== 'device' && options.memory !== 'managed')
      throw new RangeError(`new CachingAllocator: option 'memory' must be 'device' or 'managed', got ${describe(options.memory)}`);
    if (options.shareAcrossStreams !== undefined && typeof options.shareAcrossStreams !== 'boolean')
      throw new TypeError(
        `new CachingAllocator: option 'shareAcrossStreams' must be a boolean, got ${describe(options.shareAcrossStreams)}`,
      );
    this.memory = options.memory ?? 'device';
    this.shareAcrossStreams = options.shareAcrossStreams ?? false;
    this.limitBytes = Infinity;
    if (options.limit !== undefined) this.limit = options.limit;
  }

  /**
   * A block of at least `size` bytes (rounded up to 512): the smallest free chunk of `options.stream`
   * that fits (split when larger), or (with shareAcrossStreams) one of another stream whose work
   * before the free is done, or a new one from cudaMalloc.
   */
  allocate(size: number, options: AllocateOptions): DeviceBuffer {
    checkSize(size, 'CachingAllocator.allocate');
    checkOptions('CachingAllocator.allocate', options, { device: true, stream: true });
    const device = options?.device;
    if (!device || typeof device.ordinal !== 'number')
      throw new TypeError(`CachingAllocator.allocate: parameter 'options.device' must be a Device, got ${describe(device)}`);
    const stream = options.stream;
    openOptionalArg(stream, 'Stream', 'CachingAllocator.allocate', 'options.stream');
    const rounded = Math.max(UNIT, Math.ceil(size / UNIT) * UNIT);
    const pool = this.pool(device.ordinal);
    const arena = this.arena(pool, stream);
    let chunk: Chunk | undefined;
    const name = this.hookName;
    const ptr = hookedAllocation(name, device.ordinal, size, rounded, () => {
      chunk = this.take(pool, arena, rounded) ?? (this.shareAcrossStreams ? this.takeShared(pool, arena, rounded) : undefined);
      if (!chunk) {
        const base = freshAllocation(name, device.ordinal, rounded, () => this.fresh(pool, rounded, device));
        chunk = { base, offset: 0, size: rounded, prev: null, next: null, arena, isFree: false, event: null };
      }
      return chunk.base + BigInt(chunk.offset);
    });
    const c = chunk!;
    pool.used += c.size;
    const giveBack = () => this.giveBack(pool, c, device);
    return DeviceBuffer.fromAllocation(
      ptr,
      size,
      device,
      this.memory === 'managed' ? 'managed' : 'cached',
      hookedFree(name, device.ordinal, size, rounded, ptr, giveBack),
      stream ? [device, this, stream] : [device, this],
    );
  }

  /** Bytes in blocks handed out and not yet freed (one device, or all). */
  usedBytes(device?: Device): number {
    return this.sum(device, (p) => p.used);
  }

  /** Bytes held from the device: used plus free (one device, or all). */
  totalBytes(device?: Device): number {
    return this.sum(device, (p) => p.total);
  }

  /** Bytes in free chunks kept for reuse, split ones included (one device, or all). */
  freeBytes(device?: Device): number {
    return this.sum(device, (p) => p.total - p.used);
  }

  /** How many free chunks the cache holds (CuPy's `n_free_blocks`; one device, or all). */
  nFreeBlocks(device?: Device): number {
    return this.sum(device, (p) => {
      let n = 0;
      for (const a of p.arenas.values()) n += a.free.length;
      return n;
    });
  }

  /**
   * Gives the free whole blocks back to the device (cudaFree, which waits for it): of one device or
   * all, and of one stream's arena (null: the legacy default stream's) or all. A free chunk split from
   * a block still partly in use stays; blocks in use are not touched.
   */
  freeAllBlocks(device?: Device, stream?: Stream | null): void {
    if (stream !== undefined && stream !== null && typeof (stream as Partial<Stream>).isClosed !== 'boolean')
      throw new TypeError(`CachingAllocator.freeAllBlocks: parameter 'stream' must be a Stream, null or absent, got ${describe(stream)}`);
    const sid = stream === undefined ? undefined : streamId(stream ?? undefined);
    for (const [ordinal, pool] of this.pools) {
      if (device && device.ordinal !== ordinal) continue;
      for (const arena of [...pool.arenas.values()]) {
        if (sid !== undefined && arena.sid !== sid) continue;
        for (const c of [...arena.free]) {
          if (c.prev !== null || c.next !== null) continue;
          removeFree(arena, c);
          this.release(pool, c);
          check(cudart.cudaFree(c.base), 'CachingAllocator.freeAllBlocks (cudaFree)');
        }
        if (arena.free.length === 0 && arena.stream?.isClosed) pool.arenas.delete(arena.sid);
      }
      if (sid === undefined) {
        for (const e of pool.events) cudart.cudaEventDestroy(e);
        pool.events.length = 0;
      }
    }
  }

  /** The most bytes (used and cached) the allocator may hold on one device; Infinity for none. */
  get limit(): number {
    return this.limitBytes;
  }

  /** Sets the cap in bytes (Infinity: none); throws RangeError for anything else. Blocks already held stay. */
  set limit(bytes: number) {
    if (bytes !== Infinity) checkSize(bytes, 'CachingAllocator.limit');
    this.limitBytes = bytes;
  }

  /** The allocator's name in memory hooks' events. */
  private get hookName(): string {
    return this.memory === 'managed' ? 'CachingAllocator(managed)' : 'CachingAllocator';
  }

  /** The smallest free chunk of `arena` that holds `rounded` bytes, carved to that size. */
  private take(pool: DevicePool, arena: Arena, rounded: number): Chunk | undefined {
    const i = lowerBound(arena.free, rounded);
    if (i === arena.free.length) return undefined;
    const c = arena.free[i];
    arena.free.splice(i, 1);
    c.isFree = false;
    this.carve(pool, arena, c, rounded);
    return c;
  }

  /** Splits off what a taken chunk does not need: the tail stays free in `arena` (unmerged, as CuPy's), with the chunk's free event. */
  private carve(pool: DevicePool, arena: Arena, c: Chunk, rounded: number): void {
    const tail = split(c, rounded);
    if (!tail) return this.dropEvent(pool, c);
    tail.event = c.event;
    c.event = null;
    insertFree(arena, tail);
  }

  /** With shareAcrossStreams: the smallest fitting free chunk of another stream whose free is complete, moved to `arena`. */
  private takeShared(pool: DevicePool, arena: Arena, rounded: number): Chunk | undefined {
    let tried = 0;
    for (const other of pool.arenas.values()) {
      if (other === arena) continue;
      for (let i = lowerBound(other.free, rounded); i < other.free.length && tried < CROSS_STREAM_TRIES; i++, tried++) {
        const c = other.free[i];
        // A chunk whose free could not be recorded stays with its stream.
        if (c.event === null) continue;
        const [err] = cudart.cudaEventQuery(c.event);
        if (err !== cudart.cudaError_t.cudaSuccess) {
          if (err !== cudart.cudaError_t.cudaErrorNotReady) cudart.cudaGetLastError();
          continue;
        }
        other.free.splice(i, 1);
        c.isFree = false;
        c.arena = arena;
        this.carve(pool, arena, c, rounded);
        return c;
      }
    }
    return undefined;
  }

  /** A freed chunk goes back to its arena, merged with its free neighbours; a whole one of a closed stream goes back to CUDA. */
  private giveBack(pool: DevicePool, c: Chunk, device: Device): void {
    pool.used -= c.size;
    const arena = c.arena;
    const closed = arena.stream !== undefined && arena.stream.isClosed;
    if (this.shareAcrossStreams && !closed) c.event = this.recordFree(pool, arena, device);
    let head = c;
    while (mergeable(head.next, arena)) this.absorbNext(pool, head);
    while (mergeable(head.prev, arena)) {
      // The merged chunk's free is the latest: it takes this chunk's event.
      const p = head.prev;
      removeFree(arena, p);
      this.dropEvent(pool, p);
      p.event = head.event;
      head.event = null;
      this.absorbNext(pool, p);
      head = p;
    }
    if (closed && head.prev === null && head.next === null) {
      // Its stream is gone, so nothing can be recorded after its work: cudaFree waits for the device.
      this.release(pool, head);
      void cudart.cudaFree(head.base);
      if (arena.free.length === 0) pool.arenas.delete(arena.sid);
      return;
    }
    insertFree(arena, head);
  }

  /** Merges `a.next` (free or being freed, in a's arena) into `a`. */
  private absorbNext(pool: DevicePool, a: Chunk): void {
    const n = a.next!;
    if (n.isFree) removeFree(a.arena, n);
    this.dropEvent(pool, n);
    a.size += n.size;
    a.next = n.next;
    if (n.next) n.next.prev = a;
  }

  /** Records an event on the arena's stream (on the chunk's device), or null when none could be recorded. */
  private recordFree(pool: DevicePool, arena: Arena, device: Device): cudart.cudaEvent_t | null {
    // A free (from close() or the garbage collector) may come while another device is current, which it leaves current.
    const [, current] = cudart.cudaGetDevice();
    if (current !== device.ordinal) cudart.cudaSetDevice(device.ordinal);
    let event = pool.events.pop() ?? null;
    if (event === null) {
      const [err, made] = cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming);
      event = err === 0 ? made : null;
    }
    if (event !== null && cudart.cudaEventRecord(event, arena.stream?.handle ?? null)[0] !== 0) {
      cudart.cudaEventDestroy(event);
      event = null;
    }
    if (current !== null && current !== device.ordinal) cudart.cudaSetDevice(current);
    return event;
  }

  /** Puts a chunk's event back for reuse. */
  private dropEvent(pool: DevicePool, c: Chunk): void {
    if (c.event !== null) pool.events.push(c.event);
    c.event = null;
  }

  /** Forgets a whole chunk about to be given back to CUDA. */
  private release(pool: DevicePool, c: Chunk): void {
    this.dropEvent(pool, c);
    pool.total -= c.size;
  }

  private fresh(pool: DevicePool, rounded: number, device: Device): bigint {
    if (pool.total + rounded > this.limitBytes) this.freeAllBlocks(device);
    if (pool.total + rounded > this.limitBytes) {
      const split = pool.total - pool.used;
      throw new CudaError(
        cudart.cudaError_t.cudaErrorMemoryAllocation,
        'cudaErrorMemoryAllocation',
        'CachingAllocator.allocate',
        `${rounded} more bytes would pass the allocator's limit of ${this.limitBytes} (${pool.used} in use${split ? `, ${split} in free pieces of split blocks` : ''})`,
      );
    }
    device.makeCurrent();
    const malloc = () =>
      this.memory === 'managed' ? cudart.cudaMallocManaged(rounded, cudart.cudaMemAttachGlobal) : cudart.cudaMalloc(rounded);
    let [err, p] = malloc();
    if (err === cudart.cudaError_t.cudaErrorMemoryAllocation && pool.total > pool.used) {
      // Out of memory with blocks cached: give them back and try once more, as CuPy does.
      cudart.cudaGetLastError();
      this.freeAllBlocks(device);
      [err, p] = malloc();
    }
    if (err !== 0) throw runtimeError(err, `CachingAllocator.allocate (${this.memory === 'managed' ? 'cudaMallocManaged' : 'cudaMalloc'})`);
    pool.total += rounded;
    return p!;
  }

  private pool(ordinal: number): DevicePool {
    let p = this.pools.get(ordinal);
    if (!p) this.pools.set(ordinal, (p = { arenas: new Map(), used: 0, total: 0, events: [] }));
    return p;
  }

  private arena(pool: DevicePool, stream: Stream | undefined): Arena {
    const sid = streamId(stream);
    let a = pool.arenas.get(sid);
    if (!a) pool.arenas.set(sid, (a = { sid, stream, free: [] }));
    return a;
  }

  private sum(device: Device | undefined, f: (p: DevicePool) => number): number {
    if (device) {
      const p = this.pools.get(device.ordinal);
      return p ? f(p) : 0;
    }
    let n = 0;
    for (const p of this.pools.values()) n += f(p);
    return n;
  }
}

/** What setAllocator installs: an Allocator, or a MemoryResource (whose `allocate(size, stream)` is called). */
export type InstalledAllocator = Allocator | MemoryResource;

let installed: InstalledAllocator | null = null;
/** Allocators installed for one device (by ordinal), before the one for all. */
const perDevice = new Map<number, InstalledAllocator>();

/**
 * Makes device.allocate() use `allocator`, a MemoryResource or null (plain cudaMalloc/cudaFree
 * again): for every device, or for `device` only (a device's own comes before the one for all;
 * null removes it). Returns the one it replaces.
 */
export function setAllocator(allocator: InstalledAllocator | null, device?: Device): InstalledAllocator | null {
  if (allocator !== null && typeof allocator?.allocate !== 'function')
    throw new TypeError(
      `setAllocator: parameter 'allocator' must have an allocate(size, options) method or be a MemoryResource or null, got ${describe(allocator)}`,
    );
  if (device !== undefined && (device === null || typeof device !== 'object' || !Number.isInteger(device.ordinal)))
    throw new TypeError(`setAllocator: parameter 'device' must be a Device or absent, got ${describe(device)}`);
  if (device === undefined) {
    const previous = installed;
    installed = allocator;
    return previous;
  }
  const previous = perDevice.get(device.ordinal) ?? null;
  if (allocator === null) perDevice.delete(device.ordinal);
  else perDevice.set(device.ordinal, allocator);
  return previous;
}

/** The allocator device.allocate() uses (on `device`: its own, else the one for all), or null for plain cudaMalloc. */
export function getAllocator(device?: Device): InstalledAllocator | null {
  return (device !== undefined ? perDevice.get(device.ordinal) : undefined) ?? installed;
}

/** Whether an installed allocator is a MemoryResource (it has deallocate; an Allocator need not). */
function isResource(a: InstalledAllocator): a is MemoryResource {
  return typeof (a as MemoryResource).deallocate === 'function' && typeof (a as MemoryResource).deviceId === 'number';
}

/**
 * @internal `size` bytes on `device` for `stream`: from `resource` when given, else the allocator
 * installed for the device (see setAllocator), else cudaMalloc. A resource's buffer is checked: a
 * DeviceBuffer of the device, of at least `size` bytes.
 */
export function allocateOn(device: Device, size: number, stream: Stream | undefined, fn: string, resource?: MemoryResource): DeviceBuffer {
  const a = resource ?? getAllocator(device);
  if (a === null) return DeviceBuffer.allocate(device, size);
  if (!isResource(a)) return a.allocate(size, { device, stream });
  if (a.deviceId !== device.ordinal)
    throw new RangeError(`${fn}: the memory resource is device ${a.deviceId}'s, and the allocation is for device ${device.ordinal}`);
  checkSize(size, fn);
  const b = a.allocate(size, stream);
  if (!(b instanceof DeviceBuffer) || b.size < size)
    throw new TypeError(
      `${fn}: the memory resource's allocate(${size}) must return a DeviceBuffer of at least ${size} bytes (DeviceBuffer.fromMemoryResource), got ${describe(b)}`,
    );
  return b;
}
