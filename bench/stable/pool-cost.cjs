// What sets the cudaMallocAsync pool row's excess over the koffi floor on a GPU machine? On the dev
// machine (a fake libcudart that returns at once) core's `pool.allocate(n, s).close()` is ~30 ns over
// the floor; on the H100 it was ~150 ns (1.10-1.16x the floor in a round), although taking 225 of
// its instructions out moved it by 1-3% there (bench/README.md). This times, in one process, taking
// turns round after round, the floor's pair of calls and the same pair with one thing of core's added:
//   floor        cudaMallocFromPoolAsync + cudaFreeAsync through koffi declarations (ops.ts' floor)
//   floor-own    the same on a stream of the floor server's kind (cudaStreamCreateWithFlags) in place of core's
//   facade       the tuple facade's pair
//   core         pool.allocate(1 MiB, stream).close()
//   object       the floor's calls with core's DeviceBuffer made and closed around them (no checks)
//   +alloc       the floor, and an object of 11 fields and a 5-element array made and let go of per
//                call, held in a 256-slot batch until the next call, as core's DeviceBuffer and keep list
//   +touch       the floor, and one field read from each of 24 objects made apart (in the old
//                generation) per call: the objects core's chain reads, without making any
//   +work        the floor, and 25 dependent integer multiply-adds (~100 cycles; no object, no memory)
//   core-b       core's pair as built in --core-b DIR (its dist/, e.g. a worktree of another branch),
//                loaded beside this one in the same process, on a device, stream and pool of its own
// Each sample is the fastest of 5 loops of 6,400 calls in synchronised batches of 128, each variant
// with a timing loop of its own (run.js's, timers.ts); each round every variant takes a turn. Prints
// ns a call (median over rounds) and the median per-round ratio to the floor. `--only a,b`: these
// variants alone (in processes of their own, as run.js's servers); `--set-device`: see below.
//   npm run build && npx tsc -p tsconfig.bench.json
//   taskset -c 8 node [node flags, e.g. --max-semi-space-size=1] bench/stable/pool-cost.cjs [--rounds 12] [--set-device] [--only floor,core] [--idle 300] [--core-b DIR]
const path = require('node:path');
const koffi = require('koffi');
const { cudart, core } = require(path.resolve('dist'));
const { timersFor } = require(path.resolve('dist-bench/bench/stable/timers.js'));
const { median, options } = require(path.resolve('dist-bench/bench/stable/plan.js'));
const { lib, ok } = require('./d2h-floor.cjs');

const opt = options(process.argv);
const rounds = Number(opt('--rounds', '12'));
const mallocFromPool = lib.func('int cudaMallocFromPoolAsync(uint64_t p, size_t n, void *pool, void *s)');
const freeAsync = lib.func('int cudaFreeAsync(uint64_t p, void *s)');
const synchronize = lib.func('int cudaStreamSynchronize(void *s)');

// --set-device: the process first calls cudaSetDevice(0) and cudaFree(0), as C's, CuPy's, cuda-python's
// and the koffi floor's servers do; core's makeCurrent() calls cudaSetDevice only when cudaGetDevice
// names another device, so core's server never calls it for device 0.
if (process.argv.includes('--set-device')) {
  ok(lib.func('int cudaSetDevice(int d)')(0), 'cudaSetDevice');
  ok(lib.func('int cudaFree(void *p)')(null), 'cudaFree');
}
const dev = core.Device.get(0).makeCurrent();
const stream = dev.createStream({ nonBlocking: true });
// floor-own: the floor's pair on a stream of its own from cudaStreamCreateWithFlags (the floor's server's).
const ownStream = (() => {
  const out = new BigUint64Array(1);
  let create;
  try {
    create = lib.func('int cudaStreamCreateWithFlags(void *s, unsigned int flags)');
  } catch {
    // The dev machine's fake libcudart has only the call core makes.
    const withPriority = lib.func('int cudaStreamCreateWithPriority(void *s, unsigned int flags, int priority)');
    create = (o, flags) => withPriority(o, flags, 0);
  }
  ok(create(out, 1), 'cudaStreamCreateWithFlags');
  return out[0];
})();
const pool = dev.memoryPool;
const [sh, poolH] = [stream.handle, pool.handle];
const page = koffi.alloc('uint8_t', 64);
const slot = BigInt(koffi.address(page));
const slotView = new BigUint64Array(koffi.view(page, 64));
const N = 1 << 20;

/** The floor's pair. */
function floorPair() {
  mallocFromPool(slot, N, poolH, sh);
  freeAsync(slotView[0], sh);
}

// +alloc: what core's call leaves in the young generation, made and held as core holds it.
let batch = new Array(256);
let taken = 0;
const freeFn = () => {};
function allocPair() {
  mallocFromPool(slot, N, poolH, sh);
  const p = slotView[0];
  const keep = [pool, stream, p, N, 'MemoryPool'];
  const o = {
    closed: false,
    waiting: taken,
    holds: null,
    free: freeFn,
    freeArg: keep,
    keep,
    address: p,
    size: N,
    device: dev,
    parent: null,
    kind: 'pool',
  };
  if (taken === 256) {
    batch = new Array(256);
    taken = 0;
  }
  batch[taken++] = o;
  freeAsync(o.address, sh);
  o.closed = true;
  batch[taken - 1] = null;
}

// +touch: 24 objects of the old generation, each on a line of its own, read once a call.
const far = [];
for (let i = 0; i < 24; i++) {
  far.push({ v: i, pad: new Array(16).fill(i) });
  for (let j = 0; j < 200; j++) far.push({ j }); // apart from the next one
}
const touched = far.filter((_, i) => i % 201 === 0);
let sink = 0;
function touchPair() {
  mallocFromPool(slot, N, poolH, sh);
  freeAsync(slotView[0], sh);
  let s = 0;
  for (let i = 0; i < 24; i++) s += touched[i].v;
  sink += s;
}

// +work: arithmetic the optimiser cannot fold (depends on the call count), no memory.
let counter = 1;
function workPair() {
  mallocFromPool(slot, N, poolH, sh);
  freeAsync(slotView[0], sh);
  let x = counter++;
  for (let i = 0; i < 25; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  sink += x & 1;
}

// object: the floor's calls, and core's DeviceBuffer made and closed around them (what allocate() adds
// beyond: its checks, the memory hooks' test, the output slot of its own).
const freeKeep = (k) => freeAsync(k[2], k[1].handle);
function objectPair() {
  mallocFromPool(slot, N, poolH, sh);
  const p = slotView[0];
  const keep = [pool, stream, p, N, 'MemoryPool'];
  core.DeviceBuffer.fromAllocation(p, N, dev, 'pool', freeKeep, keep, keep).close();
}

// core-b: a second build of the package, loaded beside the first (only with --core-b).
const coreB = (() => {
  if (!process.argv.includes('--core-b')) return null;
  const b = require(path.resolve(opt('--core-b', ''), 'dist')).core;
  const d = b.Device.get(0).makeCurrent();
  const s = d.createStream({ nonBlocking: true });
  return { stream: s, pool: d.memoryPool, handle: s.handle };
})();

const variants = {
  floor: floorPair,
  'floor-own': () => (mallocFromPool(slot, N, poolH, ownStream), freeAsync(slotView[0], ownStream)),
  facade: () => cudart.cudaFreeAsync(cudart.cudaMallocFromPoolAsync(N, poolH, sh)[1], sh),
  core: () => pool.allocate(N, stream).close(),
  object: objectPair,
  '+alloc': allocPair,
  '+touch': touchPair,
  '+work': workPair,
  ...(coreB ? { 'core-b': () => coreB.pool.allocate(N, coreB.stream).close() } : {}),
};

/** run.js's batch timing (each variant a timing loop of its own, as run.js's): ns a call over 6,400 calls in batches of 128. */
const timeBatches = (name) => {
  const t = timersFor(`pool-cost ${name}`).batch;
  const f = variants[name];
  const own = name === 'floor-own' ? ownStream : name === 'core-b' ? coreB.handle : sh;
  const sync = () => synchronize(own);
  return () => t(f, 6400, sync);
};

const names = opt('--only', Object.keys(variants).join(',')).split(',');
for (const n of names) if (!variants[n]) throw new Error(`pool-cost: no variant '${n}' (${Object.keys(variants).join(', ')})`);
const timed = Object.fromEntries(names.map((k) => [k, timeBatches(k)]));
for (const t of Object.values(timed)) for (let i = 0; i < 3; i++) t(); // JIT warm-up
const samples = Object.fromEntries(names.map((k) => [k, []]));
// --idle ms: the process sleeps (its event loop idle) before each loop, as a run.js server waits while
// the other implementations take their turns.
const idle = Number(opt('--idle', '0'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
(async () => {
  for (let r = 0; r < rounds; r++)
    for (const [name, t] of Object.entries(timed)) {
      let best = Infinity;
      for (let l = 0; l < 5; l++) {
        if (idle) await sleep(idle);
        best = Math.min(best, t());
      }
      samples[name].push(best);
    }
  console.log(
    `# node ${process.version} ${process.execArgv.join(' ')}${process.argv.includes('--set-device') ? ' --set-device' : ''}${idle ? ` --idle ${idle}` : ''}; ${rounds} rounds; ns a call (median), ÷ floor (median of per-round ratios) [range]`,
  );
  for (const [name, s] of Object.entries(samples)) {
    const ratios = s.map((v, i) => v / (samples.floor ?? s)[i]);
    console.log(
      `${name.padEnd(8)} ${median(s).toFixed(0).padStart(6)} ns  ${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}]  per round: ${s.map((v) => v.toFixed(0)).join(' ')}`,
    );
  }
  if (sink === 0.5) console.log('');
  process.exit(0);
})();
