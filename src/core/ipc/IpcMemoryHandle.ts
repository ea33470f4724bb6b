// PyCUDA's IPCMemoryHandle / CUDA IPC: a device allocation made by cudaMalloc, exported as 64 bytes
// that another process opens to get the same memory.
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { check } from '../base/errors';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { Device } from '../device/Device';
import { fromSerialised, rawHandle, serialise } from './ipc-format';
import { checkMapped } from './ipc-bounds';

const MAGIC = 'CBIM';

/**
 * A handle to device memory that another process can open. Serialise it with `toBuffer()` /
 * `toBase64()` (for a `child_process` message or a `worker_threads` post) and read it back with
 * `IpcMemoryHandle.from()`. The handle covers a whole cudaMalloc allocation (device.allocate()
 * without a caching allocator, or a CachingAllocator block); a slice is carried as its offset and size.
 */
export class IpcMemoryHandle {
  private constructor(
    /** The 64 bytes of cudaIpcMemHandle_t. */
    readonly bytes: Uint8Array,
    /** Bytes the opened buffer has. */
    readonly size: number,
    /** Where the buffer starts in the allocation the handle is of. */
    readonly offset: number,
  ) {}

  /** The handle of `buffer`'s memory (cudaIpcGetMemHandle); `buffer` stays the owner. */
  static export(buffer: DeviceBuffer): IpcMemoryHandle {
    if (!(buffer instanceof DeviceBuffer))
      throw new TypeError(`IpcMemoryHandle.export: parameter 'buffer' must be a DeviceBuffer, got ${describe(buffer)}`);
    if (buffer.isClosed || buffer.parent?.isClosed) throw new Error("IpcMemoryHandle.export: parameter 'buffer' was closed");
    const ptr = buffer.ptr;
    if (buffer.kind !== 'device' && buffer.kind !== 'cached')
      throw new TypeError(
        `IpcMemoryHandle.export: parameter 'buffer' must be cudaMalloc memory (kind 'device' or 'cached'); it is ${buffer.kind} memory${buffer.kind === 'pool' ? ': share a pool made with IpcMemoryPool instead' : ''}`,
      );
    const base = buffer.parent ? buffer.parent.ptr : ptr;
    buffer.device.makeCurrent();
    const h = check(cudart.cudaIpcGetMemHandle(base), 'IpcMemoryHandle.export (cudaIpcGetMemHandle)');
    return new IpcMemoryHandle(new Uint8Array(h.reserved), buffer.size, Number(ptr - base));
  }

  /**
   * A handle another library made, from its raw bytes: the 64 bytes of a cudaIpcMemHandle_t (CuPy's
   * `cupy.cuda.runtime.ipcGetMemHandle(ptr)`, the handle in PyTorch's `storage._share_cuda_()`, a
   * native addon's). `size` bytes from byte `offset` of the allocation the handle is of (PyTorch's
   * storage offset) become the buffer that open() gives; open() checks them against the allocation.
   */
  static fromBytes(bytes: Uint8Array, size: number, offset = 0): IpcMemoryHandle {
    const fn = 'IpcMemoryHandle.fromBytes';
    const raw = rawHandle(bytes, 'cudaIpcMemHandle_t', fn);
    if (!Number.isSafeInteger(size) || size < 0)
      throw new RangeError(`${fn}: parameter 'size' must be a non-negative integer, got ${size}`);
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + size > Number.MAX_SAFE_INTEGER)
      throw new RangeError(`${fn}: parameter 'offset' must be a non-negative integer, got ${offset}`);
    return new IpcMemoryHandle(raw, size, offset);
  }

  /** Reads a handle written by toBuffer() or toBase64(); open() checks its size against the memory. */
  static from(data: Uint8Array | string): IpcMemoryHandle {
    const [[size, offset], bytes] = fromSerialised(data, MAGIC, 2, 'IpcMemoryHandle.from');
    if (size + offset > Number.MAX_SAFE_INTEGER)
      throw new RangeError(
        `IpcMemoryHandle.from: parameter 'data' claims ${size} bytes at offset ${offset}, more than any allocation (${Number.MAX_SAFE_INTEGER} bytes)`,
      );
    return new IpcMemoryHandle(bytes, size, offset);
  }

  /**
   * The handle as bytes: 'CBIM', a version (u32), the size and the offset (u64 each), then the 64
   * bytes of cudaIpcMemHandle_t, all little-endian (88 bytes; README, "Sharing GPU memory").
   */
  toBuffer(): Buffer {
    return serialise(MAGIC, [this.size, this.offset], this.bytes);
  }

  /** toBuffer() as base64 text. */
  toBase64(): string {
    return this.toBuffer().toString('base64');
  }

  /**
   * Opens the memory in this process, on `device` (default: the current one), as a DeviceBuffer of
   * kind 'ipc'; close() on it closes the mapping (cudaIpcCloseMemHandle), not the memory. CUDA refuses
   * a handle that this same process exported (a CudaError); a handle whose size and offset pass the
   * end of the allocation it opens is refused with a RangeError, the mapping closed.
   */
  open(device: Device = Device.current()): DeviceBuffer {
    if (!(device instanceof Device))
      throw new TypeError(`IpcMemoryHandle.open: parameter 'device' must be a Device, got ${describe(device)}`);
    device.makeCurrent();
    const handle = new cudart.cudaIpcMemHandle_st({ reserved: this.bytes });
    const base = check(
      cudart.cudaIpcOpenMemHandle(handle, cudart.cudaIpcMemLazyEnablePeerAccess),
      'IpcMemoryHandle.open (cudaIpcOpenMemHandle)',
    );
    const close = () => void cudart.cudaIpcCloseMemHandle(base);
    const claim = `the handle claims ${this.size} bytes at offset ${this.offset}`;
    checkMapped(base, this.offset + this.size, close, 'IpcMemoryHandle.open', claim);
    return DeviceBuffer.fromAllocation(base + BigInt(this.offset), this.size, device, 'ipc', close, [device]);
  }
}
