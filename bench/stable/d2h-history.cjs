// Does what a process ran before change its synchronous 4-byte D2H copy? The stable run's core D2H
// row was level with koffi's when the run also had the pinned copy, event and query rows and no In/Out
// rows, and ~1.17x it otherwise, on one host with the same code (bench/README.md). This makes core's
// setup of ops.ts in a fresh process, then runs the steps named, in order, and times the floor's D2H
// (d2h-floor.cjs) and core's own after the setup and after each step. A step is one of core's ops
// (200 calls, 20 for the In/Out ones), or raw-in / raw-out: 20 pageable 4 MiB cudaMemcpyAsync calls
// host to device / device to host on a stream of their own, through the facade, as C's InOut makes
// them; raw-malloc / raw-mallochost: 20 new 4 MiB allocations of device / pinned host memory (kept);
// kernel: 20 launches of copyFloats over 4 MiB (core, buffers made once); raw-inout: 20 of C's InOut
// (raw-in, that launch, raw-out on one stream); launch-sync: 200 launches of the empty kernel, each
// waited for; props: 200 cudaGetDeviceProperties; peek: 200 cudaPeekAtLastError. Each step ends with
// a wait. It also times cudaStreamQuery of an idle stream of its own, through a koffi declaration.
// Times: the fastest of 7 loops of 1,500 calls (20,000 for the query), ns a call.
//   npm run build && npx tsc -p tsconfig.bench.json && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-history.cjs /tmp/k.cubin cudaEventRecord InOut_4MiB cudaEventRecord
const path = require('node:path');
const { lib, floorD2H, fastest, ok, createdStream } = require('./d2h-floor.cjs');
const { cudart, core } = require(path.resolve('dist'));
const ops = require(path.resolve('dist-bench/bench/stable/ops.js'));

const [cubin, ...steps] = process.argv.slice(2);
const floor = floorD2H();
const streamQuery = lib.func('int cudaStreamQuery(void *s)');
const best = (f) => fastest(f).toFixed(0);

/** Waits for `stream`'s work (a raw handle), or throws. */
function waitFor(stream) {
  ok(cudart.cudaStreamSynchronize(stream)[0], 'cudaStreamSynchronize');
}

/** The steps that are not core's ops (see the top): each one's call, which waits where it queues work, and how many calls a step makes. */
function otherSteps() {
  const bytes = 4 << 20;
  const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
  const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;
  const [made, d] = cudart.cudaMalloc(bytes);
  ok(made, 'cudaMalloc');
  const host = new Float32Array(bytes / 4);
  const s = createdStream();
  // The kernel's steps: core's launch on a core stream (the raw copies of raw-inout on it too).
  const dev = core.Device.get(0);
  const stream = dev.createStream({ nonBlocking: true });
  const [dx, dy] = [dev.allocate(bytes), dev.allocate(bytes)];
  const mod = core.Module.load(cubin);
  const copy = mod.kernel('copyFloats');
  const empty = mod.kernel('empty');
  const launch = () => copy.launch({ grid: bytes / 4 / 256, block: 256, stream }, dx, dy, core.i32(bytes / 4));
  const memcpy = (dst, src, kind, h) => ok(cudart.cudaMemcpyAsync(dst, src, bytes, kind, h)[0], 'cudaMemcpyAsync');
  return {
    kernel: [
      20,
      () => {
        launch();
        waitFor(stream.handle);
      },
    ],
    'raw-inout': [
      20,
      () => {
        memcpy(dx.ptr, host, H2D, stream.handle);
        launch();
        memcpy(host, dy.ptr, D2H, stream.handle);
        waitFor(stream.handle);
      },
    ],
    'raw-in': [
      20,
      () => {
        memcpy(d, host, H2D, s);
        waitFor(s);
      },
    ],
    'raw-out': [
      20,
      () => {
        memcpy(host, d, D2H, s);
        waitFor(s);
      },
    ],
    'launch-sync': [
      200,
      () => {
        empty.launch({ grid: 1, block: 1, stream });
        waitFor(stream.handle);
      },
    ],
    props: [200, () => ok(cudart.cudaGetDeviceProperties(0)[0], 'cudaGetDeviceProperties')],
    peek: [200, () => cudart.cudaPeekAtLastError()],
    'raw-malloc': [20, () => ok(cudart.cudaMalloc(bytes)[0], 'cudaMalloc')],
    'raw-mallochost': [20, () => ok(cudart.cudaMallocHost(bytes)[0], 'cudaMallocHost')],
  };
}

(async () => {
  const [o, sync] = await ops.coreOps(cubin);
  const raw = otherSteps();
  const idle = createdStream();
  const query = () => streamQuery(idle);
  for (const step of steps)
    if (!o[step] && !raw[step]) throw new Error(`no step '${step}' (${[...Object.keys(raw), ...Object.keys(o)].join(', ')})`);
  const out = [`steps ${steps.join(' ')}`];
  const times = (label) =>
    out.push(`${label}: floor ${best(floor)}, core ${best(o.cudaMemcpy_D2H_4B)}, query ${fastest(query, 20_000).toFixed(0)}`);
  times('after the setup');
  for (const step of steps) {
    const [calls, call] = raw[step] ?? [step.startsWith('InOut') ? 20 : 200, o[step]];
    for (let i = 0; i < calls; i++) call();
    sync();
    times(`after ${calls} x ${step}`);
  }
  console.log(out.join('\n'));
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
