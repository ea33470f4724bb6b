// What sets the cudaMallocAsync pool row's excess over the koffi floor on a GPU machine? On the dev
// machine (a fake libcudart that returns at once) core's `pool.allocate(n, s).close()` is ~30 ns over
// the floor; on the H100 it was ~150 ns (1.10-1.16x the floor in a round), although taking 225 of
// its instructions out moved it by 1-3% there (bench/README.md). This times, in one process, taking
// turns round after round, the floor's pair of calls and the same pair with one thing of core's added:
//   floor        cudaMallocFromPoolAsync + cudaFreeAsync through koffi declarations (ops.ts' floor)
//   facade       the tuple facade's pair
//   core         pool.allocate(1 MiB, stream).close()
//   +alloc       the floor, and an object of 11 fields and a 5-element array made and let go of per
//                call, held in a 256-slot batch until the next call, as core's DeviceBuffer and keep list
//   +touch       the floor, and one field read from each of 24 objects made apart (in the old
//                generation) per call: the objects core's chain reads, without making any
//   +work        the floor, and 25 dependent integer multiply-adds (~100 cycles; no object, no memory)
// Each sample is the fastest of 5 loops of 6,400 calls in synchronised batches of 128 (run.js's
// batch timing); each round every variant takes a turn. Prints ns a call (median over rounds) and
// the median per-round ratio to the floor.
//   npm run build && npx tsc -p tsconfig.bench.json
//   taskset -c 8 node bench/stable/pool-cost.cjs [--rounds 12]   (any node flags before the script: e.g. --max-semi-space-size=1)
const path = require('node:path');
const koffi = require('koffi');
const { cudart, core } = require(path.resolve('dist'));

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 12;
const lib = koffi.load(cudart.libraryInfo().path);
const mallocFromPool = lib.func('int cudaMallocFromPoolAsync(uint64_t p, size_t n, void *pool, void *s)');
const freeAsync = lib.func('int cudaFreeAsync(uint64_t p, void *s)');
const synchronize = lib.func('int cudaStreamSynchronize(void *s)');

const dev = core.Device.get(0).makeCurrent();
const stream = dev.createStream({ nonBlocking: true });
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

const variants = {
  floor: floorPair,
  facade: () => cudart.cudaFreeAsync(cudart.cudaMallocFromPoolAsync(N, poolH, sh)[1], sh),
  core: () => pool.allocate(N, stream).close(),
  '+alloc': allocPair,
  '+touch': touchPair,
  '+work': workPair,
};

/** run.js's batch timing: n calls in batches of 128, each batch timed and then synchronised; ns a call. */
function timeBatches(f, n = 6400) {
  let total = 0n;
  for (let b = 0; b < n / 128; b++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < 128; i++) f();
    total += process.hrtime.bigint() - t;
    synchronize(sh);
  }
  return Number(total) / n;
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (const f of Object.values(variants)) for (let i = 0; i < 3; i++) timeBatches(f); // JIT warm-up
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let r = 0; r < rounds; r++)
  for (const [name, f] of Object.entries(variants)) {
    let best = Infinity;
    for (let l = 0; l < 5; l++) best = Math.min(best, timeBatches(f));
    samples[name].push(best);
  }
console.log(
  `# node ${process.version} ${process.execArgv.join(' ')}; ${rounds} rounds; ns a call (median), ÷ floor (median of per-round ratios) [range]`,
);
for (const [name, s] of Object.entries(samples)) {
  const ratios = s.map((v, i) => v / samples.floor[i]);
  console.log(
    `${name.padEnd(8)} ${median(s).toFixed(0).padStart(6)} ns  ${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}]  per round: ${s.map((v) => v.toFixed(0)).join(' ')}`,
  );
}
if (sink === 0.5) console.log('');
process.exit(0);
