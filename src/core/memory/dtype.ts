// The element types a StridedView knows, and each one's names in the formats it crosses to:
// `__cuda_array_interface__`'s typestr (NumPy's), DLPack's (code, bits), and the TypedArray that
// holds its elements on the host.
import { describe, isOwnName } from '../../ffi/checks';

/** An element type of a {@link StridedView}: `f16` and `bf16` elements travel as their 16 bits (Uint16Array on the host). */
export type Dtype = 'bool' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f16' | 'bf16' | 'f32' | 'f64';

/** The host arrays a view's elements are copied into and from. */
export type ElementArray =
  | Uint8Array
  | Int8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

/** The TypedArray class of each dtype's host elements. */
type ElementArrayClass = { new (length: number): ElementArray; readonly BYTES_PER_ELEMENT: number };

/** @internal What each format calls a dtype. */
export interface DtypeInfo {
  /** Bytes per element. */
  readonly bytes: number;
  /** NumPy's typestr (little-endian), or null where NumPy has none (bf16). */
  readonly typestr: string | null;
  /** DLPack's DLDataTypeCode. */
  readonly dlCode: number;
  /** The host array of its elements. */
  readonly array: ElementArrayClass;
}

/** DLPack's type codes (dlpack.h, DLDataTypeCode). */
export const DL_CODE = { int: 0, uint: 1, float: 2, bfloat: 4, bool: 6 } as const;

/** @internal Every dtype's names. */
export const DTYPES: Readonly<Record<Dtype, DtypeInfo>> = {
  bool: { bytes: 1, typestr: '|b1', dlCode: DL_CODE.bool, array: Uint8Array },
  i8: { bytes: 1, typestr: '|i1', dlCode: DL_CODE.int, array: Int8Array },
  u8: { bytes: 1, typestr: '|u1', dlCode: DL_CODE.uint, array: Uint8Array },
  i16: { bytes: 2, typestr: '<i2', dlCode: DL_CODE.int, array: Int16Array },
  u16: { bytes: 2, typestr: '<u2', dlCode: DL_CODE.uint, array: Uint16Array },
  i32: { bytes: 4, typestr: '<i4', dlCode: DL_CODE.int, array: Int32Array },
  u32: { bytes: 4, typestr: '<u4', dlCode: DL_CODE.uint, array: Uint32Array },
  i64: { bytes: 8, typestr: '<i8', dlCode: DL_CODE.int, array: BigInt64Array },
  u64: { bytes: 8, typestr: '<u8', dlCode: DL_CODE.uint, array: BigUint64Array },
  f16: { bytes: 2, typestr: '<f2', dlCode: DL_CODE.float, array: Uint16Array },
  bf16: { bytes: 2, typestr: null, dlCode: DL_CODE.bfloat, array: Uint16Array },
  f32: { bytes: 4, typestr: '<f4', dlCode: DL_CODE.float, array: Float32Array },
  f64: { bytes: 8, typestr: '<f8', dlCode: DL_CODE.float, array: Float64Array },
};

/** @internal `v` as a Dtype; a TypeError naming `where` and listing the dtypes otherwise. */
export function checkDtype(v: unknown, where: string): Dtype {
  if (typeof v === 'string' && isOwnName(DTYPES, v)) return v as Dtype;
  throw new TypeError(`${where} must be one of ${Object.keys(DTYPES).join(', ')}, got ${describe(v)}`);
}

/** @internal The dtype of a typestr (`'<f4'`, `'|u1'`, …); a TypeError naming `where` for one this package does not know. */
export function dtypeOfTypestr(typestr: unknown, where: string): Dtype {
  if (typeof typestr === 'string') {
    // '=' is native order, '<' little-endian: the same on every machine CUDA runs on.
    const normal = typestr.length === 3 && typestr[0] === '=' ? (typestr[2] === '1' ? '|' : '<') + typestr.slice(1) : typestr;
    const oneByte = normal.length === 3 && normal[0] === '<' && normal[2] === '1' ? '|' + normal.slice(1) : normal;
    for (const [name, info] of Object.entries(DTYPES)) if (info.typestr === oneByte) return name as Dtype;
    if (typestr.startsWith('>') && typestr.length === 3 && typestr[2] !== '1')
      throw new TypeError(`${where} is big-endian (${typestr}); device memory is little-endian`);
  }
  const known = Object.values(DTYPES)
    .map((d) => d.typestr)
    .filter((t) => t !== null)
    .join(', ');
  throw new TypeError(`${where} must be a typestr this package knows (${known}), got ${describe(typestr)}`);
}

/** @internal The dtype of DLPack's (code, bits, lanes); a TypeError naming `where` for one this package does not know. */
export function dtypeOfDlpack(code: number, bits: number, lanes: number, where: string): Dtype {
  if (lanes === 1)
    for (const [name, info] of Object.entries(DTYPES)) if (info.dlCode === code && info.bytes * 8 === bits) return name as Dtype;
  throw new TypeError(`${where} is a DLPack type this package does not know (code ${code}, bits ${bits}, lanes ${lanes})`);
}

/** Row-major strides, in elements, of `shape`. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let n = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = n;
    n *= shape[i];
  }
  return strides;
}
