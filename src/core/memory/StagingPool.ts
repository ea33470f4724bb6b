// Pinned host memory that DeviceBuffer.upload and download stage through, and that a download hands
// over as a TypedArray. Each block is a WebAssembly.Memory of its own, page-locked once
// (cudaHostRegister) and kept for reuse. Why WebAssembly memory: `memory.grow(0)` detaches every
// ArrayBuffer JS has over it and leaves the memory where it is, so a block given back to the pool can
// never be read through a view taken before (such a view reads as empty). Views of cudaHostAlloc's
// memory (koffi.view) cannot be detached: a pool of those can only ask users not to keep them.
import koffi from 'koffi';
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { check } from '../base/errors';
import { isTypedArrayClass } from './HostBuffer';

/** WebAssembly's page: blocks are a power of two of these. */
const PAGE = 65536;
/** The largest block, and so the largest download as one TypedArray (bytes). */
export const MAX_STAGED_BYTES = 1 << 30;

/** A TypedArray class, as `download` and `allocate` take it (Float32Array, Uint8Array, …). */
export type TypedArrayClass<T extends ArrayBufferView> = {
  new (buffer: ArrayBuffer, byteOffset?: number, length?: number): T;
  /** Bytes per element. */
  readonly BYTES_PER_ELEMENT: number;
};

/** The part of WebAssembly.Memory used here (the compile loads no DOM types, where it is declared). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => WasmMemory } })
  .WebAssembly;

interface Block {
  readonly memory: WasmMemory;
  readonly ptr: bigint;
  readonly size: number;
}

/**
 * @internal A block lent out. `pending` counts device copies queued that read or write it; the
 * block goes back to its bin once it is given back (released, collected, or done with) and no
 * copy is pending.
 */
export interface Lease {
  readonly block: Block;
  pending: number;
  givenBack: boolean;
}

/**
 * Pinned host memory for stream-ordered transfers: {@link DeviceBuffer.upload} copies host data
 * into one of its blocks and queues the device copy from there; {@link DeviceBuffer.download}
 * copies into one and hands it over as a TypedArray. `stagingPool` is the one the package uses.
 * Blocks (a power of two of 64 KiB, up to 1 GiB) are page-locked once (cudaHostRegister) and reused:
 * no cudaHostAlloc per transfer. Arrays from {@link StagingPool.allocate} that a program keeps and
 * reuses are the cheapest of all: upload copies from them and download into them directly, with no
 * block lent and no new ArrayBuffer per transfer.
 *
 * Lifetime of an array it hands over (a download's result, or `allocate()`'s): `release(array)`
 * gives its block back at once, or the garbage collector does once the array itself is unreachable.
 * Either way every view of the block (the array, its subarrays, a Buffer over its `buffer`) is
 * detached first: it reads as empty (length 0), never as the block's next contents. So keep the
 * array you were given for as long as you read it or a view of it; and release it only once no
 * native code still reads it (a socket write: `res.end(body, () => stagingPool.release(array))`).
 * The array's `buffer` is its whole block (64 KiB or more): view it with `Buffer.from(array.buffer,
 * array.byteOffset, array.byteLength)`, not `Buffer.from(array.buffer)`.
 */
export class StagingPool {
  private readonly bins = new Map<number, Block[]>();
  private used = 0;
  private cached = 0;
  /** The lease behind each ArrayBuffer handed over (a block's current buffer). */
  private readonly handed = new WeakMap<ArrayBuffer, Lease>();
  private readonly collected = new FinalizationRegistry<Lease>((lease) => this.giveBack(lease));
  /** @internal Called when a lease finds no free block of its size: gives back the blocks of copies that have completed (set by the transfers). */
  reclaim: () => void = () => undefined;

  /**
   * A TypedArray of `length` elements of `kind` over pinned staging memory, to fill and pass to
   * {@link DeviceBuffer.upload}, which then copies it to the device with no staging copy. Its lifetime
   * is a download's result's: see the class. Throws RangeError for a length that is not a positive
   * integer or passes 1 GiB.
   */
  allocate<T extends ArrayBufferView>(kind: TypedArrayClass<T>, length: number): T {
    const fn = 'StagingPool.allocate';
    const element = elementSize(kind, fn);
    if (!Number.isSafeInteger(length) || length <= 0 || length * element > MAX_STAGED_BYTES)
      throw new RangeError(`${fn}: parameter 'length' must be a positive integer of at most ${MAX_STAGED_BYTES} bytes, got ${length}`);
    return this.handOver(this.lease(length * element, fn), kind, length);
  }

  /**
   * Gives the block behind `array` (a download's result or `allocate()`'s) back to the pool now and
   * detaches every view of it (they read as empty from here on). A copy still reading it (an upload
   * of it) finishes first. Releasing twice does nothing; throws TypeError for any other array.
   */
  release(array: ArrayBufferView): void {
    if (!ArrayBuffer.isView(array))
      throw new TypeError(`StagingPool.release: parameter 'array' must be a TypedArray or DataView, got ${describe(array)}`);
    const lease = this.handed.get(array.buffer as ArrayBuffer);
    if (lease) {
      this.collected.unregister(lease);
      this.giveBack(lease);
      return;
    }
    if (array.buffer.byteLength === 0) return; // detached: released before
    throw new TypeError(
      "StagingPool.release: parameter 'array' is not over staging memory (it did not come from download() or allocate())",
    );
  }

  /** Bytes in blocks lent out now. */
  usedBytes(): number {
    return this.used;
  }

  /** Bytes in free blocks kept for reuse. */
  freeBytes(): number {
    return this.cached;
  }

  /** Bytes the pool holds, lent out and free. */
  totalBytes(): number {
    return this.used + this.cached;
  }

  /** How many free blocks the pool keeps. */
  get freeBlockCount(): number {
    let n = 0;
    for (const bin of this.bins.values()) n += bin.length;
    return n;
  }

  /**
   * Unpins (cudaHostUnregister) and drops every free block; blocks lent out stay. A block's memory
   * goes once collected: when no array or view of it is left reachable, released ones included (V8
   * keeps a WebAssembly memory's pages while a detached buffer of it is reachable), and after a
   * second collection at the earliest.
   */
  freeAllBlocks(): void {
    this.reclaim();
    for (const bin of this.bins.values())
      for (const b of bin) check(cudart.cudaHostUnregister(b.ptr), 'StagingPool.freeAllBlocks (cudaHostUnregister)');
    this.bins.clear();
    this.cached = 0;
  }

  /** @internal A block of at least `bytes` (1 to MAX_STAGED_BYTES), reused or made and pinned; `fn` names the caller in errors. */
  lease(bytes: number, fn: string): Lease {
    let size = PAGE;
    while (size < bytes) size *= 2;
    if (!this.bins.get(size)?.length) this.reclaim();
    const reused = this.bins.get(size)?.pop();
    if (reused) this.cached -= size;
    const block = reused ?? this.fresh(size, fn);
    this.used += size;
    return { block, pending: 0, givenBack: false };
  }

  /** @internal The lease whose handed-over memory `view` lies in, or undefined. */
  leaseOf(view: ArrayBufferView): Lease | undefined {
    return this.handed.get(view.buffer as ArrayBuffer);
  }

  /** @internal `length` elements of `kind` over the lease's block, handed over: released by release() or the collector. */
  handOver<T extends ArrayBufferView>(lease: Lease, kind: TypedArrayClass<T>, length: number): T {
    const buffer = lease.block.memory.buffer;
    const array = new kind(buffer, 0, length);
    this.handed.set(buffer, lease);
    this.collected.register(array, lease, lease);
    return array;
  }

  /** @internal Gives the lease back: detaches its views, and returns the block once no copy is pending. */
  giveBack(lease: Lease): void {
    if (lease.givenBack) return;
    lease.givenBack = true;
    lease.block.memory.grow(0); // detaches every ArrayBuffer over the block (the memory stays put)
    if (lease.pending === 0) this.recycle(lease.block);
  }

  /** @internal A pending copy of the lease's block completed: the block goes back when it was given back. */
  copyDone(lease: Lease): void {
    if (--lease.pending === 0 && lease.givenBack) this.recycle(lease.block);
  }

  private recycle(block: Block): void {
    this.used -= block.size;
    this.cached += block.size;
    const bin = this.bins.get(block.size);
    if (bin) bin.push(block);
    else this.bins.set(block.size, [block]);
  }

  private fresh(size: number, fn: string): Block {
    const pages = size / PAGE;
    const memory = new Memory({ initial: pages, maximum: pages });
    const ptr = koffi.address(memory.buffer) as bigint;
    check(cudart.cudaHostRegister(ptr, size, cudart.cudaHostRegisterPortable), `${fn} (cudaHostRegister)`);
    return { memory, ptr, size };
  }
}

/** The staging pool that DeviceBuffer.upload and download use. */
export const stagingPool = new StagingPool();

/** @internal The element size of TypedArray class `kind`; throws TypeError naming `fn` for anything else. */
export function elementSize(kind: unknown, fn: string): number {
  if (!isTypedArrayClass(kind))
    throw new TypeError(
      `${fn}: parameter 'kind' must be a TypedArray class (Float32Array, Uint8Array, …), got ${typeof kind === 'function' ? kind.name || 'an anonymous function' : describe(kind)}`,
    );
  return (kind as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
}
