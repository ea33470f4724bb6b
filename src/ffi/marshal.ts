// Argument checks and conversions shared by every generated binding. Each check throws a TypeError
// or RangeError that names the function and the parameter, before anything reaches C.
import koffi from 'koffi';
import { markAsUntransferable } from 'node:worker_threads';

/** Memory on the host that can be passed where C takes a pointer, without a copy. */
export type HostMemory = ArrayBufferView | ArrayBuffer;
/** A C pointer argument: a device or host address, host memory, or null for NULL. */
export type Pointer = bigint | HostMemory | null;
/**
 * A device address: a bigint such as cudaMalloc returns, or arithmetic on one. A handle (a
 * branded bigint: a stream, an event) does not pass, nor does host memory.
 */
export type DevicePointer = bigint & { readonly __brand?: undefined };
/** Memory a copy reads or writes: a device or host address, or host memory; never a handle. */
export type Memory = DevicePointer | HostMemory | null;

const U64_LIMIT = 2n ** 64n;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 20 ? v.slice(0, 20) + '…' : v)}`;
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return 'an array';
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name}`;
  if (typeof v === 'object') return `an object (${(v as object).constructor?.name ?? 'Object'})`;
  return `a ${typeof v}`;
}

export function typeError(fn: string, param: string, want: string, got: unknown): never {
  throw new TypeError(`${fn}: parameter '${param}' must be ${want}, got ${describe(got)}`);
}

export function rangeError(fn: string, param: string, msg: string): never {
  throw new RangeError(`${fn}: parameter '${param}' ${msg}`);
}

/** A 32-bit signed integer (int, enum). */
export function i32(v: unknown, fn: string, p: string): number {
  if (typeof v === 'number' && (v | 0) === v) return v;
  return intFail(v, fn, p, -(2 ** 31), 2 ** 31 - 1, 'a 32-bit integer');
}

/** A 32-bit unsigned integer (unsigned int, flags). */
export function u32(v: unknown, fn: string, p: string): number {
  if (typeof v === 'number' && v >>> 0 === v) return v;
  return intFail(v, fn, p, 0, 2 ** 32 - 1, 'an unsigned 32-bit integer');
}

/** A small integer of `bits` bits (char, short). */
export function intN(v: unknown, fn: string, p: string, bits: number, signed: boolean): number {
  const lo = signed ? -(2 ** (bits - 1)) : 0;
  const hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
  if (typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi) return v;
  return intFail(v, fn, p, lo, hi, `a ${signed ? '' : 'unsigned '}${bits}-bit integer`);
}

function intFail(v: unknown, fn: string, p: string, lo: number, hi: number, want: string): never {
  if (typeof v !== 'number') typeError(fn, p, want, v);
  if (!Number.isInteger(v)) rangeError(fn, p, `must be an integer, got ${v}`);
  rangeError(fn, p, `must be within [${lo}, ${hi}], got ${v}`);
}

/** A size or count (size_t): a non-negative safe integer, as a number or a bigint (as cuda-python takes any int). */
export function size(v: unknown, fn: string, p: string): number {
  if (typeof v === 'number' && v >= 0 && Number.isSafeInteger(v)) return v;
  if (typeof v === 'bigint') {
    if (v >= 0n && v <= MAX_SAFE) return Number(v);
    rangeError(fn, p, `must be a non-negative safe integer (at most 2^53 - 1), got ${v}n`);
  }
  if (typeof v !== 'number') typeError(fn, p, 'a non-negative integer (size)', v);
  if (!Number.isInteger(v)) rangeError(fn, p, `must be an integer, got ${v}`);
  rangeError(fn, p, `must be a non-negative safe integer, got ${v}`);
}

/** A 64-bit unsigned integer: a bigint, or a number that is a non-negative safe integer. */
export function u64(v: unknown, fn: string, p: string): bigint | number {
  if (typeof v === 'bigint') {
    if (v >= 0n && v < U64_LIMIT) return v;
    rangeError(fn, p, `must be within [0, 2^64), got ${v}n`);
  }
  if (typeof v === 'number') {
    if (v >= 0 && Number.isSafeInteger(v)) return v;
    if (!Number.isInteger(v)) rangeError(fn, p, `must be an integer, got ${v}`);
    rangeError(fn, p, `must be a non-negative safe integer or a bigint, got ${v}`);
  }
  typeError(fn, p, 'a bigint or a non-negative integer', v);
}

/** A 64-bit signed integer: a bigint, or a number that is a safe integer. */
export function i64(v: unknown, fn: string, p: string): bigint | number {
  if (typeof v === 'bigint') {
    if (v >= I64_MIN && v <= I64_MAX) return v;
    rangeError(fn, p, `must be within [-2^63, 2^63), got ${v}n`);
  }
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return v;
    if (!Number.isInteger(v)) rangeError(fn, p, `must be an integer, got ${v}`);
    rangeError(fn, p, `must be a safe integer or a bigint, got ${v}`);
  }
  typeError(fn, p, 'a bigint or an integer', v);
}

/** A float or double. */
export function f64(v: unknown, fn: string, p: string): number {
  if (typeof v === 'number') return v;
  typeError(fn, p, 'a number', v);
}

/** A C bool (int-sized flags use i32). */
export function bool(v: unknown, fn: string, p: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 0 || v === 1) return v === 1;
  typeError(fn, p, 'a boolean', v);
}

/** A handle or address held as a bigint; null stands for NULL. */
export function handle(v: unknown, fn: string, p: string): bigint | null {
  if (typeof v === 'bigint') {
    if (v >= 0n && v < U64_LIMIT) return v;
    rangeError(fn, p, `must be within [0, 2^64), got ${v}n`);
  }
  if (v === null) return null;
  return typeError(fn, p, 'a handle (bigint) or null', v);
}

// koffi passes host memory whose ArrayBuffer is empty as NULL, which C reads as "no buffer"
// (nvJitLinkGetErrorLog of an empty log returned NVJITLINK_ERROR_NULL_INPUT). An empty view into a
// real ArrayBuffer has a valid address and is still empty for every extent check.
const EMPTY = new Uint8Array(new ArrayBuffer(8), 0, 0);

/** Host memory as C should get it: empty memory as an empty view with a valid address (see EMPTY). */
export function nonEmpty(v: HostMemory): HostMemory {
  return v.byteLength === 0 ? EMPTY : v;
}

/** A pointer: an address (bigint), host memory (Buffer, TypedArray, DataView, ArrayBuffer) or null. */
export function pointer(v: unknown, fn: string, p: string): Pointer {
  if (typeof v === 'bigint') {
    if (v >= 0n && v < U64_LIMIT) return v;
    rangeError(fn, p, `must be an address within [0, 2^64), got ${v}n`);
  }
  if (v === null) return v;
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return nonEmpty(v);
  if (typeof v === 'number') {
    typeError(fn, p, 'an address as a bigint (a plain number is never taken as a pointer), host memory or null', v);
  }
  return typeError(fn, p, 'an address (bigint), a Buffer, TypedArray, DataView, ArrayBuffer or null', v);
}

/** Throws when host memory passed as `p` holds fewer than `need` bytes. */
export function checkExtent(v: Pointer, need: number, fn: string, p: string, what: string): void {
  if (v === null || typeof v === 'bigint') return;
  if (v.byteLength < need) {
    rangeError(fn, p, `holds ${v.byteLength} bytes but ${what} needs ${need}`);
  }
}

/** Bytes a pitched 2D region spans: pitch * (height - 1) + width. */
export function span2D(pitch: number, width: number, height: number): number {
  return height === 0 || width === 0 ? 0 : pitch * (height - 1) + width;
}

/** A C string argument. */
export function str(v: unknown, fn: string, p: string): string {
  if (typeof v === 'string') {
    if (v.includes('\0')) rangeError(fn, p, 'must not contain a NUL character');
    return v;
  }
  return typeError(fn, p, 'a string', v);
}

/** The address of host memory or a bigint address, for C arrays of pointers. */
export function addressOf(v: Pointer): bigint {
  if (v === null) return 0n;
  if (typeof v === 'bigint') return v;
  return koffi.address(nonEmpty(v)) as bigint;
}

/** A JS array argument whose first `count` elements C will read. */
export function arrayArg(v: unknown, count: number, fn: string, p: string, nullable: boolean): unknown[] | null {
  if (count < 0) rangeError(fn, p, `cannot have a negative count (${count})`);
  if (v === null) {
    if (count === 0 || nullable) return null;
    rangeError(fn, p, `is null but the count says ${count} elements`);
  }
  if (!Array.isArray(v)) return typeError(fn, p, 'an array', v);
  if (v.length < count) rangeError(fn, p, `has ${v.length} elements but the count says ${count}`);
  return v;
}

// Small allocations are carved from 64 KiB slabs: a new ArrayBuffer costs about a microsecond,
// a slice of a slab a few tens of nanoseconds. A slab lives as long as any slice of it.
// Every struct on a slab can reach the slab's ArrayBuffer (`s.getBytes().buffer`), so a slab is
// marked untransferable: postMessage and structuredClone copy it instead of detaching it (Node 20;
// newer Node refuses the transfer). Should a slab be detached all the same (ArrayBuffer.prototype
// .transfer, where Node has it), the next allocation starts a fresh one: its byteLength reads 0.
const SLAB = 64 * 1024;
const SMALL = 4096;
let slab = new ArrayBuffer(0);
let slabView = new DataView(slab);
let slabUsed = SLAB;

/** Marks memory the library holds (slabs, packed arguments) so that a transfer cannot detach it. */
export function untransferable<T extends ArrayBuffer>(b: T): T {
  markAsUntransferable(b);
  return b;
}

/** Fresh zeroed memory whose address stays put (an ArrayBuffer's store is never moved). */
export function bytes(n: number): Uint8Array {
  return alloc(n).u8;
}

/** Fresh zeroed memory and a DataView over the buffer that holds it (offsets from the buffer's start). */
export function alloc(n: number): { u8: Uint8Array; dv: DataView } {
  if (n > SMALL) {
    const b = new ArrayBuffer(n);
    return { u8: new Uint8Array(b), dv: new DataView(b) };
  }
  if (slabUsed + n > slab.byteLength) {
    slab = untransferable(new ArrayBuffer(SLAB));
    slabView = new DataView(slab);
    slabUsed = 0;
  }
  const u8 = new Uint8Array(slab, slabUsed, n);
  slabUsed += (n + 15) & ~15;
  return { u8, dv: slabView };
}

/** Reads a NUL-terminated string from a byte array. */
export function cString(b: Uint8Array): string {
  // ASCII, the usual case, without a decoder.
  let s = '';
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === 0) return s;
    if (c > 0x7f) {
      const end = b.indexOf(0);
      return Buffer.from(b.buffer, b.byteOffset, end < 0 ? b.length : end).toString('utf8');
    }
    s += String.fromCharCode(c);
  }
  return s;
}

/** Makes a handle value from an integer (the handle types' constructors). */
export function handleFrom(v: unknown, brand: string): bigint {
  if (typeof v === 'bigint') {
    if (v >= 0n && v < U64_LIMIT) return v;
    throw new RangeError(`${brand}(): ${v}n is not within [0, 2^64)`);
  }
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && v >= 0) return BigInt(v);
    throw new RangeError(`${brand}(): ${v} is not a non-negative safe integer`);
  }
  throw new TypeError(`${brand}(): expects a bigint or a non-negative integer, got ${describe(v)}`);
}
