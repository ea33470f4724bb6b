// `__cuda_array_interface__` version 3 (Numba's, read by CuPy, PyTorch, JAX, cuda.core): the plain
// object that says where an array's elements are. Here it is built from a view and read back, with
// every field checked, since a descriptor may come from another process as JSON.
import { describe } from '../../ffi/checks';
import { DTYPES, contiguousStrides, dtypeOfTypestr, type Dtype } from './dtype';

/**
 * A `__cuda_array_interface__` (version 3) as a plain object, JSON-safe: what a Python peer turns
 * into an array with `cupy.asarray(Obj(d))` or `torch.as_tensor(Obj(d), device='cuda')`, given an
 * object whose `__cuda_array_interface__` is `d` (with `data[0]` an address valid in its process).
 */
export interface CudaArrayInterface {
  /** Elements along each dimension. */
  shape: number[];
  /** The element type in NumPy's notation: `'<f4'`, `'|u1'`, `'<i8'`, … */
  typestr: string;
  /** The device address of element [0, …, 0] and whether the memory is read-only. */
  data: [number, boolean];
  /** The protocol's version: 3. */
  version: 3;
  /** Bytes between neighbours along each dimension, or null when the array is row-major and packed. */
  strides: number[] | null;
  /** The stream the data is valid on (1: the legacy default stream, 2: per-thread), or null when the consumer need not synchronise. */
  stream: number | null;
}

/** @internal A checked descriptor, with strides in elements. */
export interface ParsedArrayInterface {
  /** The address of element [0, …, 0]. */
  address: bigint;
  dtype: Dtype;
  shape: number[];
  /** In elements (the descriptor's bytes divided by the item size); row-major when it had none. */
  strides: number[];
  readonly: boolean;
  /** The stream's handle, or null when none was named. */
  stream: bigint | null;
}

/** @internal The descriptor of an array of `dtype` at `address`; `stream` is the handle it is valid on (0n, the legacy stream, becomes 1). */
export function describeArray(
  fn: string,
  address: bigint,
  dtype: Dtype,
  shape: readonly number[],
  strides: readonly number[],
  contiguous: boolean,
  readonly: boolean,
  stream: bigint | null,
): CudaArrayInterface {
  const info = DTYPES[dtype];
  if (info.typestr === null)
    throw new TypeError(`${fn}: ${dtype} has no typestr in the array interface (NumPy has no ${dtype}); share it through DLPack`);
  if (address > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`${fn}: the address 0x${address.toString(16)} does not fit a JSON number (more than 2^53)`);
  return {
    shape: [...shape],
    typestr: info.typestr,
    data: [Number(address), readonly],
    version: 3,
    strides: contiguous ? null : strides.map((s) => s * info.bytes),
    stream: stream === null ? null : stream === 0n ? 1 : Number(stream),
  };
}

/** An address, a stream or a byte count from a descriptor: a safe integer or a bigint. */
function integer(v: unknown): bigint | null {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return null;
}

/**
 * @internal Checks `desc` as a `__cuda_array_interface__` (versions 2 and 3): a TypeError or
 * RangeError naming `fn` and the field for a missing or malformed field, an unknown typestr,
 * strides that are not whole elements, a mask, or stream 0 (which the protocol forbids).
 */
export function parseArrayInterface(desc: unknown, fn: string): ParsedArrayInterface {
  if (desc === null || typeof desc !== 'object' || Array.isArray(desc))
    throw new TypeError(`${fn}: parameter 'descriptor' must be a __cuda_array_interface__ object, got ${describe(desc)}`);
  const d = desc as Record<string, unknown>;
  if (d.version !== 2 && d.version !== 3) throw new RangeError(`${fn}: field 'version' must be 3 (or 2), got ${describe(d.version)}`);
  const dtype = dtypeOfTypestr(d.typestr, `${fn}: field 'typestr'`);
  const item = DTYPES[dtype].bytes;
  if (!Array.isArray(d.shape) || !d.shape.every((n) => Number.isSafeInteger(n) && n >= 0))
    throw new TypeError(`${fn}: field 'shape' must be an array of non-negative integers, got ${describe(d.shape)}`);
  const shape = d.shape as number[];
  if (!Array.isArray(d.data) || d.data.length !== 2 || typeof d.data[1] !== 'boolean')
    throw new TypeError(`${fn}: field 'data' must be [address, readonly] (an integer and a boolean), got ${describe(d.data)}`);
  const address = integer(d.data[0]);
  if (address === null || address < 0n)
    throw new TypeError(`${fn}: field 'data' must start with a device address (a non-negative integer), got ${describe(d.data[0])}`);
  if (address === 0n && !shape.includes(0))
    throw new RangeError(`${fn}: field 'data' has address 0 (null) for an array of ${shape.reduce((a, b) => a * b, 1)} elements`);
  let strides: number[];
  if (d.strides === undefined || d.strides === null) strides = contiguousStrides(shape);
  else {
    if (!Array.isArray(d.strides) || d.strides.length !== shape.length || !d.strides.every((s) => Number.isSafeInteger(s)))
      throw new TypeError(
        `${fn}: field 'strides' must be null or ${shape.length} integers (bytes, one per dimension), got ${describe(d.strides)}`,
      );
    const bad = (d.strides as number[]).find((s) => s % item !== 0);
    if (bad !== undefined)
      throw new RangeError(`${fn}: field 'strides' has ${bad} bytes, not a whole number of ${item}-byte ${dtype} elements`);
    strides = (d.strides as number[]).map((s) => s / item);
  }
  if (d.mask !== undefined && d.mask !== null) throw new TypeError(`${fn}: field 'mask' is set; masked arrays are not supported`);
  let stream: bigint | null = null;
  if (d.stream !== undefined && d.stream !== null) {
    stream = integer(d.stream);
    if (stream === null || stream < 0n)
      throw new TypeError(`${fn}: field 'stream' must be null or a stream handle (a positive integer), got ${describe(d.stream)}`);
    if (stream === 0n) throw new RangeError(`${fn}: field 'stream' is 0, which the protocol forbids (1 is the legacy default stream)`);
  }
  return { address, dtype, shape: [...shape], strides, readonly: d.data[1], stream };
}
