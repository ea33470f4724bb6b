// Kernel arguments: typed values packed into the `void **args` array that cudaLaunchKernel,
// cuLaunchKernel and kernel node params take. A plain JS number is never taken as an argument:
// its C type is ambiguous, so it must be wrapped (i32(n), f32(x), …).
import koffi from 'koffi';
import {
  bigint64,
  checkF64,
  checkI32,
  checkI64,
  checkIntN,
  checkPointer,
  checkU32,
  checkU64,
  lookupName,
  outOfRange,
  typeError,
  U64_LIMIT,
  type Pointer,
} from './checks';
import { untransferable } from './marshal';
import { CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END } from './constants.gen';

/** The C type of a kernel argument, named as the wrappers that make one (i32(n), f32(x), …). */
export type ScalarType = 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f16' | 'f32' | 'f64' | 'ptr';

/** A kernel argument with its C type. */
export class KernelArg {
  // Declared and assigned, not initialised as class fields: a launch in a loop makes several a call.
  /** Its C type. */
  declare readonly type: ScalarType;
  /** Its value, checked against the type when it was made. */
  declare readonly value: number | bigint;

  constructor(type: ScalarType, value: number | bigint) {
    this.type = type;
    this.value = value;
  }
}

/** Something that is a C struct passed by value: bytes with an alignment (the struct classes are). */
export interface StructValue {
  /** The struct's bytes (a live view). */
  getBytes(): Uint8Array;
  /** @internal The same bytes, read without a call on the launch path. */
  readonly _u8: Uint8Array;
}

/** What a kernel launch takes per argument: a typed scalar, a device pointer (bigint), or a struct. */
export type KernelArgInput = KernelArg | bigint | StructValue;

/** @internal Bytes of each scalar argument type; each is aligned to its size. */
export const SIZE: Readonly<Record<ScalarType, number>> = {
  i8: 1,
  u8: 1,
  i16: 2,
  u16: 2,
  i32: 4,
  u32: 4,
  i64: 8,
  u64: 8,
  f16: 2,
  f32: 4,
  f64: 8,
  ptr: 8,
};

/** Bits and signedness of the integer argument types (an f16 KernelArg holds its 16 raw bits). */
const INT_KIND = {
  i8: [8, true],
  u8: [8, false],
  i16: [16, true],
  u16: [16, false],
  f16: [16, false],
  i32: [32, true],
  u32: [32, false],
} as const;

// Each wrapper is a function of its own, not a closure made by one factory: V8 never inlines closures
// made by one factory (they share its "many closures" feedback), and inlined, a wrapper of a constant
// (`i32(1)`) costs an allocation and no check at all (issue #37: the typed launch).

/** char / signed char argument. */
export function i8(v: number): KernelArg {
  return new KernelArg('i8', checkIntN(v, 'i8()', 'value', 8, true));
}
/** unsigned char argument. */
export function u8(v: number): KernelArg {
  return new KernelArg('u8', checkIntN(v, 'u8()', 'value', 8, false));
}
/** short argument. */
export function i16(v: number): KernelArg {
  return new KernelArg('i16', checkIntN(v, 'i16()', 'value', 16, true));
}
/** unsigned short argument. */
export function u16(v: number): KernelArg {
  return new KernelArg('u16', checkIntN(v, 'u16()', 'value', 16, false));
}
/** int argument. */
export function i32(v: number): KernelArg {
  return new KernelArg('i32', checkI32(v, 'i32()', 'value'));
}
/** unsigned int argument. */
export function u32(v: number): KernelArg {
  return new KernelArg('u32', checkU32(v, 'u32()', 'value'));
}
/** long long argument. */
export function i64(v: bigint | number): KernelArg {
  return new KernelArg('i64', bigint64(checkI64(v, 'i64()', 'value')));
}
/** unsigned long long (and size_t) argument. */
export function u64(v: bigint | number): KernelArg {
  return new KernelArg('u64', bigint64(checkU64(v, 'u64()', 'value')));
}
/** A pointer argument (a device address). */
export function ptr(v: bigint | number): KernelArg {
  return new KernelArg('ptr', bigint64(checkU64(v, 'ptr()', 'value')));
}
/** Rounds half-way cases to the even neighbour, as IEEE 754's default rounding does. */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  return d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
}

/**
 * The IEEE 754 binary16 (`__half`) bits of `v`, rounded to nearest, ties to even (straight from the
 * double, so never rounded twice): beyond ±65504 (from ±65520 on) is ±infinity, NaN is 0x7e00.
 */
export function halfBits(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a >= 65520) return sign | 0x7c00;
  // Subnormals (and zero) count units of 2^-24; 1024 of them is the smallest normal's encoding.
  if (a < 2 ** -14) return sign | roundHalfEven(a * 2 ** 24);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  let m = roundHalfEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e++;
  }
  return sign | ((e + 15) << 10) | m;
}

/** What {@link f16} is: a number converted to half precision, and the raw form. */
export interface HalfArgument {
  /** A `__half` argument of the value `v` (rounded to the nearest half; 0.78 becomes 0.7802734375). */
  (v: number): KernelArg;
  /** A `__half` argument given as its 16 raw bits (0x3c00 is 1.0), as f16() took before it converted numbers. */
  bits(raw: number): KernelArg;
}

/**
 * __half argument: `f16(0.78)` converts the number to half precision (round to nearest even);
 * `f16.bits(0x3c00)` gives the 16 raw bits as they are.
 */
export const f16: HalfArgument = Object.assign((v: number): KernelArg => new KernelArg('f16', halfBits(checkF64(v, 'f16()', 'value'))), {
  bits: (raw: number): KernelArg => new KernelArg('f16', checkIntN(raw, 'f16()', 'value', 16, false)),
});
/** float argument. */
export function f32(v: number): KernelArg {
  return new KernelArg('f32', checkF64(v, 'f32()', 'value'));
}
/** double argument. */
export function f64(v: number): KernelArg {
  return new KernelArg('f64', checkF64(v, 'f64()', 'value'));
}

function sizeAlign(a: KernelArgInput): [number, number] {
  if (a instanceof KernelArg) return [SIZE[a.type], SIZE[a.type]];
  if (typeof a === 'bigint') return [8, 8];
  const l = (a.constructor as { layout?: { size: number; align: number } }).layout;
  return l ? [l.size, l.align] : [a._u8.length, 8];
}

function check(a: unknown, fn: string, p: string, i: number): KernelArgInput {
  // A KernelArg made with `new` rather than i32() and the like may name no type (or Object.prototype's 'constructor').
  if (a instanceof KernelArg) {
    lookupName(SIZE, a.type, fn, `the type of parameter '${p}[${i}]'`);
    return a;
  }
  if (typeof a === 'bigint') return a;
  if (typeof a === 'object' && a !== null && (a as { _u8?: unknown })._u8 instanceof Uint8Array) return a as StructValue;
  if (typeof a === 'number') {
    typeError(fn, `${p}[${i}]`, 'a typed kernel argument: a plain number is ambiguous, wrap it as i32(n), u32(n), f32(x), f64(x), …', a);
  }
  return typeError(fn, `${p}[${i}]`, 'a typed kernel argument (i32(n), f32(x), …), a device pointer (bigint) or a struct', a);
}

/**
 * Kernel arguments packed once, for launches in a hot loop: the `void *args[]` array and the values
 * it points to, in one allocation that stays put. `set(i, value)` changes an argument in place.
 */
export class KernelArgs {
  /** The `void **` array to pass to the launch. */
  readonly pointers: Uint8Array;
  /** The values, each at its C alignment, as the extra-buffer form (CU_LAUNCH_PARAM_BUFFER_POINTER) wants them. */
  readonly buffer: Uint8Array;
  private readonly dv: DataView;
  private readonly offsets: number[];
  private readonly types: (ScalarType | 'struct')[];

  constructor(args: readonly unknown[], fn = 'KernelArgs', p = 'args') {
    if (!Array.isArray(args)) typeError(fn, p, 'an array of kernel arguments', args);
    const checked = args.map((a, i) => check(a, fn, p, i));
    let size = 0;
    this.offsets = checked.map((a) => {
      const [s, al] = sizeAlign(a);
      size = Math.ceil(size / al) * al;
      const at = size;
      size += s;
      return at;
    });
    const ptrBytes = Math.max(8, checked.length * 8);
    // Untransferable: the pointers point into it, and launches and struct fields keep its address.
    const store = untransferable(new ArrayBuffer(ptrBytes + Math.max(8, Math.ceil(size / 16) * 16) + 16));
    // Values start 16-aligned after the pointer array.
    const base = Math.ceil(ptrBytes / 16) * 16;
    this.pointers = new Uint8Array(store, 0, ptrBytes);
    this.buffer = new Uint8Array(store, base, size);
    this.dv = new DataView(store);
    this.types = checked.map((a) => (a instanceof KernelArg ? a.type : typeof a === 'bigint' ? 'ptr' : 'struct'));
    const addr = koffi.address(this.buffer) as bigint;
    checked.forEach((a, i) => {
      this.dv.setBigUint64(i * 8, addr + BigInt(this.offsets[i]), true);
      this.write(i, a, fn, p);
    });
  }

  /** Number of arguments. */
  get length(): number {
    return this.offsets.length;
  }

  /**
   * Writes `values` over the arguments in place when they are typed scalars and pointers of exactly
   * these types (structs never match) and returns true; otherwise changes nothing and returns false.
   */
  refill(values: readonly unknown[], fn: string, p: string): boolean {
    if (values.length !== this.types.length) return false;
    for (let i = 0; i < values.length; i++) {
      const a = values[i];
      const t = this.types[i];
      if (a instanceof KernelArg ? a.type !== t : typeof a !== 'bigint' || t !== 'ptr') return false;
    }
    for (let i = 0; i < values.length; i++) this.write(i, values[i] as KernelArg | bigint, fn, p);
    return true;
  }

  /**
   * Changes argument i in place; its type must stay the same. A plain number (or a bigint for a 64-bit
   * argument) is taken as the argument's type and checked as the i32()/u8()/… wrappers check it (an
   * f16 argument's number is a value, converted as f16() converts it).
   */
  set(i: number, value: KernelArgInput | number): void {
    if (!(i >= 0 && i < this.offsets.length)) outOfRange('KernelArgs.set', 'i', `an index within [0, ${this.offsets.length})`, i);
    const t = this.types[i];
    if (t !== 'struct' && (typeof value === 'number' || (typeof value === 'bigint' && t !== 'ptr'))) return this.setScalar(i, t, value);
    this.write(i, check(value, 'KernelArgs.set', 'value', i), 'KernelArgs.set', 'value');
  }

  /** A number or bigint written as argument i's type, checked as its wrapper checks it, without allocating. */
  private setScalar(i: number, t: ScalarType, v: number | bigint): void {
    const at = this.buffer.byteOffset + this.offsets[i];
    const dv = this.dv;
    const fn = 'KernelArgs.set';
    switch (t) {
      case 'f32':
        return dv.setFloat32(at, checkF64(v, fn, 'value'), true);
      case 'f64':
        return dv.setFloat64(at, checkF64(v, fn, 'value'), true);
      case 'i64':
        return dv.setBigInt64(at, bigint64(checkI64(v, fn, 'value')), true);
      case 'u64':
      case 'ptr':
        return dv.setBigUint64(at, bigint64(checkU64(v, fn, 'value')), true);
    }
    if (t === 'f16') return dv.setUint16(at, halfBits(checkF64(v, fn, 'value')), true);
    const n = checkIntN(v, fn, 'value', INT_KIND[t][0], INT_KIND[t][1]);
    switch (t) {
      case 'i8':
        return dv.setInt8(at, n);
      case 'u8':
        return dv.setUint8(at, n);
      case 'i16':
        return dv.setInt16(at, n, true);
      case 'u16':
        return dv.setUint16(at, n, true);
      case 'i32':
        return dv.setInt32(at, n, true);
      case 'u32':
        return dv.setUint32(at, n, true);
    }
  }

  private write(i: number, a: KernelArgInput, fn: string, p: string): void {
    const at = this.buffer.byteOffset + this.offsets[i];
    const dv = this.dv;
    const t = this.types[i];
    if (a instanceof KernelArg) {
      if (a.type !== t) typeError(fn, `${p}[${i}]`, `a ${t} argument`, a.type);
      const v = a.value;
      switch (a.type) {
        case 'i8':
          return dv.setInt8(at, v as number);
        case 'u8':
          return dv.setUint8(at, v as number);
        case 'i16':
          return dv.setInt16(at, v as number, true);
        case 'u16':
        case 'f16':
          return dv.setUint16(at, v as number, true);
        case 'i32':
          return dv.setInt32(at, v as number, true);
        case 'u32':
          return dv.setUint32(at, v as number, true);
        case 'i64':
          return dv.setBigInt64(at, BigInt(v), true);
        case 'u64':
        case 'ptr':
          return dv.setBigUint64(at, BigInt(v), true);
        case 'f32':
          return dv.setFloat32(at, v as number, true);
        case 'f64':
          return dv.setFloat64(at, v as number, true);
      }
    }
    if (typeof a === 'bigint') {
      if (t !== 'ptr') typeError(fn, `${p}[${i}]`, `a ${t} argument`, a);
      if (a < 0n || a >= U64_LIMIT) outOfRange(fn, `${p}[${i}]`, 'an address within [0, 2^64)', a);
      return dv.setBigUint64(at, a, true);
    }
    if (t !== 'struct' || a._u8.length !== sizeAlign(a)[0]) typeError(fn, `${p}[${i}]`, `a ${t} argument`, a);
    new Uint8Array(dv.buffer).set(a._u8, at);
  }

  /** util.inspect shows each argument's type, not the packing's internals. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `KernelArgs(${this.types.length}) [${this.types.join(', ')}]`;
  }
}

/** The arguments of the last launch given as an array: the next such launch packs into them when the types match. */
let lastLaunch: KernelArgs | null = null;

/**
 * The `void **` for a launch's `args` parameter: KernelArgs, an array of arguments, a raw pointer or
 * null. CUDA copies the arguments during the call, so an array is packed into the memory of the
 * previous launch's array when its types match (no allocation per launch).
 */
export function kernelArgs(v: unknown, fn: string, p: string): Pointer {
  if (Array.isArray(v) && v.length > 0) {
    if (lastLaunch?.refill(v, fn, p)) return lastLaunch.pointers;
    return (lastLaunch = new KernelArgs(v, fn, p)).pointers;
  }
  return keptKernelArgs(v, fn, p);
}

/** The `void **` for arguments that outlive the call (a kernelParams field of a struct): fresh memory for an array. */
export function keptKernelArgs(v: unknown, fn: string, p: string): Pointer {
  if (v instanceof KernelArgs) return v.pointers;
  if (Array.isArray(v)) return v.length === 0 ? null : new KernelArgs(v, fn, p).pointers;
  if (v === null) return null;
  if (typeof v === 'bigint' || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return checkPointer(v, fn, p);
  return typeError(fn, p, 'kernel arguments (an array of i32(n), f32(x), …, or a KernelArgs), a pointer or null', v);
}

/**
 * The `extra` array of cuLaunchKernel for arguments passed as one buffer:
 * { CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END }.
 * The result holds the arguments' memory alive as long as it is referenced.
 */
export function launchParamBuffer(args: KernelArgs | readonly unknown[]): Uint8Array {
  const k = args instanceof KernelArgs ? args : new KernelArgs(args, 'launchParamBuffer', 'args');
  const mem = new Uint8Array(untransferable(new ArrayBuffer(48)));
  const dv = new DataView(mem.buffer);
  const bufAddr = koffi.address(k.buffer) as bigint;
  dv.setBigUint64(0, CU_LAUNCH_PARAM_BUFFER_POINTER, true);
  dv.setBigUint64(8, bufAddr, true);
  dv.setBigUint64(16, CU_LAUNCH_PARAM_BUFFER_SIZE, true);
  dv.setBigUint64(24, (koffi.address(mem) as bigint) + 40n, true);
  dv.setBigUint64(32, CU_LAUNCH_PARAM_END, true);
  dv.setBigUint64(40, BigInt(k.buffer.length), true);
  (mem as Uint8Array & { keep?: KernelArgs }).keep = k;
  return mem;
}
