// Launch paths of the core layer on the CPU, no GPU needed: a fake libcudart
// (test/cpu/fixtures/fake-cudart.c's kernels variant, built here with gcc as the tests build it) whose cudaLaunchKernel returns at
// once, so what is measured is what JS does per launch. Runs against the build from the repo root:
//   npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/prepared-cpu.js
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildKernelsFake } from './fake-kernels';

if (!process.env.CUDA_BINDINGS_PREPARED_BENCH) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prepared-bench-'));
  const lib = buildKernelsFake(dir, 'libcudart-fake.so');
  const r = spawnSync(process.execPath, [__filename], {
    stdio: 'inherit',
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib, CUDA_BINDINGS_PREPARED_BENCH: '1' },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}

/* eslint-disable @typescript-eslint/no-require-imports */
const koffi = require('koffi') as typeof import('koffi');
const { core, cudart } = require(path.resolve('dist')) as typeof import('../src');
const { Kernel } = require(path.resolve('dist', 'core', 'launch', 'Kernel')) as typeof import('../src/core/launch/Kernel');
const { time } = require(path.resolve('dist', 'cli', 'latency')) as typeof import('../src/cli/latency');
/* eslint-enable @typescript-eslint/no-require-imports */
const bench = (fn: () => unknown, n: number): number => time(fn, n, 7);
const { i32, u32, i64, f32, f64 } = core;

const d = core.Device.get(0);
const buf = d.allocate(1 << 20);
// Handle 3 is the fake's empty kernel; the module is a stand-in that stays open.
const empty8 = new Kernel(cudart.cudaKernel_t(3), 'empty8', { isClosed: false } as never);
const cfg = { grid: 1, block: 1 };
const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
// The same count of parameters with two vectors by value, given as arrays (made once: the launch's cost, not theirs).
const preparedVectors = empty8.prepare('const float *a, float *b, int c, unsigned d, float3 e, float4 f, long long g, double h');
const v3 = [3, 3, 3];
const v4 = [4, 4, 4, 4];
const packed = new cudart.KernelArgs([buf.ptr, buf.ptr, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]);
const g3 = new cudart.dim3({ x: 1, y: 1, z: 1 });
const raw = koffi
  .load(process.env.CUDA_BINDINGS_CUDART!)
  .func('int cudaLaunchKernel(void *, uint64_t, uint64_t, uint64_t, uint64_t, void *, size_t, void *)');
const one = 1n | (1n << 32n);
const oneNum = 1 + 4294967296; // the same word as a number (what the facade and the H100 floor pass)

const rows: [string, () => unknown, number][] = [
  ['raw koffi cudaLaunchKernel, pre-packed (floor)', () => raw(3n, one, 1n, one, 1n, packed.pointers, 0, null), 1_000_000],
  [
    'raw koffi cudaLaunchKernel, pre-packed, dim3 words as numbers',
    () => raw(3n, oneNum, 1, oneNum, 1, packed.pointers, 0, null),
    1_000_000,
  ],
  ['facade cudaLaunchKernel, KernelArgs pre-packed', () => cudart.cudaLaunchKernel(3n, g3, g3, packed, 0, null), 1_000_000],
  ['Kernel.launch, 8 typed arguments', () => empty8.launch(cfg, buf, buf, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)), 500_000],
  ['prepared, 8 plain-number arguments', () => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6), 1_000_000],
  ['prepared, 8 arguments: a float3 and a float4 as arrays', () => preparedVectors(cfg, buf, buf, 1, 2, v3, v4, 5, 6), 1_000_000],
];
console.log(`# node ${process.version}; koffi ${koffi.version}; fake libcudart (launch returns at once)`);
console.log('| launch path | ns per launch |');
console.log('|---|---:|');
for (const [name, f, n] of rows) {
  f();
  console.log(`| ${name} | ${bench(f, n).toFixed(1)} |`);
}
// Allocation per call: garbage collections (scavenges) seen during a million calls of each path.
async function collections(f: () => unknown, calls: number): Promise<number> {
  const { PerformanceObserver } = require('node:perf_hooks') as typeof import('node:perf_hooks');
  let gcs = 0;
  const obs = new PerformanceObserver((list) => {
    gcs += list.getEntries().length;
  });
  obs.observe({ entryTypes: ['gc'] });
  for (let i = 0; i < calls; i++) f();
  await new Promise((r) => setTimeout(r, 50));
  obs.disconnect();
  return gcs;
}

const n = 1 << 20;
const copy = new Kernel(cudart.cudaKernel_t(1), 'twice', { isClosed: false } as never);
const hx = new Float32Array(n),
  hy = new Float32Array(n);
const dx = d.allocate(4 * n),
  dy = d.allocate(4 * n);
core.setAllocator(new core.CachingAllocator());
const big = { grid: n / 256, block: 256 };
console.log('\n| 4 MiB in, kernel, 4 MiB out (memcpy on the fake) | µs |');
console.log('|---|---:|');
console.log(
  `| In/Out launch (CachingAllocator) | ${(bench(() => copy.launch(big, core.In(hx), core.Out(hy), i32(n)), 200) / 1000).toFixed(1)} |`,
);
console.log(
  `| manual copies + launch | ${(
    bench(() => {
      dx.copyFrom(hx);
      copy.launch(big, dx, dy, i32(n));
      dy.copyTo(hy);
    }, 200) / 1000
  ).toFixed(1)} |`,
);

(async () => {
  core.setAllocator(null);
  console.log('\n| garbage collections during 1,000,000 launches | count |');
  console.log('|---|---:|');
  console.log(
    `| raw koffi cudaLaunchKernel, pre-packed (floor) | ${await collections(() => raw(3n, one, 1n, one, 1n, packed.pointers, 0, null), 1_000_000)} |`,
  );
  console.log(
    `| prepared, 8 plain-number arguments | ${await collections(() => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6), 1_000_000)} (${await collections(() => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6), 3_000_000)} in 3,000,000 more) |`,
  );
  console.log(
    `| prepared, 8 arguments: a float3 and a float4 as arrays | ${await collections(() => preparedVectors(cfg, buf, buf, 1, 2, v3, v4, 5, 6), 1_000_000)} |`,
  );
  console.log(
    `| Kernel.launch, 8 typed arguments | ${await collections(() => empty8.launch(cfg, buf, buf, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)), 1_000_000)} |`,
  );
})();
