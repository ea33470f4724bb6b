// The checks of every value that crosses into C: facade arguments, struct fields, kernel arguments
// and the async calls all go through these, so a bad value reads the same wherever it is passed:
//   `<fn>: parameter '<name>' must be <what>, got <value>`
// (a struct field, which has no parameter, is named `<Struct>.<field>` in place of the first part).
// They run on every call: a success allocates nothing; the message is built only on failure.

/** Addresses, handles and 64-bit unsigned values are below this. */
export const U64_LIMIT = 2n ** 64n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A value as an error message shows it: `1.5`, `-1n`, `null`, `a boolean`, `the string "x"`, `an array`, `a Float32Array`, `an object (Stream)` (a string cut at 20 characters, control characters escaped). */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 20 ? v.slice(0, 20) + '…' : v)}`;
  if (typeof v !== 'object') return `a ${typeof v}`;
  if (Array.isArray(v)) return 'an array';
  const name: string | undefined = (v as object).constructor?.name;
  if (ArrayBuffer.isView(v)) return `a ${name}`;
  return `an object (${name ?? 'Object'})`;
}

/** What a message names: `fn: parameter 'p'`, or `fn` alone (a struct field's `Struct.field`) when `p` is undefined. */
function subject(fn: string, p: string | undefined): string {
  return p === undefined ? fn : `${fn}: parameter '${p}'`;
}

/** Throws `TypeError: <fn>: parameter '<p>' must be <want>, got <value>`. */
export function typeError(fn: string, p: string | undefined, want: string, got: unknown): never {
  throw new TypeError(`${subject(fn, p)} must be ${want}, got ${describe(got)}`);
}

/** Throws `RangeError: <fn>: parameter '<p>' <msg>` (msg says what is wrong: `must be …, got …`). */
export function rangeError(fn: string, p: string | undefined, msg: string): never {
  throw new RangeError(`${subject(fn, p)} ${msg}`);
}

/** Throws `RangeError: <fn>: parameter '<p>' must be <want>, got <value>`. */
export function outOfRange(fn: string, p: string | undefined, want: string, got: unknown): never {
  return rangeError(fn, p, `must be ${want}, got ${describe(got)}`);
}

/**
 * Whether `key` names one of `table`'s own entries: the names a lookup table lists, never those it
 * inherits from Object.prototype (`constructor`, `__proto__`, `toString`, …), which `key in table`
 * and `table[key]` find too.
 */
export function isOwnName<K extends string>(table: Readonly<Record<K, unknown>>, key: unknown): key is K {
  return typeof key === 'string' && Object.prototype.hasOwnProperty.call(table, key);
}

/**
 * The entry of `table` that `key` names (its own names only, see isOwnName), or a RangeError that
 * lists them: `<fn>: <what> must be one of 'a', 'b', …, got 'x'`, where `what` is `parameter 'op'`,
 * `option 'swizzle'` or the like.
 */
export function lookupName<K extends string, V>(table: Readonly<Record<K, V>>, key: unknown, fn: string, what: string): V {
  if (isOwnName(table, key)) return table[key];
  const names = Object.keys(table)
    .map((k) => `'${k}'`)
    .join(', ');
  throw new RangeError(`${fn}: ${what} must be one of ${names}, got ${describe(key)}`);
}

/** The failure of an integer of at most 32 bits: a TypeError for a non-number, else a RangeError with its range. */
function intFail(v: unknown, fn: string, p: string | undefined, lo: number, hi: number, want: string): never {
  if (typeof v !== 'number') typeError(fn, p, want, v);
  return outOfRange(fn, p, `an integer within [${lo}, ${hi}]`, v);
}

/** A 32-bit signed integer (int, a signed enum). */
export function checkI32(v: unknown, fn: string, p?: string): number {
  if (typeof v === 'number' && (v | 0) === v) return v;
  return intFail(v, fn, p, -2147483648, 2147483647, 'a 32-bit integer');
}

/** A 32-bit unsigned integer (unsigned int, flags). */
export function checkU32(v: unknown, fn: string, p?: string): number {
  if (typeof v === 'number' && v >>> 0 === v) return v;
  return intFail(v, fn, p, 0, 4294967295, 'an unsigned 32-bit integer');
}

/** An integer of `bits` bits (8, 16 or 32; char, short, int and their unsigned kinds). */
export function checkIntN(v: unknown, fn: string, p: string | undefined, bits: number, signed: boolean): number {
  // 2 ** n without Math.pow, which V8 calls at run time unless it can fold the call (~900 instructions).
  const half = bits === 32 ? 2147483648 : 1 << (bits - 1);
  const lo = signed ? -half : 0;
  const hi = signed ? half - 1 : 2 * half - 1;
  if (typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi) return v;
  return intFail(v, fn, p, lo, hi, `${signed ? 'a' : 'an unsigned'} ${bits}-bit integer`);
}

/**
 * A file descriptor as the driver reads a POSIX fd handle: a C int that is not negative. A larger
 * integer, passed on as the handle's pointer-sized value, would reach it truncated to another fd.
 */
export function checkFileDescriptor(v: unknown, fn: string, p?: string): number {
  if (typeof v === 'number' && (v | 0) === v && v >= 0) return v;
  return outOfRange(fn, p, 'a file descriptor (an integer within [0, 2147483647])', v);
}

/** A size or count (size_t): a non-negative safe integer, as a number or a bigint (as cuda-python takes any int). */
export function checkSize(v: unknown, fn: string, p?: string): number {
  if (typeof v === 'number' && v >= 0 && Number.isSafeInteger(v)) return v;
  if (typeof v === 'bigint' && v >= 0n && v <= MAX_SAFE) return Number(v);
  if (typeof v !== 'number' && typeof v !== 'bigint') typeError(fn, p, 'a non-negative integer (a size)', v);
  return outOfRange(fn, p, 'an integer within [0, 2^53 - 1]', v);
}

/** A 64-bit unsigned integer: a bigint, or a number that is a non-negative safe integer. */
export function checkU64(v: unknown, fn: string, p?: string): bigint | number {
  if (typeof v === 'bigint' ? BigInt.asUintN(64, v) === v : typeof v === 'number' && v >= 0 && Number.isSafeInteger(v))
    return v as bigint | number;
  return fail64(v, fn, p, '[0, 2^64)');
}

/** A 64-bit signed integer: a bigint, or a number that is a safe integer. */
export function checkI64(v: unknown, fn: string, p?: string): bigint | number {
  if (typeof v === 'bigint' ? BigInt.asIntN(64, v) === v : Number.isSafeInteger(v)) return v as bigint | number;
  return fail64(v, fn, p, '[-2^63, 2^63)');
}

// bigint64's 8 bytes: a bigint read from a BigInt64Array is made in line, where BigInt(number) may
// be a call (issue #37: with every row of bench/core-cpu.ts in one process, a launch with i64(5) among
// its arguments took 2,625 instructions, 2,490 with this; with that row alone, 2,388 and 2,414).
// Words in the host's order, little-endian, as scratch.ts's readSize reads them.
const WORDS = new Int32Array(2);
const WIDE = new BigInt64Array(WORDS.buffer);

/** A checked 64-bit value (a bigint, or a safe integer as checkI64 and checkU64 return) as a bigint: what BigInt(v) gives, without its call. */
export function bigint64(v: bigint | number): bigint {
  if (typeof v === 'bigint') return v;
  WORDS[0] = v; // ToInt32: the low 32 bits, two's complement
  WORDS[1] = Math.floor(v / 4294967296); // the high bits (|v| < 2^53: they fit in 32)
  return WIDE[0];
}

function fail64(v: unknown, fn: string, p: string | undefined, range: string): never {
  if (typeof v !== 'number' && typeof v !== 'bigint') typeError(fn, p, 'a bigint or an integer', v);
  if (typeof v === 'number' && !Number.isSafeInteger(v)) outOfRange(fn, p, 'a bigint or a safe integer', v);
  return outOfRange(fn, p, `an integer within ${range}`, v);
}

/** A float or double. */
export function checkF64(v: unknown, fn: string, p?: string): number {
  if (typeof v === 'number') return v;
  return typeError(fn, p, 'a number', v);
}

/** A C bool: true, false, 0 or 1 (int-sized flags are checkI32). */
export function checkBool(v: unknown, fn: string, p?: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 0 || v === 1) return v === 1;
  return typeError(fn, p, 'a boolean', v);
}

/** An address held as a bigint, or null for NULL: what a struct's pointer field and a kernel's pointer argument take. */
export function checkAddress(v: unknown, fn: string, p?: string): bigint | null {
  if (typeof v === 'bigint' && BigInt.asUintN(64, v) === v) return v;
  if (v === null) return null;
  if (typeof v === 'bigint') outOfRange(fn, p, 'an address within [0, 2^64)', v);
  return typeError(fn, p, 'an address or handle (bigint) or null', v);
}

/** A handle (or a function pointer) held as a bigint; null stands for NULL. */
export function checkHandle(v: unknown, fn: string, p?: string): bigint | null {
  if (typeof v === 'bigint' && BigInt.asUintN(64, v) === v) return v;
  if (v === null) return null;
  if (typeof v === 'bigint') outOfRange(fn, p, 'a handle within [0, 2^64)', v);
  return typeError(fn, p, 'a handle (bigint) or null', v);
}

/** Memory on the host that can be passed where C takes a pointer, without a copy. */
export type HostMemory = ArrayBufferView | ArrayBuffer;
/** A C pointer argument: a device or host address, host memory, or null for NULL. */
export type Pointer = bigint | HostMemory | null;

// koffi passes host memory whose ArrayBuffer is empty as NULL, which C reads as "no buffer"
// (nvJitLinkGetErrorLog of an empty log returned NVJITLINK_ERROR_NULL_INPUT). An empty view into a
// real ArrayBuffer has a valid address and is still empty for every extent check.
const EMPTY = new Uint8Array(new ArrayBuffer(8), 0, 0);

/** Host memory as C should get it: empty memory as an empty view with a valid address (see EMPTY). */
export function nonEmpty(v: HostMemory): HostMemory {
  // A typed array's length first: Node 20's V8 reads it in about a third of the time of byteLength
  // (a DataView or an ArrayBuffer has none: undefined > 0 is false).
  return (v as { length?: number }).length! > 0 || v.byteLength !== 0 ? v : EMPTY;
}

/** A pointer: an address (bigint), host memory (Buffer, TypedArray, DataView, ArrayBuffer) or null. */
export function checkPointer(v: unknown, fn: string, p?: string): Pointer {
  if (typeof v === 'bigint' && BigInt.asUintN(64, v) === v) return v;
  if (v === null) return v;
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return nonEmpty(v);
  if (typeof v === 'bigint') outOfRange(fn, p, 'an address within [0, 2^64)', v);
  if (typeof v === 'number') {
    typeError(fn, p, 'an address as a bigint (a plain number is never taken as a pointer), host memory or null', v);
  }
  return typeError(fn, p, 'an address (bigint), a Buffer, TypedArray, DataView, ArrayBuffer or null', v);
}

/** Throws when host memory passed as `p` holds fewer than `need` bytes (`what` names who needs them). */
export function checkExtent(v: Pointer, need: number, fn: string, p: string | undefined, what: string): void {
  if (v === null || typeof v === 'bigint') return;
  if (v.byteLength < need) rangeError(fn, p, `holds ${v.byteLength} bytes but ${what} needs ${need}`);
}

/**
 * PTX text, which C readers take two ways: the driver up to its first NUL, nvJitLink and nvFatbin by
 * the length given. A NUL before the end would make them read different code, so it is refused with
 * its offset; NULs that end the text (a terminator) are fine.
 */
export function checkPtxText(b: Uint8Array, fn: string, p: string | undefined): void {
  const at = b.indexOf(0);
  if (at < 0) return;
  let end = b.length;
  while (end > at && b[end - 1] === 0) end--;
  if (at < end)
    rangeError(fn, p, `holds PTX text with a NUL at byte ${at}, before its end at byte ${end}; PTX may end with NULs, not hold one`);
}

/** A C string argument: a string without NUL characters. */
export function checkString(v: unknown, fn: string, p?: string): string {
  if (typeof v === 'string') {
    if (v.includes('\0')) outOfRange(fn, p, 'a string without NUL characters', v);
    return v;
  }
  return typeError(fn, p, 'a string', v);
}
