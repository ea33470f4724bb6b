// A caching allocator like CuPy's MemoryPool: freed blocks are kept in bins of their rounded size and
// handed out again without cudaMalloc/cudaFree (each of which costs microseconds and cudaFree waits
// for the device). Install it with setAllocator() and device.allocate() uses it.
import { cudart } from '../index';
import { check, CudaError, runtimeError } from './errors';
import { DeviceBuffer, checkSize } from './DeviceBuffer';
import type { Device } from './Device';
import type { Stream } from './Stream';
import { freshAllocation, hookedAllocation, hookedFree } from './MemoryHook';

/** Where an allocator's block is for: a device, and the stream whose order it is used in. */
export interface AllocateOptions {
  device: Device;
  /** Blocks freed by work on this stream are only reused on it (absent: the legacy default stream). */
  stream?: Stream;
}

/** What device.allocate() calls; setAllocator() installs one. */
export interface Allocator {
  /** `size` bytes of device memory on `options.device`. */
  allocate(size: number, options: AllocateOptions): DeviceBuffer;
}

export interface CachingAllocatorOptions {
  /** The most the allocator may hold from the device, used and cached, in bytes (absent: no limit). */
  limit?: number;
}

/** Blocks are rounded up to a multiple of this many bytes, as CuPy does. */
const UNIT = 512;

interface Arena {
  /** Free blocks by `${size}@${stream}`. */
  bins: Map<string, bigint[]>;
  used: number;
  cached: number;
}

export class CachingAllocator implements Allocator {
  private readonly arenas = new Map<number, Arena>();
  private limitBytes: number;

  constructor(options: CachingAllocatorOptions = {}) {
    this.limitBytes = Infinity;
    if (options.limit !== undefined) this.limit = options.limit;
  }

  /** A block of at least `size` bytes (rounded up to 512) reused from the cache, or new from cudaMalloc. */
  allocate(size: number, options: AllocateOptions): DeviceBuffer {
    checkSize(size, 'CachingAllocator.allocate');
    const device = options?.device;
    if (!device || typeof device.ordinal !== 'number') throw new TypeError(`CachingAllocator.allocate: parameter 'options.device' must be a Device, got ${String(device)}`);
    const rounded = Math.max(UNIT, Math.ceil(size / UNIT) * UNIT);
    const streamKey = options.stream ? String(options.stream.handle) : 'legacy';
    const key = `${rounded}@${streamKey}`;
    const arena = this.arena(device.ordinal);
    const block = hookedAllocation('CachingAllocator', device.ordinal, size, rounded, () => {
      const p = arena.bins.get(key)?.pop();
      if (p !== undefined) arena.cached -= rounded;
      return p ?? freshAllocation('CachingAllocator', device.ordinal, rounded, () => this.fresh(arena, rounded, device));
    });
    arena.used += rounded;
    const giveBack = () => {
      arena.used -= rounded;
      arena.cached += rounded;
      const bin = arena.bins.get(key);
      if (bin) bin.push(block);
      else arena.bins.set(key, [block]);
    };
    return DeviceBuffer.fromAllocation(block, size, device, 'cached', hookedFree('CachingAllocator', device.ordinal, size, rounded, block, giveBack), [device, this]);
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

  /** Gives every cached free block back to the device (cudaFree); blocks in use are not touched. */
  freeAllBlocks(device?: Device): void {
    for (const [ordinal, arena] of this.arenas) {
      if (device && device.ordinal !== ordinal) continue;
      for (const bin of arena.bins.values()) for (const p of bin) check(cudart.cudaFree(p), 'CachingAllocator.freeAllBlocks (cudaFree)');
      arena.bins.clear();
      arena.cached = 0;
    }
  }

  /** The most bytes (used and cached) the allocator may hold on one device; Infinity for none. */
  get limit(): number {
    return this.limitBytes;
  }

  set limit(bytes: number) {
    if (bytes !== Infinity) checkSize(bytes, 'CachingAllocator.limit');
    this.limitBytes = bytes;
  }

  private fresh(arena: Arena, rounded: number, device: Device): bigint {
    if (arena.used + arena.cached + rounded > this.limitBytes) this.freeAllBlocks(device);
    if (arena.used + rounded > this.limitBytes) {
      throw new CudaError(cudart.cudaError_t.cudaErrorMemoryAllocation, 'cudaErrorMemoryAllocation', 'CachingAllocator.allocate', `${rounded} more bytes would pass the allocator's limit of ${this.limitBytes} (${arena.used} in use)`);
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
    if (!a) this.arenas.set(ordinal, (a = { bins: new Map(), used: 0, cached: 0 }));
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
  if (allocator !== null && typeof allocator?.allocate !== 'function') throw new TypeError(`setAllocator: parameter 'allocator' must have an allocate(size, options) method or be null, got ${String(allocator)}`);
  const previous = installed;
  installed = allocator;
  return previous;
}

/** The allocator device.allocate() uses, or null for plain cudaMalloc. */
export function getAllocator(): Allocator | null {
  return installed;
}
