// cuda.core's DeviceMemoryResource(ipc_enabled=True): a stream-ordered pool whose memory other
// processes can open. The pool is shared as a POSIX file descriptor (passed to a child in `spawn`'s
// `stdio`), each allocation as an IpcBufferDescriptor.
import * as cudart from '../../runtime';
import { checkFileDescriptor, describe } from '../../ffi/checks';
import { check } from '../base/errors';
import { Resource } from '../base/lifetime';
import { addressNumber } from '../base/direct';
import { DeviceBuffer, checkSize } from '../memory/DeviceBuffer';
import { Device } from '../device/Device';
import { Stream } from '../device/Stream';
import { IpcBufferDescriptor } from './IpcBufferDescriptor';
import { checkMapped } from './ipc-bounds';
import { allocateFromPool } from '../memory/MemoryPool';
import { checkOptions } from '../base/options';

/** How {@link IpcMemoryPool.create} makes a shareable pool. */
export interface IpcMemoryPoolOptions {
  /** The most the pool may reserve, in bytes (0 or absent: no limit but the device's memory). */
  maxSize?: number;
}

const FD = cudart.cudaMemAllocationHandleType.cudaMemHandleTypePosixFileDescriptor;

/**
 * A stream-ordered memory pool shared between processes (through a POSIX file descriptor): one
 * process creates it and allocates, sends `exportHandle()`'s descriptor (over a Unix socket) and
 * each buffer's `exportBuffer()` descriptor; another imports the pool and opens the buffers.
 *
 * Lifetime: close() destroys (or, when imported, releases) the pool; buffers from it keep it alive.
 * An importer must close the buffers it opened before the exporter frees them. CUDA failures throw
 * {@link CudaError}; an imported pool's allocate() throws Error.
 *
 * @example
 * ```ts
 * // exporter
 * using pool = IpcMemoryPool.create(dev);
 * using buf = pool.allocate(1 << 20, stream);
 * sendFd(pool.exportHandle()); send(pool.exportBuffer(buf));
 * // importer
 * using shared = IpcMemoryPool.import(fd, dev);
 * using view = shared.importBuffer(descriptor, stream);
 * ```
 */
export class IpcMemoryPool extends Resource {
  /** @internal The handle as a number (exact: an address is below 2^53), for core's directByAddress calls. */
  declare readonly handleNumber: number;

  private constructor(
    /** The runtime handle (cudaMemPool_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaMemPool_t,
    /** The device whose memory the pool holds. */
    readonly device: Device,
    /** Whether this process imported the pool (it can open buffers but not allocate). */
    readonly isImported: boolean,
  ) {
    super(() => void cudart.cudaMemPoolDestroy(handle), [device]);
    this.handleNumber = addressNumber(handle, 'IpcMemoryPool');
  }

  /** A new pool of `device`'s memory that can be shared (cudaMemPoolCreate with POSIX file descriptor handles). */
  static create(device: Device, options: IpcMemoryPoolOptions = {}): IpcMemoryPool {
    if (!(device instanceof Device))
      throw new TypeError(`IpcMemoryPool.create: parameter 'device' must be a Device, got ${describe(device)}`);
    checkOptions('IpcMemoryPool.create', options, { maxSize: true });
    if (options.maxSize !== undefined) checkSize(options.maxSize, 'IpcMemoryPool.create (options.maxSize)');
    const props = new cudart.cudaMemPoolProps({
      allocType: cudart.cudaMemAllocationType.cudaMemAllocationTypePinned,
      handleTypes: FD,
      location: { type: cudart.cudaMemLocationType.cudaMemLocationTypeDevice, id: device.ordinal },
      maxSize: options.maxSize ?? 0,
    });
    return new IpcMemoryPool(check(cudart.cudaMemPoolCreate(props), 'IpcMemoryPool.create (cudaMemPoolCreate)'), device, false);
  }

  /**
   * Opens a pool another process exported: `fd` is the file descriptor it gave (in a child, the
   * stdio slot it was passed in, e.g. 3). The descriptor may be closed afterwards.
   */
  static import(fd: number, device?: Device): IpcMemoryPool {
    checkFileDescriptor(fd, 'IpcMemoryPool.import', 'fd');
    if (device === undefined) device = Device.current();
    if (!(device instanceof Device))
      throw new TypeError(`IpcMemoryPool.import: parameter 'device' must be a Device, got ${describe(device)}`);
    device.makeCurrent();
    // For a POSIX descriptor the "handle" is the descriptor itself, cast to a pointer.
    const h = check(
      cudart.cudaMemPoolImportFromShareableHandle(BigInt(fd), FD, 0),
      'IpcMemoryPool.import (cudaMemPoolImportFromShareableHandle)',
    );
    return new IpcMemoryPool(h, device, true);
  }

  /**
   * A new file descriptor of the pool, for another process (cudaMemPoolExportToShareableHandle).
   * Pass it to a child in `spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe', fd] })` (it is fd 3
   * there) and close it here with `fs.closeSync(fd)` once the child has it.
   */
  exportHandle(): number {
    this.live('exportHandle');
    const out = new Int32Array(1);
    check(
      cudart.cudaMemPoolExportToShareableHandle(out, this.handle, FD, 0),
      'IpcMemoryPool.exportHandle (cudaMemPoolExportToShareableHandle)',
    );
    return out[0];
  }

  /** `size` bytes from the pool, ready in `stream`'s order; close() frees it in the same order. */
  allocate(size: number, stream: Stream): DeviceBuffer {
    this.live('allocate');
    checkSize(size, 'IpcMemoryPool.allocate');
    if (!(stream instanceof Stream))
      throw new TypeError(`IpcMemoryPool.allocate: parameter 'stream' must be a Stream, got ${describe(stream)}`);
    if (stream.isClosed) throw new Error("IpcMemoryPool.allocate: parameter 'stream' was closed");
    if (this.isImported)
      throw new Error(
        'IpcMemoryPool.allocate: this pool was imported from another process; only its owner allocates (open its buffers with importBuffer)',
      );
    return allocateFromPool(this, size, stream, 'pool', 'IpcMemoryPool', 'IpcMemoryPool.allocate (cudaMallocFromPoolAsync)');
  }

  /** The descriptor of `buffer`, an allocation of this pool, for another process that imported the pool (cudaMemPoolExportPointer). */
  exportBuffer(buffer: DeviceBuffer): IpcBufferDescriptor {
    this.live('exportBuffer');
    if (!(buffer instanceof DeviceBuffer))
      throw new TypeError(`IpcMemoryPool.exportBuffer: parameter 'buffer' must be a DeviceBuffer, got ${describe(buffer)}`);
    if (buffer.isClosed) throw new Error("IpcMemoryPool.exportBuffer: parameter 'buffer' was closed");
    if (buffer.kind !== 'pool' || buffer.parent !== null)
      throw new TypeError(
        `IpcMemoryPool.exportBuffer: parameter 'buffer' must be an allocation of this pool, not ${buffer.parent ? 'a slice' : `${buffer.kind} memory`}`,
      );
    const data = check(cudart.cudaMemPoolExportPointer(buffer.ptr), 'IpcMemoryPool.exportBuffer (cudaMemPoolExportPointer)');
    return new IpcBufferDescriptor(new Uint8Array(data.reserved), buffer.size);
  }

  /**
   * Opens an allocation of the pool that another process exported (cudaMemPoolImportPointer), as a
   * DeviceBuffer of kind 'ipc' that keeps the pool alive. close() frees this process's mapping
   * (cudaFreeAsync on `stream`, or the legacy default stream); do so before the owner frees it. A
   * descriptor that claims more bytes than the allocation holds is refused with a RangeError, freed.
   */
  importBuffer(descriptor: IpcBufferDescriptor, stream?: Stream): DeviceBuffer {
    this.live('importBuffer');
    if (!(descriptor instanceof IpcBufferDescriptor))
      throw new TypeError(
        `IpcMemoryPool.importBuffer: parameter 'descriptor' must be an IpcBufferDescriptor (IpcBufferDescriptor.from(bytes)), got ${describe(descriptor)}`,
      );
    if (stream !== undefined && !(stream instanceof Stream))
      throw new TypeError(`IpcMemoryPool.importBuffer: parameter 'stream' must be a Stream or absent, got ${describe(stream)}`);
    if (stream?.isClosed) throw new Error("IpcMemoryPool.importBuffer: parameter 'stream' was closed");
    this.device.makeCurrent();
    const p = check(
      cudart.cudaMemPoolImportPointer(this.handle, new cudart.cudaMemPoolPtrExportData({ reserved: descriptor.bytes })),
      'IpcMemoryPool.importBuffer (cudaMemPoolImportPointer)',
    );
    const free = () => void cudart.cudaFreeAsync(p, stream && !stream.isClosed ? stream.handle : null);
    const claim = `parameter 'descriptor' claims ${descriptor.size} bytes`;
    checkMapped(p, descriptor.size, free, 'IpcMemoryPool.importBuffer', claim);
    return DeviceBuffer.fromAllocation(p, descriptor.size, this.device, 'ipc', free, stream ? [this, stream] : [this]);
  }

  /** Gives reserved memory back to the device until the pool holds at most `keepBytes`. */
  trim(keepBytes = 0): void {
    this.live('trim');
    checkSize(keepBytes, 'IpcMemoryPool.trim');
    check(cudart.cudaMemPoolTrimTo(this.handle, keepBytes), 'IpcMemoryPool.trim (cudaMemPoolTrimTo)');
  }
}
