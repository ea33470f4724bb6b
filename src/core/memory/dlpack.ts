// DLPack 1.x in one process: a StridedView handed to native code as a DLManagedTensorVersioned
// (whose deleter, a koffi callback, lets the JS side go), and a tensor from native code taken over
// as a view (whose close, or collection, calls the producer's deleter once). Layout: dlpack.h, proven
// by g++ in test/cpu/core/core-dlpack.test.ts.
import koffi from 'koffi';
import { describe } from '../../ffi/checks';
import { holdAll, openOptionalArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { Device } from '../device/Device';
import type { Stream } from '../device/Stream';
import { DeviceBuffer } from './DeviceBuffer';
import { StridedView, checkLayout, extentOf } from './StridedView';
import { DTYPES, contiguousStrides, dtypeOfDlpack } from './dtype';

/** @internal Byte offsets and sizes of the DLPack 1.x structs (dlpack.h), checked against g++. */
export const DLPACK_LAYOUT = {
  DLPackVersion: { size: 8, fields: { major: 0, minor: 4 } },
  DLDevice: { size: 8, fields: { device_type: 0, device_id: 4 } },
  DLDataType: { size: 4, fields: { code: 0, bits: 1, lanes: 2 } },
  DLTensor: { size: 48, fields: { data: 0, device: 8, ndim: 16, dtype: 20, shape: 24, strides: 32, byte_offset: 40 } },
  DLManagedTensorVersioned: { size: 80, fields: { version: 0, manager_ctx: 8, deleter: 16, flags: 24, dl_tensor: 32 } },
} as const;

/** The version this package writes and reads (a tensor of another major version is refused). */
export const DLPACK_VERSION: {
  /** DLPACK_MAJOR_VERSION: a tensor of another major version is refused. */
  readonly major: 1;
  /** DLPACK_MINOR_VERSION. */
  readonly minor: 0;
} = { major: 1, minor: 0 };

const M = DLPACK_LAYOUT.DLManagedTensorVersioned.fields;
const T = DLPACK_LAYOUT.DLTensor.fields;
const TENSOR = M.dl_tensor;
/** DLDeviceType: the CUDA kinds a StridedView can be. */
const kDLCUDA = 2;
const kDLCUDAManaged = 13;
/** DLPACK_FLAG_BITMASK_READ_ONLY. */
const READ_ONLY = 1n;

/**
 * The deleter's C type: `void (*)(DLManagedTensorVersioned *self)`, the pointer taken as an integer.
 * Anonymous: koffi's names are process-wide, and this module may be loaded twice (jest's registries).
 */
const DELETER = koffi.proto('void', ['uint64_t']);

/** What an exported tensor keeps alive until its deleter is called: its bytes, its view, and the hold on the view's memory. */
interface Exported {
  block: Buffer;
  view: StridedView;
  letGo: () => void;
}

/** Tensors handed to native code whose deleter has not been called yet, by address. */
const exported = new Map<bigint, Exported>();
let deleterAddress: bigint | undefined;
let nextContext = 1n;

/** The one registered deleter of every exported tensor (koffi allows few callbacks, so one serves all). */
function deleter(): bigint {
  return (deleterAddress ??= koffi.register((self: bigint | number) => {
    const e = exported.get(BigInt(self));
    if (!e) return;
    exported.delete(BigInt(self));
    e.letGo();
  }, koffi.pointer(DELETER)) as bigint);
}

/** @internal How many exported tensors native code still holds (their deleters not called yet). */
export function heldDlpackTensors(): number {
  return exported.size;
}

/**
 * @internal The view as a DLManagedTensorVersioned (DLPack 1.0) for native code: returns its
 * address. `data` is element [0, …, 0]'s address (byte_offset 0), device kDLCUDA (kDLCUDAManaged
 * for managed memory), strides in elements, the read-only flag set for a read-only view. Until the
 * consumer calls the tensor's deleter (once), the view and its memory stay alive: closing them
 * frees nothing before then.
 */
export function exportDlpack(view: StridedView): bigint {
  const ndim = view.ndim;
  const block = Buffer.alloc(DLPACK_LAYOUT.DLManagedTensorVersioned.size + 16 * ndim);
  const self = koffi.address(block) as bigint;
  const shapeAt = DLPACK_LAYOUT.DLManagedTensorVersioned.size;
  const stridesAt = shapeAt + 8 * ndim;
  block.writeUInt32LE(DLPACK_VERSION.major, M.version);
  block.writeUInt32LE(DLPACK_VERSION.minor, M.version + 4);
  block.writeBigUInt64LE(nextContext++, M.manager_ctx);
  block.writeBigUInt64LE(deleter(), M.deleter);
  block.writeBigUInt64LE(view.readonly ? READ_ONLY : 0n, M.flags);
  block.writeBigUInt64LE(view.ptr, TENSOR + T.data);
  block.writeInt32LE(view.buffer.kind === 'managed' ? kDLCUDAManaged : kDLCUDA, TENSOR + T.device);
  block.writeInt32LE(view.device.ordinal, TENSOR + T.device + 4);
  block.writeInt32LE(ndim, TENSOR + T.ndim);
  const info = DTYPES[view.dtype];
  block.writeUInt8(info.dlCode, TENSOR + T.dtype);
  block.writeUInt8(info.bytes * 8, TENSOR + T.dtype + 1);
  block.writeUInt16LE(1, TENSOR + T.dtype + 2);
  block.writeBigUInt64LE(ndim ? self + BigInt(shapeAt) : 0n, TENSOR + T.shape);
  block.writeBigUInt64LE(ndim ? self + BigInt(stridesAt) : 0n, TENSOR + T.strides);
  block.writeBigUInt64LE(0n, TENSOR + T.byte_offset);
  view.shape.forEach((n, i) => block.writeBigInt64LE(BigInt(n), shapeAt + 8 * i));
  view.strides.forEach((s, i) => block.writeBigInt64LE(BigInt(s), stridesAt + 8 * i));
  exported.set(self, { block, view, letGo: holdAll([view]) });
  return self;
}

/** What {@link fromDlpack} takes besides the tensor. */
export interface FromDlpackOptions {
  /** The device the tensor must be on (refused, its deleter called, when it is on another). */
  device?: Device;
  /** The stream the data is valid on, for the view (DLPack itself carries none). */
  stream?: Stream;
}

/** Calls a tensor's deleter (a C function pointer), when it has one. */
function callDeleter(fnptr: bigint, self: bigint): void {
  if (fnptr !== 0n) koffi.call(fnptr, DELETER, self);
}

/** A 64-bit field as a safe integer; a RangeError naming `field` otherwise. */
function safe(v: bigint, field: string, fn: string): number {
  if (v < BigInt(Number.MIN_SAFE_INTEGER) || v > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`${fn}: field '${field}' (${v}) is too large for this package`);
  return Number(v);
}

/**
 * Takes over a DLPack 1.x tensor that native code produced (the address of its
 * DLManagedTensorVersioned, as a bigint or the integer koffi returns) and returns a {@link StridedView} of it. From then on the
 * view owns it: close() on the view (or the garbage collector, when the view and its buffer are
 * collected) calls the tensor's deleter exactly once. A tensor that is refused (another major
 * version, not CUDA memory, on another device than `options.device`, an unknown type, a bad shape)
 * has its deleter called too, before the TypeError or RangeError that names the field is thrown. A
 * tensor flagged read-only gives a read-only view.
 */
export function fromDlpack(tensor: bigint | number, options: FromDlpackOptions = {}): StridedView {
  const fn = 'fromDlpack';
  const t = typeof tensor === 'number' && Number.isSafeInteger(tensor) ? BigInt(tensor) : tensor;
  if (typeof t !== 'bigint' || t <= 0n || t >= 1n << 64n)
    throw new TypeError(
      `${fn}: parameter 'tensor' must be the address of a DLManagedTensorVersioned (a non-zero bigint or integer), got ${describe(tensor)}`,
    );
  return takeOwnership(t, options, fn);
}

/** fromDlpack once the address is checked: from here on the tensor is this package's to delete. */
function takeOwnership(tensor: bigint, options: FromDlpackOptions, fn: string): StridedView {
  const head = new DataView(koffi.view(tensor, DLPACK_LAYOUT.DLManagedTensorVersioned.size));
  const fnptr = head.getBigUint64(M.deleter, true);
  try {
    checkOptions(fn, options, { device: true, stream: true });
    if (options.device !== undefined && !(options.device instanceof Device))
      throw new TypeError(`${fn}: option 'device' must be a Device, got ${describe(options.device)}`);
    openOptionalArg(options.stream, 'Stream', fn, 'options.stream');
    return takeOver(tensor, head, fnptr, options, fn);
  } catch (e) {
    callDeleter(fnptr, tensor);
    throw e;
  }
}

/** fromDlpack's reading of the tensor, once the deleter is known: throws (and the caller deletes) when it is refused. */
function takeOver(tensor: bigint, head: DataView, fnptr: bigint, o: FromDlpackOptions, fn: string): StridedView {
  const major = head.getUint32(M.version, true);
  if (major !== DLPACK_VERSION.major)
    throw new RangeError(`${fn}: field 'version' is ${major}.${head.getUint32(M.version + 4, true)}; this package reads DLPack 1.x`);
  const deviceType = head.getInt32(TENSOR + T.device, true);
  if (deviceType !== kDLCUDA && deviceType !== kDLCUDAManaged)
    throw new RangeError(
      `${fn}: field 'dl_tensor.device.device_type' is ${deviceType}; a StridedView is CUDA memory (kDLCUDA ${kDLCUDA} or kDLCUDAManaged ${kDLCUDAManaged})`,
    );
  const deviceId = head.getInt32(TENSOR + T.device + 4, true);
  if (o.device !== undefined && o.device.ordinal !== deviceId)
    throw new RangeError(`${fn}: field 'dl_tensor.device.device_id' is ${deviceId}, but option 'device' is device ${o.device.ordinal}`);
  const device = o.device ?? Device.get(deviceId);
  const dtype = dtypeOfDlpack(
    head.getUint8(TENSOR + T.dtype),
    head.getUint8(TENSOR + T.dtype + 1),
    head.getUint16(TENSOR + T.dtype + 2, true),
    `${fn}: field 'dl_tensor.dtype'`,
  );
  const ndim = head.getInt32(TENSOR + T.ndim, true);
  if (ndim < 0 || ndim > 64) throw new RangeError(`${fn}: field 'dl_tensor.ndim' is ${ndim}; expected 0 to 64`);
  const readArray = (field: 'shape' | 'strides'): number[] | null => {
    const at = head.getBigUint64(TENSOR + T[field], true);
    if (at === 0n || ndim === 0) return null;
    const dv = new DataView(koffi.view(at, 8 * ndim));
    return Array.from({ length: ndim }, (_, i) => safe(dv.getBigInt64(8 * i, true), `dl_tensor.${field}[${i}]`, fn));
  };
  const shape = readArray('shape');
  if (shape === null && ndim > 0) throw new TypeError(`${fn}: field 'dl_tensor.shape' is NULL for a tensor of ${ndim} dimensions`);
  const dims = shape ?? [];
  const strides = readArray('strides') ?? contiguousStrides(dims);
  const item = DTYPES[dtype].bytes;
  const data = head.getBigUint64(TENSOR + T.data, true) + head.getBigUint64(TENSOR + T.byte_offset, true);
  const [low, high] = extentOf(dims, strides, item);
  const names = { shape: "field 'dl_tensor.shape'", strides: "field 'dl_tensor.strides'", offset: "field 'dl_tensor.byte_offset'" };
  checkLayout(fn, names, dims, strides, item, -low, high - low);
  if (data + BigInt(low) < 0n) throw new RangeError(`${fn}: field 'dl_tensor.strides' reach before address 0 from field 'dl_tensor.data'`);
  if (data === 0n && high > low) throw new RangeError(`${fn}: field 'dl_tensor.data' is NULL for a tensor with elements`);
  const readonly = (head.getBigUint64(M.flags, true) & READ_ONLY) !== 0n;
  const buffer = DeviceBuffer.fromAllocation(data + BigInt(low), high - low, device, 'foreign', () => callDeleter(fnptr, tensor), [device]);
  return StridedView.owning(buffer, dtype, dims, strides, -low, readonly, o.stream ?? null);
}
