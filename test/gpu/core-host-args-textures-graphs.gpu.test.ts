// Core, part 2, on a GPU: In/Out/InOut host arguments, prepared launches, CUDA arrays with texture
// and surface objects, a TMA (bulk tensor copy) kernel, and GraphBuilder with conditional nodes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../src';
import type * as coreTypes from '../../src/core';
import { describeGpu } from './helpers';

const {
  Device,
  Program,
  GraphBuilder,
  CudaArray,
  ChannelFormatDescriptor,
  TextureObject,
  SurfaceObject,
  TensorMapDescriptor,
  In,
  Out,
  InOut,
  i32,
} = core;

// nvcc (cuda_runtime.h included, as for any .cu file): the texture, surface, TMA and graph device APIs.
const SOURCE = `
extern "C" __global__ void twice(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
extern "C" __global__ void addOne(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void saxpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void sample2D(cudaTextureObject_t t, const float *xs, const float *ys, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}
extern "C" __global__ void readLayered(cudaTextureObject_t t, float *out, int w, int h, int layers) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= w * h * layers) return;
  int x = i % w, y = (i / w) % h, l = i / (w * h);
  out[i] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}
extern "C" __global__ void readCubemapLayered(cudaTextureObject_t t, float *out, int layers) {
  int i = threadIdx.x;
  if (i >= 6 * layers) return;
  int face = i % 6, layer = i / 6;
  float d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  out[i] = texCubemapLayered<float>(t, d[face][0], d[face][1], d[face][2], layer);
}
extern "C" __global__ void writeSurface(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite((float)(y * 1000 + x), s, x * (int)sizeof(float), y);
}
// Graph kernels: conditions set from the device, one step of a loop, a mark.
extern "C" __global__ void setIf(cudaGraphConditionalHandle h, const int *flag) { cudaGraphSetConditional(h, *flag != 0); }
extern "C" __global__ void setWhile(cudaGraphConditionalHandle h, const int *counter, int limit) { cudaGraphSetConditional(h, *counter < limit); }
extern "C" __global__ void step(int *counter, int *acc) {
  int c = *counter;
  acc[c] = c * c + (c > 0 ? acc[c - 1] : 0);
  *counter = c + 1;
}
extern "C" __global__ void mark(int *out, int v) { *out = v; }
`;

// A bulk tensor copy (sm_90): one 8 x 16 tile of a float tensor into shared memory through an
// mbarrier, then out to global memory. The map is a CUtensorMap passed by value.
const TMA = `
struct __align__(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void tmaTile(const __grid_constant__ TensorMap map, float *out, int x0, int y0) {
  __shared__ __align__(128) float tile[8 * 16];
  __shared__ __align__(8) unsigned long long bar;
  unsigned barAddr = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned tileAddr = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(barAddr));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(barAddr), "r"(8 * 16 * 4) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(tileAddr), "l"(&map), "r"(x0), "r"(y0), "r"(barAddr) : "memory");
  }
  asm volatile("{\\n .reg .pred p;\\n LAB_WAIT:\\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\\n @!p bra LAB_WAIT;\\n}" :: "r"(barAddr) : "memory");
  for (int i = threadIdx.x; i < 8 * 16; i += blockDim.x) out[i] = tile[i];
}
`;

let cache: string;
beforeAll(() => {
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'core-host-args-'));
});
afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

/** How many elements of `a` differ from `want(i)` by more than `tol`. */
function mismatches(a: ArrayLike<number>, want: (i: number) => number, tol = 0): number {
  let bad = 0;
  for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i] - want(i)) <= tol)) bad++;
  return bad;
}

describeGpu('core, part 2, on a GPU', () => {
  let mod: coreTypes.Module;
  beforeAll(() => {
    mod = Program.compile(SOURCE, { compiler: 'nvcc', cache }).load();
  });
  afterAll(() => mod.close());

  test('In/Out/InOut round trips of 1 M floats, sync and awaited, on the default stream and a stream', async () => {
    const n = 1 << 20;
    const cfg = { grid: n / 256, block: 256 };
    const xs = Float32Array.from({ length: n }, (_, i) => i % 1000);
    const ys = new Float32Array(n);
    mod.kernel('twice').launch(cfg, In(xs), Out(ys), i32(n));
    expect(mismatches(ys, (i) => 2 * (i % 1000))).toBe(0);
    const zs = xs.slice();
    mod.kernel('addOne').launch(cfg, InOut(zs), i32(n));
    expect(mismatches(zs, (i) => (i % 1000) + 1)).toBe(0);
    const s = Device.get(0).createStream();
    const ws = new Float32Array(n);
    await mod.kernel('twice').launchAsync({ ...cfg, stream: s }, In(zs), Out(ws), i32(n));
    expect(mismatches(ws, (i) => 2 * ((i % 1000) + 1))).toBe(0);
    await mod.kernel('addOne').launchAsync(cfg, InOut(ws), i32(n));
    expect(mismatches(ws, (i) => 2 * ((i % 1000) + 1) + 1)).toBe(0);
    s.close();
  });

  test('a prepared launch with plain numbers, a refused fraction, the timed and async forms', async () => {
    const d = Device.get(0);
    const n = 100_000;
    const x = d.allocate(4 * n).copyFrom(Float32Array.from({ length: n }, (_, i) => i));
    const y = d.allocate(4 * n).copyFrom(new Float32Array(n).fill(1));
    const f = mod.kernel('saxpy').prepare('void saxpy(float *y, const float *x, float a, int n)');
    const cfg = { grid: Math.ceil(n / 256), block: 256 };
    f(cfg, y, x, 2.0, n);
    expect(mismatches(y.copyTo(new Float32Array(n)), (i) => 2 * i + 1)).toBe(0);
    expect(() => f(cfg, y, x, 2.0, 1.5)).toThrow(
      new RangeError('PreparedLaunch(saxpy): argument 3 (i32) must be an integer within [-2147483648, 2147483647], got 1.5'),
    );
    const ms = await f.timed(cfg, y, x, 0.5, n);
    expect(ms).toBeGreaterThan(0);
    await f.async(cfg, y, x, 1, n);
    expect(mismatches(y.copyTo(new Float32Array(n)), (i) => 2 * i + 1 + 0.5 * i + i)).toBe(0);
    x.close();
    y.close();
  });

  test("a 2D texture with linear filtering, sampled at fractional coordinates, equals the host's bilinear interpolation", () => {
    const W = 16,
      H = 12;
    // Multiples of 1/64 below 1: with weights in eighths every product and sum is exact in fp32, so
    // the device's result and the host's agree to the bit (1e-5 is only a margin).
    const data = Float32Array.from({ length: W * H }, (_, i) => (((i * 37) % 101) - 50) / 64);
    const arr = CudaArray.create({ format: ChannelFormatDescriptor.of('f32'), width: W, height: H }).copyFrom(data);
    const tex = TextureObject.create(arr, { filterMode: 'linear', addressMode: 'clamp' });
    // Fractions of 1/8: exact in the hardware's 8-bit interpolation weights, so the host's
    // formula must match to float precision.
    const pts: [number, number][] = [];
    for (let k = 0; k < 200; k++) pts.push([1 + ((k * 13) % ((W - 2) * 8)) / 8, 1 + ((k * 7) % ((H - 2) * 8)) / 8]);
    const xs = Float32Array.from(pts, (p) => p[0]);
    const ys = Float32Array.from(pts, (p) => p[1]);
    const out = new Float32Array(pts.length);
    mod.kernel('sample2D').launch({ grid: 1, block: 256 }, tex, In(xs), In(ys), Out(out), i32(pts.length));
    const at = (i: number, j: number) => data[Math.min(Math.max(j, 0), H - 1) * W + Math.min(Math.max(i, 0), W - 1)];
    const bilinear = (x: number, y: number) => {
      const xb = x - 0.5,
        yb = y - 0.5;
      const i = Math.floor(xb),
        j = Math.floor(yb);
      const a = xb - i,
        b = yb - j;
      return (1 - a) * (1 - b) * at(i, j) + a * (1 - b) * at(i + 1, j) + (1 - a) * b * at(i, j + 1) + a * b * at(i + 1, j + 1);
    };
    expect(mismatches(out, (k) => bilinear(pts[k][0], pts[k][1]), 1e-5)).toBe(0);
    tex.close();
    arr.close();
  });

  test('a layered array and a cubemap array: copies in and out, and a kernel reads every layer and face', () => {
    const W = 8,
      H = 4,
      L = 3;
    const layeredData = Float32Array.from({ length: W * H * L }, (_, i) => i * 0.5);
    const layered = CudaArray.create({ format: ChannelFormatDescriptor.of('f32'), width: W, height: H, layers: L }).copyFrom(layeredData);
    expect(Array.from(layered.copyTo(new Float32Array(W * H * L)))).toEqual(Array.from(layeredData));
    const t1 = TextureObject.create(layered);
    const out1 = new Float32Array(W * H * L);
    mod.kernel('readLayered').launch({ grid: 1, block: 128 }, t1, Out(out1), i32(W), i32(H), i32(L));
    expect(Array.from(out1)).toEqual(Array.from(layeredData));
    // 1 x 1 faces: every direction into a face reads its one element.
    const CL = 2;
    const cubeData = Float32Array.from({ length: 6 * CL }, (_, i) => Math.floor(i / 6) * 10 + (i % 6));
    const cube = CudaArray.create({ format: ChannelFormatDescriptor.of('f32'), width: 1, height: 1, cubemap: true, layers: CL }).copyFrom(
      cubeData,
    );
    const t2 = TextureObject.create(cube);
    const out2 = new Float32Array(6 * CL);
    mod.kernel('readCubemapLayered').launch({ grid: 1, block: 32 }, t2, Out(out2), i32(CL));
    expect(Array.from(out2)).toEqual(Array.from(cubeData));
    for (const r of [t1, t2, layered, cube]) r.close();
  });

  test('a surface written by a kernel reads back', () => {
    const W = 40,
      H = 5;
    const arr = CudaArray.create({ format: ChannelFormatDescriptor.of('f32'), width: W, height: H, surface: true });
    const surf = SurfaceObject.create(arr);
    mod.kernel('writeSurface').launch({ grid: [1, H], block: 64 }, surf, i32(W), i32(H));
    const back = arr.copyTo(new Float32Array(W * H));
    expect(mismatches(back, (i) => Math.floor(i / W) * 1000 + (i % W))).toBe(0);
    surf.close();
    arr.close();
  });

  test('a TMA kernel copies the right tile (bulk tensor copy into shared memory, sm_90+)', () => {
    const d = Device.get(0);
    if (d.computeCapability[0] < 9) {
      // Narrow and said: TMA needs Hopper or later.
      console.warn(`TMA test skipped: device 0 is sm_${d.computeCapability.join('')}, TMA needs sm_90 or later`);
      return;
    }
    const rows = 64,
      cols = 32;
    const buf = d.allocate(rows * cols * 4).copyFrom(Float32Array.from({ length: rows * cols }, (_, i) => i));
    const map = TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [rows, cols], box: [8, 16] });
    const tma = Program.compile(TMA, { compiler: 'nvcc', cache }).load();
    const out = d.allocate(8 * 16 * 4);
    const x0 = 16,
      y0 = 24;
    tma.kernel('tmaTile').launch({ grid: 1, block: 32 }, map, out, i32(x0), i32(y0));
    expect(mismatches(out.copyTo(new Float32Array(8 * 16)), (i) => (y0 + Math.floor(i / 16)) * cols + x0 + (i % 16))).toBe(0);
    // The same through a prepared launch (the descriptor's 128 bytes by value).
    out.fill(0);
    const f = tma.kernel('tmaTile').prepare('void tmaTile(const __grid_constant__ CUtensorMap map, float *out, int x0, int y0)');
    f({ grid: 1, block: 32 }, map, out, 0, 8);
    expect(mismatches(out.copyTo(new Float32Array(8 * 16)), (i) => (8 + Math.floor(i / 16)) * cols + (i % 16))).toBe(0);
    tma.close();
    out.close();
    buf.close();
  });

  test('a graph with an if (and else) and a while node computes what the same code on the host computes', async () => {
    const d = Device.get(0);
    const s = d.createStream();
    const limit = 10;
    const flag = d.allocate(4),
      counter = d.allocate(4),
      acc = d.allocate(4 * limit),
      out = d.allocate(4),
      captured = d.allocate(4);
    const b = GraphBuilder.create(d);
    const zeroCounter = b.memset(counter, 0);
    const zeroAcc = b.memset(acc, 0);
    const hIf = b.conditionalHandle();
    const setIf = b.kernel(mod.kernel('setIf'), { grid: 1, block: 1 }, [hIf, flag]);
    const ifNode = b.if(hIf, { after: [setIf], else: true });
    ifNode.then.kernel(mod.kernel('mark'), { grid: 1, block: 1 }, [out, i32(1)]);
    ifNode.else!.kernel(mod.kernel('mark'), { grid: 1, block: 1 }, [out, i32(2)]);
    const hWhile = b.conditionalHandle();
    const setWhile = b.kernel(mod.kernel('setWhile'), { grid: 1, block: 1 }, [hWhile, counter, i32(limit)], {
      after: [ifNode.node, zeroCounter, zeroAcc],
    });
    const loop = b.while(hWhile, { after: [setWhile] });
    const stepNode = loop.body.kernel(mod.kernel('step'), { grid: 1, block: 1 }, [counter, acc]);
    loop.body.kernel(mod.kernel('setWhile'), { grid: 1, block: 1 }, [hWhile, counter, i32(limit)], { after: [stepNode] });
    // Stream work captured into the builder after the loop.
    const leaves = await b.capture(s, (st) => mod.kernel('mark').launch({ grid: 1, block: 1, stream: st }, captured, i32(7)), {
      after: [loop.node],
    });
    expect(leaves.length).toBe(1);
    const dot = path.join(cache, 'graph.dot');
    b.debugDot(dot);
    expect(fs.readFileSync(dot, 'utf8')).toMatch(/^digraph/);
    const exec = b.instantiate();

    // The host's version of the same program.
    const host = (f: number) => {
      const a = new Array<number>(limit).fill(0);
      let c = 0;
      while (c < limit) {
        a[c] = c * c + (c > 0 ? a[c - 1] : 0);
        c++;
      }
      return { out: f !== 0 ? 1 : 2, counter: c, acc: a, captured: 7 };
    };
    for (const f of [1, 0]) {
      flag.copyFrom(new Int32Array([f]));
      captured.fill(0);
      exec.launch(s);
      await s.synchronize();
      expect({
        out: out.copyTo(new Int32Array(1))[0],
        counter: counter.copyTo(new Int32Array(1))[0],
        acc: Array.from(acc.copyTo(new Int32Array(limit))),
        captured: captured.copyTo(new Int32Array(1))[0],
      }).toEqual(host(f));
    }
    exec.close();
    b.close();
    for (const r of [flag, counter, acc, out, captured, s]) r.close();
  });
});
