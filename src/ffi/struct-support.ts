// Hand-written helpers the generated facade calls for structs, arrays and typed attribute values.
import koffi from 'koffi';
export { borrowed } from './memory';
import { arrayArg } from './marshal';
import { bigint64, checkI32, checkU64, rangeError, typeError } from './checks';
import { U64, I32 } from './scratch';
import { CStruct, type StructClass, packValues, passHostFns, checkHeld } from './struct-base';
import { cudaMemRangeAttributeAccessedBy } from './constants.gen';
import { checkHandle } from './checks';
import { checkWaitOptions, onPool, unlessGivenUp, type WaitOptions } from './waits';
import type { KoffiFunction } from './binding';

/** A struct passed by pointer: an instance of the class, a plain initializer, or null. */
export function structArg<T extends CStruct>(v: unknown, cls: StructClass<T>, fn: string, p: string): Uint8Array | null {
  if (v instanceof cls) {
    if (v._keep) passHostFns(v);
    if (v._host !== undefined) checkHeld(v, fn, p);
    return v._u8;
  }
  if (v === null) return null;
  if (v instanceof CStruct) typeError(fn, p, `a ${cls.name}`, v);
  if (typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
    try {
      const s = new cls(v);
      if (s._keep) passHostFns(s);
      return s._u8;
    } catch (e) {
      throw new TypeError(`${fn}: parameter '${p}': ${(e as Error).message}`);
    }
  }
  return typeError(fn, p, `a ${cls.name}, a plain object of its fields, or null`, v);
}

/**
 * A struct C reads and writes: the caller's instance (written in place), a new one made from a plain
 * initializer, or a new one (with its defaults, such as NVML's version) for null or undefined.
 */
export function inoutStruct<T extends CStruct>(v: unknown, cls: StructClass<T>, fn: string, p: string): T {
  if (v === undefined || v === null) return new cls();
  if (v instanceof cls) return v;
  if (v instanceof CStruct) typeError(fn, p, `a ${cls.name}`, v);
  if (typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
    try {
      return new cls(v);
    } catch (e) {
      throw new TypeError(`${fn}: parameter '${p}': ${(e as Error).message}`);
    }
  }
  return typeError(fn, p, `a ${cls.name}, a plain object of its fields, or nothing`, v);
}

/** A struct passed by value: the instance itself (koffi reads its fields). */
export function byValue<T extends CStruct>(v: unknown, cls: StructClass<T>, fn: string, p: string): T {
  if (v instanceof cls) {
    if (v._host !== undefined) checkHeld(v, fn, p);
    return v;
  }
  if (typeof v === 'object' && v !== null && !(v instanceof CStruct) && !Array.isArray(v)) {
    try {
      return new cls(v);
    } catch (e) {
      throw new TypeError(`${fn}: parameter '${p}': ${(e as Error).message}`);
    }
  }
  return typeError(fn, p, `a ${cls.name} or a plain object of its fields`, v);
}

/** Packs the first `count` elements of a JS array into C memory. */
export function packArray(
  v: unknown,
  count: number,
  elemSize: number,
  fn: string,
  p: string,
  nullable: boolean,
  write: (dv: DataView, at: number, x: unknown, name: string) => void,
): Uint8Array | null {
  if (ArrayBuffer.isView(v)) {
    // Already packed by the caller (a typed array of the C elements).
    if (v.byteLength < count * elemSize) rangeError(fn, p, `holds ${v.byteLength} bytes but ${count} elements need ${count * elemSize}`);
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }
  const a = arrayArg(v, count, fn, p, nullable);
  if (a === null) return null;
  return packValues(a, count, elemSize, write, (i) => `${fn}: parameter '${p}[${i}]'`);
}

export { packStruct } from './struct-base';

/** Reads `n` packed values. */
export function readArray<T>(mem: Uint8Array | null, n: number, elemSize: number, read: (dv: DataView, at: number) => T): T[] {
  if (mem === null || n <= 0) return [];
  const dv = new DataView(mem.buffer, mem.byteOffset, mem.byteLength);
  const out: T[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = read(dv, i * elemSize);
  return out;
}

/** Reads `n` packed structs as copies. */
export function readStructs<T extends CStruct>(mem: Uint8Array | null, n: number, cls: StructClass<T>): T[] {
  if (mem === null || n <= 0) return [];
  const size = cls.layout.size;
  return Array.from({ length: n }, (_, i) => new cls(cls.view(mem.subarray(i * size, (i + 1) * size))));
}

/** Host memory as a Buffer over the same bytes; null for an address (a bigint) or null. */
export function hostBuffer(v: unknown): Buffer | null {
  if (Buffer.isBuffer(v)) return v;
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return Buffer.from(v);
  return null;
}

/** A C string CUDA returned a pointer to; null for NULL. */
export function readCString(addr: bigint): string | null {
  if (addr === 0n) return null;
  return koffi.decode(addr, 'char', -1) as string;
}

/** Which values of an attribute enum are 64-bit; the others are int. */
export interface AttrTable {
  u64: ReadonlySet<number>;
}

/** Writes an attribute value into scratch slot i as the attribute's C type. */
export function attrIn(t: AttrTable, attr: number, v: unknown, i: number, fn: string, p: string): void {
  if (t.u64.has(attr)) U64[i] = bigint64(checkU64(v, fn, p));
  else I32[2 * i] = checkI32(v, fn, p);
}

/** Reads an attribute value from scratch slot i as the attribute's C type. */
export function attrOut(t: AttrTable, attr: number, i: number): number | bigint {
  return t.u64.has(attr) ? U64[i] : I32[2 * i];
}

/** cudaMemRangeAttributeAccessedBy is a list of devices; the other range attributes are one int. */
export function rangeAttrOut(mem: Uint8Array, attr: number, dataSize: number): number | number[] {
  const ints = new Int32Array(mem.buffer, mem.byteOffset, Math.floor(mem.byteLength / 4));
  if (attr === cudaMemRangeAttributeAccessedBy) return Array.from(ints.subarray(0, Math.floor(dataSize / 4)));
  return ints[0];
}

/** A struct returned by value, from the bytes koffi hands back. */
export function fromBytes<T extends CStruct>(cls: StructClass<T>, b: ArrayLike<number>): T {
  const s = new cls();
  s._u8.set(b);
  return s;
}

/**
 * The 8-byte word at byte `at` of a struct that has all 8 bytes there (the generated facade calls this
 * for each whole word of a small struct passed by value: dim3's first).
 */
export function word8(s: CStruct, at: number): number | bigint {
  const dv = s._dv;
  const o = s._o + at;
  const hi = dv.getUint32(o + 4, true);
  const lo = dv.getUint32(o, true);
  return hi < 0x200000 ? hi * 4294967296 + lo : (BigInt(hi) << 32n) | BigInt(lo);
}

/** The last word of a struct that ends 4 bytes after `at` (dim3's z), zero-extended to 8 bytes. */
export function word4(s: CStruct, at: number): number {
  return s._dv.getUint32(s._o + at, true);
}

/** The i-th 8-byte word of a struct (a small struct passed by value in integer registers). */
export function eightbyte(s: CStruct, i: number): number | bigint {
  const at = s._o + i * 8;
  const n = Math.min(8, s._u8.length - i * 8);
  const dv = s._dv;
  // Whole words first (dim3's 12 bytes are an 8 and a 4): two reads instead of a loop over bytes.
  if (n === 8) {
    const lo8 = dv.getUint32(at, true);
    const hi8 = dv.getUint32(at + 4, true);
    return hi8 < 0x200000 ? hi8 * 4294967296 + lo8 : (BigInt(hi8) << 32n) | BigInt(lo8);
  }
  if (n === 4) return dv.getUint32(at, true);
  let lo = 0;
  for (let k = Math.min(n, 4) - 1; k >= 0; k--) lo = lo * 256 + dv.getUint8(at + k);
  if (n <= 4) return lo;
  let hi = 0;
  for (let k = n - 1; k >= 4; k--) hi = hi * 256 + dv.getUint8(at + k);
  return hi < 0x200000 ? hi * 4294967296 + lo : (BigInt(hi) << 32n) | BigInt(lo);
}

/** Whether a pointer field of a struct passed as bytes is NULL. */
export function nullField<T extends CStruct>(u8: Uint8Array, cls: StructClass<T>, field: string): boolean {
  const f = cls.layout.fields[field];
  return new DataView(u8.buffer, u8.byteOffset + f.offset, 8).getBigUint64(0, true) === 0n;
}

/** CUDA_MEMCPY3D_PEER: a side that is not an array (CU_MEMORYTYPE_ARRAY = 3) needs its context. */
export function peerContextMissing<T extends CStruct>(u8: Uint8Array, cls: StructClass<T>): boolean {
  const f = cls.layout.fields;
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const side = (type: string, ctx: string) => dv.getUint32(f[type].offset, true) !== 3 && dv.getBigUint64(f[ctx].offset, true) === 0n;
  return side('srcMemoryType', 'srcContext') || side('dstMemoryType', 'dstContext');
}

/** An array of C strings: the pointers and the NUL-terminated bytes in one allocation, which the
 * pointer view passed to C keeps alive for the call. */
export function packStrings(v: unknown, count: number, fn: string, p: string, nullable: boolean): Uint8Array | null {
  const a = arrayArg(v, count, fn, p, nullable);
  if (a === null) return null;
  const encoded = a.slice(0, count).map((x, i) => {
    if (typeof x !== 'string') typeError(fn, `${p}[${i}]`, 'a string', x);
    if (x.includes('\0')) rangeError(fn, `${p}[${i}]`, 'must not contain a NUL character');
    return Buffer.from(x + '\0', 'utf8');
  });
  const ptrBytes = Math.max(8, count * 8);
  const total = ptrBytes + encoded.reduce((n, b) => n + b.length, 0);
  const all = new Uint8Array(new ArrayBuffer(total));
  const base = koffi.address(all) as bigint;
  const dv = new DataView(all.buffer);
  let at = ptrBytes;
  encoded.forEach((b, i) => {
    dv.setBigUint64(i * 8, base + BigInt(at), true);
    all.set(b, at);
    at += b.length;
  });
  return all;
}

/**
 * Host memory that C fills with as many bytes as another call reports (nvrtcGetPTX after
 * nvrtcGetPTXSize): asks for the size and refuses a buffer that is too small.
 */
export function needBytes(v: unknown, size: () => [number, number | null], unit: number, fn: string, p: string, sizeFn: string): void {
  if (v === null || typeof v === 'bigint' || !(ArrayBuffer.isView(v) || v instanceof ArrayBuffer)) return;
  const [err, n] = size();
  if (err === 0 && n !== null && v.byteLength < n * unit)
    rangeError(fn, p, `holds ${v.byteLength} bytes but ${sizeFn} says ${n * unit} are written`);
}

/**
 * An array of pointers C reads or writes through one by one: each host buffer in the first `count`
 * elements must hold what `need(i)` says (a caller-packed typed array holds addresses only).
 */
export function checkEach(v: unknown, count: number, need: (i: number) => number, fn: string, p: string, what: string): void {
  if (!Array.isArray(v)) return;
  for (let i = 0; i < count && i < v.length; i++) {
    const x = v[i];
    if (x === null || typeof x !== 'object') continue;
    const n = need(i);
    if ((x as ArrayBufferView).byteLength < n)
      rangeError(fn, `${p}[${i}]`, `holds ${(x as ArrayBufferView).byteLength} bytes but ${what.replace(/\bi\b/g, String(i))} needs ${n}`);
  }
}

/** Element i of an array argument (a JS array or a typed array) as a number; 0 when absent. */
export function nth(a: unknown, i: number): number {
  const x = Array.isArray(a) || ArrayBuffer.isView(a) ? (a as ArrayLike<unknown>)[i] : undefined;
  return typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x) : 0;
}

/** Bytes CUDA writes for a CUpointer_attribute: 16 for the P2P tokens, 8 for addresses, handles and sizes, 4 else. */
const POINTER_ATTR_U64 = new Set([1, 3, 4, 7, 11, 12, 14, 17, 18, 19, 20]);
export function pointerAttrBytes(attr: number): number {
  if (attr === 5) return 16;
  if (POINTER_ATTR_U64.has(attr)) return 8;
  // An attribute newer than this table: as much as the largest one.
  return attr >= 1 && attr <= 21 ? 4 : 16;
}

/**
 * Bytes the JIT writes through option value i: a log buffer (CU_JIT_INFO_LOG_BUFFER 3,
 * CU_JIT_ERROR_LOG_BUFFER 5) takes as many as its size option (4, 6) says; other values are not
 * written through.
 */
export function jitLogBytes(options: unknown, values: unknown, i: number): number {
  const o = nth(options, i);
  if (o !== 3 && o !== 5) return 0;
  const n = Array.isArray(options) || ArrayBuffer.isView(options) ? (options as ArrayLike<unknown>).length : 0;
  for (let j = 0; j < n; j++) if (nth(options, j) === o + 1) return nth(values, j);
  return 0;
}

/** Bytes an exported shareable handle takes, by CUmemAllocationHandleType / cudaMemAllocationHandleType. */
export function shareableHandleBytes(handleType: number): number {
  // 1: POSIX file descriptor (int), 2 and 4: Win32 handles, 8: fabric handle (64 bytes).
  return handleType === 1 ? 4 : handleType === 8 ? 64 : 8;
}

/**
 * A compile call `(prog, numOptions, options)` (nvrtcCompileProgram, nvvmCompileProgram; bound only
 * once the arguments passed their checks) on the thread pool under the name `fn`, its arguments checked as the facade checks them; `after` runs
 * once the compile itself returned (given up on or not). Resolves with its status.
 */
export async function compileOnPool(
  fn: string,
  compile: () => KoffiFunction,
  prog: unknown,
  numOptions: number,
  options: string[] | null,
  waitOptions: WaitOptions | undefined,
  after: () => void,
): Promise<number> {
  const p = checkHandle(prog, fn, 'prog');
  const n = checkI32(numOptions, fn, 'numOptions');
  if (n < 0) rangeError(fn, 'numOptions', `must not be negative, got ${n}`);
  const packed = packStrings(options, n, fn, 'options', true);
  const o = checkWaitOptions(waitOptions, fn);
  const work = onPool(fn, compile(), [p, n, packed], {}, [packed]);
  work.then(after, after);
  return unlessGivenUp(fn, o, work);
}
