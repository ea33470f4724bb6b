// Checked writers and plain readers of C values in memory (struct fields, packed arrays), little-endian.
import koffi from 'koffi';
import { bigint64, checkAddress, checkBool, checkF64, checkI64, checkIntN, checkSize, checkU64 } from './checks';

type Writer = (dv: DataView, off: number, v: unknown, name: string) => void;

// Each writer checks its value with ./checks, naming `name` (a field's `Struct.field`, or an array
// element's `fn: parameter 'p[i]'`) as the subject of the message. A C bool field also takes true/false
// where a small integer field is declared (flags the headers type as char or int).

/** Writers by C value kind; each checks its value and names `name` in its error. */
export const W = {
  i8(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setInt8(off, checkIntN(typeof v === 'boolean' ? +v : v, name, undefined, 8, true));
  },
  u8(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setUint8(off, checkIntN(typeof v === 'boolean' ? +v : v, name, undefined, 8, false));
  },
  i16(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setInt16(off, checkIntN(typeof v === 'boolean' ? +v : v, name, undefined, 16, true), true);
  },
  u16(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setUint16(off, checkIntN(typeof v === 'boolean' ? +v : v, name, undefined, 16, false), true);
  },
  i32(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setInt32(off, checkIntN(typeof v === 'boolean' ? +v : v, name, undefined, 32, true), true);
  },
  u32(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setUint32(off, checkIntN(typeof v === 'boolean' ? +v : v, name, undefined, 32, false), true);
  },
  i64(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setBigInt64(off, bigint64(checkI64(v, name)), true);
  },
  u64(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setBigUint64(off, bigint64(checkU64(v, name)), true);
  },
  /** A size_t: a non-negative safe integer, as a number or a bigint (it reads back as a number). */
  size(dv: DataView, off: number, v: unknown, name: string): void {
    const n = checkSize(v, name);
    dv.setUint32(off, n % 4294967296, true);
    dv.setUint32(off + 4, Math.floor(n / 4294967296), true);
  },
  f32(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setFloat32(off, checkF64(v, name), true);
  },
  f64(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setFloat64(off, checkF64(v, name), true);
  },
  bool(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setUint8(off, checkBool(v, name) ? 1 : 0);
  },
  /** An address or handle: a bigint or null (host memory is taken by the struct's pointer setter). */
  ptr(dv: DataView, off: number, v: unknown, name: string): void {
    dv.setBigUint64(off, v === undefined ? 0n : (checkAddress(v, name) ?? 0n), true);
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
