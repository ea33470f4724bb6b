// CuPy's PinnedMemoryPool: pinned host blocks handed out again after close() instead of being given
// back with cudaFreeHost (cudaHostAlloc and cudaFreeHost each cost from microseconds to
// milliseconds, and cudaFreeHost waits for the device).
import koffi from 'koffi';
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { release } from '../base/lifetime';
import { HostBuffer, hostAllocFlags, type HostBufferOptions, HOST_BUFFER_OPTIONS } from './HostBuffer';
import { freshAllocation, hookedAllocation, hookedFree } from './MemoryHook';
import { checkOptions } from '../base/options';
import { tagPinned } from './pinned-views';

/** How a {@link PinnedMemoryPool} is made. */
export interface PinnedMemoryPoolOptions {
  /** The most the pool may hold, used and cached, in bytes (absent: no limit). */
  limit?: number;
}

/** Blocks are rounded up to a multiple of this many bytes. */
const UNIT = 512;

interface Block {
  ptr: bigint;
  size: number;
  flags: number;
  devicePtr: bigint | null;
  /** ArrayBuffers over the block that JS may still reach (a view taken before close() keeps one). */
  views: number;
  /** freeAllBlocks() asked for it while views remained: freed when the last goes. */
  doomed: boolean;
}

const viewGone = new FinalizationRegistry<Block>((b) => {
  b.views--;
  if (b.doomed && b.views === 0) release(() => void cudart.cudaFreeHost(b.ptr));
});

/**
 * A pool of pinned host memory. `pool.allocate(n)` (or `new HostBuffer(n)` once installed with
 * `setPinnedMemoryAllocator(pool)`) reuses a free block of the same rounded size and flags when it
 * has one and calls cudaHostAlloc only when it has none; `close()` on the HostBuffer gives the block
 * back to the pool at once. As in CuPy, a view taken from a HostBuffer must not be used after its
 * close(): the next allocation may get the same memory. The memory is never freed while such a view
 * can be reached.
 */
export class PinnedMemoryPool {
  private readonly bins = new Map<string, Block[]>();
  private used = 0;
  private cached = 0;
  private limitBytes = Infinity;

  /** An empty pool; `options.limit` caps what it may hold, in bytes. Throws TypeError when `options` is not an object. */
  constructor(options: PinnedMemoryPoolOptions = {}) {
    checkOptions('new PinnedMemoryPool', options, { limit: true });
    if (options.limit !== undefined) this.limit = options.limit;
  }

  /** `size` bytes of pinned memory (rounded up to 512), from a free block or cudaHostAlloc; 0 bytes (as in CuPy) take no block: a null `ptr`, an empty view. */
  allocate(size: number, options: HostBufferOptions = {}): HostBuffer {
    if (!Number.isSafeInteger(size) || size < 0)
      throw new RangeError(`PinnedMemoryPool.allocate: parameter 'size' must be a non-negative integer, got ${size}`);
    checkOptions('PinnedMemoryPool.allocate', options, HOST_BUFFER_OPTIONS);
    if (size === 0) return new HostBuffer(0, options);
    const rounded = Math.ceil(size / UNIT) * UNIT;
    const flags = hostAllocFlags(options);
    const key = `${rounded}/${flags}`;
    let block: Block | undefined;
    hookedAllocation('PinnedMemoryPool', 'host', size, rounded, () => {
      block = this.bins.get(key)?.pop();
      if (block) this.cached -= rounded;
      else block = this.fresh(rounded, flags, options);
      return block.ptr;
    });
    const b = block!;
    this.used += rounded;
    const view = koffi.view(b.ptr, size) as ArrayBuffer;
    tagPinned(view, b.ptr);
    b.views++;
    viewGone.register(view, b);
    const giveBack = () => {
      this.used -= rounded;
      this.cached += rounded;
      const bin = this.bins.get(key);
      if (bin) bin.push(b);
      else this.bins.set(key, [b]);
    };
    return HostBuffer.adopt(b.ptr, size, b.devicePtr, view, hookedFree('PinnedMemoryPool', 'host', size, rounded, b.ptr, giveBack));
  }

  /** Bytes in blocks handed out and not yet closed. */
  usedBytes(): number {
    return this.used;
  }

  /** Bytes held from CUDA: used plus free. */
  totalBytes(): number {
    return this.used + this.cached;
  }

  /** Bytes in free blocks kept for reuse. */
  freeBytes(): number {
    return this.cached;
  }

  /** How many free blocks the pool keeps. */
  get freeBlockCount(): number {
    let n = 0;
    for (const bin of this.bins.values()) n += bin.length;
    return n;
  }

  /** Gives every free block back (cudaFreeHost; a block whose old views JS can still reach, once they are gone). */
  freeAllBlocks(): void {
    for (const bin of this.bins.values()) {
      for (const b of bin) {
        if (b.views === 0) check(cudart.cudaFreeHost(b.ptr), 'PinnedMemoryPool.freeAllBlocks (cudaFreeHost)');
        else b.doomed = true;
      }
    }
    this.bins.clear();
    this.cached = 0;
  }

  /** The most bytes (used and free) the pool may hold; Infinity for none. */
  get limit(): number {
    return this.limitBytes;
  }

  /** Sets the cap in bytes (Infinity: none); throws RangeError for anything else. */
  set limit(bytes: number) {
    if (bytes !== Infinity && (!Number.isSafeInteger(bytes) || bytes < 0))
      throw new RangeError(`PinnedMemoryPool.limit: parameter 'bytes' must be a non-negative integer or Infinity, got ${bytes}`);
    this.limitBytes = bytes;
  }

  private fresh(rounded: number, flags: number, options: HostBufferOptions): Block {
    if (this.used + this.cached + rounded > this.limitBytes) this.freeAllBlocks();
    if (this.used + rounded > this.limitBytes)
      throw new RangeError(
        `PinnedMemoryPool.allocate: ${rounded} more bytes would pass the pool's limit of ${this.limitBytes} (${this.used} in use)`,
      );
    const ptr = freshAllocation('PinnedMemoryPool', 'host', rounded, () =>
      check(cudart.cudaHostAlloc(rounded, flags), 'PinnedMemoryPool.allocate (cudaHostAlloc)'),
    );
    const devicePtr = options.mapped
      ? check(cudart.cudaHostGetDevicePointer(ptr, 0), 'PinnedMemoryPool.allocate (cudaHostGetDevicePointer)')
      : null;
    return { ptr, size: rounded, flags, devicePtr, views: 0, doomed: false };
  }
}
