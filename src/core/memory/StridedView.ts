// An N-d typed view over device memory (cuda.core's StridedMemoryView): shape, dtype, strides, a
// byte offset, a read-only flag and the stream it is valid on. It copies to and from TypedArrays,
// slices without copying, goes to a kernel as its address, and crosses to other libraries as a
// `__cuda_array_interface__` (array-interface.ts) or a DLPack tensor (core/interop).
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { check } from '../base/errors';
import { Resource, openArg, openOptionalArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import type { Device } from '../device/Device';
import {
  DeviceBuffer,
  asDeviceBytes,
  copyOptions,
  type CopyOptions,
  type CopyStream,
  type DeviceByteRange,
  type HostData,
} from './DeviceBuffer';
import { DTYPES, checkDtype, contiguousStrides, type Dtype, type ElementArray } from './dtype';
import { describeArray, parseArrayInterface, type CudaArrayInterface } from './array-interface';
import { Stream } from '../device/Stream';
import { FOREIGN_OPTIONS, foreignDevice, type ForeignOptions } from '../device/foreign';

/** What {@link StridedView.fromArrayInterface} takes besides the descriptor. */
export interface FromArrayInterfaceOptions extends ForeignOptions {
  /**
   * The memory the descriptor's elements are in, in this process (an IPC mapping of the peer's
   * allocation, say): the elements must lie inside it. Without it, the descriptor's address is
   * wrapped as memory another library owns (DeviceBuffer.fromPointer; hold it with `owner`).
   */
  buffer?: DeviceBuffer;
  /**
   * The address `buffer` starts at in the process that wrote the descriptor (default: buffer.ptr,
   * the same process): the descriptor's address is read relative to it.
   */
  base?: bigint | number;
}

/** How {@link StridedView.of} (and `buffer.view()`) lays elements over a buffer. */
export interface StridedViewOptions {
  /** The element type (default 'u8'). */
  dtype?: Dtype;
  /** Elements along each dimension (default: one dimension over the whole buffer after byteOffset). */
  shape?: readonly number[];
  /** Elements (not bytes) between neighbours along each dimension; negative ones run backwards (default: C order, row-major). */
  strides?: readonly number[];
  /** Where element [0, …, 0] is, in bytes from the buffer's start (default 0). */
  byteOffset?: number;
  /** Whether writes through the view are refused (copyFrom, and the flag it exports to other libraries). */
  readonly?: boolean;
  /** The stream the data is valid on (default: the buffer's, if it has one). */
  stream?: Stream;
}

/** The keys of StridedViewOptions, for checkOptions. */
const VIEW_OPTIONS = { dtype: true, shape: true, strides: true, byteOffset: true, readonly: true, stream: true } as const;

/** One dimension of {@link StridedView.slice}: an index (the dimension goes), `[start, end?, step?]`, or null for all of it. */
export type SliceSpec = number | readonly [number, number?, number?] | null;

/**
 * @internal The bytes [low, high) from element [0, …, 0] that an array of `shape`, `strides`
 * (elements) and `itemBytes` touches; [0, 0) when it has no elements.
 */
export function extentOf(shape: readonly number[], strides: readonly number[], itemBytes: number): [number, number] {
  if (shape.some((n) => n === 0)) return [0, 0];
  let low = 0;
  let high = itemBytes;
  shape.forEach((n, i) => {
    const reach = (n - 1) * strides[i] * itemBytes;
    if (reach < 0) low += reach;
    else high += reach;
  });
  return [low, high];
}

/**
 * @internal Throws unless `shape` and `strides` (elements) are integer lists of the same length
 * (shape non-negative) and the array they describe from `byteOffset` lies in `size` bytes: a
 * RangeError naming `fn` and the field (`names.shape`, `names.strides`, `names.offset`).
 */
export function checkLayout(
  fn: string,
  names: { shape: string; strides: string; offset: string },
  shape: readonly number[],
  strides: readonly number[],
  itemBytes: number,
  byteOffset: number,
  size: number,
): void {
  if (!Array.isArray(shape) || !shape.every((n) => Number.isSafeInteger(n) && n >= 0))
    throw new TypeError(`${fn}: ${names.shape} must be an array of non-negative integers, got ${show(shape)}`);
  if (!Array.isArray(strides) || strides.length !== shape.length || !strides.every((n) => Number.isSafeInteger(n)))
    throw new TypeError(`${fn}: ${names.strides} must be an array of ${shape.length} integers (one per dimension), got ${show(strides)}`);
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0)
    throw new RangeError(`${fn}: ${names.offset} must be a non-negative integer, got ${byteOffset}`);
  const [low, high] = extentOf(shape, strides, itemBytes);
  if (byteOffset + low < 0)
    throw new RangeError(
      `${fn}: ${names.strides} ${show(strides)} with ${names.shape} ${show(shape)} reach ${-(byteOffset + low)} bytes before the start of the memory`,
    );
  if (byteOffset + high > size)
    throw new RangeError(
      `${fn}: ${names.shape} ${show(shape)} with ${names.strides} ${show(strides)} from byte ${byteOffset} needs ${byteOffset + high} bytes; the memory has ${size}`,
    );
}

/** A list for an error message. */
function show(v: unknown): string {
  return Array.isArray(v) ? `[${v.join(', ')}]` : describe(v);
}

const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;
const D2D = cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice;

/**
 * An N-d typed view over device memory, as cuda.core's StridedMemoryView: a {@link DeviceBuffer},
 * a {@link Dtype}, a shape, strides in elements (negative ones run backwards), the byte offset of
 * element [0, …, 0], a read-only flag and the stream its data is valid on. Made by
 * {@link StridedView.of} (or `buffer.view(options)`), {@link StridedView.fromArrayInterface}, or a
 * DLPack import. Pass it to a kernel as its address ({@link StridedView.ptr}); export it to another
 * library with `toArrayInterface()` or as a DLPack tensor.
 *
 * Lifetime: the view keeps its buffer alive; close() marks the view closed (and, for a view that
 * owns its memory, such as an imported DLPack tensor, closes the buffer, which releases the memory
 * to its owner). A view whose buffer was closed is closed too. Copies check shapes and throw
 * RangeError on a mismatch, Error on a closed or read-only view.
 *
 * @example
 * ```ts
 * using buf = dev.allocate(4 * 3 * 4);
 * const m = StridedView.of(buf, { dtype: 'f32', shape: [4, 3] });
 * m.copyFrom(new Float32Array(12).fill(1));
 * const column = m.slice(null, 1);          // shape [4], strides [3]: no copy
 * console.log(column.copyTo());             // Float32Array(4) [1, 1, 1, 1] (a 2D copy)
 * kernel.launch({ grid: 1, block: 12 }, m, i32(12));
 * ```
 */
export class StridedView extends Resource {
  private constructor(
    /** The memory the view is over (kept alive by the view). */
    readonly buffer: DeviceBuffer,
    /** The element type. */
    readonly dtype: Dtype,
    /** Elements along each dimension. */
    readonly shape: readonly number[],
    /** Elements between neighbours along each dimension (negative: backwards). */
    readonly strides: readonly number[],
    /** Where element [0, …, 0] is, in bytes from the buffer's start. */
    readonly byteOffset: number,
    /** Whether writes through the view are refused. */
    readonly readonly: boolean,
    /** The stream the data is valid on, or null when the producer named none. */
    readonly stream: Stream | null,
    /** Whether close() closes the buffer too (the view owns it: an imported DLPack tensor). */
    private readonly ownsBuffer: boolean,
  ) {
    super(() => undefined, [buffer, stream]);
    Object.freeze(shape);
    Object.freeze(strides);
  }

  /**
   * A view of `buffer` laid out by `options` (default: bytes, one dimension over the buffer). Throws
   * RangeError when the shape and strides from the byte offset do not fit the buffer, or reach
   * before its start; TypeError for an unknown dtype or a malformed shape.
   */
  static of(buffer: DeviceBuffer, options: StridedViewOptions = {}): StridedView {
    const fn = 'StridedView.of';
    openArg(buffer, 'DeviceBuffer', fn, 'buffer');
    checkOptions(fn, options, VIEW_OPTIONS);
    openOptionalArg(options.stream, 'Stream', fn, 'options.stream');
    const dtype = options.dtype === undefined ? 'u8' : checkDtype(options.dtype, `${fn}: option 'dtype'`);
    const item = DTYPES[dtype].bytes;
    const byteOffset = options.byteOffset ?? 0;
    const shape = options.shape ? [...options.shape] : [Math.floor(Math.max(0, buffer.size - byteOffset) / item)];
    const strides = options.strides ? [...options.strides] : contiguousStrides(shape);
    checkLayout(
      fn,
      { shape: "option 'shape'", strides: "option 'strides'", offset: "option 'byteOffset'" },
      shape,
      strides,
      item,
      byteOffset,
      buffer.size,
    );
    if (options.readonly !== undefined && typeof options.readonly !== 'boolean')
      throw new TypeError(`${fn}: option 'readonly' must be a boolean, got ${describe(options.readonly)}`);
    return new StridedView(buffer, dtype, shape, strides, byteOffset, options.readonly ?? false, options.stream ?? buffer.stream, false);
  }

  /**
   * @internal A view that owns `buffer` (its close() closes the buffer, which releases the memory to
   * its owner): for imports, which checked the layout already.
   */
  static owning(
    buffer: DeviceBuffer,
    dtype: Dtype,
    shape: number[],
    strides: number[],
    byteOffset: number,
    readonly: boolean,
    stream: Stream | null,
  ): StridedView {
    return new StridedView(buffer, dtype, shape, strides, byteOffset, readonly, stream, true);
  }

  /**
   * A view of the array a `__cuda_array_interface__` (version 3 or 2) describes: `descriptor` as a
   * plain object (JSON from a Python peer, or a DeviceBuffer's or view's toArrayInterface()). With
   * `options.buffer` the elements must lie in that buffer (the address read relative to
   * `options.base`); without it, the address is wrapped as memory another library owns, held alive
   * through `options.owner` and never freed here. A stream in the descriptor becomes the view's
   * (wrapped, never destroyed). Throws TypeError or RangeError naming the field for a malformed
   * descriptor, an unknown typestr, a shape that does not fit the buffer, strides that reach before
   * its start, or a device other than the buffer's.
   */
  static fromArrayInterface(
    descriptor: CudaArrayInterface | Record<string, unknown>,
    options: FromArrayInterfaceOptions = {},
  ): StridedView {
    const fn = 'StridedView.fromArrayInterface';
    checkOptions(fn, options, { ...FOREIGN_OPTIONS, buffer: true, base: true });
    const d = parseArrayInterface(descriptor, fn);
    const item = DTYPES[d.dtype].bytes;
    let buffer: DeviceBuffer;
    let byteOffset: number;
    if (options.buffer !== undefined) {
      openArg(options.buffer, 'DeviceBuffer', fn, 'options.buffer');
      buffer = options.buffer;
      if (options.device !== undefined && foreignDevice(options.device, fn) !== buffer.device)
        throw new RangeError(
          `${fn}: option 'device' is device ${options.device.ordinal}, but option 'buffer' is memory of device ${buffer.device.ordinal}`,
        );
      const base = options.base === undefined ? buffer.ptr : BigInt(options.base);
      const offset = d.address - base;
      if (offset < 0n || offset > BigInt(buffer.size))
        throw new RangeError(
          `${fn}: field 'data' (0x${d.address.toString(16)}) is not in option 'buffer' (${buffer.size} bytes from 0x${base.toString(16)})`,
        );
      byteOffset = Number(offset);
    } else {
      if (options.base !== undefined) throw new TypeError(`${fn}: option 'base' needs option 'buffer'`);
      const [low, high] = extentOf(d.shape, d.strides, item);
      if (d.address + BigInt(low) < 0n)
        throw new RangeError(`${fn}: field 'strides' reach before address 0 from field 'data' (0x${d.address.toString(16)})`);
      buffer = DeviceBuffer.fromPointer(d.address + BigInt(low), high - low, { owner: options.owner, device: options.device });
      byteOffset = -low;
    }
    checkLayout(
      fn,
      { shape: "field 'shape'", strides: "field 'strides'", offset: "field 'data'" },
      d.shape,
      d.strides,
      item,
      byteOffset,
      buffer.size,
    );
    const stream = d.stream === null ? null : Stream.fromHandle(d.stream, { device: buffer.device });
    return new StridedView(buffer, d.dtype, d.shape, d.strides, byteOffset, d.readonly, stream, false);
  }

  /**
   * The view as a `__cuda_array_interface__` (version 3) plain object, JSON-safe: shape, typestr,
   * `data: [address, readonly]`, strides in bytes (null when packed row-major), and the stream it is
   * valid on (1 for the legacy default stream, null for none). The address is this process's: a
   * peer process opens the memory through IPC and reads the address relative to the allocation's.
   * Throws TypeError for bf16 (NumPy has no typestr for it; use DLPack).
   */
  toArrayInterface(): CudaArrayInterface {
    this.live('toArrayInterface');
    return describeArray(
      'StridedView.toArrayInterface',
      this.ptr,
      this.dtype,
      this.shape,
      this.strides,
      this.isContiguous,
      this.readonly,
      this.stream === null ? null : BigInt(this.stream.handle),
    );
  }

  /** The view's packed bytes for DeviceBuffer's copies: throws Error for a closed or (when written) read-only view, RangeError for one that is not contiguous. */
  [asDeviceBytes](where: string, param: string, writing: boolean): DeviceByteRange {
    if (this.isClosed) throw new Error(`${where}: parameter '${param}' is a StridedView that was closed`);
    if (writing && this.readonly) throw new Error(`${where}: parameter '${param}' is a read-only StridedView`);
    if (!this.isContiguous)
      throw new RangeError(`${where}: parameter '${param}' is a StridedView that is not contiguous; copy it through the host or a kernel`);
    return { ptr: this.ptr, size: this.length * this.itemSize };
  }

  /** Whether close() was called, or the buffer was closed. */
  override get isClosed(): boolean {
    return super.isClosed || this.buffer.isClosed;
  }

  /** Marks the view closed; a view that owns its buffer (an imported DLPack tensor) closes the buffer too. */
  override close(): void {
    super.close();
    if (this.ownsBuffer) this.buffer.close();
  }

  /** The device the memory is on. */
  get device(): Device {
    return this.buffer.device;
  }

  /** Bytes per element. */
  get itemSize(): number {
    return DTYPES[this.dtype].bytes;
  }

  /** How many dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** How many elements (the product of the shape). */
  get length(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }

  /** Whether the elements lie in row-major order with no gaps (dimensions of one element do not count). */
  get isContiguous(): boolean {
    const c = contiguousStrides(this.shape);
    return this.shape.every((n, i) => n <= 1 || this.strides[i] === c[i]);
  }

  /** The device address of element [0, …, 0] (throws Error once the view or its buffer is closed). */
  get ptr(): bigint {
    this.live('ptr');
    return this.buffer.ptr + BigInt(this.byteOffset);
  }

  /** @internal The address of element [0, …, 0], or null once closed (a launch's one test). */
  openAddress(): bigint | null {
    const p = this.isClosed ? null : this.buffer.openAddress();
    return p === null ? null : p + BigInt(this.byteOffset);
  }

  /**
   * A view of part of this one, no copy: one spec per leading dimension (the rest stay whole). A
   * number picks one index (the dimension goes); `[start, end, step]` takes every step-th index from
   * start up to end (end defaults to the dimension's length, step to 1; negative start and end count
   * from the end); null takes the whole dimension. Throws RangeError for an index outside the shape.
   */
  slice(...specs: SliceSpec[]): StridedView {
    this.live('slice');
    const fn = 'StridedView.slice';
    if (specs.length > this.ndim) throw new RangeError(`${fn}: ${specs.length} specs for a view of ${this.ndim} dimensions`);
    const shape: number[] = [];
    const strides: number[] = [];
    let offset = this.byteOffset;
    this.shape.forEach((n, d) => {
      const spec = specs[d] ?? null;
      const stride = this.strides[d];
      const at = (v: number, what: string, max: number) => {
        if (!Number.isSafeInteger(v)) throw new TypeError(`${fn}: ${what} of dimension ${d} must be an integer, got ${describe(v)}`);
        const i = v < 0 ? v + n : v;
        if (i < 0 || i > max) throw new RangeError(`${fn}: ${what} ${v} of dimension ${d} is outside its ${n} elements`);
        return i;
      };
      if (spec === null) {
        shape.push(n);
        strides.push(stride);
      } else if (typeof spec === 'number') {
        offset += at(spec, 'index', n - 1) * stride * this.itemSize;
      } else if (Array.isArray(spec)) {
        const start = at(spec[0], 'start', n);
        const end = spec[1] === undefined ? n : at(spec[1], 'end', n);
        const step = spec[2] ?? 1;
        if (!Number.isSafeInteger(step) || step < 1)
          throw new RangeError(`${fn}: step of dimension ${d} must be a positive integer, got ${describe(step)}`);
        shape.push(Math.max(0, Math.ceil((end - start) / step)));
        strides.push(stride * step);
        offset += start * stride * this.itemSize;
      } else throw new TypeError(`${fn}: spec ${d} must be an index, [start, end?, step?] or null, got ${describe(spec)}`);
    });
    return new StridedView(this.buffer, this.dtype, shape, strides, offset, this.readonly, this.stream, false);
  }

  /** The view with its dimensions in reverse order (a matrix's transpose), no copy. */
  transpose(): StridedView {
    this.live('transpose');
    return new StridedView(
      this.buffer,
      this.dtype,
      [...this.shape].reverse(),
      [...this.strides].reverse(),
      this.byteOffset,
      this.readonly,
      this.stream,
      false,
    );
  }

  /**
   * Copies the view's elements, in row-major order, into a new TypedArray of the dtype's kind
   * (Float32Array for f32, Uint16Array for f16 and bf16, BigInt64Array for i64, …) and returns it. A
   * view that is not contiguous is copied with one cudaMemcpy2D per run of rows. Synchronous, or
   * queued on `options.stream` (or on the stream given in their place). Throws RangeError when `dst`
   * does not hold exactly the view's bytes.
   */
  copyTo(dst?: undefined, options?: CopyStream): ElementArray;
  /**
   * Copies the view's elements into `dst` and returns it: host memory (row-major, exactly the view's
   * bytes), or a contiguous DeviceBuffer or StridedView of the same byte size (device to device).
   */
  copyTo<T extends HostData | DeviceBuffer | StridedView>(dst: T, options?: CopyStream): T;
  copyTo(dst?: HostData | DeviceBuffer | StridedView, options?: CopyStream): HostData | DeviceBuffer | StridedView {
    this.live('copyTo');
    const out = dst ?? new DTYPES[this.dtype].array(this.length);
    this.transfer(out, false, options, 'copyTo');
    return out;
  }

  /**
   * Copies `src` (host elements in row-major order, or a contiguous DeviceBuffer/StridedView) into
   * the view's elements: synchronous, or queued on `options.stream` (or the stream given in their
   * place). Returns this view. Throws Error for a read-only view, RangeError when `src` does not hold
   * exactly the view's bytes.
   */
  copyFrom(src: HostData | DeviceBuffer | StridedView, options?: CopyStream): this {
    this.live('copyFrom');
    if (this.readonly) throw new Error('StridedView.copyFrom: the view is read-only');
    this.transfer(src, true, options, 'copyFrom');
    return this;
  }

  /** The copy of copyTo (`toDevice` false) and copyFrom (true), with `other` on the far side. */
  private transfer(other: unknown, toDevice: boolean, given: CopyStream | undefined, what: string): void {
    const fn = `StridedView.${what}`;
    const param = toDevice ? 'src' : 'dst';
    const o = copyOptions(given, fn);
    openOptionalArg(o.stream, 'Stream', fn, 'options.stream');
    const bytes = this.length * this.itemSize;
    let far: cudart.Pointer;
    let kind: cudart.cudaMemcpyKind;
    let n: number;
    if (other instanceof StridedView || other instanceof DeviceBuffer) {
      openArg(other, other instanceof StridedView ? 'StridedView' : 'DeviceBuffer', fn, param);
      if (other instanceof StridedView && !other.isContiguous)
        throw new RangeError(`${fn}: parameter '${param}' is a StridedView that is not contiguous; copy it through the host or a kernel`);
      if (!toDevice && other instanceof StridedView && other.readonly) throw new Error(`${fn}: parameter 'dst' is a read-only StridedView`);
      n = other instanceof StridedView ? other.length * other.itemSize : other.size;
      far = other.ptr;
      kind = D2D;
      if (!this.isContiguous)
        throw new RangeError(`${fn}: this view is not contiguous; copies between device memory need contiguous views`);
    } else if (ArrayBuffer.isView(other) || other instanceof ArrayBuffer) {
      far = ArrayBuffer.isView(other) ? new Uint8Array(other.buffer, other.byteOffset, other.byteLength) : new Uint8Array(other);
      n = other.byteLength;
      kind = toDevice ? H2D : D2H;
    } else
      throw new TypeError(
        `${fn}: parameter '${param}' must be a TypedArray, Buffer, DataView, ArrayBuffer, DeviceBuffer or StridedView, got ${describe(other)}`,
      );
    if (n !== bytes)
      throw new RangeError(`${fn}: parameter '${param}' has ${n} bytes; the view's ${this.length} ${this.dtype} elements are ${bytes}`);
    if (bytes === 0) return;
    if (this.isContiguous) {
      const [dst, src] = toDevice ? [this.ptr, far] : [far, this.ptr];
      if (o.stream) check(cudart.cudaMemcpyAsync(dst, src, bytes, kind, o.stream.handle), `${fn} (cudaMemcpyAsync)`);
      else check(cudart.cudaMemcpy(dst, src, bytes, kind), `${fn} (cudaMemcpy)`);
      return;
    }
    this.copyRows(far as Uint8Array, toDevice, o, fn);
  }

  /**
   * Copies a view that is not contiguous to or from packed host bytes: its dimensions merged where
   * they can be, each run of rows (the two innermost dimensions) one cudaMemcpy2D.
   */
  private copyRows(host: Uint8Array, toDevice: boolean, o: CopyOptions, fn: string): void {
    const item = this.itemSize;
    const dims = mergedDims(this.shape, this.strides);
    if (dims.some(([, s]) => s <= 0))
      throw new RangeError(
        `${fn}: the view's strides [${this.strides.join(', ')}] run backwards or repeat elements; only views with positive strides are copied`,
      );
    // The innermost run: whole rows when the last dimension is packed, else single elements.
    const packed = dims[dims.length - 1][1] === 1;
    const rowDim = packed ? dims.length - 2 : dims.length - 1;
    const width = packed ? dims[dims.length - 1][0] * item : item;
    const [height, pitchElems] = rowDim >= 0 ? dims[rowDim] : [1, 0];
    const pitch = pitchElems * item;
    if (height > 1 && pitch < width)
      throw new RangeError(`${fn}: the view's rows overlap (strides [${this.strides.join(', ')}]); it cannot be copied row by row`);
    const outer = dims.slice(0, Math.max(0, rowDim));
    const base = this.ptr;
    const index = outer.map(() => 0);
    for (let at = 0; at < host.length; at += width * height) {
      const offset = BigInt(outer.reduce((sum, [, s], i) => sum + index[i] * s, 0) * item);
      const rows = host.subarray(at, at + width * height);
      const args: [cudart.Pointer, number, cudart.Pointer, number] = toDevice
        ? [base + offset, Math.max(pitch, width), rows, width]
        : [rows, width, base + offset, Math.max(pitch, width)];
      const kind = toDevice ? H2D : D2H;
      if (o.stream) check(cudart.cudaMemcpy2DAsync(...args, width, height, kind, o.stream.handle), `${fn} (cudaMemcpy2DAsync)`);
      else check(cudart.cudaMemcpy2D(...args, width, height, kind), `${fn} (cudaMemcpy2D)`);
      for (let d = outer.length - 1; d >= 0 && ++index[d] === outer[d][0]; d--) index[d] = 0;
    }
  }
}

/** The dimensions of (shape, strides) with those of one element dropped and neighbours that step evenly merged: [length, stride][]. */
function mergedDims(shape: readonly number[], strides: readonly number[]): [number, number][] {
  const dims: [number, number][] = [];
  shape.forEach((n, i) => {
    if (n === 1) return;
    const last = dims[dims.length - 1];
    if (last && last[1] === strides[i] * n) dims[dims.length - 1] = [last[0] * n, strides[i]];
    else dims.push([n, strides[i]]);
  });
  return dims.length ? dims : [[1, 1]];
}
