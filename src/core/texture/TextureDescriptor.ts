// How a texture is sampled (CuPy's TextureDescriptor): address modes, filtering, read mode,
// normalised coordinates, border colour.
import * as cudart from '../../runtime';
import { checkOptions } from '../base/options';
import { describe, lookupName } from '../../ffi/checks';

/** What a coordinate outside the texture reads: wrap around, clamp to the edge, mirror, or the border colour. */
export type AddressMode = 'wrap' | 'clamp' | 'mirror' | 'border';

/** How a texture samples; every option is optional and the defaults read elements as stored, clamped. */
export interface TextureOptions {
  /** One mode for every dimension, or one each for x, y, z (default 'clamp'; wrap and mirror need normalizedCoords). */
  addressMode?: AddressMode | readonly AddressMode[];
  /** 'point' (nearest element, the default) or 'linear' (interpolated; float reads only). */
  filterMode?: 'point' | 'linear';
  /** 'element' (the stored type, the default) or 'normalizedFloat' (integers read as [0, 1] or [-1, 1]). */
  readMode?: 'element' | 'normalizedFloat';
  /** Coordinates in [0, 1) rather than [0, size) (default false). */
  normalizedCoords?: boolean;
  /** What 'border' reads, per channel (default zeros). */
  borderColor?: readonly [number, number, number, number];
  /** sRGB to linear conversion on reads. */
  sRGB?: boolean;
  /** Up to 16; default 0 (off). */
  maxAnisotropy?: number;
  /** Filtering across cubemap faces. */
  seamlessCubemap?: boolean;
}

const ADDRESS: Record<AddressMode, cudart.cudaTextureAddressMode> = {
  wrap: cudart.cudaTextureAddressMode.cudaAddressModeWrap,
  clamp: cudart.cudaTextureAddressMode.cudaAddressModeClamp,
  mirror: cudart.cudaTextureAddressMode.cudaAddressModeMirror,
  border: cudart.cudaTextureAddressMode.cudaAddressModeBorder,
};

/**
 * How a texture is sampled (CuPy's TextureDescriptor, cudaTextureDesc): address modes, filtering,
 * read mode, normalised coordinates, border colour. A checked value with nothing to close; pass it
 * (or its options) to {@link TextureObject.create}.
 *
 * @example
 * ```ts
 * const desc = new TextureDescriptor({ addressMode: 'wrap', filterMode: 'linear', normalizedCoords: true });
 * using tex = TextureObject.create(arr, desc);
 * ```
 */
export class TextureDescriptor {
  /** The options, checked and with their defaults filled in. */
  readonly options: Readonly<
    Required<Omit<TextureOptions, 'addressMode'>> & {
      /** The address mode of each dimension, x, y and z (a single mode given is repeated; missing ones are 'clamp'). */
      addressMode: readonly [AddressMode, AddressMode, AddressMode];
    }
  >;

  /** Checks `options` and fills in the defaults; throws TypeError or RangeError naming the bad option. */
  constructor(options: TextureOptions = {}) {
    const fn = 'TextureDescriptor';
    checkOptions(`new ${fn}`, options, {
      addressMode: true,
      filterMode: true,
      readMode: true,
      normalizedCoords: true,
      borderColor: true,
      sRGB: true,
      maxAnisotropy: true,
      seamlessCubemap: true,
    });
    const am = options.addressMode ?? 'clamp';
    const modes = (typeof am === 'string' ? [am, am, am] : [...am, 'clamp', 'clamp', 'clamp'].slice(0, 3)) as AddressMode[];
    if (typeof am !== 'string' && (!Array.isArray(am) || am.length < 1 || am.length > 3))
      throw new TypeError(`${fn}: option 'addressMode' must be a mode or an array of 1 to 3 modes`);
    modes.forEach((m, i) => lookupName(ADDRESS, m, fn, `option 'addressMode[${i}]'`));
    const normalizedCoords = options.normalizedCoords ?? false;
    if (!normalizedCoords && modes.some((m) => m === 'wrap' || m === 'mirror'))
      throw new RangeError(`${fn}: address modes 'wrap' and 'mirror' need normalizedCoords: true`);
    const filterMode = options.filterMode ?? 'point';
    if (filterMode !== 'point' && filterMode !== 'linear')
      throw new RangeError(`${fn}: option 'filterMode' must be 'point' or 'linear', got ${describe(filterMode)}`);
    const readMode = options.readMode ?? 'element';
    if (readMode !== 'element' && readMode !== 'normalizedFloat')
      throw new RangeError(`${fn}: option 'readMode' must be 'element' or 'normalizedFloat', got ${describe(readMode)}`);
    const borderColor = options.borderColor ?? [0, 0, 0, 0];
    if (!Array.isArray(borderColor) || borderColor.length !== 4 || borderColor.some((c) => typeof c !== 'number'))
      throw new TypeError(`${fn}: option 'borderColor' must be 4 numbers`);
    const maxAnisotropy = options.maxAnisotropy ?? 0;
    if (!Number.isInteger(maxAnisotropy) || maxAnisotropy < 0 || maxAnisotropy > 16)
      throw new RangeError(`${fn}: option 'maxAnisotropy' must be an integer within [0, 16], got ${maxAnisotropy}`);
    this.options = Object.freeze({
      addressMode: modes as unknown as readonly [AddressMode, AddressMode, AddressMode],
      filterMode,
      readMode,
      normalizedCoords,
      borderColor: [...borderColor] as [number, number, number, number],
      sRGB: options.sRGB ?? false,
      maxAnisotropy,
      seamlessCubemap: options.seamlessCubemap ?? false,
    });
  }

  /** The C struct (cudaTextureDesc). */
  toStruct(): cudart.cudaTextureDesc {
    const o = this.options;
    return new cudart.cudaTextureDesc({
      addressMode: o.addressMode.map((m) => ADDRESS[m]),
      filterMode:
        o.filterMode === 'linear' ? cudart.cudaTextureFilterMode.cudaFilterModeLinear : cudart.cudaTextureFilterMode.cudaFilterModePoint,
      readMode:
        o.readMode === 'normalizedFloat'
          ? cudart.cudaTextureReadMode.cudaReadModeNormalizedFloat
          : cudart.cudaTextureReadMode.cudaReadModeElementType,
      normalizedCoords: o.normalizedCoords ? 1 : 0,
      borderColor: [...o.borderColor],
      sRGB: o.sRGB ? 1 : 0,
      maxAnisotropy: o.maxAnisotropy,
      seamlessCubemap: o.seamlessCubemap ? 1 : 0,
    });
  }
}
