// A caching allocator like CuPy's MemoryPool: freed blocks are kept in bins of their rounded size and
// handed out again without cudaMalloc/cudaFree (each of which costs microseconds and cudaFree waits
// for the device). Install it with setAllocator() and device.allocate() uses it.
//
// A block belongs to the stream it was allocated for: work queued there may still use it after
// close(). So a freed block is reusable at once on that stream only (its later work runs after the
// earlier work); for another stream, an event is recorded on the block's stream when it is freed,
// and the block is handed out there only once that event has completed.
import { describe } from '../../ffi/checks';
import * as cudart from '../../runtime';
import { check, CudaError, runtimeError } from '../base/errors';
import { DeviceBuffer, checkSize } from './DeviceBuffer';
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
   * reused at once on this stream, and on others only when the work queued here before the free is done.
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
}

const CACHING_ALLOCATOR_OPTIONS: OptionKeys<CachingAllocatorOptions> = { limit: true };

/** Blocks are rounded up to a multiple of this many bytes, as CuPy does. */
const UNIT = 512;
/** How many blocks of other streams an allocation asks about (oldest first) before it allocates anew. */
const CROSS_STREAM_TRIES = 4;

interface FreeBlock {
  ptr: bigint;
  /** The stream it was used on: an id of ours (0 for the legacy default stream). */
  stream: number;
  /** Recorded on that stream when the block was freed; complete once the work before the free is done. */
  event: cudart.cudaEvent_t;
}

interface Arena {
  /** Free blocks by rounded size, oldest first. */
  bins: Map<number, FreeBlock[]>;
  /** Events not recording anything now, for the next free. */
  events: cudart.cudaEvent_t[];
  used: number;
  cached: number;
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

/**
 * A caching device-memory allocator, like CuPy's MemoryPool: a freed block is kept (per device, by
 * size rounded up to 512 bytes) and handed out again without a cudaMalloc/cudaFree pair, which costs
 * microseconds and synchronizes the device. A block freed on one stream is reused at once on that
 * stream, and on another only once the work queued before the free is done (an event tells).
 * Install it with `setAllocator(alloc)` so that {@link Device.allocate} uses it.
 *
 * Lifetime: a buffer's close() returns its block to the cache; `freeAllBlocks()` gives the cached
 * blocks back to CUDA. When cudaMalloc fails it frees the cache and tries once more before throwing
 * {@link CudaError}; going past `limit` throws it too (cudaErrorMemoryAllocation).
 *
 * @example
 * ```ts
 * const alloc = new CachingAllocator({ limit: 8 << 30 }); // at most 8 GiB per device
 * setAllocator(alloc);
 * for (let i = 0; i < 1000; i++) dev.allocate(1 << 20, { stream }).close(); // one cudaMalloc
 * console.log(alloc.usedBytes(), alloc.totalBytes());
 * ```
 */
export class CachingAllocator implements Allocator {
  private readonly arenas = new Map<number, Arena>();
  private limitBytes: number;

  /** An empty cache; `options.limit` caps what it may hold per device, in bytes. */
  constructor(options: CachingAllocatorOptions = {}) {
    checkOptions('new CachingAllocator', options, CACHING_ALLOCATOR_OPTIONS);
    this.limitBytes = Infinity;
    if (options.limit !== undefined) this.limit = options.limit;
  }

  /**
   * A block of at least `size` bytes (rounded up to 512): one freed on `options.stream`, or one freed
   * on another stream whose work before the free is done, or a new one from cudaMalloc.
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
    const sid = streamId(stream);
    const arena = this.arena(device.ordinal);
    const block = hookedAllocation('CachingAllocator', device.ordinal, size, rounded, () => {
      const p = this.reuse(arena, rounded, sid);
      if (p !== undefined) arena.cached -= rounded;
      return p ?? freshAllocation('CachingAllocator', device.ordinal, rounded, () => this.fresh(arena, rounded, device));
    });
    arena.used += rounded;
    const giveBack = () => {
      arena.used -= rounded;
      if (stream !== undefined && stream.isClosed) {
        // Its stream is gone, so nothing can be recorded after its work: cudaFree waits for the device.
        void cudart.cudaFree(block);
        return;
      }
      // The event and the legacy default stream are the block's device's: a free (from close() or
      // the garbage collector) may come while another device is current, which it leaves current.
      const [, current] = cudart.cudaGetDevice();
      if (current !== device.ordinal) cudart.cudaSetDevice(device.ordinal);
      const event = this.event(arena);
      const recorded = event !== null && cudart.cudaEventRecord(event, stream?.handle ?? null)[0] === 0;
      if (!recorded) {
        if (event !== null) cudart.cudaEventDestroy(event);
        void cudart.cudaFree(block);
      }
      if (current !== null && current !== device.ordinal) cudart.cudaSetDevice(current);
      if (!recorded) return;
      arena.cached += rounded;
      const bin = arena.bins.get(rounded);
      const free: FreeBlock = { ptr: block, stream: sid, event };
      if (bin) bin.push(free);
      else arena.bins.set(rounded, [free]);
    };
    return DeviceBuffer.fromAllocation(
      block,
      size,
      device,
      'cached',
      hookedFree('CachingAllocator', device.ordinal, size, rounded, block, giveBack),
      stream ? [device, this, stream] : [device, this],
    );
  }

  /** Bytes in blocks handed out and not yet freed (one device, or all). */
  usedBytes(device?: Device): number {
    return this.sum(device, (a) => a.used);
  }

  /** Bytes held from the device: used plus cached (one device, or all). */
  totalBytes(device?: Device): number {
    return this.sum(device, (a) => a.used + a.cached);
  }

  /** Bytes in free blocks kept for reuse (one device, or all). */
  freeBytes(device?: Device): number {
    return this.sum(device, (a) => a.cached);
  }

  /** Gives every cached free block back to the device (cudaFree, which waits for it); blocks in use are not touched. */
  freeAllBlocks(device?: Device): void {
    for (const [ordinal, arena] of this.arenas) {
      if (device && device.ordinal !== ordinal) continue;
      for (const bin of arena.bins.values()) {
        for (const b of bin) {
          check(cudart.cudaFree(b.ptr), 'CachingAllocator.freeAllBlocks (cudaFree)');
          arena.events.push(b.event);
        }
      }
      for (const e of arena.events) cudart.cudaEventDestroy(e);
      arena.events.length = 0;
      arena.bins.clear();
      arena.cached = 0;
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

  /** A cached block for stream `sid`: its own newest, else the oldest of another stream whose free is complete. */
  private reuse(arena: Arena, rounded: number, sid: number): bigint | undefined {
    const bin = arena.bins.get(rounded);
    if (!bin || bin.length === 0) return undefined;
    for (let i = bin.length - 1; i >= 0; i--) {
      if (bin[i].stream === sid) return this.take(arena, bin, i);
    }
    for (let i = 0, tried = 0; i < bin.length && tried < CROSS_STREAM_TRIES; i++, tried++) {
      const [err] = cudart.cudaEventQuery(bin[i].event);
      if (err === cudart.cudaError_t.cudaSuccess) return this.take(arena, bin, i);
      if (err !== cudart.cudaError_t.cudaErrorNotReady) cudart.cudaGetLastError();
    }
    return undefined;
  }

  private take(arena: Arena, bin: FreeBlock[], i: number): bigint {
    const b = bin[i];
    if (i === bin.length - 1) bin.pop();
    else bin.splice(i, 1);
    arena.events.push(b.event);
    return b.ptr;
  }

  /** An event of the current device to record a free with (null when none can be made: the block is then freed outright). */
  private event(arena: Arena): cudart.cudaEvent_t | null {
    const e = arena.events.pop();
    if (e !== undefined) return e;
    const [err, made] = cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming);
    return err === 0 ? made : null;
  }

  private fresh(arena: Arena, rounded: number, device: Device): bigint {
    if (arena.used + arena.cached + rounded > this.limitBytes) this.freeAllBlocks(device);
    if (arena.used + rounded > this.limitBytes) {
      throw new CudaError(
        cudart.cudaError_t.cudaErrorMemoryAllocation,
        'cudaErrorMemoryAllocation',
        'CachingAllocator.allocate',
        `${rounded} more bytes would pass the allocator's limit of ${this.limitBytes} (${arena.used} in use)`,
      );
    }
    device.makeCurrent();
    let [err, p] = cudart.cudaMalloc(rounded);
    if (err === cudart.cudaError_t.cudaErrorMemoryAllocation && arena.cached > 0) {
      // Out of memory with blocks cached: give them back and try once more, as CuPy does.
      cudart.cudaGetLastError();
      this.freeAllBlocks(device);
      [err, p] = cudart.cudaMalloc(rounded);
    }
    if (err !== 0) throw runtimeError(err, 'CachingAllocator.allocate (cudaMalloc)');
    return p!;
  }

  private arena(ordinal: number): Arena {
    let a = this.arenas.get(ordinal);
    if (!a) this.arenas.set(ordinal, (a = { bins: new Map(), events: [], used: 0, cached: 0 }));
    return a;
  }

  private sum(device: Device | undefined, f: (a: Arena) => number): number {
    if (device) {
      const a = this.arenas.get(device.ordinal);
      return a ? f(a) : 0;
    }
    let n = 0;
    for (const a of this.arenas.values()) n += f(a);
    return n;
  }
}

let installed: Allocator | null = null;

/** Makes device.allocate() use `allocator` (null: plain cudaMalloc/cudaFree again); returns the previous one. */
export function setAllocator(allocator: Allocator | null): Allocator | null {
  if (allocator !== null && typeof allocator?.allocate !== 'function')
    throw new TypeError(
      `setAllocator: parameter 'allocator' must have an allocate(size, options) method or be null, got ${describe(allocator)}`,
    );
  const previous = installed;
  installed = allocator;
  return previous;
}

/** The allocator device.allocate() uses, or null for plain cudaMalloc. */
export function getAllocator(): Allocator | null {
  return installed;
}
