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
// a wait. It also times cudaStreamQuery of an idle stream of its own, through a koffi declaration. Times: the fastest of 7 loops of 1,500 calls, ns a call.
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

/** The steps that are not core's ops (see the top): a function each that does one and, where it queues work, waits. */
function otherSteps() {
  const bytes = 4 << 20;
  const [made, d] = cudart.cudaMalloc(bytes);
  ok(made, 'cudaMalloc');
  const host = new Float32Array(bytes / 4);
  const s = createdStream();
  const wait = () => ok(cudart.cudaStreamSynchronize(s)[0], 'cudaStreamSynchronize');
  // The kernel's steps: core's launch on a core stream (the raw copies of raw-inout on it too).
  const dev = core.Device.get(0);
  const stream = dev.createStream({ nonBlocking: true });
  const waitLaunch = () => ok(cudart.cudaStreamSynchronize(stream.handle)[0], 'cudaStreamSynchronize');
  const [dx, dy] = [dev.allocate(bytes), dev.allocate(bytes)];
  const mod = core.Module.load(cubin);
  const copy = mod.kernel('copyFloats');
  const empty = mod.kernel('empty');
  const launch = () => copy.launch({ grid: bytes / 4 / 256, block: 256, stream }, dx, dy, core.i32(bytes / 4));
  return {
    kernel: () => {
      launch();
      waitLaunch();
    },
    'raw-inout': () => {
      ok(cudart.cudaMemcpyAsync(dx.ptr, host, bytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice, stream.handle)[0], 'cudaMemcpyAsync');
      launch();
      ok(cudart.cudaMemcpyAsync(host, dy.ptr, bytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, stream.handle)[0], 'cudaMemcpyAsync');
      waitLaunch();
    },
    'raw-in': () => {
      ok(cudart.cudaMemcpyAsync(d, host, bytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice, s)[0], 'cudaMemcpyAsync');
      wait();
    },
    'raw-out': () => {
      ok(cudart.cudaMemcpyAsync(host, d, bytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, s)[0], 'cudaMemcpyAsync');
      wait();
    },
    'launch-sync': () => {
      empty.launch({ grid: 1, block: 1, stream });
      waitLaunch();
    },
    props: () => ok(cudart.cudaGetDeviceProperties(0)[0], 'cudaGetDeviceProperties'),
    peek: () => cudart.cudaPeekAtLastError(),
    'raw-malloc': () => ok(cudart.cudaMalloc(bytes)[0], 'cudaMalloc'),
    'raw-mallochost': () => ok(cudart.cudaMallocHost(bytes)[0], 'cudaMallocHost'),
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
    const calls = (raw[step] && !['launch-sync', 'props', 'peek'].includes(step)) || step.startsWith('InOut') ? 20 : 200;
    for (let i = 0; i < calls; i++) (raw[step] ?? o[step])();
    sync();
    times(`after ${calls} x ${step}`);
  }
  console.log(out.join('\n'));
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
