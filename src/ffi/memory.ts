// Checked writers and plain readers of C values in memory (struct fields, packed arrays), little-endian.
import koffi from 'koffi';
import { describe } from './marshal';

type Writer = (dv: DataView, off: number, v: unknown, name: string) => void;

const U64_LIMIT = 2n ** 64n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function intWriter(bits: 8 | 16 | 32, signed: boolean): Writer {
  const lo = signed ? -(2 ** (bits - 1)) : 0;
  const hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
  return (dv, off, v, name) => {
    if (typeof v === 'boolean') v = v ? 1 : 0;
    if (typeof v !== 'number') throw new TypeError(`${name}: must be an integer, got ${describe(v)}`);
    if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name}: must be an integer within [${lo}, ${hi}], got ${v}`);
    if (bits === 8) signed ? dv.setInt8(off, v) : dv.setUint8(off, v);
    else if (bits === 16) signed ? dv.setInt16(off, v, true) : dv.setUint16(off, v, true);
    else signed ? dv.setInt32(off, v, true) : dv.setUint32(off, v, true);
  };
}

function bigWriter(signed: boolean): Writer {
  return (dv, off, v, name) => {
    let b: bigint;
    if (typeof v === 'bigint') b = v;
    else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
    else if (typeof v === 'number') throw new RangeError(`${name}: must be a safe integer or a bigint, got ${v}`);
    else throw new TypeError(`${name}: must be a bigint or an integer, got ${describe(v)}`);
    if (signed ? b < -(2n ** 63n) || b >= 2n ** 63n : b < 0n || b >= U64_LIMIT) {
      throw new RangeError(`${name}: ${b}n is out of range for a ${signed ? 'signed' : 'unsigned'} 64-bit value`);
    }
    signed ? dv.setBigInt64(off, b, true) : dv.setBigUint64(off, b, true);
  };
}

/** Writers by C value kind; each checks its value and names `name` in its error. */
export const W = {
  i8: intWriter(8, true),
  u8: intWriter(8, false),
  i16: intWriter(16, true),
  u16: intWriter(16, false),
  i32: intWriter(32, true),
  u32: intWriter(32, false),
  i64: bigWriter(true),
  u64: bigWriter(false),
  /** A size_t: a non-negative safe integer, as a number or a bigint (it reads back as a number). */
  size(dv: DataView, off: number, v: unknown, name: string): void {
    if (typeof v === 'bigint') {
      if (v < 0n || v > MAX_SAFE) throw new RangeError(`${name}: must be a non-negative safe integer (at most 2^53 - 1), got ${v}n`);
      return dv.setBigUint64(off, v, true);
    }
    if (typeof v !== 'number') throw new TypeError(`${name}: must be a non-negative integer, got ${describe(v)}`);
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${name}: must be a non-negative safe integer, got ${v}`);
    dv.setUint32(off, v % 4294967296, true);
    dv.setUint32(off + 4, Math.floor(v / 4294967296), true);
  },
  f32(dv: DataView, off: number, v: unknown, name: string): void {
    if (typeof v !== 'number') throw new TypeError(`${name}: must be a number, got ${describe(v)}`);
    dv.setFloat32(off, v, true);
  },
  f64(dv: DataView, off: number, v: unknown, name: string): void {
    if (typeof v !== 'number') throw new TypeError(`${name}: must be a number, got ${describe(v)}`);
    dv.setFloat64(off, v, true);
  },
  bool(dv: DataView, off: number, v: unknown, name: string): void {
    if (typeof v !== 'boolean' && v !== 0 && v !== 1) throw new TypeError(`${name}: must be a boolean, got ${describe(v)}`);
    dv.setUint8(off, v ? 1 : 0);
  },
  /** An address or handle: a bigint or null (host memory is taken by the struct's pointer setter). */
  ptr(dv: DataView, off: number, v: unknown, name: string): void {
    if (v === null || v === undefined) return dv.setBigUint64(off, 0n, true);
    if (typeof v !== 'bigint') throw new TypeError(`${name}: must be an address or handle (bigint) or null, got ${describe(v)}`);
    if (v < 0n || v >= U64_LIMIT) throw new RangeError(`${name}: ${v}n is out of range for an address`);
    dv.setBigUint64(off, v, true);
  },
} satisfies Record<string, Writer>;

/** Reads a size_t as a number. */
export function readSize(dv: DataView, off: number): number {
  return dv.getUint32(off, true) + dv.getUint32(off + 4, true) * 4294967296;
}

/** A copy of memory CUDA owns (an array it returned a pointer to). */
export function borrowed(addr: bigint, n: number): Uint8Array | null {
  if (addr === 0n || n <= 0) return null;
  return new Uint8Array(koffi.view(addr, n).slice(0));
}
