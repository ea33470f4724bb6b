// The element format of a CUDA array or a texture (CuPy's ChannelFormatDescriptor): bits per
// channel and whether they are signed, unsigned or floating point.
import * as cudart from '../../runtime';
import { describe, lookupName } from '../../ffi/checks';

/** How a channel's bits are read. */
export type ChannelKind = 'signed' | 'unsigned' | 'float';

/** Element types by their kernel-argument names, for ChannelFormatDescriptor.of. */
export type ChannelType = 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'f16' | 'f32';

const KINDS: Record<ChannelKind, cudart.cudaChannelFormatKind> = {
  signed: cudart.cudaChannelFormatKind.cudaChannelFormatKindSigned,
  unsigned: cudart.cudaChannelFormatKind.cudaChannelFormatKindUnsigned,
  float: cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat,
};

const TYPES: Record<ChannelType, [number, ChannelKind]> = {
  i8: [8, 'signed'],
  u8: [8, 'unsigned'],
  i16: [16, 'signed'],
  u16: [16, 'unsigned'],
  i32: [32, 'signed'],
  u32: [32, 'unsigned'],
  f16: [16, 'float'],
  f32: [32, 'float'],
};

/**
 * The element format of a {@link CudaArray} or a texture (CuPy's ChannelFormatDescriptor): bits per
 * channel (x, y, z, w) and whether they are signed, unsigned or floating point. A value with no
 * C resource (nothing to close); invalid widths throw RangeError.
 *
 * @example
 * ```ts
 * const rgba8 = new ChannelFormatDescriptor(8, 8, 8, 8, 'unsigned');
 * const f32 = ChannelFormatDescriptor.of('f32');        // one 32-bit float channel
 * ```
 */
export class ChannelFormatDescriptor {
  /**
   * Bits of channels x, y, z, w (8, 16 or 32 each; 0 for an absent channel) and their kind. CUDA
   * arrays take 1, 2 or 4 channels of one width; floats are 16 or 32 bits.
   */
  constructor(
    /** Bits of channel x (8, 16 or 32). */
    readonly x: number,
    /** Bits of channel y (0 when absent). */
    readonly y: number,
    /** Bits of channel z (0 when absent). */
    readonly z: number,
    /** Bits of channel w (0 when absent). */
    readonly w: number,
    /** How the channels' bits are read: 'signed', 'unsigned' or 'float'. */
    readonly kind: ChannelKind,
  ) {
    const fn = 'ChannelFormatDescriptor';
    lookupName(KINDS, kind, fn, "parameter 'kind'");
    const bits = [x, y, z, w];
    bits.forEach((b, i) => {
      if (b !== 0 && b !== 8 && b !== 16 && b !== 32)
        throw new RangeError(`${fn}: parameter '${'xyzw'[i]}' must be 0, 8, 16 or 32 bits, got ${b}`);
    });
    const channels = bits.filter((b) => b !== 0).length;
    if (x === 0 || bits.slice(channels).some((b) => b !== 0))
      throw new RangeError(`${fn}: channels are used in order x, y, z, w with no gap, got ${bits.join(', ')}`);
    if (channels === 3) throw new RangeError(`${fn}: CUDA arrays and textures take 1, 2 or 4 channels, not 3`);
    if (bits.slice(0, channels).some((b) => b !== x))
      throw new RangeError(`${fn}: every channel must have the same width, got ${bits.join(', ')}`);
    if (kind === 'float' && x === 8) throw new RangeError(`${fn}: float channels are 16 or 32 bits, got 8`);
  }

  /** `channels` channels of `type`, e.g. `of('f32')` for float, `of('u8', 4)` for uchar4. */
  static of(type: ChannelType, channels: 1 | 2 | 4 = 1): ChannelFormatDescriptor {
    const t = lookupName(TYPES, type, 'ChannelFormatDescriptor.of', "parameter 'type'");
    if (channels !== 1 && channels !== 2 && channels !== 4)
      throw new RangeError(`ChannelFormatDescriptor.of: parameter 'channels' must be 1, 2 or 4, got ${describe(channels)}`);
    const [b, kind] = t;
    return new ChannelFormatDescriptor(b, channels > 1 ? b : 0, channels > 2 ? b : 0, channels > 2 ? b : 0, kind);
  }

  /** How many channels (1, 2 or 4). */
  get channels(): number {
    return [this.x, this.y, this.z, this.w].filter((b) => b !== 0).length;
  }

  /** Bytes per element (all channels). */
  get bytesPerElement(): number {
    return ((this.x + this.y + this.z + this.w) / 8) | 0;
  }

  /** The C struct (cudaChannelFormatDesc). */
  toStruct(): cudart.cudaChannelFormatDesc {
    return new cudart.cudaChannelFormatDesc({ x: this.x, y: this.y, z: this.z, w: this.w, f: KINDS[this.kind] });
  }
}
