// Vectors (float3, …) and structs passed by value to a prepared launch (issue #36): the vector types'
// layouts against g++ and CUDA's vector_types.h, the exact bytes each kernel parameter list gets in
// argument memory against the same parameters as a C++ struct laid out by g++ (the fake libcudart of
// test/cpu/fixtures records the argument pointers), and every refusal's words.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cudart } from '../../../src';
import { Kernel } from '../../../src/core/launch/Kernel';
import { VECTOR_TYPES, COMPONENTS, type VectorType } from '../../../src/core/launch/vector-types';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

const CUDA_INC = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');

/** Compiles a C++ program against CUDA's headers with g++, runs it and returns its lines. */
function gxx(source: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-prepared-structs-'));
  try {
    fs.writeFileSync(path.join(dir, 'p.cpp'), source);
    // -w: CUDA 13 deprecates double4 and the other 16-aligned 4-vectors of 8-byte components.
    execFileSync('g++', ['-std=c++17', '-w', `-I${CUDA_INC}`, '-o', path.join(dir, 'p'), path.join(dir, 'p.cpp')], { stdio: 'pipe' });
    return execFileSync(path.join(dir, 'p')).toString().trim().split('\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const HEADERS = ['#include <vector_types.h>', '#include <cstdio>', '#include <cstddef>', '#include <cstring>', '#include <type_traits>'];

test('every vector type of vector_types.h is known, with the size, alignment and components g++ gives it', () => {
  const header = fs.readFileSync(path.join(CUDA_INC, 'vector_types.h'), 'utf8');
  const declared = [...header.matchAll(/typedef\s+__device_builtin__\s+struct\s+(\w+)/g)].map((m) => m[1]);
  expect(new Set(Object.keys(VECTOR_TYPES))).toEqual(new Set(declared));
  const names = Object.keys(VECTOR_TYPES) as VectorType[];
  const lines = gxx(
    [
      ...HEADERS,
      "template <class M> char kind() { return std::is_floating_point<M>::value ? 'f' : std::is_signed<M>::value ? 'i' : 'u'; }",
      'int main() {',
      ...names.map((t) => {
        const xyz = COMPONENTS.slice(0, VECTOR_TYPES[t].count);
        const offsets = xyz.map((c) => `, offsetof(${t}, ${c})`).join('');
        return `  printf("${t} %zu %zu %zu %c${' %zu'.repeat(xyz.length)}\\n", sizeof(${t}), alignof(${t}), sizeof(((${t} *)0)->x), kind<decltype(${t}::x)>()${offsets});`;
      }),
      '  return 0;',
      '}',
    ].join('\n'),
  );
  const ours = names.map((t) => {
    const v = VECTOR_TYPES[t];
    const offsets = Array.from({ length: v.count }, (_, k) => ` ${k * v.componentSize}`).join('');
    return `${t} ${v.size} ${v.align} ${v.componentSize} ${v.component[0]}${offsets}`;
  });
  expect(ours).toEqual(lines);
  // The generated struct classes (what a struct-instance argument is) agree.
  for (const t of names) {
    const cls = (cudart as unknown as Record<string, { layout: { size: number; align: number } }>)[t];
    expect([t, cls.layout.size, cls.layout.align]).toEqual([t, VECTOR_TYPES[t].size, VECTOR_TYPES[t].align]);
  }
});

/** One kernel parameter: its C type and name, its value, and how the JS side passes it. */
interface Param {
  type: string;
  value: number | bigint | (number | bigint)[];
  /** A vector as an array (the default), an object { x, … }, or an instance of the runtime's struct class. */
  form?: 'array' | 'object' | 'struct';
}
/** A parameter list, prepared from its C signature unless `types` (a JS expression) is given. */
interface Case {
  name: string;
  params: Param[];
  types?: string;
}

const big = (b: bigint) => (b < 0n ? `(${b + 1n}LL - 1)` : `${b}ULL`);
const cValue = (v: number | bigint) => (typeof v === 'bigint' ? big(v) : String(v));
const jsValue = (v: number | bigint) => (typeof v === 'bigint' ? `${v}n` : String(v));

/** The JS expression of a parameter's value. `S` is the custom struct, whose bytes the child makes with sBytes(form, c, d, i). */
function jsArgument(p: Param): string {
  if (!Array.isArray(p.value)) return jsValue(p.value);
  if (p.type === 'S') return `sBytes(${JSON.stringify(p.form)}, ${p.value.map(jsValue).join(', ')})`;
  const fields = p.value.map((v, k) => `${COMPONENTS[k]}: ${jsValue(v)}`).join(', ');
  if (p.form === 'object') return `{ ${fields} }`;
  if (p.form === 'struct') return `new cudart.${p.type}({ ${fields} })`;
  return `[${p.value.map(jsValue).join(', ')}]`;
}

/** The C++ statements that set member `m` of `v` (zeroed first, padding included) to the parameter's value. */
function cAssign(p: Param, m: string): string {
  if (!Array.isArray(p.value)) return `v.${m} = ${cValue(p.value)};`;
  const fields = p.type === 'S' ? ['c', 'd', 'i'] : COMPONENTS;
  return p.value.map((x, k) => `v.${m}.${fields[k]} = ${cValue(x)};`).join(' ');
}

const S = (form: string, c: number, d: number, i: number): Param => ({ type: 'S', value: [c, d, i], form: form as Param['form'] });
const structCase = (form: string): Case => ({
  name: `a custom struct S { char c; double d; int i; } as ${form}, a struct class and a vector instance`,
  params: [
    { type: 'char', value: 3 },
    S(form, 65, 2.5, -7),
    { type: 'int', value: 11 },
    { type: 'dim3', value: [7, 8, 9], form: 'struct' },
    { type: 'float3', value: [0.5, -1, 2e30], form: 'struct' },
  ],
  types: `['i8', S, 'i32', cudart.dim3, 'float3']`,
});
const CASES: Case[] = [
  {
    name: 'char c, float3 p, double d, float4 q',
    params: [
      { type: 'char', value: -5 },
      { type: 'float3', value: [1.5, -2.25, 3] },
      { type: 'double', value: 6.125 },
      { type: 'float4', value: [1, 2, 3, 4], form: 'object' },
    ],
  },
  {
    name: 'the small vectors, integers at their limits',
    params: [
      { type: 'float', value: 0.25 },
      { type: 'double2', value: [-1.5, 1e300] },
      { type: 'int2', value: [-2147483648, 2147483647], form: 'object' },
      { type: 'uchar3', value: [0, 255, 128] },
      { type: 'short3', value: [-32768, 32767, -1] },
      { type: 'char1', value: [-128] },
      { type: 'ushort2', value: [65535, 1] },
      { type: 'int3', value: [1, -2, 3], form: 'struct' },
      { type: 'char4', value: [1, -1, 127, -128] },
      { type: 'uint3', value: [4294967295, 0, 7] },
      { type: 'float1', value: [-0.5] },
      { type: 'uchar2', value: [9, 10] },
    ],
  },
  {
    name: '8-byte components: 2- and 3-vectors, deprecated 4-vectors and the 16- and 32-aligned ones (13 parameters: the rest-parameter launcher)',
    params: [
      { type: 'char', value: 1 },
      { type: 'double4_32a', value: [1, 2, 3, 4] },
      { type: 'char', value: 2 },
      { type: 'longlong4_16a', value: [-(2n ** 63n), 2n ** 63n - 1n, -1, 2 ** 53 - 1], form: 'object' },
      { type: 'double4', value: [0.5, 0.25, 0.125, -0.0625] },
      { type: 'ulong4_32a', value: [2n ** 64n - 1n, 0, 1n, 2 ** 40] },
      { type: 'short4', value: [1, 2, 3, 4] },
      { type: 'double3', value: [-3, 1e-300, 7] },
      { type: 'long3', value: [-(2 ** 40), 5n, 0] },
      { type: 'ulonglong2', value: [2n ** 64n - 1n, 3] },
      { type: 'long2', value: [-1, 1] },
      { type: 'longlong1', value: [-9] },
      { type: 'ushort4', value: [65535, 0, 1, 2], form: 'object' },
    ],
  },
  structCase('Uint8Array'),
  structCase('ArrayBuffer'),
  structCase('DataView'),
  structCase('object'),
];

/** The C++ program that lays out each case as a struct of its parameters and prints offsets and bytes. */
function layoutProgram(): string {
  const o = [
    ...HEADERS,
    'struct S { char c; double d; int i; };',
    'static void dump(const char *name, const void *p, size_t n) { printf("%s", name); for (size_t i = 0; i < n; i++) printf(" %02x", ((const unsigned char *)p)[i]); printf("\\n"); }',
    'int main() {',
    '  printf("S %zu %zu %zu %zu\\n", sizeof(S), alignof(S), offsetof(S, d), offsetof(S, i));',
  ];
  CASES.forEach((c, n) => {
    const ms = c.params.map((_, k) => `m${k}`);
    o.push(`  { struct P { ${c.params.map((p, k) => `${p.type} ${ms[k]};`).join(' ')} } v; memset(&v, 0, sizeof v);`);
    c.params.forEach((p, k) => o.push(`    ${cAssign(p, ms[k])}`));
    o.push(`    printf("O${n}${ms.map(() => ' %zu').join('')}\\n"${ms.map((m) => `, offsetof(P, ${m})`).join('')});`);
    const last = ms[ms.length - 1];
    o.push(`    dump("B${n}", &v, offsetof(P, ${last}) + sizeof(v.${last})); }`);
  });
  o.push('  return 0;', '}');
  return o.join('\n');
}

let fake: { lib: string; dir: string };
let expected: string[];
beforeAll(() => {
  fake = buildFakeCudart('kernels');
  expected = gxx(layoutProgram());
}, 120_000);
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

/** What g++ says of case n: each parameter's offset, and the bytes from the first to the end of the last. */
function fromGxx(n: number): { offsets: number[]; bytes: string } {
  const line = (tag: string) =>
    expected
      .find((l) => l.startsWith(`${tag} `))!
      .split(' ')
      .slice(1);
  return { offsets: line(`O${n}`).map(Number), bytes: line(`B${n}`).join(' ') };
}

// Prepared launches compiled for their parameters and the generic launcher (no code from strings)
// write vectors and structs through the same path; both are checked.
test.each([
  ['compiled for its parameters', []],
  ['generic (node --disallow-code-generation-from-strings)', ['--disallow-code-generation-from-strings']],
] as const)('each parameter list packs the bytes and offsets g++ gives the same parameters as a struct (%s)', (_name, nodeArgs) => {
  const [, size, align, dAt, iAt] = expected[0].split(' ').map(Number);
  const launches = CASES.map((c, n) => {
    const prepare = c.types ?? JSON.stringify(`void k(${c.params.map((p, k) => `${p.type} m${k}`).join(', ')})`);
    const length = fromGxx(n).bytes.split(' ').length;
    return `{
      const f = kernel(0x100n + ${c.params.length}n, 'k${n}').prepare(${prepare});
      f({ grid: 1, block: 1 }, ${c.params.map(jsArgument).join(', ')});
      const at = Array.from(new BigUint64Array(koffi.view(fake.args(), ${8 * c.params.length})));
      const bytes = Array.from(new Uint8Array(koffi.view(at[0], ${length})), (b) => b.toString(16).padStart(2, '0')).join(' ');
      out.push({ offsets: at.map((a) => Number(a - at[0])), bytes });
    }`;
  });
  const r = runWithFake(
    fake.lib,
    `
    const S = { size: ${size}, align: ${align} };
    // S's bytes where g++ puts its fields, in the form asked for.
    const sBytes = (form, c, d, i) => {
      const b = new Uint8Array(S.size), dv = new DataView(b.buffer);
      dv.setInt8(0, c); dv.setFloat64(${dAt}, d, true); dv.setInt32(${iAt}, i, true);
      return form === 'ArrayBuffer' ? b.buffer : form === 'DataView' ? dv : form === 'object' ? { _u8: b } : b;
    };
    const out = [];
    ${launches.join('\n')}
    console.log(JSON.stringify(out));`,
    [...nodeArgs],
  );
  expect(r).toEqual(CASES.map((_, n) => fromGxx(n)));
});

describe('vectors and structs in a signature and an array of types (no C call)', () => {
  const k = new Kernel(0x104n as never, 'k', { isClosed: false } as never);

  test('a signature names vectors as C does; an array takes them by name and structs by layout or class', () => {
    expect(
      k.prepare('void k(const float3 p, struct float4 q, double2 d, __grid_constant__ const dim3 g, uchar3, double4_32a w, float *x)')
        .types,
    ).toEqual(['float3', 'float4', 'double2', 'dim3', 'uchar3', 'double4_32a', 'ptr']);
    const layout = { size: 24, align: 8 };
    const f = k.prepare(['i8', layout, cudart.float3, 'int2']);
    expect(f.types).toEqual(['i8', layout, cudart.float3, 'int2']);
    expect(() => f({ grid: 1, block: 1 }, 1)).toThrow(
      new TypeError('PreparedLaunch(k): takes 4 arguments (i8, struct(24 bytes, align 8), struct(12 bytes, align 4), int2), got 1'),
    );
  });

  test('a type that is neither a known name nor a valid layout is refused when prepared, naming it', () => {
    const t = (types: unknown[]) => {
      try {
        k.prepare(types as never);
        return 'prepared';
      } catch (e) {
        return `${(e as Error).constructor.name}: ${(e as Error).message}`;
      }
    };
    expect([
      t(['float5']),
      t([{ size: 12 }]),
      t([{ size: 0, align: 1 }]),
      t([{ size: 40000, align: 8 }]),
      t([{ size: 12, align: 8 }]),
      t([{ size: 12, align: 3 }]),
    ]).toEqual([
      "TypeError: Kernel.prepare(k): types[0] must be one of i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, ptr, tensormap, a CUDA vector type ('float3', 'int2', …) or a struct's layout ({ size, align } or a struct class), got 'float5'",
      "TypeError: Kernel.prepare(k): types[0] must be one of i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, ptr, tensormap, a CUDA vector type ('float3', 'int2', …) or a struct's layout ({ size, align } or a struct class), got an object (Object)",
      'RangeError: Kernel.prepare(k): types[0] is a struct whose size must be a byte count within [1, 32764], got 0',
      'RangeError: Kernel.prepare(k): types[0] is a struct whose size must be a byte count within [1, 32764], got 40000',
      'RangeError: Kernel.prepare(k): types[0] is a struct whose align must be a power of two that divides its size (12), got 8',
      'RangeError: Kernel.prepare(k): types[0] is a struct whose align must be a power of two that divides its size (12), got 3',
    ]);
  });

  test('a bad vector or struct argument is refused before any C call, naming the argument, the component and what was wrong', () => {
    const f = k.prepare(['float3', 'int2', 'uchar3', 'longlong2', 'double2', { size: 24, align: 8 }]);
    const good: unknown[] = [[1, 2, 3], [1, 2], [1, 2, 3], [1, 2], [1, 2], new Uint8Array(24)];
    const t = (i: number, v: unknown) => {
      const args = good.slice();
      args[i] = v;
      try {
        f({ grid: 1, block: 1 }, ...(args as never[]));
        return 'launched';
      } catch (e) {
        return `${(e as Error).constructor.name}: ${(e as Error).message}`;
      }
    };
    const vec3 = 'must be [x, y, z], { x, y, z } or a struct of 12 bytes, got';
    const struct = 'must be a struct of 24 bytes, or 24 bytes in an ArrayBuffer or a view of one, got';
    expect([
      t(0, 5),
      t(0, [1, 2]),
      t(0, [1, 2, '3']),
      t(0, { x: 1, y: 2 }),
      t(0, { x: 1, y: 2, z: 3, w: 4 }),
      t(0, new cudart.float4()),
      t(0, new Float32Array(3)),
      t(0, null),
      t(1, [1, 2.5]),
      t(1, { x: 2 ** 31, y: 0 }),
      t(2, { x: 1, y: 2, z: 256 }),
      t(3, [2n ** 63n, 0]),
      t(3, [0, 0.5]),
      t(4, [1n, 2]),
      t(5, new Uint8Array(16)),
      t(5, 5),
      t(5, new cudart.float3()),
    ]).toEqual([
      `TypeError: PreparedLaunch(k): argument 0 (float3) ${vec3} 5`,
      `TypeError: PreparedLaunch(k): argument 0 (float3) ${vec3} an array of 2`,
      'TypeError: PreparedLaunch(k): argument 0 (float3) component z must be a number, got the string "3"',
      'TypeError: PreparedLaunch(k): argument 0 (float3) component z must be a number, got undefined',
      'TypeError: PreparedLaunch(k): argument 0 (float3) has no component w, only x, y, z; got an object with w',
      `TypeError: PreparedLaunch(k): argument 0 (float3) ${vec3} a struct of 16 bytes (float4)`,
      `TypeError: PreparedLaunch(k): argument 0 (float3) ${vec3} a Float32Array of 12 bytes`,
      `TypeError: PreparedLaunch(k): argument 0 (float3) ${vec3} null`,
      'RangeError: PreparedLaunch(k): argument 1 (int2) component y must be an integer within [-2147483648, 2147483647], got 2.5',
      'RangeError: PreparedLaunch(k): argument 1 (int2) component x must be an integer within [-2147483648, 2147483647], got 2147483648',
      'RangeError: PreparedLaunch(k): argument 2 (uchar3) component z must be an integer within [0, 255], got 256',
      'RangeError: PreparedLaunch(k): argument 3 (longlong2) component x must be an integer within [-2^63, 2^63 - 1] (a number up to 2^53 - 1, or a bigint), got 9223372036854775808n',
      'RangeError: PreparedLaunch(k): argument 3 (longlong2) component y must be an integer within [-2^63, 2^63 - 1] (a number up to 2^53 - 1, or a bigint), got 0.5',
      'TypeError: PreparedLaunch(k): argument 4 (double2) component x must be a number, got 1n',
      `TypeError: PreparedLaunch(k): argument 5 (struct(24 bytes, align 8)) ${struct} a Uint8Array of 16 bytes`,
      `TypeError: PreparedLaunch(k): argument 5 (struct(24 bytes, align 8)) ${struct} 5`,
      `TypeError: PreparedLaunch(k): argument 5 (struct(24 bytes, align 8)) ${struct} a struct of 12 bytes (float3)`,
    ]);
    // The good arguments reach the launch (which fails here: no driver).
    expect(t(0, [1, 2, 3])).toMatch(/\(in cudaLaunchKernel\(k\)\)$/);
  });
});
