// A kernel's parameter types from its C signature: what prepare('void k(float *x, int n)') packs.
import type { ScalarType } from '../../runtime';
import { describe, isOwnName } from '../../ffi/checks';
import { SIZE as SCALAR_SIZE } from '../../ffi/kernel-args';
import { VECTOR_TYPES, type VectorType } from './vector-types';

/** A struct's C layout: its size (sizeof) and alignment (alignof) in bytes. */
export interface StructLayoutLike {
  /** sizeof the struct. */
  readonly size: number;
  /** alignof the struct: a power of two. */
  readonly align: number;
}

/**
 * A struct passed by value, given by its layout: `{ size, align }`, or a struct class of the
 * bindings (`cudart.dim3`, `cudart.float3`, …: its static `layout` has both).
 */
export type StructType = StructLayoutLike | StructClassLike;

/** A struct class of the bindings, as a parameter type: what it is read for is its layout. */
export interface StructClassLike {
  /** The struct's C layout (the generated classes' static `layout`). */
  readonly layout: StructLayoutLike;
}

/**
 * The C type of one prepared parameter: a scalar as the wrappers name it (`'i32'`, `'f32'`, `'ptr'`,
 * …), `'tensormap'` for a 128-byte `CUtensorMap` passed by value (`__grid_constant__`), a CUDA
 * vector type by its C name (`'float3'`, `'int2'`, `'double4_16a'`, …), or any other struct by its
 * layout (a {@link StructType}).
 */
export type ParamType = ScalarType | 'tensormap' | VectorType | StructType;

const PARAM_TYPES: ReadonlySet<string> = new Set([
  'i8',
  'u8',
  'i16',
  'u16',
  'i32',
  'u32',
  'i64',
  'u64',
  'f16',
  'f32',
  'f64',
  'ptr',
  'tensormap',
]);

/** C type names (qualifiers and the parameter's name removed) → their parameter type. */
const C_TYPES: Readonly<Record<string, ScalarType | 'tensormap' | VectorType>> = {
  char: 'i8',
  'signed char': 'i8',
  int8_t: 'i8',
  bool: 'u8',
  'unsigned char': 'u8',
  uchar: 'u8',
  uint8_t: 'u8',
  short: 'i16',
  'short int': 'i16',
  'signed short': 'i16',
  int16_t: 'i16',
  'unsigned short': 'u16',
  'unsigned short int': 'u16',
  ushort: 'u16',
  uint16_t: 'u16',
  int: 'i32',
  signed: 'i32',
  'signed int': 'i32',
  int32_t: 'i32',
  unsigned: 'u32',
  'unsigned int': 'u32',
  uint: 'u32',
  uint32_t: 'u32',
  long: 'i64',
  'long int': 'i64',
  'long long': 'i64',
  'long long int': 'i64',
  int64_t: 'i64',
  ptrdiff_t: 'i64',
  ssize_t: 'i64',
  intptr_t: 'i64',
  'unsigned long': 'u64',
  'unsigned long int': 'u64',
  'unsigned long long': 'u64',
  'unsigned long long int': 'u64',
  uint64_t: 'u64',
  size_t: 'u64',
  uintptr_t: 'u64',
  cudaTextureObject_t: 'u64',
  cudaSurfaceObject_t: 'u64',
  CUtexObject: 'u64',
  CUsurfObject: 'u64',
  cudaGraphConditionalHandle: 'u64',
  CUgraphConditionalHandle: 'u64',
  float: 'f32',
  double: 'f64',
  half: 'f16',
  __half: 'f16',
  __nv_bfloat16: 'f16',
  CUtensorMap: 'tensormap',
  CUtensorMap_st: 'tensormap',
  ...Object.fromEntries(Object.keys(VECTOR_TYPES).map((t) => [t, t as VectorType])),
};

const QUALIFIERS = /\b(const|volatile|__restrict__|__restrict|restrict|__grid_constant__|struct)\b/g;

/** Splits on top-level commas (not those inside <…> or (…)). */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '<' || c === '(' || c === '[') depth++;
    else if (c === '>' || c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/**
 * The parameter types of a C signature: a whole declaration (`extern "C" __global__ void
 * k(const float *x, int n)`) or just its parameter list (`const float *x, int n`). Pointers and
 * arrays are `'ptr'`; a type it does not know is a TypeError naming the parameter.
 */
export function parseSignature(signature: string, fn = 'parseSignature'): ParamType[] {
  if (typeof signature !== 'string')
    throw new TypeError(`${fn}: parameter 'signature' must be a C signature string or an array of types, got ${typeof signature}`);
  let s = signature.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
  const open = s.indexOf('(');
  if (open >= 0) {
    const close = s.lastIndexOf(')');
    if (close < open) throw new SyntaxError(`${fn}: the signature '${signature}' has a '(' without its ')'`);
    s = s.slice(open + 1, close);
  }
  s = s.trim();
  if (s === '' || s === 'void') return [];
  return splitTopLevel(s).map((raw, i) => {
    const p = raw.trim();
    if (p === '') throw new SyntaxError(`${fn}: parameter ${i} of '${signature}' is empty`);
    if (/[*[&]/.test(p)) {
      if (p.includes('&')) throw new TypeError(`${fn}: parameter ${i} ('${p}') is a C++ reference, which a kernel cannot take`);
      return 'ptr';
    }
    const words = p
      .replace(QUALIFIERS, ' ')
      .trim()
      .split(/\s+/)
      .filter((w) => w !== '');
    // The last word is the parameter's name unless the type alone is known (`int`, `unsigned int`).
    const whole = words.join(' ');
    if (isOwnName(C_TYPES, whole)) return C_TYPES[whole];
    const type = words.slice(0, -1).join(' ');
    if (isOwnName(C_TYPES, type)) return C_TYPES[type];
    throw new TypeError(
      `${fn}: parameter ${i} ('${p}') has a type this layer cannot pack from a plain value; use an array of types ('i32', 'f32', 'ptr', …, a struct's layout { size, align }) or Kernel.launch with typed arguments`,
    );
  });
}

/** The largest kernel parameter list CUDA takes (12.1 on, Volta on): no struct by value is larger. */
const MAX_STRUCT_SIZE = 32764;

/** The layout of a struct type: `t` itself (`{ size, align }`) or a struct class's `layout`; null for anything else. */
function structLayout(t: unknown): StructLayoutLike | null {
  if ((typeof t !== 'object' && typeof t !== 'function') || t === null) return null;
  const l = 'layout' in t ? (t as { layout: unknown }).layout : t;
  if (l === null || typeof l !== 'object') return null;
  const { size, align } = l as { size?: unknown; align?: unknown };
  return typeof size === 'number' && typeof align === 'number' ? { size, align } : null;
}

/** Checks an array of parameter types; returns a copy. */
export function checkParamTypes(types: readonly unknown[], fn: string): ParamType[] {
  return types.map((t, i) => {
    if (typeof t === 'string' && (PARAM_TYPES.has(t) || isOwnName(VECTOR_TYPES, t))) return t as ParamType;
    const l = structLayout(t);
    if (l === null)
      throw new TypeError(
        `${fn}: types[${i}] must be one of ${[...PARAM_TYPES].join(', ')}, a CUDA vector type ('float3', 'int2', …) or a struct's layout ({ size, align } or a struct class), got ${typeof t === 'string' ? `'${t}'` : describe(t)}`,
      );
    if (!(Number.isInteger(l.size) && l.size >= 1 && l.size <= MAX_STRUCT_SIZE))
      throw new RangeError(
        `${fn}: types[${i}] is a struct whose size must be a byte count within [1, ${MAX_STRUCT_SIZE}], got ${describe(l.size)}`,
      );
    if (!(Number.isInteger(l.align) && l.align >= 1 && l.align <= 4096 && (l.align & (l.align - 1)) === 0 && l.size % l.align === 0))
      throw new RangeError(
        `${fn}: types[${i}] is a struct whose align must be a power of two that divides its size (${l.size}), got ${describe(l.align)}`,
      );
    return t as ParamType;
  });
}

/** @internal A checked parameter type's size and alignment in the argument memory (a scalar is aligned to its size; a 128-byte tensor map to 64). */
export function paramLayout(t: ParamType): StructLayoutLike {
  if (typeof t !== 'string') return structLayout(t)!;
  if (isOwnName(VECTOR_TYPES, t)) return VECTOR_TYPES[t];
  if (t === 'tensormap') return { size: 128, align: 64 };
  const size = SCALAR_SIZE[t];
  return { size, align: size };
}

/** @internal A checked parameter type as an error message names it: `'f32'`, `'float3'`, `'struct(16 bytes, align 8)'`. */
export function paramName(t: ParamType): string {
  if (typeof t === 'string') return t;
  const { size, align } = paramLayout(t);
  return `struct(${size} bytes, align ${align})`;
}
