// Per-call cost through the core layer, printed as CSV lines `core,<operation>,<ns per call or GB/s>`
// under the same operation names as the C anchors (.gpu/anchors, bench/extra.cu) of the same run.
// Runs against the build (`npm run build` first), from the repo root:
//   node dist-bench/bench/core.js <bench kernels.cubin>
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { core, cudart } = require(path.resolve('dist')) as typeof import('../src');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { time } = require(path.resolve('dist', 'cli', 'latency')) as typeof import('../src/cli/latency');
const bench = (fn: () => unknown, n: number): number => time(fn, n, 5);
const out = (name: string, v: number) => console.log(`core,${name},${v.toFixed(v < 100 ? 2 : 1)}`);
const { Device, Module, CachingAllocator, i32, u32, i64, f32, f64 } = core;

async function main(): Promise<void> {
  const d = Device.get(0).makeCurrent();
  const s = d.createStream();
  const ev = d.createEvent();
  ev.record(s);
  await s.synchronize();
  out(
    'cudaGetDevice',
    bench(() => Device.current(), 1_000_000),
  );
  out(
    'cudaStreamQuery',
    bench(() => s.query(), 200_000),
  );
  out(
    'cudaEventQuery',
    bench(() => ev.query(), 200_000),
  );
  out(
    'cudaEventRecord',
    bench(() => ev.record(s), 200_000),
  );
  await s.synchronize();
  // Held from here on, as C's anchor holds one: with no allocation live, each cudaFree gives the
  // driver's chunk back and the next cudaMalloc maps it again (about 100 µs a pair, C or JS).
  const buf = d.allocate(1 << 20);
  out(
    'cudaMalloc+cudaFree_1MiB',
    bench(() => d.allocate(1 << 20).close(), 2000),
  );
  const pool = d.memoryPool;
  out(
    'cudaMallocAsync+cudaFreeAsync_1MiB',
    bench(() => pool.allocate(1 << 20, s).close(), 20000),
  );
  await s.synchronize();
  const cache = new CachingAllocator();
  out(
    'cachingAllocator_allocate+close_1MiB',
    bench(() => cache.allocate(1 << 20, { device: d }).close(), 200_000),
  );
  cache.freeAllBlocks();
  // Pinned memory: CuPy's pool (a block reused after close) against cudaHostAlloc+cudaFreeHost (the C anchor).
  const pinnedPool = new core.PinnedMemoryPool();
  out(
    'pinnedPool_allocate+close_1MiB',
    bench(() => pinnedPool.allocate(1 << 20).close(), 200_000),
  );
  pinnedPool.freeAllBlocks();
  // A virtual buffer grown in place from 2 MiB to 1 GiB (map 1022 MiB more at the same address): ns per grow.
  const vmr = new core.VirtualMemoryResource(d);
  const grows: number[] = [];
  for (let i = 0; i < 21; i++) {
    const v = vmr.allocate(2 << 20, { reserve: 1 << 30 });
    const t0 = process.hrtime.bigint();
    v.resize(1 << 30);
    grows.push(Number(process.hrtime.bigint() - t0));
    v.close();
  }
  out('virtualBuffer_resize_2MiB_to_1GiB', grows.sort((x, y) => x - y)[10]);
  const hv = new Int32Array([1]);
  out(
    'cudaMemcpy_H2D_4B',
    bench(() => buf.copyFrom(hv), 20000),
  );
  out(
    'cudaMemcpy_D2H_4B',
    bench(() => buf.copyTo(hv), 20000),
  );
  out(
    'cudaMemcpyAsync_H2D_4B',
    bench(() => buf.copyFrom(hv, { stream: s }), 20000),
  );
  await s.synchronize();

  const cubin = process.argv[2];
  if (cubin) {
    const mod = Module.load(cubin);
    const empty = mod.kernel('empty');
    const empty8 = mod.kernel('empty8');
    const cfg = { grid: 1, block: 1, stream: s };
    empty.launch(cfg);
    await s.synchronize();
    out(
      'cudaLaunchKernel_empty_lib',
      bench(() => empty.launch(cfg), 100_000),
    );
    await s.synchronize();
    out(
      'cudaLaunchKernel_8args',
      bench(() => empty8.launch(cfg, buf, buf, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)), 100_000),
    );
    await s.synchronize();
    // The same launch prepared: plain numbers packed into memory reused by every call.
    const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
    out(
      'cudaLaunchKernel_8args_prepared',
      bench(() => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6), 100_000),
    );
    await s.synchronize();
    // 4 MiB in and out of a copy kernel: In/Out (temporaries from the installed allocator, a
    // CachingAllocator as CuPy's pool) against the copies written out by hand.
    const copy = mod.kernel('copyFloats');
    const n = 1 << 20;
    const hx = new Float32Array(n),
      hy = new Float32Array(n);
    const dx = d.allocate(4 * n),
      dy = d.allocate(4 * n);
    const big = { grid: n / 256, block: 256, stream: s };
    const manual = () => {
      dx.copyFrom(hx, { stream: s });
      copy.launch(big, dx, dy, i32(n));
      dy.copyTo(hy, { stream: s });
      cudart.cudaStreamSynchronize(s.handle); // as In/Out's launch waits
    };
    const previous = core.setAllocator(new CachingAllocator());
    const inOut = () => copy.launch(big, core.In(hx), core.Out(hy), i32(n));
    inOut();
    manual();
    out('InOut_launch_4MiB', bench(inOut, 200));
    out('manual_copies_launch_4MiB', bench(manual, 200));
    core.setAllocator(previous);
    dx.close();
    dy.close();
    const graph = await s.capture(() => empty.launch(cfg));
    const exec = graph.instantiate();
    exec.upload(s);
    out(
      'cudaGraphLaunch_1kernel',
      bench(() => exec.launch(s), 100_000),
    );
    await s.synchronize();
  }

  // 256 MiB from an ordinary Buffer: copyFrom (one cudaMemcpy) and copyFromAsync (parallel pieces).
  const B = 256 << 20;
  const big = d.allocate(B);
  const nb = Buffer.alloc(B, 1);
  big.copyFrom(nb);
  let t = process.hrtime.bigint();
  for (let i = 0; i < 10; i++) big.copyFrom(nb);
  out('H2D_pageable_256MiB_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
  await big.copyFromAsync(nb);
  t = process.hrtime.bigint();
  for (let i = 0; i < 10; i++) await big.copyFromAsync(nb);
  out('H2D_pageable_256MiB_copyFromAsync_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
  t = process.hrtime.bigint();
  for (let i = 0; i < 10; i++) await big.copyToAsync(nb);
  out('D2H_pageable_256MiB_copyToAsync_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
  const pinned = new core.HostBuffer(B);
  big.copyFrom(pinned.bytes);
  t = process.hrtime.bigint();
  for (let i = 0; i < 10; i++) big.copyFrom(pinned.bytes);
  out('H2D_pinned_256MiB_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
