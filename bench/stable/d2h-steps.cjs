// Does core's setup (as ops.ts' coreOps makes it) slow the floor's synchronous D2H copy in the same
// process? The floor's cudaMemcpy of 4 bytes to the host (a koffi declaration of its own) is timed
// (the fastest of 7 loops of 1,500 calls, ns a call) at the start and after each step of that setup.
//   npm run build && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-steps.cjs /tmp/k.cubin [facade-launch-first]
const path = require('node:path');
const { cudart, core } = require(path.resolve('dist'));
const { floorD2H, fastest, launchEmpty, createdStream } = require('./d2h-floor.cjs');
const cubin = process.argv[2];
const hv = new Int32Array(1);
const floor = floorD2H(hv);
const out = [];
function t(label) {
  out.push(`${label} ${fastest(floor).toFixed(0)}`);
}
(async () => {
  t('start');
  t('start again');
  if (process.argv[3] === 'facade-launch-first') {
    // The facade's launch of the same kernel first, as ops.ts' facadeOps launches it.
    launchEmpty(cubin, createdStream());
    t('the facade: library, stream, one launch');
  }
  const dev = core.Device.get(0).makeCurrent();
  t('Device.get(0).makeCurrent()');
  const s = dev.createStream({ nonBlocking: true });
  t('createStream');
  const ev = dev.createEvent({ timing: false });
  t('createEvent');
  const buf = dev.allocate(1 << 20);
  t('allocate');
  const pinned = new core.HostBuffer(4096);
  t('HostBuffer');
  const mod = core.Module.load(cubin);
  const empty = mod.kernel('empty');
  const empty8 = mod.kernel('empty8');
  const copy = mod.kernel('copyFloats');
  t('Module.load');
  const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
  t('prepare');
  const pool = dev.memoryPool;
  pool.allocate(1 << 20, s).close();
  t('memoryPool + one allocation');
  core.setAllocator(new core.CachingAllocator());
  t('setAllocator(CachingAllocator)');
  const cfg = { grid: 1, block: 1, stream: s };
  empty.launch(cfg);
  t('launch');
  const exec = (await s.capture(() => empty.launch(cfg))).instantiate();
  exec.upload(s);
  t('capture, instantiate, upload');
  prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6);
  t('prepared launch');
  await s.synchronize();
  t('await s.synchronize()');
  const n = 1 << 20,
    hx = new Float32Array(n),
    hy = new Float32Array(n);
  copy.launch({ grid: n / 256, block: 256, stream: s }, core.In(hx), core.Out(hy), core.i32(n));
  t('In/Out launch');
  for (let i = 0; i < 20; i++) copy.launch({ grid: n / 256, block: 256, stream: s }, core.In(hx), core.Out(hy), core.i32(n));
  t('20 In/Out launches');
  const dx = dev.allocate(4 * n),
    dy = dev.allocate(4 * n);
  for (let i = 0; i < 20; i++) {
    dx.copyFrom(hx, s);
    copy.launch({ grid: n / 256, block: 256, stream: s }, dx, dy, core.i32(n));
    dy.copyTo(hy, s);
    cudart.cudaStreamSynchronize(s.handle);
  }
  t('20 copies by hand (4 MiB pageable, queued on a stream)');
  for (let i = 0; i < 20; i++) {
    dx.copyFrom(hx);
    dy.copyTo(hy);
  }
  t('20 synchronous 4 MiB copies');
  for (let i = 0; i < 2000; i++) buf.copyTo(hv);
  t('core copyTo x2000');
  for (let i = 0; i < 2000; i++) {
    pool.allocate(1 << 20, s).close();
  }
  await s.synchronize();
  t('2000 pool allocations');
  // The event and pinned buffer stay alive to the end, as in coreOps.
  void [ev, pinned];
  console.log(out.join('\n'));
})();
