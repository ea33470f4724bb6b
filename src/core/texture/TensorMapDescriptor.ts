// A TMA descriptor (cuda.core 1.2's TensorMapDescriptor; cuTensorMapEncodeTiled / Im2col): the
// 128 bytes a Hopper kernel's bulk tensor copies read, describing a tensor in a DeviceBuffer and the
// box (tile) each copy moves. Passed by value as a `__grid_constant__ const CUtensorMap` parameter.
import * as cuda from '../../driver';
import { driverError } from '../base/errors';
import { holdAll, holdOpen } from '../base/lifetime';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { describe, lookupName } from '../../ffi/checks';
import { checkOptions, type OptionKeys } from '../base/options';

/** Element types of a tensor map. */
export type TensorMapDataType =
  'u8' | 'u16' | 'u32' | 'i32' | 'u64' | 'i64' | 'f16' | 'f32' | 'f64' | 'bf16' | 'f32ftz' | 'tf32' | 'tf32ftz';

/** What every tensor map takes. Shapes, strides and boxes are given outermost first (row-major, as NumPy writes them). */
export interface TensorMapCommonOptions {
  /** The element type of the tensor in memory. */
  dataType: TensorMapDataType;
  /** Elements per dimension, outermost first (rank 1 to 5; 3 to 5 for im2col). */
  shape: readonly number[];
  /** Bytes between consecutive elements of each dimension, outermost first; the innermost must be the element size (default: packed). */
  strides?: readonly number[];
  /** Step between elements read per dimension, 1 to 8 (default all 1). */
  elementStrides?: readonly number[];
  /** 'none' (default), '16B' or '32B'. */
  interleave?: 'none' | '16B' | '32B';
  /** How shared memory rows are swizzled: 'none' (default), '32B', '64B' or '128B'. */
  swizzle?: 'none' | '32B' | '64B' | '128B';
  /** L2 promotion: 'none' (default), '64B', '128B' or '256B'. */
  l2Promotion?: 'none' | '64B' | '128B' | '256B';
  /** What out-of-bounds float elements read: 'zero' (default) or 'nan'. */
  oobFill?: 'zero' | 'nan';
}

/** A tiled tensor map: each copy moves one `box` of the tensor. */
export interface TiledTensorMapOptions extends TensorMapCommonOptions {
  /** Elements per dimension of the box a copy moves, outermost first (each 1 to 256). */
  box: readonly number[];
}

/** An im2col tensor map (convolutions): rank 3 to 5, NHWC-like, the pixel box given by its corners. */
export interface Im2colTensorMapOptions extends TensorMapCommonOptions {
  /** Lower corner of the pixel box in the spatial dimensions (rank − 2 values, outermost first). */
  pixelBoxLowerCorner: readonly number[];
  /** Upper corner of the pixel box (rank − 2 values, outermost first). */
  pixelBoxUpperCorner: readonly number[];
  /** Channels (innermost-dimension elements) each load reads per pixel. */
  channelsPerPixel: number;
  /** Pixels each load reads per column. */
  pixelsPerColumn: number;
}

const COMMON_KEYS: OptionKeys<TensorMapCommonOptions> = {
  dataType: true,
  shape: true,
  strides: true,
  elementStrides: true,
  interleave: true,
  swizzle: true,
  l2Promotion: true,
  oobFill: true,
};
const TILED_OPTIONS: OptionKeys<TiledTensorMapOptions> = { ...COMMON_KEYS, box: true };
const IM2COL_OPTIONS: OptionKeys<Im2colTensorMapOptions> = {
  ...COMMON_KEYS,
  pixelBoxLowerCorner: true,
  pixelBoxUpperCorner: true,
  channelsPerPixel: true,
  pixelsPerColumn: true,
};

const T = cuda.CUtensorMapDataType;
const DATA_TYPES: Record<TensorMapDataType, [number, number]> = {
  u8: [T.CU_TENSOR_MAP_DATA_TYPE_UINT8, 1],
  u16: [T.CU_TENSOR_MAP_DATA_TYPE_UINT16, 2],
  u32: [T.CU_TENSOR_MAP_DATA_TYPE_UINT32, 4],
  i32: [T.CU_TENSOR_MAP_DATA_TYPE_INT32, 4],
  u64: [T.CU_TENSOR_MAP_DATA_TYPE_UINT64, 8],
  i64: [T.CU_TENSOR_MAP_DATA_TYPE_INT64, 8],
  f16: [T.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2],
  f32: [T.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4],
  f64: [T.CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8],
  bf16: [T.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2],
  f32ftz: [T.CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, 4],
  tf32: [T.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 4],
  tf32ftz: [T.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, 4],
};
const INTERLEAVE = { none: 0, '16B': 1, '32B': 2 } as const;
const SWIZZLE = { none: 0, '32B': 1, '64B': 2, '128B': 3 } as const;
const SWIZZLE_SPAN = { none: Infinity, '32B': 32, '64B': 64, '128B': 128 } as const;
const L2 = { none: 0, '64B': 1, '128B': 2, '256B': 3 } as const;
const OOB = { zero: 0, nan: 1 } as const;

function pick<K extends string, V>(table: Record<K, V>, v: unknown, p: string, fn: string, dflt: K): V {
  return lookupName<K, V>(table, v ?? dflt, fn, `option '${p}'`);
}

function ints(v: unknown, p: string, fn: string, length: number, min: number, max: number): number[] {
  if (!Array.isArray(v) || v.length !== length)
    throw new TypeError(
      `${fn}: option '${p}' must be an array of ${length} integers, got ${describe(v)}${Array.isArray(v) ? ` of ${v.length}` : ''}`,
    );
  v.forEach((x, i) => {
    if (!Number.isSafeInteger(x) || x < min || x > max)
      throw new RangeError(`${fn}: option '${p}[${i}]' must be an integer within [${min}, ${max}], got ${describe(x)}`);
  });
  return v as number[];
}

interface Common {
  type: number;
  rank: number;
  dims: BigUint64Array;
  strides: BigUint64Array;
  elementStrides: Uint32Array;
  interleave: number;
  swizzle: number;
  l2: number;
  oob: number;
  elementSize: number;
}

function common(buffer: DeviceBuffer, o: TensorMapCommonOptions, fn: string, minRank: number): Common {
  if (!(buffer instanceof DeviceBuffer)) throw new TypeError(`${fn}: parameter 'buffer' must be a DeviceBuffer, got ${describe(buffer)}`);
  if (buffer.isClosed) throw new Error(`${fn}: parameter 'buffer' is a DeviceBuffer that was closed`);
  if (o === null || typeof o !== 'object') throw new TypeError(`${fn}: parameter 'options' must be an object, got ${describe(o)}`);
  const [type, elementSize] = lookupName(DATA_TYPES, o.dataType, fn, "option 'dataType'");
  if (!Array.isArray(o.shape) || o.shape.length < minRank || o.shape.length > 5)
    throw new RangeError(
      `${fn}: option 'shape' must have ${minRank} to 5 dimensions, got ${describe(o.shape)}${Array.isArray(o.shape) ? ` of ${o.shape.length}` : ''}`,
    );
  const rank = o.shape.length;
  const shape = ints(o.shape, 'shape', fn, rank, 1, 2 ** 32);
  const interleaveKey = (o.interleave ?? 'none') as keyof typeof INTERLEAVE;
  const interleave = pick(INTERLEAVE, o.interleave, 'interleave', fn, 'none');
  const align = interleaveKey === '32B' ? 32 : 16;
  if (buffer.ptr % BigInt(align) !== 0n) throw new RangeError(`${fn}: the buffer's address must be ${align}-byte aligned for TMA`);
  // Packed strides by default: each dimension's stride is the product of the inner ones.
  const packed: number[] = new Array(rank);
  packed[rank - 1] = elementSize;
  for (let i = rank - 2; i >= 0; i--) packed[i] = packed[i + 1] * shape[i + 1];
  const strides = o.strides === undefined ? packed : ints(o.strides, 'strides', fn, rank, 1, 2 ** 40 - 1);
  if (strides[rank - 1] !== elementSize)
    throw new RangeError(
      `${fn}: option 'strides' must end with the element size (${elementSize} bytes for ${o.dataType}), got ${strides[rank - 1]}`,
    );
  for (let i = 0; i < rank - 1; i++)
    if (strides[i] % align !== 0)
      throw new RangeError(`${fn}: option 'strides[${i}]' (${strides[i]} bytes) must be a multiple of ${align}`);
  // The last element's offset plus its size.
  let extent = elementSize;
  for (let i = 0; i < rank; i++) extent += (shape[i] - 1) * strides[i];
  if (extent > buffer.size) throw new RangeError(`${fn}: the tensor spans ${extent} bytes, more than the buffer's ${buffer.size}`);
  const elementStrides =
    o.elementStrides === undefined ? new Array(rank).fill(1) : ints(o.elementStrides, 'elementStrides', fn, rank, 1, 8);
  // C takes every array innermost first, and no stride for the innermost dimension.
  return {
    type,
    rank,
    elementSize,
    interleave,
    dims: BigUint64Array.from(shape.slice().reverse(), BigInt),
    strides: BigUint64Array.from(strides.slice(0, rank - 1).reverse(), BigInt),
    elementStrides: Uint32Array.from(elementStrides.slice().reverse()),
    swizzle: pick(SWIZZLE, o.swizzle, 'swizzle', fn, 'none'),
    l2: pick(L2, o.l2Promotion, 'l2Promotion', fn, 'none'),
    oob: pick(OOB, o.oobFill, 'oobFill', fn, 'zero'),
  };
}

/**
 * A TMA tensor map (CUtensorMap, made by cuTensorMapEncodeTiled / Im2col): the description of a tensor
 * in device memory that Hopper and later GPUs copy tiles of into shared memory. Pass it as a kernel
 * argument (a 128-byte `const __grid_constant__ CUtensorMap` parameter).
 *
 * Only 128 bytes of host memory (nothing to close), holding its buffer's address: it keeps the buffer
 * alive, and is treated as that buffer wherever it is used. A launch refuses it once the buffer is
 * closed; a graph's kernel node given it (builder.kernel, node.setParams, exec.setKernelParams) is
 * checked and held as one given the DeviceBuffer: `instantiate()` refuses it once the buffer was
 * closed, and a GraphExec holds the buffer open, freeing it only when the GraphExec is closed. Bad
 * shapes, strides or boxes throw RangeError naming the option; the driver's refusal throws
 * {@link CudaError}.
 *
 * @example
 * ```ts
 * const map = TensorMapDescriptor.tiled(buf, { dataType: 'f16', shape: [1024, 1024], box: [64, 64] });
 * kernel.launch({ grid: 256, block: 128 }, map);
 * ```
 */
export class TensorMapDescriptor {
  /** Laid out as a 128-byte, 64-aligned struct when passed to a kernel by value. */
  static readonly layout = {
    /** Bytes: the size of a CUtensorMap. */
    size: 128,
    /** Bytes: the alignment a CUtensorMap needs. */
    align: 64,
  };

  /** @internal Use TensorMapDescriptor.tiled() or .im2col(). */
  constructor(
    /** @internal The 128 bytes of the CUtensorMap (`bytes` for users). */
    readonly _u8: Uint8Array,
    /** The memory it describes (kept alive by the descriptor). */
    readonly buffer: DeviceBuffer,
    /** How it was encoded: 'tiled' (boxes of the tensor) or 'im2col' (convolution patches). */
    readonly mode: 'tiled' | 'im2col',
  ) {}

  /** Whether the buffer it describes was closed (a kernel must not be given it then). */
  get isClosed(): boolean {
    return this.buffer.isClosed;
  }

  /**
   * @internal See holdOpen in lifetime.ts: the map is its buffer's address, so work that C runs
   * later with it (a GraphExec's kernel node) holds the buffer open, and what the buffer needs in
   * turn (a slice's allocation, a pool buffer's pool).
   */
  [holdOpen](): () => void {
    return holdAll([this.buffer]);
  }

  /** The descriptor's bytes. */
  get bytes(): Uint8Array {
    return this._u8;
  }

  /** The descriptor's bytes, as a struct's getBytes(): what a kernel launch passes by value. */
  getBytes(): Uint8Array {
    return this._u8;
  }

  /** A tiled map of the tensor in `buffer` (cuTensorMapEncodeTiled). */
  static tiled(buffer: DeviceBuffer, options: TiledTensorMapOptions): TensorMapDescriptor {
    const fn = 'TensorMapDescriptor.tiled';
    if (buffer instanceof DeviceBuffer) checkOptions(fn, options, TILED_OPTIONS);
    const c = common(buffer, options, fn, 1);
    const box = ints(options.box, 'box', fn, c.rank, 1, 256);
    const inner = box[c.rank - 1] * c.elementSize;
    if (c.interleave === 0 && inner % 16 !== 0)
      throw new RangeError(
        `${fn}: the box's innermost dimension must be a multiple of 16 bytes, got ${box[c.rank - 1]} elements of ${c.elementSize} bytes`,
      );
    const span = SWIZZLE_SPAN[(options.swizzle ?? 'none') as keyof typeof SWIZZLE_SPAN];
    if (c.interleave === 0 && inner > span)
      throw new RangeError(
        `${fn}: with swizzle '${options.swizzle}', the box's innermost dimension may span at most ${span} bytes, got ${inner}`,
      );
    const r = cuda.cuTensorMapEncodeTiled(
      c.type,
      c.rank,
      buffer.ptr,
      c.dims,
      c.strides,
      Uint32Array.from(box.slice().reverse()),
      c.elementStrides,
      c.interleave,
      c.swizzle,
      c.l2,
      c.oob,
    );
    if (r[0] !== 0 || r[1] === null) throw driverError(r[0], `${fn} (cuTensorMapEncodeTiled)`);
    return new TensorMapDescriptor(new Uint8Array(r[1]._u8), buffer, 'tiled');
  }

  /** An im2col map of the tensor in `buffer` (cuTensorMapEncodeIm2col), for convolution kernels. */
  static im2col(buffer: DeviceBuffer, options: Im2colTensorMapOptions): TensorMapDescriptor {
    const fn = 'TensorMapDescriptor.im2col';
    if (buffer instanceof DeviceBuffer) checkOptions(fn, options, IM2COL_OPTIONS);
    const c = common(buffer, options, fn, 3);
    const spatial = c.rank - 2;
    const lower = ints(options.pixelBoxLowerCorner, 'pixelBoxLowerCorner', fn, spatial, -(2 ** 15), 2 ** 15 - 1);
    const upper = ints(options.pixelBoxUpperCorner, 'pixelBoxUpperCorner', fn, spatial, -(2 ** 15), 2 ** 15 - 1);
    if (!Number.isInteger(options.channelsPerPixel) || options.channelsPerPixel < 1 || options.channelsPerPixel > 256)
      throw new RangeError(
        `${fn}: option 'channelsPerPixel' must be an integer within [1, 256], got ${describe(options.channelsPerPixel)}`,
      );
    if (!Number.isInteger(options.pixelsPerColumn) || options.pixelsPerColumn < 1 || options.pixelsPerColumn > 1024)
      throw new RangeError(`${fn}: option 'pixelsPerColumn' must be an integer within [1, 1024], got ${describe(options.pixelsPerColumn)}`);
    const r = cuda.cuTensorMapEncodeIm2col(
      c.type,
      c.rank,
      buffer.ptr,
      c.dims,
      c.strides,
      Int32Array.from(lower.slice().reverse()),
      Int32Array.from(upper.slice().reverse()),
      options.channelsPerPixel,
      options.pixelsPerColumn,
      c.elementStrides,
      c.interleave,
      c.swizzle,
      c.l2,
      c.oob,
    );
    if (r[0] !== 0 || r[1] === null) throw driverError(r[0], `${fn} (cuTensorMapEncodeIm2col)`);
    return new TensorMapDescriptor(new Uint8Array(r[1]._u8), buffer, 'im2col');
  }
}
