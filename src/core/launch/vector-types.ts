// CUDA's built-in vector types (vector_types.h) as a prepared launch packs them by value: each one's
// component type, count, size and alignment on a 64-bit Linux host (where `long` is 8 bytes).
// test/cpu/core/core-prepared-structs.test.ts checks every entry against g++ and the CUDA header.

/**
 * A CUDA vector type passed by value, named as in C: `'float3'`, `'int2'`, `'uchar4'`, `'double2'`,
 * `'double4_16a'`, … (`char1`–`double4`, where `char` is `signed char` and `long` 8 bytes; CUDA 13's
 * `_16a`/`_32a` 4-vectors of 8-byte components; and `dim3`).
 */
export type VectorType =
  | `${'char' | 'uchar' | 'short' | 'ushort' | 'int' | 'uint' | 'long' | 'ulong' | 'longlong' | 'ulonglong' | 'float' | 'double'}${1 | 2 | 3 | 4}`
  | `${'long' | 'ulong' | 'longlong' | 'ulonglong' | 'double'}4_${16 | 32}a`
  | 'dim3';

/** The scalar type of a vector's components, as the wrappers name it. */
export type ComponentType = 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';

/** How a vector type is laid out. */
export interface VectorLayout {
  /** The type of each component (x, y, z, w in that order, packed). */
  readonly component: ComponentType;
  /** How many components: 1 to 4. */
  readonly count: number;
  /** Bytes of one component. */
  readonly componentSize: number;
  /** Bytes of the vector (sizeof). */
  readonly size: number;
  /** Its alignment (alignof). */
  readonly align: number;
}

// Each family's component and the alignment of its 1-, 2-, 3- and 4-vector (a 3-vector is aligned as
// its component; the header's __align__ gives the others).
const FAMILIES: readonly [string, ComponentType, number, readonly number[]][] = [
  ['char', 'i8', 1, [1, 2, 1, 4]],
  ['uchar', 'u8', 1, [1, 2, 1, 4]],
  ['short', 'i16', 2, [2, 4, 2, 8]],
  ['ushort', 'u16', 2, [2, 4, 2, 8]],
  ['int', 'i32', 4, [4, 8, 4, 16]],
  ['uint', 'u32', 4, [4, 8, 4, 16]],
  ['long', 'i64', 8, [8, 16, 8, 16]],
  ['ulong', 'u64', 8, [8, 16, 8, 16]],
  ['longlong', 'i64', 8, [8, 16, 8, 16]],
  ['ulonglong', 'u64', 8, [8, 16, 8, 16]],
  ['float', 'f32', 4, [4, 8, 4, 16]],
  ['double', 'f64', 8, [8, 16, 8, 16]],
];

function vectorTable(): Readonly<Record<VectorType, VectorLayout>> {
  const table: Record<string, VectorLayout> = Object.create(null);
  const add = (name: string, component: ComponentType, componentSize: number, count: number, align: number) =>
    (table[name] = Object.freeze({ component, count, componentSize, size: componentSize * count, align }));
  for (const [family, component, size, aligns] of FAMILIES) {
    aligns.forEach((align, k) => add(`${family}${k + 1}`, component, size, k + 1, align));
    // CUDA 13 deprecates the 4-vectors of 8-byte components (aligned to 16) for these two.
    if (size === 8) for (const a of [16, 32]) add(`${family}4_${a}a`, component, size, 4, a);
  }
  add('dim3', 'u32', 4, 3, 4);
  return Object.freeze(table) as Record<VectorType, VectorLayout>;
}

/** Every vector type by its C name. */
export const VECTOR_TYPES: Readonly<Record<VectorType, VectorLayout>> = vectorTable();

/** The component names, in memory order. */
export const COMPONENTS = ['x', 'y', 'z', 'w'] as const;
