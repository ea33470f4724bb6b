// The descriptor of one allocation of an IPC-enabled pool (cudaMemPoolExportPointer): with the pool
// imported, another process opens the allocation from it.
import { fromSerialised, serialise } from './ipc-format';

const MAGIC = 'CBPB';

/**
 * cuda.core's IPCBufferDescriptor: what `IpcMemoryPool.exportBuffer(buf)` gives and
 * `pool.importBuffer(descriptor)` takes in another process. Serialise with `toBuffer()` /
 * `toBase64()`, read back with `IpcBufferDescriptor.from()`.
 */
export class IpcBufferDescriptor {
  /** @internal Use IpcMemoryPool.exportBuffer(). */
  constructor(
    /** The 64 bytes of cudaMemPoolPtrExportData. */
    readonly bytes: Uint8Array,
    /** The allocation's size in bytes. */
    readonly size: number,
  ) {
    if (!(bytes instanceof Uint8Array) || bytes.length !== 64)
      throw new TypeError(
        `IpcBufferDescriptor: parameter 'bytes' must be 64 bytes, got ${bytes instanceof Uint8Array ? `${bytes.length} bytes` : String(bytes)}`,
      );
    if (!Number.isSafeInteger(size) || size < 0)
      throw new RangeError(`IpcBufferDescriptor: parameter 'size' must be a non-negative integer, got ${size}`);
  }

  /** Reads a descriptor written by toBuffer() or toBase64(); importBuffer() checks its size against the memory. */
  static from(data: Uint8Array | string): IpcBufferDescriptor {
    const [[size], bytes] = fromSerialised(data, MAGIC, 1, 'IpcBufferDescriptor.from');
    return new IpcBufferDescriptor(bytes, size);
  }

  /** The descriptor as bytes: 'CBPB', a version, the size, then the 64 bytes. */
  toBuffer(): Buffer {
    return serialise(MAGIC, [this.size], this.bytes);
  }

  /** toBuffer() as base64 text. */
  toBase64(): string {
    return this.toBuffer().toString('base64');
  }
}
