// What a texture or surface reads (CuPy's ResourceDescriptor): a CUDA array, linear device memory,
// or pitched 2D device memory, with its element format.
import * as cudart from '../../runtime';
import { CudaArray } from './CudaArray';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { ChannelFormatDescriptor } from './ChannelFormatDescriptor';
import { describe } from '../../ffi/checks';

/** Which memory a resource descriptor names. */
export type ResourceKind = 'array' | 'linear' | 'pitch2D';

/**
 * What memory a texture reads (cudaResourceDesc): a {@link CudaArray}, linear device memory, or
 * pitched 2D device memory, with its format and sizes. Made by the static factories; it owns nothing,
 * and textures made over it keep its memory alive. Bad sizes throw RangeError naming the parameter.
 *
 * @example
 * ```ts
 * const res = ResourceDescriptor.linear(buf, ChannelFormatDescriptor.of('f32'));
 * using tex = TextureObject.create(res, { readMode: 'element' });
 * ```
 */
export class ResourceDescriptor {
  private constructor(
    /** Which memory it names: 'array', 'linear' or 'pitch2D'. */
    readonly kind: ResourceKind,
    /** The memory it names (kept alive by the textures made over it). */
    readonly resource: CudaArray | DeviceBuffer,
    /** The element format (the array's own for an array). */
    readonly format: ChannelFormatDescriptor,
    /** Elements per row (pitch2D). */
    readonly width = 0,
    /** Rows (pitch2D). */
    readonly height = 0,
    /** Bytes from one row to the next (pitch2D). */
    readonly pitchInBytes = 0,
    /** Bytes read (linear). */
    readonly sizeInBytes = 0,
  ) {}

  /** A CUDA array. */
  static array(array: CudaArray): ResourceDescriptor {
    if (!(array instanceof CudaArray))
      throw new TypeError(`ResourceDescriptor.array: parameter 'array' must be a CudaArray, got ${describe(array)}`);
    if (array.isClosed) throw new Error("ResourceDescriptor.array: parameter 'array' is a CudaArray that was closed");
    return new ResourceDescriptor('array', array, array.format);
  }

  /** Linear device memory read as `format` elements (tex1Dfetch); `sizeInBytes` defaults to the buffer's size. */
  static linear(buffer: DeviceBuffer, format: ChannelFormatDescriptor, sizeInBytes: number = buffer?.size): ResourceDescriptor {
    checkBuffer(buffer, format, 'linear');
    if (!Number.isSafeInteger(sizeInBytes) || sizeInBytes <= 0 || sizeInBytes > buffer.size)
      throw new RangeError(
        `ResourceDescriptor.linear: parameter 'sizeInBytes' must be within [1, ${buffer.size}] (the buffer's size), got ${sizeInBytes}`,
      );
    if (sizeInBytes % format.bytesPerElement !== 0)
      throw new RangeError(
        `ResourceDescriptor.linear: parameter 'sizeInBytes' (${sizeInBytes}) is not a whole number of ${format.bytesPerElement}-byte elements`,
      );
    return new ResourceDescriptor('linear', buffer, format, 0, 0, 0, sizeInBytes);
  }

  /**
   * A 2D view of device memory: `height` rows of `width` elements, `pitchInBytes` apart (a multiple of
   * the device's texturePitchAlignment; default: the packed row size).
   */
  static pitch2D(
    buffer: DeviceBuffer,
    format: ChannelFormatDescriptor,
    width: number,
    height: number,
    pitchInBytes: number = width * format?.bytesPerElement,
  ): ResourceDescriptor {
    checkBuffer(buffer, format, 'pitch2D');
    for (const [p, v] of [
      ['width', width],
      ['height', height],
      ['pitchInBytes', pitchInBytes],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 1)
        throw new RangeError(`ResourceDescriptor.pitch2D: parameter '${p}' must be a positive integer, got ${v}`);
    }
    if (pitchInBytes < width * format.bytesPerElement)
      throw new RangeError(
        `ResourceDescriptor.pitch2D: parameter 'pitchInBytes' (${pitchInBytes}) is less than a row of ${width} elements (${width * format.bytesPerElement} bytes)`,
      );
    if (pitchInBytes * (height - 1) + width * format.bytesPerElement > buffer.size)
      throw new RangeError(
        `ResourceDescriptor.pitch2D: ${height} rows ${pitchInBytes} bytes apart go past the buffer's ${buffer.size} bytes`,
      );
    return new ResourceDescriptor('pitch2D', buffer, format, width, height, pitchInBytes);
  }

  /** The C struct (cudaResourceDesc); throws when the memory was closed. */
  toStruct(fn = 'ResourceDescriptor.toStruct'): cudart.cudaResourceDesc {
    if (this.resource.isClosed) throw new Error(`${fn}: the ${this.resource.constructor.name} the resource descriptor names was closed`);
    const T = cudart.cudaResourceType;
    if (this.resource instanceof CudaArray)
      return new cudart.cudaResourceDesc({ resType: T.cudaResourceTypeArray, res: { array: { array: this.resource.handle } } });
    const desc = this.format.toStruct();
    if (this.kind === 'linear')
      return new cudart.cudaResourceDesc({
        resType: T.cudaResourceTypeLinear,
        res: { linear: { devPtr: this.resource.ptr, desc, sizeInBytes: this.sizeInBytes } },
      });
    return new cudart.cudaResourceDesc({
      resType: T.cudaResourceTypePitch2D,
      res: { pitch2D: { devPtr: this.resource.ptr, desc, width: this.width, height: this.height, pitchInBytes: this.pitchInBytes } },
    });
  }
}

function checkBuffer(buffer: unknown, format: unknown, what: string): void {
  if (!(buffer instanceof DeviceBuffer))
    throw new TypeError(`ResourceDescriptor.${what}: parameter 'buffer' must be a DeviceBuffer, got ${describe(buffer)}`);
  if (buffer.isClosed) throw new Error(`ResourceDescriptor.${what}: parameter 'buffer' is a DeviceBuffer that was closed`);
  if (!(format instanceof ChannelFormatDescriptor))
    throw new TypeError(`ResourceDescriptor.${what}: parameter 'format' must be a ChannelFormatDescriptor, got ${describe(format)}`);
}
