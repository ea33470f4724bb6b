// Conversions shared by every generated binding (host memory, arrays, C strings), and the argument
// checks of ./checks under the names the generated facade calls.
import koffi from 'koffi';
import type * as WorkerThreads from 'node:worker_threads';
import {
  bigint64,
  checkBool,
  checkF64,
  checkHandle,
  checkI32,
  checkI64,
  checkIntN,
  checkPointer,
  checkSize,
  checkString,
  checkU32,
  checkU64,
  nonEmpty,
  typeError,
  rangeError,
  U64_LIMIT,
  type Pointer,
} from './checks';

export type { HostMemory, Pointer } from './checks';
export { describe, typeError, rangeError, outOfRange, checkExtent, nonEmpty } from './checks';
import type { HostMemory } from './checks';
/**
 * A device address: a bigint such as cudaMalloc returns, or arithmetic on one. A handle (a
 * branded bigint: a stream, an event) does not pass, nor does host memory.
 */
export type DevicePointer = bigint & {
  /** Absent on a device address, so that a handle (whose brand is a string) is not one. */
  readonly __brand?: undefined;
};
/** Memory a copy reads or writes: a device or host address, or host memory; never a handle. */
export type Memory = DevicePointer | HostMemory | null;

// The names the generated facade calls (M.i32(v, fn, p), …): the checks of ./checks under short names.
// Hand-written code imports the check* names, which do not collide with the kernel-argument
// wrappers i32(), u32(), f64() of ./kernel-args.
export {
  checkI32 as i32,
  checkU32 as u32,
  checkIntN as intN,
  checkSize as size,
  checkU64 as u64,
  checkI64 as i64,
  checkF64 as f64,
  checkBool as bool,
  checkHandle as handle,
  checkPointer as pointer,
  checkString as str,
};

/** Bytes a pitched 2D region spans: pitch * (height - 1) + width. */
export function span2D(pitch: number, width: number, height: number): number {
  return height === 0 || width === 0 ? 0 : pitch * (height - 1) + width;
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

// node:worker_threads loads on the first mark (the first struct or packed arguments), not at import:
// loading it grew the RSS of `require('cuda-bindings')` by 1.5 MiB (issue #18).
let markAsUntransferable: ((b: ArrayBuffer) => void) | undefined;

/** Marks memory the library holds (slabs, packed arguments) so that a transfer cannot detach it. */
export function untransferable<T extends ArrayBuffer>(b: T): T {
  (markAsUntransferable ??= (require('node:worker_threads') as typeof WorkerThreads).markAsUntransferable)(b);
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

// Node's own UTF-8 decoder of a byte range (what Buffer#toString('utf8', start, end) calls), taken
// from Buffer.prototype so that it decodes a plain Uint8Array without wrapping it in a Buffer: 60 ns
// for a 21-character device name against 116 ns for a loop over the characters. Checked once here;
// where it is missing or differs, TextDecoder (85 ns) does the work.
const nodeUtf8Slice = (Buffer.prototype as unknown as { utf8Slice?: (this: Uint8Array, start: number, end: number) => string }).utf8Slice;
const decoder = new TextDecoder();
const utf8Slice: (b: Uint8Array, start: number, end: number) => string =
  typeof nodeUtf8Slice === 'function' && nodeUtf8Slice.call(new Uint8Array([0x68, 0xc3, 0xa9, 0xff]), 0, 4) === 'h\u00e9\ufffd'
    ? (b, start, end) => nodeUtf8Slice.call(b, start, end)
    : (b, start, end) => decoder.decode(b.subarray(start, end));

/** Reads a NUL-terminated string from a byte array (UTF-8; all of it when there is no NUL). */
export function cString(b: Uint8Array): string {
  return cStringAt(b, 0, b.length);
}

/** Reads the NUL-terminated string of at most `n` bytes at `start` of a byte array (a `char[n]` field). */
export function cStringAt(b: Uint8Array, start: number, n: number): string {
  const limit = Math.min(start + n, b.length);
  let end = b.indexOf(0, start);
  if (end < 0 || end > limit) end = limit;
  return end === start ? '' : utf8Slice(b, start, end);
}

/** Makes a handle value from an integer (the handle types' constructors: `cudaStream_t(123)`). */
export function handleFrom(v: unknown, brand: string): bigint {
  if (typeof v === 'bigint' && v >= 0n && v < U64_LIMIT) return v;
  return bigint64(checkU64(v, `${brand}()`, 'value'));
}
