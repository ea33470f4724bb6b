// Per-call cost of common runtime calls through the tuple facade, printed as CSV lines
// `facade,<operation>,<ns per call>` beside the anchors (.gpu/anchors/run.sh) of the same run.
// Runs against the build, as users load the package (`npm run build` first):
//   node dist-bench/bench/facade.js [kern.cubin]   (from the repo root; a TS loader such as tsx
//   slows the calls it wraps, so the benchmark runs as plain compiled JavaScript)
import * as path from 'node:path';
import type { OkOutputs } from '../src';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { cudart } = require(path.resolve('dist')) as typeof import('../src');

// The CLI's timing loop: the median of 5 timed loops of n calls, in ns per call.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { time } = require(path.resolve('dist', 'cli', 'latency')) as typeof import('../src/cli/latency');
const bench = (fn: () => unknown, n: number): number => time(fn, n, 5);
const out = (name: string, v: number) => console.log(`facade,${name},${v.toFixed(1)}`);
function ok<R extends readonly [number, ...unknown[]]>(r: R, what: string): OkOutputs<R> {
  if (r[0] !== 0) throw new Error(`${what}: ${cudart.cudaError_t[r[0]]}`);
  return r.slice(1) as OkOutputs<R>;
}

ok(cudart.cudaSetDevice(0) as [number], 'cudaSetDevice');
cudart.cudaFree(null);
const [s] = ok(cudart.cudaStreamCreate(), 'cudaStreamCreate');
const [ev] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
cudart.cudaEventRecord(ev, s);
cudart.cudaStreamSynchronize(s);
const [d] = ok(cudart.cudaMalloc(1 << 20), 'cudaMalloc');

// Raw koffi calls of the same functions in this process, to tell the facade's own cost apart.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const koffi = require('koffi') as typeof import('koffi');
const rawLib = koffi.load(cudart.libraryInfo().path);
const raw = {
  getDevice: rawLib.func('int cudaGetDevice(void *)'),
  peek: rawLib.func('int cudaPeekAtLastError()'),
  query: rawLib.func('int cudaStreamQuery(void *)'),
};
const i32 = new Int32Array(1);
const rawOut = (name: string, v: number) => console.log(`koffi-same-process,${name},${v.toFixed(1)}`);
rawOut(
  'cudaGetDevice',
  bench(() => raw.getDevice(i32), 1_000_000),
);
rawOut(
  'cudaPeekAtLastError',
  bench(() => raw.peek(), 1_000_000),
);
rawOut(
  'cudaStreamQuery',
  bench(() => raw.query(s), 200_000),
);
const getDevice = cudart.cudaGetDevice;
out(
  'cudaGetDevice_localBinding',
  bench(() => getDevice(), 1_000_000),
);
out(
  'cudaGetDevice',
  bench(() => cudart.cudaGetDevice(), 1_000_000),
);
out(
  'cudaPeekAtLastError',
  bench(() => cudart.cudaPeekAtLastError(), 1_000_000),
);
out(
  'cudaStreamQuery',
  bench(() => cudart.cudaStreamQuery(s), 200_000),
);
out(
  'cudaEventQuery',
  bench(() => cudart.cudaEventQuery(ev), 200_000),
);
out(
  'cudaEventRecord',
  bench(() => cudart.cudaEventRecord(ev, s), 200_000),
);
cudart.cudaStreamSynchronize(s);
out(
  'cudaGetDeviceProperties',
  bench(() => cudart.cudaGetDeviceProperties(0), 2000),
);
out(
  'cudaGetDeviceProperties+5fields',
  bench(() => {
    const p = cudart.cudaGetDeviceProperties(0)[1]!;
    return p.name.length + p.totalGlobalMem + p.multiProcessorCount + p.major + p.minor;
  }, 2000),
);
out(
  'cudaMalloc+cudaFree_1MiB',
  bench(() => cudart.cudaFree(cudart.cudaMalloc(1 << 20)[1]), 2000),
);
out(
  'cudaMallocAsync+cudaFreeAsync_1MiB',
  bench(() => cudart.cudaFreeAsync(cudart.cudaMallocAsync(1 << 20, s)[1], s), 20000),
);
cudart.cudaStreamSynchronize(s);
const hv = new Int32Array([1]);
out(
  'cudaMemcpy_H2D_4B',
  bench(() => cudart.cudaMemcpy(d, hv, 4, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice), 20000),
);
out(
  'cudaMemcpy_D2H_4B',
  bench(() => cudart.cudaMemcpy(hv, d, 4, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost), 20000),
);
out(
  'cudaMemcpyAsync_H2D_4B',
  bench(() => cudart.cudaMemcpyAsync(d, hv, 4, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice, s), 20000),
);
cudart.cudaStreamSynchronize(s);

const benchKernels = process.argv[3];
if (benchKernels) {
  const [lib] = ok(cudart.cudaLibraryLoadFromFile(benchKernels, null, null, 0, null, null, 0), 'cudaLibraryLoadFromFile');
  const [k0] = ok(cudart.cudaLibraryGetKernel(lib, 'empty'), 'cudaLibraryGetKernel');
  const [k8] = ok(cudart.cudaLibraryGetKernel(lib, 'empty8'), 'cudaLibraryGetKernel');
  const g = new cudart.dim3({ x: 1, y: 1, z: 1 });
  out(
    'cudaLaunchKernel_empty_lib',
    bench(() => cudart.cudaLaunchKernel(k0, g, g, null, 0, s), 100_000),
  );
  cudart.cudaStreamSynchronize(s);
  const { i32, u32, i64, f32, f64 } = cudart;
  out(
    'cudaLaunchKernel_8args',
    bench(() => cudart.cudaLaunchKernel(k8, g, g, [d, d, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)], 0, s), 100_000),
  );
  cudart.cudaStreamSynchronize(s);
  const packed = new cudart.KernelArgs([d, d, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]);
  out(
    'cudaLaunchKernel_8args_prepacked',
    bench(() => cudart.cudaLaunchKernel(k8, g, g, packed, 0, s), 100_000),
  );
  cudart.cudaStreamSynchronize(s);
  ok(cudart.cudaStreamBeginCapture(s, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal) as [number], 'cudaStreamBeginCapture');
  cudart.cudaLaunchKernel(k0, g, g, null, 0, s);
  const [graph] = ok(cudart.cudaStreamEndCapture(s), 'cudaStreamEndCapture');
  const [exec] = ok(cudart.cudaGraphInstantiate(graph, 0), 'cudaGraphInstantiate');
  cudart.cudaGraphUpload(exec, s);
  out(
    'cudaGraphLaunch_1kernel',
    bench(() => cudart.cudaGraphLaunch(exec, s), 100_000),
  );
  cudart.cudaStreamSynchronize(s);
}

const cubin = process.argv[2];
if (cubin) {
  const [lib] = ok(cudart.cudaLibraryLoadFromFile(cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadFromFile');
  const [k] = ok(cudart.cudaLibraryGetKernel(lib, 'empty'), 'cudaLibraryGetKernel');
  const g = new cudart.dim3({ x: 1, y: 1, z: 1 });
  ok(cudart.cudaLaunchKernel(k, g, g, null, 0, s) as [number], 'cudaLaunchKernel');
  cudart.cudaStreamSynchronize(s);
  out(
    'cudaLaunchKernel_empty',
    bench(() => cudart.cudaLaunchKernel(k, g, g, null, 0, s), 100_000),
  );
  cudart.cudaStreamSynchronize(s);
  out(
    'launch+sync_empty',
    bench(() => {
      cudart.cudaLaunchKernel(k, g, g, null, 0, s);
      cudart.cudaStreamSynchronize(s);
    }, 20000),
  );
}

const B = 256 * 1024 * 1024;
const [h] = ok(cudart.cudaMallocHost(B), 'cudaMallocHost');
const [db] = ok(cudart.cudaMalloc(B), 'cudaMalloc');
cudart.cudaMemcpy(db, h, B, 1);
let t = process.hrtime.bigint();
for (let i = 0; i < 10; i++) cudart.cudaMemcpy(db, h, B, 1);
out('H2D_pinned_256MiB_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
t = process.hrtime.bigint();
for (let i = 0; i < 10; i++) cudart.cudaMemcpy(h, db, B, 2);
out('D2H_pinned_256MiB_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
const nb = Buffer.alloc(B, 1); // written: untouched zero pages would read faster than memory
cudart.cudaMemcpy(db, nb, B, 1);
t = process.hrtime.bigint();
for (let i = 0; i < 10; i++) cudart.cudaMemcpy(db, nb, B, 1);
out('H2D_pageable_256MiB_GBps', (10 * B) / Number(process.hrtime.bigint() - t));
