// Kernel arguments: each C width, device pointers, structs by value, the pre-packed form, and the
// errors for what is ambiguous or out of range. A fake libcudart reads what a launch passed.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import koffi from 'koffi';
import { cudart, cuda } from '../../../src';
import { kernelArgs, keptKernelArgs } from '../../../src/ffi/kernel-args';
import { CUDART_VERSION } from '../../../src/runtime/constants.gen';

const { i8, u8, i16, i32, u32, i64, u64, f16, f32, f64, ptr, KernelArgs } = cudart;

test('a plain number is never taken as a kernel argument', () => {
  expect(() => cudart.cudaLaunchKernel(1n, { x: 1, y: 1, z: 1 }, { x: 1, y: 1, z: 1 }, [7 as any], 0, null)).toThrow(
    /cudaLaunchKernel: parameter 'args\[0\]' must be a typed kernel argument: a plain number is ambiguous, wrap it as i32\(n\)/,
  );
});

test('a value that does not fit its type is a RangeError', () => {
  expect(() => i8(200)).toThrow(new RangeError("i8(): parameter 'value' must be an integer within [-128, 127], got 200"));
  expect(() => u32(-1)).toThrow(RangeError);
  expect(() => i32(1.5)).toThrow(RangeError);
  expect(() => u64(-1n)).toThrow(/u64\(\): parameter 'value' must be an integer within \[0, 2\^64\), got -1n/);
  expect(() => f32('1' as any)).toThrow(TypeError);
});

test('arguments are laid out at their C alignment', () => {
  const a = new KernelArgs([i8(1), f64(2), i16(3), ptr(0x1000n), u8(5)]);
  expect(a.length).toBe(5);
  const dv = new DataView(a.buffer.buffer, a.buffer.byteOffset, a.buffer.byteLength);
  expect([dv.getInt8(0), dv.getFloat64(8, true), dv.getInt16(16, true), dv.getBigUint64(24, true), dv.getUint8(32)]).toEqual([
    1,
    2,
    3,
    0x1000n,
    5,
  ]);
  expect(a.buffer.byteLength).toBe(33);
});

test('set() changes an argument in place and keeps its type', () => {
  const a = new KernelArgs([i32(1), f32(0.5)]);
  a.set(0, 42);
  a.set(1, f32(1.5));
  const dv = new DataView(a.buffer.buffer, a.buffer.byteOffset, a.buffer.byteLength);
  expect([dv.getInt32(0, true), dv.getFloat32(4, true)]).toEqual([42, 1.5]);
  expect(() => a.set(1, i32(3))).toThrow(/KernelArgs.set: parameter 'value\[1\]' must be a f32 argument/);
  expect(() => a.set(2, 1)).toThrow(RangeError);
});

test('set() with a plain number applies the same range checks as the wrappers, and changes nothing when it refuses', () => {
  const a = new KernelArgs([i32(7), u8(1), i64(0n), u64(0n), f64(0), f16(0), ptr(0n)]);
  const dv = new DataView(a.buffer.buffer, a.buffer.byteOffset, a.buffer.byteLength);
  for (const bad of [1.5, 2 ** 32 + 7, NaN, 2 ** 31]) {
    expect(() => a.set(0, bad)).toThrow(
      new RangeError(`KernelArgs.set: parameter 'value' must be an integer within [-2147483648, 2147483647], got ${bad}`),
    );
  }
  expect(dv.getInt32(0, true)).toBe(7);
  expect(() => a.set(1, 300)).toThrow(new RangeError("KernelArgs.set: parameter 'value' must be an integer within [0, 255], got 300"));
  expect(() => a.set(1, -1)).toThrow(RangeError);
  expect(() => a.set(2, 2 ** 53)).toThrow(
    new RangeError(`KernelArgs.set: parameter 'value' must be a bigint or a safe integer, got ${2 ** 53}`),
  );
  expect(() => a.set(3, -1)).toThrow(/must be an integer within \[0, 2\^64\), got -1/);
  expect(() => a.set(2, 2n ** 63n)).toThrow(/must be an integer within \[-2\^63, 2\^63\), got 9223372036854775808n/);
  // An f16 argument's number is a value, converted to half precision as f16() converts it.
  expect(() => a.set(5, 'x' as never)).toThrow(TypeError);
  a.set(5, 65536);
  expect(dv.getUint16(32, true)).toBe(0x7c00);
  a.set(5, -2);
  expect(dv.getUint16(32, true)).toBe(0xc000);
  expect(() => a.set(0, 'x' as never)).toThrow(TypeError);
  // What the checks let through lands in place.
  a.set(0, -5);
  a.set(1, 255);
  a.set(2, -(2n ** 63n));
  a.set(3, 2n ** 64n - 1n);
  a.set(4, 0.25);
  a.set(2, 9);
  expect([dv.getInt32(0, true), dv.getUint8(4), dv.getBigInt64(8, true), dv.getBigUint64(16, true), dv.getFloat64(24, true)]).toEqual([
    -5,
    255,
    9n,
    2n ** 64n - 1n,
    0.25,
  ]);
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-kargs-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('a launch passes every width, a pointer and a struct by value to C intact', () => {
  const src = path.join(tmp, 'k.c');
  const lib = path.join(tmp, 'libcudart-kargs.so');
  fs.writeFileSync(
    src,
    `
    #include <string.h>
    typedef struct { unsigned x, y, z; } dim3;
    typedef struct { char c; double d; } S;
    static char seen[128];
    int cudaRuntimeGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }
    int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **a, unsigned long sm, void *s) {
      char *o = seen;
      #define PUT(T, i) { T v = *(T *)a[i]; memcpy(o, &v, sizeof v); o += 8; }
      PUT(signed char, 0) PUT(unsigned char, 1) PUT(short, 2) PUT(unsigned short, 3) PUT(int, 4) PUT(unsigned, 5)
      PUT(long long, 6) PUT(unsigned long long, 7) PUT(unsigned short, 8) PUT(float, 9) PUT(double, 10) PUT(void *, 11)
      S st = *(S *)a[12]; memcpy(o, &st.c, 1); o += 8; memcpy(o, &st.d, 8);
      return 0;
    }
    void last(void *out) { memcpy(out, seen, sizeof seen); }`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, src]);
  const script = `
    const koffi = require('koffi');
    const { cudart } = require('./src');
    const { i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, ptr } = cudart;
    class S { constructor() { this._u8 = new Uint8Array(16); new DataView(this._u8.buffer).setInt8(0, 9); new DataView(this._u8.buffer).setFloat64(8, 2.25, true); } }
    S.layout = { size: 16, align: 8 };
    const r = cudart.cudaLaunchKernel(1n, { x: 1, y: 1, z: 1 }, { x: 1, y: 1, z: 1 },
      [i8(-5), u8(250), i16(-30000), u16(60000), i32(-2e9), u32(4e9), i64(-(2n ** 62n)), u64(2n ** 63n), f16.bits(0x3c00), f32(1.5), f64(-0.125), ptr(0xdeadbeefn), new S()], 0, null);
    const out = Buffer.alloc(128);
    koffi.load(${JSON.stringify(lib)}).func('void last(void *)')(out);
    const v = [out.readInt8(0), out.readUInt8(8), out.readInt16LE(16), out.readUInt16LE(24), out.readInt32LE(32), out.readUInt32LE(40),
      String(out.readBigInt64LE(48)), String(out.readBigUInt64LE(56)), out.readUInt16LE(64), out.readFloatLE(72), out.readDoubleLE(80),
      String(out.readBigUInt64LE(88)), out.readInt8(96), out.readDoubleLE(104)];
    console.log(JSON.stringify([r, v]));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib },
  });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual([
    [0],
    [-5, 250, -30000, 60000, -2e9, 4e9, String(-(2n ** 62n)), String(2n ** 63n), 0x3c00, 1.5, -0.125, String(0xdeadbeefn), 9, 2.25],
  ]);
});

test('the extra-buffer form points at the packed values and their size', () => {
  const a = new KernelArgs([i32(7), f64(1)]);
  const extra = cuda.launchParamBuffer(a);
  const dv = new DataView(extra.buffer, extra.byteOffset, 48);
  expect(dv.getBigUint64(0, true)).toBe(1n);
  expect(dv.getBigUint64(16, true)).toBe(2n);
  expect(dv.getBigUint64(32, true)).toBe(0n);
  expect(dv.getBigUint64(40, true)).toBe(16n);
});

test("a launch given an array packs into the previous launch's memory when the types match; struct fields get their own", () => {
  const first = kernelArgs([i32(1), f32(2), 0x1000n], 'cudaLaunchKernel', 'args') as Uint8Array;
  const again = kernelArgs([i32(3), f32(4), 0x2000n], 'cudaLaunchKernel', 'args') as Uint8Array;
  expect(again).toBe(first);
  // The pointers still point at the values, which are now the new ones.
  const values = new DataView(first.buffer, Number(new DataView(first.buffer).getBigUint64(0, true) - (koffi.address(first) as bigint)));
  expect([values.getInt32(0, true), values.getFloat32(4, true), values.getBigUint64(8, true)]).toEqual([3, 4, 0x2000n]);
  expect(kernelArgs([f32(1), f32(2), 0x1000n], 'cudaLaunchKernel', 'args')).not.toBe(first);
  const kept = keptKernelArgs([i32(1)], 'cudaKernelNodeParams', 'kernelParams');
  expect(keptKernelArgs([i32(1)], 'cudaKernelNodeParams', 'kernelParams')).not.toBe(kept);
  expect(() => kernelArgs([i32(1), f32(2), -1n], 'cudaLaunchKernel', 'args')).toThrow(/^cudaLaunchKernel: parameter 'args\[2\]'/);
});

test('f16(x) converts a number to half precision, rounding to nearest even; f16.bits(raw) keeps the 16 raw bits', () => {
  const bits = (x: number) => f16(x).value;
  // Exact values, the largest and smallest of each range, and the specials.
  expect([1, -2, 0.5, 65504, 2 ** -14, 2 ** -24, 0, 1 / 3].map(bits)).toEqual([0x3c00, 0xc000, 0x3800, 0x7bff, 0x0400, 0x0001, 0, 0x3555]);
  expect([Infinity, -Infinity, 65520, 65519, NaN, -0].map(bits)).toEqual([0x7c00, 0xfc00, 0x7c00, 0x7bff, 0x7e00, 0x8000]);
  // 0.78 lies between halves 0x3a3d (0.7802734375) and 0x3a3c (0.779296875): the nearer wins.
  expect(bits(0.78)).toBe(0x3a3d);
  // A tie goes to the even mantissa: 1 + 2^-11 is half-way between 0x3c00 and 0x3c01.
  expect(bits(1 + 2 ** -11)).toBe(0x3c00);
  expect(bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
  // Half-way below the smallest subnormal rounds to zero (even); just above rounds up.
  expect(bits(2 ** -25)).toBe(0);
  expect(bits(2 ** -25 * 1.5)).toBe(1);
  expect(f16.bits(0x3c00)).toEqual(new cudart.KernelArg('f16', 0x3c00));
  expect(() => f16.bits(65536)).toThrow(/must be an integer within \[0, 65535\], got 65536/);
  expect(() => f16('1' as never)).toThrow(TypeError);
});

test('i64(), u64() and ptr() given a number hold the bigint BigInt() makes of it, at both ends of the safe range and across the 32-bit word', () => {
  const signed = [0, -0, 1, -1, 5, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 32 - 1, 2 ** 32, -(2 ** 32), -(2 ** 32) - 1, 2 ** 52 + 3];
  const edges = [...signed, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 123456789012345, -123456789012345];
  for (const v of edges) {
    const a = i64(v);
    expect(typeof a.value).toBe('bigint');
    expect(a.value).toBe(BigInt(v));
  }
  for (const v of edges.filter((x) => x >= 0)) {
    expect(u64(v).value).toBe(BigInt(v));
    expect(ptr(v).value).toBe(BigInt(v));
  }
  // KernelArgs.set takes the same conversion: the bytes are the value's two's complement.
  const a = new KernelArgs([i64(0n), u64(0n)]);
  const dv = new DataView(a.buffer.buffer, a.buffer.byteOffset, a.buffer.byteLength);
  a.set(0, -(2 ** 32) - 1);
  expect(dv.getBigInt64(0, true)).toBe(-(2n ** 32n) - 1n);
  a.set(1, Number.MAX_SAFE_INTEGER);
  expect(dv.getBigUint64(8, true)).toBe(2n ** 53n - 1n);
});
