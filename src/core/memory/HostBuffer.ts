// Pinned (page-locked) host memory, seen from JS as a TypedArray. The memory is freed only when no
// JS view of it can be reached: close() gives it up, and the garbage collector frees it once the
// views are gone, so a view never points at freed memory.
import { describe } from '../../ffi/checks';
import koffi from 'koffi';
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Holds, holdOpen, release } from '../base/lifetime';
import { hookedCudaAllocation, hookedFree } from './MemoryHook';
import { checkOptions, type OptionKeys } from '../base/options';
import { tagPinned } from './pinned-views';

/** The cudaHostAlloc flags of a {@link HostBuffer} (all off by default). */
export interface HostBufferOptions {
  /** Mapped into the device's address space (cudaHostAllocMapped); `devicePtr` is its device address. */
  mapped?: boolean;
  /** Pinned for every device, not just the current one (cudaHostAllocPortable). */
  portable?: boolean;
  /** Write-combined: fast for the device to read, slow for the CPU to read. */
  writeCombined?: boolean;
}

/** The keys of HostBufferOptions, for checkOptions. */
export const HOST_BUFFER_OPTIONS: OptionKeys<HostBufferOptions> = { mapped: true, portable: true, writeCombined: true };

/** The constructor every TypedArray class extends (%TypedArray%). */
const TypedArray = Object.getPrototypeOf(Uint8Array) as new (b: ArrayBuffer) => ArrayBufferView;

/** The memory a registered HostBuffer's view stands over, kept alive while the view is reachable. */
const keepAlive = new WeakMap<ArrayBuffer, Uint8Array>();

const freeWhenUnreachable = new FinalizationRegistry<bigint>((p) => release(() => void cudart.cudaFreeHost(p)));

/** What `new HostBuffer()` asks for pinned memory when one is installed (a PinnedMemoryPool). */
export interface PinnedAllocator {
  /** `size` bytes of pinned memory with `options`' flags. */
  allocate(size: number, options: HostBufferOptions): HostBuffer;
}

let pinnedAllocator: PinnedAllocator | null = null;

/**
 * Makes `new HostBuffer(n)` take its memory from `allocator` (a PinnedMemoryPool; null: cudaHostAlloc
 * again), as CuPy's `set_pinned_memory_allocator`; returns the previous one.
 */
export function setPinnedMemoryAllocator(allocator: PinnedAllocator | null): PinnedAllocator | null {
  if (allocator !== null && typeof allocator?.allocate !== 'function')
    throw new TypeError(
      `setPinnedMemoryAllocator: parameter 'allocator' must have an allocate(size, options) method or be null, got ${describe(allocator)}`,
    );
  const previous = pinnedAllocator;
  pinnedAllocator = allocator;
  return previous;
}

/** The allocator `new HostBuffer()` uses, or null for cudaHostAlloc. */
export function getPinnedMemoryAllocator(): PinnedAllocator | null {
  return pinnedAllocator;
}

/** @internal cudaHostAlloc's flags for `options`. */
export function hostAllocFlags(options: HostBufferOptions): number {
  return (
    (options.mapped ? cudart.cudaHostAllocMapped : 0) |
    (options.portable ? cudart.cudaHostAllocPortable : 0) |
    (options.writeCombined ? cudart.cudaHostAllocWriteCombined : 0)
  );
}

/** How {@link HostBuffer.register} page-locks memory (cudaHostRegister's flags; all off by default). */
export interface HostRegisterOptions {
  /** Maps it into the device's address space (cudaHostRegisterMapped); `devicePtr` is its device address. */
  mapped?: boolean;
  /** Pinned for every device, not just the current one (cudaHostRegisterPortable). */
  portable?: boolean;
  /** The device only reads it (cudaHostRegisterReadOnly; see the device attribute readOnlyHostRegisterSupported). */
  readOnly?: boolean;
}

/** Registered memory whose HostBuffer was collected unclosed: unregistered then. */
const unregisterWhenCollected = new FinalizationRegistry<bigint>((p) => release(() => void cudart.cudaHostUnregister(p)));

let adopting: { ptr: bigint; devicePtr: bigint | null; view: ArrayBuffer; onClose: () => void } | null = null;

/**
 * @internal Whether `kind` is a TypedArray class (Buffer included), from any realm: a class made in another
 * context (a vm context, a test runner's) fails `instanceof` against this module's TypedArray.
 */
export function isTypedArrayClass(kind: unknown): boolean {
  for (let c = kind; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
    if (c === TypedArray || c.name === 'TypedArray') return c !== kind;
  }
  return false;
}

/**
 * Pinned (page-locked) host memory, read and written from JS as a TypedArray
 * ({@link HostBuffer.as}). Copies between it and the device run at the bus's full speed and can be
 * queued on a stream without a staging copy, which pageable memory (an ordinary Buffer) needs.
 *
 * Lifetime: close() gives the memory up, but it is freed (cudaFreeHost) only once no JS view of it
 * is reachable, so a view taken before never points at freed memory. A block from a
 * {@link PinnedMemoryPool} is the exception: it returns to the pool at close(). While an executable
 * graph that copies to or from it lives, the memory (or the pool's block) is kept for it. `as()` after close
 * throws Error; a failed allocation throws {@link CudaError}, a size that is not a non-negative
 * integer RangeError.
 *
 * @example
 * ```ts
 * using pinned = new HostBuffer(4 * 1024);     // bytes
 * const f32 = pinned.as(Float32Array);         // 1024 floats, a live view
 * f32.fill(2);
 * buf.copyFrom(f32, { stream });              // queued; leave f32 alone until the stream is done
 * await stream.synchronize();
 * ```
 */
export class HostBuffer {
  /** The host address of the memory, as a bigint for the runtime facade. */
  readonly ptr!: bigint;
  /** The length in bytes. */
  readonly size!: number;
  /** The device address of mapped memory, else null. */
  readonly devicePtr!: bigint | null;
  private view!: ArrayBuffer | null;
  private onClose: (() => void) | null = null;
  /** The holds on it (see holdOpen in lifetime.ts), once one was taken; while any is, close() leaves onClose to the last. */
  private holds: Holds | null = null;

  /**
   * `size` bytes of pinned memory: from the installed PinnedMemoryPool (setPinnedMemoryAllocator),
   * else cudaHostAlloc with `options`' flags. 0 bytes, as in CuPy, allocate nothing (a null `ptr`,
   * an empty view). Throws RangeError unless `size` is a non-negative integer, CudaError when the allocation fails.
   */
  constructor(size: number, options: HostBufferOptions = {}) {
    if (!Number.isSafeInteger(size) || size < 0)
      throw new RangeError(`HostBuffer: parameter 'size' must be a non-negative integer, got ${size}`);
    checkOptions('new HostBuffer', options, HOST_BUFFER_OPTIONS);
    if (size === 0) {
      // As CuPy's pinned allocations of 0 bytes: no memory, a null address, an empty view.
      this.ptr = 0n;
      this.size = 0;
      this.devicePtr = null;
      this.view = new ArrayBuffer(0);
      return;
    }
    if (pinnedAllocator && !adopting) {
      // A constructor may return another object: the pool's block, a HostBuffer too.
      return pinnedAllocator.allocate(size, options);
    }
    if (adopting) {
      const a = adopting;
      adopting = null;
      this.ptr = a.ptr;
      this.size = size;
      this.devicePtr = a.devicePtr;
      this.view = a.view;
      this.onClose = a.onClose;
      return;
    }
    const flags = hostAllocFlags(options);
    const ptr = hookedCudaAllocation('cudaHostAlloc', 'host', size, () => check(cudart.cudaHostAlloc(size, flags), 'cudaHostAlloc'));
    this.ptr = ptr;
    this.size = size;
    this.devicePtr = options.mapped ? check(cudart.cudaHostGetDevicePointer(this.ptr, 0), 'cudaHostGetDevicePointer') : null;
    this.view = koffi.view(this.ptr, size);
    tagPinned(this.view, this.ptr);
    // The ArrayBuffer (and every TypedArray over it) keeps the memory: it is freed after them.
    freeWhenUnreachable.register(this.view, this.ptr);
    this.onClose = hookedFree('cudaHostAlloc', 'host', size, size, ptr, () => undefined);
  }

  /**
   * @internal A HostBuffer over memory an allocator owns (a pool's block): `view` is its
   * ArrayBuffer, and `onClose` runs once, at close().
   */
  static adopt(ptr: bigint, size: number, devicePtr: bigint | null, view: ArrayBuffer, onClose: () => void): HostBuffer {
    adopting = { ptr, devicePtr, view, onClose };
    try {
      return new HostBuffer(size);
    } finally {
      adopting = null;
    }
  }

  /**
   * Page-locks memory the caller already has (PyCUDA's `register_host_memory`; cudaHostRegister): a
   * TypedArray, DataView, Buffer or ArrayBuffer, whose bytes this HostBuffer then shares (no copy;
   * `as()` views the same bytes). close() unregisters it (cudaHostUnregister); the memory stays the
   * caller's, and this HostBuffer keeps it alive until then. Two registrations may not share a page
   * (CUDA refuses the second with cudaErrorHostMemoryAlreadyRegistered). Throws TypeError for other
   * values, RangeError for an empty one, CudaError when CUDA refuses.
   */
  static register(data: ArrayBufferView | ArrayBuffer, options: HostRegisterOptions = {}): HostBuffer {
    const fn = 'HostBuffer.register';
    checkOptions(fn, options, { mapped: true, portable: true, readOnly: true });
    if (!ArrayBuffer.isView(data) && !(data instanceof ArrayBuffer))
      throw new TypeError(`${fn}: parameter 'data' must be a TypedArray, DataView, Buffer or ArrayBuffer, got ${describe(data)}`);
    const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
    if (bytes.byteLength === 0) throw new RangeError(`${fn}: parameter 'data' is empty`);
    const ptr = koffi.address(bytes) as bigint;
    const flags =
      (options.mapped ? cudart.cudaHostRegisterMapped : 0) |
      (options.portable ? cudart.cudaHostRegisterPortable : 0) |
      (options.readOnly ? cudart.cudaHostRegisterReadOnly : 0);
    check(cudart.cudaHostRegister(ptr, bytes.byteLength, flags), `${fn} (cudaHostRegister)`);
    let devicePtr: bigint | null = null;
    try {
      if (options.mapped) devicePtr = check(cudart.cudaHostGetDevicePointer(ptr, 0), `${fn} (cudaHostGetDevicePointer)`);
    } catch (e) {
      cudart.cudaHostUnregister(ptr);
      throw e;
    }
    const token = {};
    // The ArrayBuffer `as()` views is `bytes`' own when it is the whole of it, else one over the same memory, which keeps `bytes` alive.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const view = whole ? (bytes.buffer as ArrayBuffer) : (koffi.view(ptr, bytes.byteLength) as ArrayBuffer);
    if (!whole) keepAlive.set(view, bytes);
    const b = HostBuffer.adopt(ptr, bytes.byteLength, devicePtr, view, () => {
      unregisterWhenCollected.unregister(token);
      release(() => void cudart.cudaHostUnregister(ptr));
    });
    unregisterWhenCollected.register(b, ptr, token);
    return b;
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.view === null;
  }

  /** The memory as bytes; `as(Float32Array)` for another element type. */
  get bytes(): Uint8Array {
    return this.as(Uint8Array);
  }

  /**
   * The memory as a TypedArray of the given kind (a live view, not a copy), e.g.
   * `as(Float64Array)`; the size must be a multiple of its element size. Throws Error after close().
   */
  as<T extends ArrayBufferView>(kind: new (b: ArrayBuffer) => T): T {
    if (!this.view) throw new Error('HostBuffer.as: the HostBuffer was closed');
    const isView = typeof kind === 'function' && (kind === (DataView as unknown) || kind.name === 'DataView' || isTypedArrayClass(kind));
    if (!isView)
      throw new TypeError(
        `HostBuffer.as: parameter 'kind' must be a TypedArray class (Float32Array, Uint8Array, …) or DataView, got ${typeof kind === 'function' ? kind.name || 'an anonymous function' : String(kind)}`,
      );
    const element = (kind as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
    if (this.size % element !== 0)
      throw new RangeError(
        `HostBuffer.as: the buffer's ${this.size} bytes are not a whole number of ${kind.name} elements (${element} bytes each)`,
      );
    return new kind(this.view);
  }

  /**
   * Gives the memory up. It is freed by the garbage collector once no view of it is reachable,
   * never while one is. A PinnedMemoryPool's block goes back to its pool at once (as in CuPy, views
   * taken before must not be used after), or, while an executable graph that copies through it
   * lives, when that GraphExec is closed.
   */
  close(): void {
    if (this.view === null) return;
    this.view = null;
    const onClose = this.onClose;
    this.onClose = null;
    if (onClose && this.holds?.held) this.holds.defer(onClose);
    else onClose?.();
  }

  /**
   * @internal See holdOpen in lifetime.ts: the hold keeps the memory's ArrayBuffer reachable (so the
   * garbage collector does not free it) and a pool's block out of its pool, until let go.
   */
  [holdOpen](): () => void {
    // Reachable from the hold until it is let go (emptied then), so the memory is not collected meanwhile.
    const memory = [this.view];
    const letGo = (this.holds ??= new Holds()).take();
    return () => {
      memory.length = 0;
      letGo();
    };
  }

  /** Calls close(): lets `using pinned = new HostBuffer(n)` give the memory up at the end of the block. */
  [Symbol.dispose](): void {
    this.close();
  }
}
