// Vectors and structs by value through a prepared launch on a GPU (issue #36): kernels compiled with
// NVRTC take float3, float4, double2, int3, uchar3, double3, longlong2, a 32-aligned double4_32a, dim3
// and a custom struct by value and write every component out, which the host reads back. The offsets
// the driver gives each parameter (cudaFuncGetParamInfo) are those the prepared launch packs at.
import { core, cudart } from '../../src';
import type * as coreTypes from '../../src/core';
import { paramLayout, type ParamType } from '../../src/core/launch/signature';
import { describeGpu } from './helpers';

const { Device, Program } = core;

const SOURCE = `
struct S { signed char c; double d; int i; };
extern "C" __global__ void sLayout(unsigned long long *out) {
  S t;
  out[0] = sizeof(S); out[1] = alignof(S); out[2] = (char *)&t.d - (char *)&t; out[3] = (char *)&t.i - (char *)&t;
}
extern "C" __global__ void byValue(signed char c, float3 a, float4 b, double2 e, int3 f, S s, uchar3 u, double3 g,
                                   longlong2 h, double *fo, long long *io) {
  fo[0] = a.x; fo[1] = a.y; fo[2] = a.z;
  fo[3] = b.x; fo[4] = b.y; fo[5] = b.z; fo[6] = b.w;
  fo[7] = e.x; fo[8] = e.y;
  fo[9] = s.d;
  fo[10] = g.x; fo[11] = g.y; fo[12] = g.z;
  io[0] = c; io[1] = f.x; io[2] = f.y; io[3] = f.z; io[4] = s.c; io[5] = s.i;
  io[6] = u.x; io[7] = u.y; io[8] = u.z; io[9] = h.x; io[10] = h.y;
}
extern "C" __global__ void aligned(signed char c, double4_32a w, dim3 d, short3 s, double *fo, long long *io) {
  fo[0] = w.x; fo[1] = w.y; fo[2] = w.z; fo[3] = w.w;
  io[0] = c; io[1] = d.x; io[2] = d.y; io[3] = d.z; io[4] = s.x; io[5] = s.y; io[6] = s.z;
}
`;

/** Each parameter's offset as the prepared launch packs them: in C order, each at its alignment. */
function packedOffsets(types: readonly ParamType[]): number[] {
  let at = 0;
  return types.map((t) => {
    const { size, align } = paramLayout(t);
    at = Math.ceil(at / align) * align;
    const o = at;
    at += size;
    return o;
  });
}

describeGpu('prepared launches with vectors and structs by value', () => {
  let mod: coreTypes.Module;
  beforeAll(() => {
    mod = Program.compile(SOURCE, { compiler: 'nvrtc' }).load();
  });
  afterAll(() => mod?.close());

  test('float3, float4, double2, int3, uchar3, double3, longlong2 and a custom struct reach the kernel, in each form a call takes', async () => {
    const d = Device.get(0);
    using layoutOut = d.allocate(32);
    mod.kernel('sLayout').launch({ grid: 1, block: 1 }, layoutOut);
    const [size, align, dAt, iAt] = Array.from(layoutOut.copyTo(new BigUint64Array(4)), Number);
    const S = { size, align };
    const sBytes = (c: number, x: number, i: number) => {
      const b = new Uint8Array(size);
      const dv = new DataView(b.buffer);
      dv.setInt8(0, c);
      dv.setFloat64(dAt, x, true);
      dv.setInt32(iAt, i, true);
      return b;
    };
    const k = mod.kernel('byValue');
    const types: ParamType[] = ['i8', 'float3', 'float4', 'double2', 'int3', S, 'uchar3', 'double3', 'longlong2', 'ptr', 'ptr'];
    expect(k.argumentsInfo.map((p) => p.offset)).toEqual(packedOffsets(types));
    const f = k.prepare(types);
    using fo = d.allocate(13 * 8);
    using io = d.allocate(11 * 8);
    const cfg = { grid: 1, block: 1 };
    const floats = [1.5, -2.25, 1024.125, 0.5, -0.25, 3, -4, 1e300, -7.5, 2.5, -3, 1e-300, 6.75];
    const ints = [-5n, -2147483648n, 2147483647n, 7n, -128n, -7n, 0n, 255n, 128n, -(2n ** 63n), 2n ** 63n - 1n];
    const read = () => [Array.from(fo.copyTo(new Float64Array(13))), Array.from(io.copyTo(new BigInt64Array(11)))];
    // Arrays and objects of components, the struct as a Uint8Array.
    f(
      cfg,
      -5,
      [1.5, -2.25, 1024.125],
      { x: 0.5, y: -0.25, z: 3, w: -4 },
      [1e300, -7.5],
      { x: -2147483648, y: 2147483647, z: 7 },
      sBytes(-128, 2.5, -7),
      [0, 255, 128],
      [-3, 1e-300, 6.75],
      [-(2n ** 63n), 2n ** 63n - 1n],
      fo,
      io,
    );
    expect(read()).toEqual([floats, ints]);
    fo.fill(0);
    io.fill(0);
    // The runtime's struct classes for the vectors, the struct as an ArrayBuffer; awaited.
    await f.async(
      cfg,
      -5,
      new cudart.float3({ x: 1.5, y: -2.25, z: 1024.125 }),
      new cudart.float4({ x: 0.5, y: -0.25, z: 3, w: -4 }),
      new cudart.double2({ x: 1e300, y: -7.5 }),
      new cudart.int3({ x: -2147483648, y: 2147483647, z: 7 }),
      sBytes(-128, 2.5, -7).buffer,
      new cudart.uchar3({ x: 0, y: 255, z: 128 }),
      new cudart.double3({ x: -3, y: 1e-300, z: 6.75 }),
      { x: -(2n ** 63n), y: 2n ** 63n - 1n },
      fo,
      io,
    );
    expect(read()).toEqual([floats, ints]);
  });

  test('a 32-aligned double4_32a, a dim3 and a short3 from the C signature', async () => {
    const d = Device.get(0);
    const k = mod.kernel('aligned');
    const f = k.prepare('void aligned(signed char c, double4_32a w, dim3 d, short3 s, double *fo, long long *io)');
    expect(f.types).toEqual(['i8', 'double4_32a', 'dim3', 'short3', 'ptr', 'ptr']);
    // The driver placed the 32-aligned parameter at 16 in its parameter space: on the H100 (driver 580)
    // it gave offsets 0, 16, 48, 60, 72, 80 where the C layout the prepared launch packs by gives 0, 32,
    // 64, 76, 88, 96. The launch passes a pointer per parameter (kernelParams), from which the driver
    // copies each value to its own offset, so the values below do not depend on where they are packed.
    const driver = k.argumentsInfo.map((p) => p.offset);
    expect(driver.slice(0, 2)).toEqual([0, 16]);
    expect(packedOffsets(f.types).slice(0, 2)).toEqual([0, 32]);
    using fo = d.allocate(4 * 8);
    using io = d.allocate(7 * 8);
    await f.async(
      { grid: 1, block: 1 },
      3,
      [0.125, -1, 2, 1e10],
      new cudart.dim3({ x: 7, y: 8, z: 9 }),
      { x: -32768, y: 32767, z: -1 },
      fo,
      io,
    );
    expect(Array.from(fo.copyTo(new Float64Array(4)))).toEqual([0.125, -1, 2, 1e10]);
    expect(Array.from(io.copyTo(new BigInt64Array(7)))).toEqual([3n, 7n, 8n, 9n, -32768n, 32767n, -1n]);
  });
});
