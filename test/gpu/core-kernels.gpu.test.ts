// The core layer's kernels, memory kinds and graphs on a GPU: Program (NVRTC and nvcc), Module,
// Kernel, ElementwiseKernel, managed memory, MemoryPool, CachingAllocator, stream capture.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../src';
import { describeGpu, gpu } from './helpers';

const { Device, Program, Module, ElementwiseKernel, CachingAllocator, i32, f32 } = core;
const fatbin = path.join(__dirname, '..', '..', 'examples', 'kernels', 'samples.fatbin');

const SCALE = `
#include "params.h"
template <typename T> __global__ void scale(T *x, T by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * by + OFFSET;
}
extern "C" __global__ void fillIndex(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}
`;

let cache: string;
beforeAll(() => {
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'core-kernels-'));
});
afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

describeGpu('core kernels, memory and graphs on a GPU', () => {
  test('Program with NVRTC: headers, options, name expressions, the disk cache; a kernel launched with typed arguments', () => {
    const d = Device.get(0);
    const options = {
      headers: { 'params.h': '#define OFFSET ADD\n' },
      options: ['-DADD=1.0f', '-std=c++17'],
      nameExpressions: ['scale<float>', 'scale<double>'],
      cache,
    };
    const p = Program.compile(SCALE, options);
    expect(p.compiler).toMatch(/^nvrtc 13\.\d+$/);
    expect([p.fromCache, p.arch]).toEqual([false, `sm_${d.computeCapability.join('')}`]);
    expect(p.loweredName('scale<float>')).toMatch(/^_Z5scaleIfEvPT_S0_i$/);
    expect(Program.compile(SCALE, options).fromCache).toBe(true);
    const mod = p.load();
    expect(mod.kernelNames().sort()).toEqual(['_Z5scaleIdEvPT_S0_i', '_Z5scaleIfEvPT_S0_i', 'fillIndex']);
    const n = 1000;
    const buf = d.allocate(n * 4);
    buf.copyFrom(Float32Array.from({ length: n }, (_, i) => i));
    const k = mod.kernel('scale<float>');
    k.launch({ grid: Math.ceil(n / 128), block: 128 }, buf, f32(2), i32(n));
    // A second launch with other values reuses the packed arguments in place.
    k.launch({ grid: [Math.ceil(n / 128), 1, 1], block: { x: 128 } }, buf, f32(0.5), i32(n));
    const out = buf.copyTo(new Float32Array(n));
    expect(out.every((x, i) => x === (i * 2 + 1) * 0.5 + 1)).toBe(true);
    expect(() => k.launch({ grid: 1, block: 1 }, buf, 2 as never, i32(n))).toThrow(
      'Kernel.launch(scale<float>): argument 1 is a plain number (2); say its C type: i32(n), u32(n), f32(x), f64(x), …',
    );
    expect(() => k.launch({ grid: 0, block: 1 }, buf, f32(1), i32(n))).toThrow(
      "Kernel.launch: 'grid' must be a positive integer or [x, y, z] of them, got 0",
    );
    expect(() => mod.kernel('nope')).toThrow(/^Module\.kernel: no kernel 'nope' in this module; it has /);
    buf.close();
    mod.close();
    expect(() => k.launch({ grid: 1, block: 1 }, f32(1))).toThrow('Kernel.launch(scale<float>): the Module it belongs to was closed');
  });

  test('a launch like the last one (the fast path, arguments written in place) passes every scalar type to the kernel', () => {
    const { i8, u8, i16, u16, u32, f64, i64, u64, KernelArg } = core;
    const ECHO = `
extern "C" __global__ void echo(signed char a, unsigned char b, short c, unsigned short d, int e, unsigned f,
                                float g, double h, long long i, unsigned long long j, long long *out) {
  out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f;
  out[6] = (long long)(g * 4.0f); out[7] = (long long)(h * 4.0); out[8] = i; out[9] = (long long)j;
}`;
    const d = Device.get(0);
    const mod = Program.compile(ECHO, { cache: false, name: 'echo.cu' }).load();
    const k = mod.kernel('echo');
    const out = d.allocate(10 * 8);
    const cfg = { grid: 1, block: 1 };
    const run = (...args: Parameters<typeof k.launch>[1][]) => {
      k.launch(cfg, ...args);
      return Array.from(out.copyTo(new BigInt64Array(10)), String);
    };
    const first = run(
      i8(-2),
      u8(250),
      i16(-300),
      u16(65000),
      i32(-7),
      u32(4000000000),
      f32(1.5),
      f64(-2.25),
      i64(-(2n ** 62n)),
      u64(2n ** 63n + 5n),
      out,
    );
    // The same config object and types: the fast path writes the new values over the last ones.
    const second = run(i8(3), u8(4), i16(5), u16(6), i32(7), u32(8), f32(-0.5), f64(10), i64(11n), u64(12n), out);
    // A 64-bit KernelArg made with new and a number: the general path converts it.
    const third = run(
      i8(0),
      u8(0),
      i16(0),
      u16(0),
      i32(0),
      u32(0),
      f32(0),
      f64(0),
      new KernelArg('i64', -13),
      new KernelArg('u64', 14),
      out,
    );
    expect(first).toEqual(['-2', '250', '-300', '65000', '-7', '4000000000', '6', '-9', String(-(2n ** 62n)), String(-(2n ** 63n) + 5n)]);
    expect(second).toEqual(['3', '4', '5', '6', '7', '8', '-2', '40', '11', '12']);
    expect(third).toEqual(['0', '0', '0', '0', '0', '0', '0', '0', '-13', '14']);
    out.close();
    mod.close();
  });

  test('a compile error is an NvrtcError with the log', () => {
    let e: unknown;
    try {
      Program.compile('__global__ void bad() { nope(); }', { cache: false, name: 'bad.cu' });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(core.NvrtcError);
    expect((e as Error).message).toMatch(/^NVRTC_ERROR_COMPILATION: bad\.cu\(1\): error: identifier "nope" is undefined/);
    expect((e as InstanceType<typeof core.NvrtcError>).log).toMatch(/1 error detected/);
  });

  test('the nvcc path makes code that loads and runs too', () => {
    const d = Device.get(0);
    const p = Program.compile(SCALE, { compiler: 'nvcc', headers: { 'params.h': '#define OFFSET 0\n' }, cache: false });
    expect(p.compiler).toMatch(/^nvcc /);
    const mod = p.load();
    const out = d.allocate(64 * 4);
    mod.kernel('fillIndex').launch({ grid: 1, block: 64 }, out, i32(64));
    expect(Array.from(out.copyTo(new Int32Array(64)))).toEqual(Array.from({ length: 64 }, (_, i) => i));
    out.close();
    mod.close();
  });

  test('Module.load takes a fatbin file or its bytes; kernel attributes, occupancy, a settable attribute', () => {
    const fromFile = Module.load(fatbin);
    const fromBytes = Module.load(new Uint8Array(fs.readFileSync(fatbin)));
    const k = fromBytes.kernel('vectorAdd');
    expect(fromFile.kernelNames()).toContain('vectorAdd');
    const a = k.attributes();
    expect(a.maxThreadsPerBlock).toBeGreaterThanOrEqual(128);
    expect(a.numRegs).toBeGreaterThan(0);
    expect(k.maxActiveBlocksPerMultiprocessor(256)).toBeGreaterThan(0);
    const s = k.suggestedBlockSize();
    expect(s.blockSize % 32).toBe(0);
    expect(s.minGridSize).toBeGreaterThanOrEqual(Device.get(0).properties.multiProcessorCount);
    const clock = fromBytes.kernel('timedReduction');
    clock.setAttribute('MaxDynamicSharedMemorySize', 64 * 1024);
    expect(clock.attributes().maxDynamicSharedSizeBytes).toBe(64 * 1024);
    fromFile.close();
    fromBytes.close();
  });

  test('ElementwiseKernel: arrays and scalars, results checked, mismatched lengths refused', () => {
    const d = Device.get(0);
    const saxpy = new ElementwiseKernel('float a, float x, float y', 'float z', 'z = a * x + y', 'saxpy');
    const n = 1 << 20;
    const [x, y, z] = [d.allocate(n * 4), d.allocate(n * 4), d.allocate(n * 4)];
    x.copyFrom(Float32Array.from({ length: n }, (_, i) => i % 100));
    y.copyFrom(new Float32Array(n).fill(3));
    saxpy.call(2, x, y, z);
    expect(z.copyTo(new Float32Array(n)).every((v, i) => v === 2 * (i % 100) + 3)).toBe(true);
    const s = d.createStream();
    saxpy.call(x, x, y, z, { stream: s }); // a as an array too: another compiled shape
    s.close();
    expect(z.copyTo(new Float32Array(n)).every((v, i) => v === (i % 100) ** 2 + 3)).toBe(true);
    const small = d.allocate(16);
    expect(() => saxpy.call(2, x, small, z)).toThrow("ElementwiseKernel(saxpy): 'y' has 4 elements, the arrays before it 1048576");
    for (const b of [x, y, z, small]) b.close();
  });

  test('managed memory: a kernel writes it, prefetch and advice, copies back', async () => {
    const d = Device.get(0);
    const n = 1 << 20;
    const m = d.allocateManaged(n * 4);
    expect(m.kind).toBe('managed');
    const s = d.createStream();
    m.advise('preferredLocation', d).advise('accessedBy', 'host');
    if (d.attribute('ConcurrentManagedAccess')) m.prefetch(d, s);
    const mod = Module.load(fatbin);
    mod.kernel('bytePattern').launch({ grid: (n * 4) / 256, block: 256, stream: s }, m, i32(n * 4), core.u32(7));
    if (d.attribute('ConcurrentManagedAccess')) m.prefetch('host', s);
    await s.synchronize();
    const bytes = m.copyTo(new Uint8Array(n * 4));
    const plain = d.allocate(16);
    expect(() => plain.prefetch(d)).toThrow(
      'DeviceBuffer.prefetch: only managed memory (device.allocateManaged) can be prefetched; this buffer is device memory',
    );
    expect(() => m.advise('often' as 'readMostly', d)).toThrow(
      /^DeviceBuffer.advise: parameter 'advice' must be one of 'readMostly', 'preferredLocation', 'accessedBy', got the string "often"$/,
    );
    // bytePattern writes (i * 31 + (i >> 8) + seed) & 0xff to each byte i.
    expect(bytes.every((b, i) => b === ((i * 31 + (i >>> 8) + 7) & 0xff))).toBe(true);
    for (const r of [plain, m, s, mod]) r.close();
  });

  test('MemoryPool: stream-ordered allocations, stats, trim; the default pool survives close()', async () => {
    const d = Device.get(0);
    const s = d.createStream({ nonBlocking: true });
    const pool = d.createMemoryPool({ releaseThreshold: 64 << 20 });
    expect(pool.releaseThreshold).toBe(64 << 20);
    const bufs = Array.from({ length: 4 }, () => pool.allocate(8 << 20, s));
    expect(bufs[0].kind).toBe('pool');
    bufs[0].fill(1, { stream: s });
    let st = pool.stats;
    expect(st.usedBytes).toBe(32 << 20);
    expect(st.reservedBytes).toBeGreaterThanOrEqual(32 << 20);
    for (const b of bufs) b.close();
    await s.synchronize();
    st = pool.stats;
    expect(st.usedBytes).toBe(0);
    expect(st.usedHighBytes).toBe(32 << 20);
    expect(st.reservedBytes).toBeGreaterThan(0); // kept: under the release threshold
    pool.trim(0);
    expect(pool.stats.reservedBytes).toBe(0);
    pool.resetPeaks();
    expect(pool.stats.usedHighBytes).toBe(0);
    pool.close();
    expect(() => pool.allocate(16, s)).toThrow('MemoryPool.allocate: the MemoryPool was closed');
    const def = d.memoryPool;
    expect(def.isDefault).toBe(true);
    const b = def.allocate(1 << 20, s);
    def.close();
    expect(def.isClosed).toBe(false);
    b.close();
    await s.synchronize();
    s.close();
  });

  test('CachingAllocator: a freed block is handed out again; usedBytes/totalBytes; limit; installed as the default', () => {
    const d = Device.get(0);
    const alloc = new CachingAllocator();
    const a = alloc.allocate(1000, { device: d });
    const where = a.ptr;
    expect([alloc.usedBytes(d), alloc.totalBytes(d)]).toEqual([1024, 1024]);
    a.close();
    expect([alloc.usedBytes(), alloc.freeBytes(), alloc.totalBytes()]).toEqual([0, 1024, 1024]);
    const b = alloc.allocate(1024, { device: d });
    expect(b.ptr).toBe(where);
    b.close();
    alloc.freeAllBlocks();
    expect(alloc.totalBytes()).toBe(0);
    alloc.limit = 4 << 20;
    const big = alloc.allocate(3 << 20, { device: d });
    const bigPtr = big.ptr;
    expect(() => alloc.allocate(2 << 20, { device: d })).toThrow(
      /^cudaErrorMemoryAllocation: 2097152 more bytes would pass the allocator's limit of 4194304 \(3145728 in use\) \(in CachingAllocator\.allocate\)$/,
    );
    big.close();
    core.setAllocator(alloc);
    try {
      const c = d.allocate(3 << 20);
      expect([c.kind, c.ptr]).toEqual(['cached', bigPtr]); // the block `big` gave back
      c.copyFrom(new Uint8Array(3 << 20).fill(9));
      expect(c.copyTo(new Uint8Array(4)).every((x) => x === 9)).toBe(true);
      c.close();
    } finally {
      core.setAllocator(null);
    }
    expect(d.allocate(16).kind).toBe('device');
    alloc.freeAllBlocks();
  });

  test('stream.capture → Graph → instantiate → launch many times; update takes new parameters; a throwing capture rethrows', async () => {
    const d = Device.get(0);
    const s = d.createStream({ nonBlocking: true });
    const mod = Module.load(fatbin);
    const affine = mod.kernel('affine');
    const n = 1 << 16;
    const buf = d.allocate(n * 4);
    buf.copyFrom(new Float32Array(n).fill(1));
    const record = (mul: number) => s.capture(() => affine.launch({ grid: n / 256, block: 256, stream: s }, buf, f32(mul), f32(1), i32(n)));
    const graph = await record(2);
    expect(graph.nodeCount).toBe(1);
    const exec = graph.instantiate();
    exec.upload(s);
    for (let i = 0; i < 3; i++) exec.launch(s); // x → 2x + 1, three times: 1 → 3 → 7 → 15
    await s.synchronize();
    expect(buf.copyTo(new Float32Array(n)).every((v) => v === 15)).toBe(true);
    const other = await record(0);
    exec.update(other);
    exec.launch(s);
    await s.synchronize();
    expect(buf.copyTo(new Float32Array(n)).every((v) => v === 1)).toBe(true);
    const twoNodes = await s.capture(() => {
      buf.fill(0, { stream: s });
      affine.launch({ grid: n / 256, block: 256, stream: s }, buf, f32(1), f32(1), i32(n));
    });
    expect(() => exec.update(twoNodes)).toThrow(/^cudaErrorGraphExecUpdateFailure: .*instantiate it instead$/);
    await expect(
      s.capture(async () => {
        affine.launch({ grid: 1, block: 1, stream: s }, buf, f32(1), f32(1), i32(1));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(s.query()).toBe(true); // the stream is out of capture mode and usable
    for (const r of [twoNodes, other, exec, graph, buf, mod, s]) r.close();
  });
});

(gpu.why === null ? test : test.skip)(
  'copyFromAsync/copyToAsync: a large Buffer in parallel pieces off the JS thread, bytes checked',
  async () => {
    const d = Device.get(0);
    const n = (64 << 20) + 12345; // not a multiple of the piece size
    const src = Buffer.alloc(n);
    for (let i = 0; i < n; i += 4096) src.writeUInt32LE((i * 2654435761) >>> 0, i & ~3);
    src[n - 1] = 0x5a;
    const buf = d.allocate(n);
    expect(await buf.copyFromAsync(src)).toBe(buf);
    const back = await buf.copyToAsync(Buffer.alloc(n));
    expect(back.equals(src)).toBe(true);
    const small = await buf.copyToAsync(new Uint8Array(3));
    expect(Array.from(small)).toEqual(Array.from(src.subarray(0, 3)));
    await expect(buf.copyFromAsync(Buffer.alloc(n + 1))).rejects.toThrow(
      `DeviceBuffer.copyFromAsync: the source has ${n + 1} bytes, more than the buffer's ${n}`,
    );
    buf.close();
  },
);
