// Pinned (page-locked) host memory, seen from JS as a TypedArray. The memory is freed only when no
// JS view of it can be reached: close() gives it up, and the garbage collector frees it once the
// views are gone, so a view never points at freed memory.
import koffi from 'koffi';
import * as cudart from '../runtime';
import { check } from './errors';
import { release } from './lifetime';

export interface HostBufferOptions {
  /** Mapped into the device's address space (cudaHostAllocMapped); `devicePtr` is its device address. */
  mapped?: boolean;
  /** Pinned for every device, not just the current one (cudaHostAllocPortable). */
  portable?: boolean;
  /** Write-combined: fast for the device to read, slow for the CPU to read. */
  writeCombined?: boolean;
}

const freeWhenUnreachable = new FinalizationRegistry<bigint>((p) => release(() => void cudart.cudaFreeHost(p)));

export class HostBuffer {
  readonly ptr: bigint;
  readonly size: number;
  /** The device address of mapped memory, else null. */
  readonly devicePtr: bigint | null;
  private view: ArrayBuffer | null;

  constructor(size: number, options: HostBufferOptions = {}) {
    if (!Number.isSafeInteger(size) || size <= 0) throw new RangeError(`HostBuffer: parameter 'size' must be a positive integer, got ${size}`);
    const flags = (options.mapped ? cudart.cudaHostAllocMapped : 0) | (options.portable ? cudart.cudaHostAllocPortable : 0) | (options.writeCombined ? cudart.cudaHostAllocWriteCombined : 0);
    this.ptr = check(cudart.cudaHostAlloc(size, flags), 'cudaHostAlloc');
    this.size = size;
    this.devicePtr = options.mapped ? check(cudart.cudaHostGetDevicePointer(this.ptr, 0), 'cudaHostGetDevicePointer') : null;
    this.view = koffi.view(this.ptr, size);
    // The ArrayBuffer (and every TypedArray over it) keeps the memory: it is freed after them.
    freeWhenUnreachable.register(this.view, this.ptr);
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.view === null;
  }

  /** The memory as bytes; `as(Float32Array)` for another element type. */
  get bytes(): Uint8Array {
    return this.as(Uint8Array);
  }

  /** The memory as a TypedArray of the given kind (a live view, not a copy). */
  as<T extends ArrayBufferView>(kind: new (b: ArrayBuffer) => T): T {
    if (!this.view) throw new Error('HostBuffer.as: the HostBuffer was closed');
    return new kind(this.view);
  }

  /**
   * Gives the memory up. It is freed by the garbage collector once no view of it is reachable,
   * never while one is.
   */
  close(): void {
    this.view = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
