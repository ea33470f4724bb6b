// A CUDA array (CuPy's CUDAarray, PyCUDA's Array): memory laid out for texture and surface access,
// 1D, 2D or 3D, layered or a cubemap, of one channel format.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource } from '../base/lifetime';
import { Device } from '../device/Device';
import { DeviceBuffer, copyOptions, type HostData, type CopyOptions, type CopyStream } from '../memory/DeviceBuffer';
import { checkOptions, type OptionKeys } from '../base/options';
import { openOptionalArg } from '../base/lifetime';
import { ChannelFormatDescriptor } from './ChannelFormatDescriptor';
import { describe } from '../../ffi/checks';

/** The shape and uses of a {@link CudaArray}; sizes in elements, not bytes. */
export interface CudaArrayOptions {
  /** The element format. */
  format: ChannelFormatDescriptor;
  /** Elements per row. */
  width: number;
  /** Rows (absent or 0: a 1D array). */
  height?: number;
  /** Slices of a 3D array (absent or 0: 1D or 2D). */
  depth?: number;
  /** Makes a layered array of this many 1D or 2D layers (cudaArrayLayered); not with depth. */
  layers?: number;
  /** A cubemap (six width × width faces; with `layers`, a cubemap array). */
  cubemap?: boolean;
  /** Can be bound to a SurfaceObject (cudaArraySurfaceLoadStore). */
  surface?: boolean;
  /** Can be read with tex2Dgather (cudaArrayTextureGather; 2D only). */
  textureGather?: boolean;
}

const CUDA_ARRAY_OPTIONS: OptionKeys<CudaArrayOptions> = {
  format: true,
  width: true,
  height: true,
  depth: true,
  layers: true,
  cubemap: true,
  surface: true,
  textureGather: true,
};

function count(v: unknown, p: string, min: number): number {
  if (v === undefined) return 0;
  if (!Number.isSafeInteger(v) || (v as number) < min)
    throw new RangeError(`CudaArray.create: option '${p}' must be an integer of at least ${min}, got ${describe(v)}`);
  return v as number;
}

/**
 * A CUDA array: device memory in the layout textures and surfaces read fastest (1D, 2D, 3D, layered
 * or a cubemap), made by {@link CudaArray.create} or {@link CudaArray.fromMatrix}; kernels read it
 * through a {@link TextureObject} and write it through a {@link SurfaceObject}.
 *
 * Lifetime: close() frees it (cudaFreeArray); textures and surfaces over it keep it from the garbage
 * collector, and report `isClosed` once it is closed, so launches refuse them. Bad shapes throw
 * RangeError naming the option; CUDA failures throw {@link CudaError}.
 *
 * @example
 * ```ts
 * using arr = CudaArray.fromMatrix(new Float32Array(64 * 64), 64); // 64 rows of 64 floats
 * using tex = TextureObject.create(arr, { filterMode: 'linear' });
 * ```
 */
export class CudaArray extends Resource {
  private constructor(
    /** The runtime handle (cudaArray_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaArray_t,
    /** The device whose memory holds the array. */
    readonly device: Device,
    /** The element format. */
    readonly format: ChannelFormatDescriptor,
    /** Elements per row. */
    readonly width: number,
    /** Rows (0 for 1D). */
    readonly height: number,
    /** Slices (0 unless 3D). */
    readonly depth: number,
    /** Layers (0 unless layered). */
    readonly layers: number,
    /** Whether it is a cubemap (six square faces; with layers, a cubemap array). */
    readonly cubemap: boolean,
    /** Whether a SurfaceObject can be made over it. */
    readonly surface: boolean,
  ) {
    super(() => void cudart.cudaFreeArray(handle), [device]);
  }

  /** A new array on `device` (default: the current one). */
  static create(options: CudaArrayOptions, device: Device = Device.current()): CudaArray {
    if (options === null || typeof options !== 'object')
      throw new TypeError(
        `CudaArray.create: parameter 'options' must be { format, width, height?, depth?, layers?, cubemap?, surface? }, got ${describe(options)}`,
      );
    checkOptions('CudaArray.create', options, CUDA_ARRAY_OPTIONS);
    if (!(options.format instanceof ChannelFormatDescriptor))
      throw new TypeError(`CudaArray.create: option 'format' must be a ChannelFormatDescriptor, got ${describe(options.format)}`);
    if (!(device instanceof Device)) throw new TypeError(`CudaArray.create: parameter 'device' must be a Device, got ${describe(device)}`);
    const width = count(options.width, 'width', 1);
    const height = count(options.height, 'height', 0);
    const depth = count(options.depth, 'depth', 0);
    const layers = count(options.layers, 'layers', 1);
    const cubemap = options.cubemap === true;
    if (depth > 0 && height === 0) throw new RangeError("CudaArray.create: a 3D array needs 'height' as well as 'depth'");
    if (layers > 0 && depth > 0) throw new RangeError("CudaArray.create: a layered array has 'layers' of 1D or 2D, not 'depth'");
    if (cubemap && (height !== width || depth > 0))
      throw new RangeError(
        `CudaArray.create: a cubemap has square faces (height = width) and no depth, got width ${width}, height ${height}, depth ${depth}`,
      );
    if (options.textureGather && (height === 0 || depth > 0 || layers > 0 || cubemap))
      throw new RangeError("CudaArray.create: option 'textureGather' is for plain 2D arrays");
    const flags =
      (layers ? cudart.cudaArrayLayered : 0) |
      (cubemap ? cudart.cudaArrayCubemap : 0) |
      (options.surface ? cudart.cudaArraySurfaceLoadStore : 0) |
      (options.textureGather ? cudart.cudaArrayTextureGather : 0);
    const extentDepth = cubemap ? 6 * Math.max(layers, 1) : layers || depth;
    device.makeCurrent();
    const h = check(
      cudart.cudaMalloc3DArray(options.format.toStruct(), { width, height, depth: extentDepth }, flags),
      'CudaArray.create (cudaMalloc3DArray)',
    );
    return new CudaArray(h, device, options.format, width, height, depth, layers, cubemap, options.surface === true);
  }

  /** The 2D array of a row-major matrix's values (PyCUDA's matrix_to_array): `rows` rows of `data.length / rows` elements of one channel. */
  static fromMatrix(
    data: Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array,
    rows: number,
    device: Device = Device.current(),
  ): CudaArray {
    const type =
      data instanceof Float32Array
        ? 'f32'
        : data instanceof Int32Array
          ? 'i32'
          : data instanceof Uint32Array
            ? 'u32'
            : data instanceof Int16Array
              ? 'i16'
              : data instanceof Uint16Array
                ? 'u16'
                : data instanceof Int8Array
                  ? 'i8'
                  : data instanceof Uint8Array
                    ? 'u8'
                    : null;
    if (type === null)
      throw new TypeError(
        `CudaArray.fromMatrix: parameter 'data' must be a Float32Array or an integer TypedArray of 8 to 32 bits, got ${describe(data)}`,
      );
    if (!Number.isSafeInteger(rows) || rows < 1 || data.length % rows !== 0)
      throw new RangeError(`CudaArray.fromMatrix: parameter 'rows' must divide the ${data.length} elements, got ${rows}`);
    const a = CudaArray.create({ format: ChannelFormatDescriptor.of(type), width: data.length / rows, height: rows }, device);
    return a.copyFrom(data);
  }

  /** 1, 2 or 3: the dimensions of one layer or face. */
  get dimensions(): 1 | 2 | 3 {
    return this.depth > 0 ? 3 : this.height > 0 ? 2 : 1;
  }

  /** Slices the copies cover: depth, layers, or 6 faces per cubemap layer (1 for a plain 1D or 2D array). */
  private get slices(): number {
    return this.cubemap ? 6 * Math.max(this.layers, 1) : Math.max(this.layers || this.depth, 1);
  }

  /** The bytes of the whole array, packed (what copyFrom and copyTo move). */
  get byteLength(): number {
    return this.width * Math.max(this.height, 1) * this.slices * this.format.bytesPerElement;
  }

  /**
   * Copies packed, row-major elements (every layer or face in order) from host memory or a
   * DeviceBuffer into the whole array: synchronous, or on `options.stream` (or the stream given in their place).
   */
  copyFrom(src: HostData | DeviceBuffer, options?: CopyStream): this {
    this.live('copyFrom');
    const o = copyOptions(options, 'CudaArray.copyFrom');
    this.copy(src, 'src', true, o);
    return this;
  }

  /**
   * Copies the whole array, packed and row-major, into host memory or a DeviceBuffer and returns
   * `dst`: synchronous, or on `options.stream` (or the stream given in their place).
   */
  copyTo<T extends HostData | DeviceBuffer>(dst: T, options?: CopyStream): T {
    this.live('copyTo');
    const o = copyOptions(options, 'CudaArray.copyTo');
    this.copy(dst, 'dst', false, o);
    return dst;
  }

  private copy(other: HostData | DeviceBuffer, p: string, into: boolean, o: CopyOptions): void {
    const what = into ? 'copyFrom' : 'copyTo';
    let mem: bigint | HostData;
    if (other instanceof DeviceBuffer) {
      if (other.isClosed) throw new Error(`CudaArray.${what}: parameter '${p}' is a DeviceBuffer that was closed`);
      if (other.size < this.byteLength)
        throw new RangeError(`CudaArray.${what}: the DeviceBuffer has ${other.size} bytes, fewer than the array's ${this.byteLength}`);
      mem = other.ptr;
    } else if (ArrayBuffer.isView(other) || other instanceof ArrayBuffer) {
      if (other.byteLength !== this.byteLength)
        throw new RangeError(
          `CudaArray.${what}: parameter '${p}' has ${other.byteLength} bytes; the array holds ${this.byteLength} (${this.width} × ${Math.max(this.height, 1)} × ${this.slices} elements of ${this.format.bytesPerElement} bytes)`,
        );
      mem = other;
    } else {
      throw new TypeError(
        `CudaArray.${what}: parameter '${p}' must be a TypedArray, Buffer, DataView, ArrayBuffer or DeviceBuffer, got ${describe(other)}`,
      );
    }
    openOptionalArg(o.stream, 'Stream', `CudaArray.${what}`, 'options.stream');
    const rowBytes = this.width * this.format.bytesPerElement;
    const ptr = { ptr: mem, pitch: rowBytes, xsize: this.width, ysize: Math.max(this.height, 1) };
    const params = new cudart.cudaMemcpy3DParms({
      extent: { width: this.width, height: Math.max(this.height, 1), depth: this.slices },
      kind: cudart.cudaMemcpyKind.cudaMemcpyDefault,
      ...(into ? { srcPtr: ptr, dstArray: this.handle } : { srcArray: this.handle, dstPtr: ptr }),
    });
    if (o.stream) check(cudart.cudaMemcpy3DAsync(params, o.stream.handle), `CudaArray.${what} (cudaMemcpy3DAsync)`);
    else check(cudart.cudaMemcpy3D(params), `CudaArray.${what} (cudaMemcpy3D)`);
  }
}
