// Device memory: an allocation, or a view of part of one that keeps it alive.
import { cudart } from '../index';
import { check } from './errors';
import { Resource } from './lifetime';
import type { Device } from './Device';
import type { Stream } from './Stream';

/** Host memory a copy reads or writes: a Buffer, any TypedArray, a DataView or an ArrayBuffer. */
export type HostData = ArrayBufferView | ArrayBuffer;

export interface CopyOptions {
  /** Queue the copy on this stream and return at once (the host memory must stay untouched until it is done). */
  stream?: Stream;
}

const D2D = cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice;
const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;

export class DeviceBuffer extends Resource {
  private constructor(
    private readonly address: bigint,
    readonly size: number,
    readonly device: Device,
    /** The allocation a view belongs to (kept alive by it), or null for an allocation. */
    readonly parent: DeviceBuffer | null,
  ) {
    super(parent ? () => undefined : () => void cudart.cudaFree(address), parent ? [parent] : [device]);
  }

  /** @internal Use device.allocate(). */
  static allocate(device: Device, size: number): DeviceBuffer {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`Device.allocate: parameter 'size' must be a non-negative integer, got ${size}`);
    return new DeviceBuffer(check(cudart.cudaMalloc(size), 'cudaMalloc'), size, device, null);
  }

  /** The device address (throws once the buffer or its allocation is closed). */
  get ptr(): bigint {
    this.alive('ptr');
    return this.address;
  }

  private alive(what: string): void {
    this.live(what);
    if (this.parent?.isClosed) throw new Error(`DeviceBuffer.${what}: the allocation this view belongs to was closed`);
  }

  /** A view of `length` bytes from `offset` (no copy); it keeps the allocation alive. */
  slice(offset: number, length = this.size - offset): DeviceBuffer {
    this.alive('slice');
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.size) throw new RangeError(`DeviceBuffer.slice: offset ${offset} is outside the buffer's ${this.size} bytes`);
    if (!Number.isSafeInteger(length) || length < 0 || offset + length > this.size) throw new RangeError(`DeviceBuffer.slice: ${length} bytes from ${offset} go past the buffer's ${this.size} bytes`);
    return new DeviceBuffer(this.address + BigInt(offset), length, this.device, this.parent ?? this);
  }

  /** Copies `src` (host memory or another DeviceBuffer) into the start of this buffer. */
  copyFrom(src: HostData | DeviceBuffer, options: CopyOptions = {}): this {
    this.alive('copyFrom');
    const n = src instanceof DeviceBuffer ? src.size : src.byteLength;
    if (n > this.size) throw new RangeError(`DeviceBuffer.copyFrom: the source has ${n} bytes, more than the buffer's ${this.size}`);
    const from = src instanceof DeviceBuffer ? src.ptr : src;
    this.copy(this.address, from, n, src instanceof DeviceBuffer ? D2D : H2D, options, 'copyFrom');
    return this;
  }

  /** Copies the start of this buffer into `dst` (host memory or another DeviceBuffer), as many bytes as `dst` holds. */
  copyTo<T extends HostData | DeviceBuffer>(dst: T, options: CopyOptions = {}): T {
    this.alive('copyTo');
    const n = dst instanceof DeviceBuffer ? dst.size : (dst as HostData).byteLength;
    if (n > this.size) throw new RangeError(`DeviceBuffer.copyTo: the destination has ${n} bytes, more than the buffer's ${this.size}`);
    const to = dst instanceof DeviceBuffer ? dst.ptr : (dst as HostData);
    this.copy(to, this.address, n, dst instanceof DeviceBuffer ? D2D : D2H, options, 'copyTo');
    return dst;
  }

  private copy(dst: cudart.Pointer, src: cudart.Pointer, n: number, kind: cudart.cudaMemcpyKind, o: CopyOptions, what: string): void {
    if (o.stream) check(cudart.cudaMemcpyAsync(dst, src, n, kind, o.stream.handle), `DeviceBuffer.${what} (cudaMemcpyAsync)`);
    else check(cudart.cudaMemcpy(dst, src, n, kind), `DeviceBuffer.${what} (cudaMemcpy)`);
  }

  /** Sets every byte to `value` (0–255). */
  fill(value: number, options: CopyOptions = {}): this {
    this.alive('fill');
    if (!Number.isInteger(value) || value < 0 || value > 255) throw new RangeError(`DeviceBuffer.fill: parameter 'value' must be a byte (0 to 255), got ${value}`);
    if (options.stream) check(cudart.cudaMemsetAsync(this.address, value, this.size, options.stream.handle), 'DeviceBuffer.fill (cudaMemsetAsync)');
    else check(cudart.cudaMemset(this.address, value, this.size), 'DeviceBuffer.fill (cudaMemset)');
    return this;
  }
}
