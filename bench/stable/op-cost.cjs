// Is a row's time linear in the CPU work around the CUDA call, or does the call itself cost more
// once the caller is a little slower? In one process it times the koffi floor's operation of a row
// (ops.ts' koffiOps, as run.js's floor server), the same operation with a fixed amount of extra CPU
// work after each call (N dependent integer multiply-adds, ~5 ns each on the dev machine, no memory;
// their time alone is printed first), and core's operations (ops.ts' coreOps), taking turns round
// after round. Each loop is run.js's batch timing (synchronised batches of 128, a timing loop per
// variant), settled first as run.js settles (an empty kernel launched and waited for). If the floor's
// time grows by about the work's own time, the call's cost does not depend on the caller's pace, and
// core's excess is its own CPU work; if it jumps by more, the GPU or driver side takes part
// (bench/README.md says what was seen).
//   npm run build && npx tsc -p tsconfig.bench.json && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/op-cost.cjs /tmp/k.cubin cudaLaunchKernel_8args [--core cudaLaunchKernel_8args_typed] [--work 0,2,5,10,20,40] [--rounds 8] [--calls 6400] [--history InOut_4MiB,…]
const path = require('node:path');
const { timersFor } = require(path.resolve('dist-bench/bench/stable/timers.js'));
const ops = require(path.resolve('dist-bench/bench/stable/ops.js'));
const { median, options } = require(path.resolve('dist-bench/bench/stable/plan.js'));

const [cubin, row] = process.argv.slice(2);
const arg = options(process.argv);
const rounds = Number(arg('--rounds', '8'));
const calls = Number(arg('--calls', '6400'));
const work = arg('--work', '0,2,5,10,20,40').split(',').map(Number);
if (!work.includes(0)) work.unshift(0); // the floor itself: every ratio is to it
const coreRows = [row, ...arg('--core', '').split(',').filter(Boolean)];
// --history: core's ops run before each round, untimed (20 calls of an In/Out row, 200 of another), as
// run.js's core server runs every row of a round: does what the process ran move the floor with core?
// `--history all`: every row of core's but the timed ones.
let history = arg('--history', '').split(',').filter(Boolean);

let sink = 0;
/** The floor's op followed by `n` dependent multiply-adds the optimiser cannot fold. */
function withWork(f, n) {
  let x = 1;
  return () => {
    f();
    for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
    sink += x & 1;
  };
}

(async () => {
  if (!cubin || !row) throw new Error('usage: op-cost.cjs <cubin> <row> [--core rows] [--work n,…] [--rounds n] [--calls n]');
  const [floor, floorSync] = ops.koffiOps(cubin);
  const [core, coreSync] = await ops.coreOps(cubin);
  if (!floor[row]) throw new Error(`op-cost: the floor has no row '${row}'`);
  if (history[0] === 'all') history = Object.keys(core).filter((k) => k !== 'settle' && !coreRows.includes(k));
  for (const r of [...coreRows, ...history]) if (!core[r]) throw new Error(`op-cost: core has no row '${r}'`);
  const floorSettle = floor['launch+sync_empty'];
  /** name -> [op, sync, settle]. */
  const variants = {};
  for (const n of work)
    variants[n === 0 ? 'floor' : `floor+${n}`] = [n === 0 ? floor[row] : withWork(floor[row], n), floorSync, floorSettle];
  for (const r of coreRows) variants[`core ${r}`] = [core[r], coreSync, core.settle];
  const timed = Object.entries(variants).map(([name, [f, sync, settle]]) => {
    const t = timersFor(`op-cost ${name}`).batch;
    return [
      name,
      () => {
        settle();
        return t(f, calls, sync);
      },
    ];
  });
  for (const [, t] of timed) for (let i = 0; i < 3; i++) t(); // JIT warm-up
  const samples = Object.fromEntries(timed.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const h of history) {
      for (let i = 0, n = h.startsWith('InOut') ? 20 : 200; i < n; i++) core[h]();
      coreSync();
    }
    for (const [name, t] of timed) {
      let best = Infinity;
      for (let l = 0; l < 5; l++) best = Math.min(best, t());
      samples[name].push(best);
    }
  }
  // The work's own time, alone (a plain loop, no CUDA call): what floor+N would add if the call's cost stayed.
  const alone = work
    .filter((n) => n > 0)
    .map((n) => {
      const t = timersFor(`op-cost work ${n}`).loop;
      const f = withWork(() => {}, n);
      let best = Infinity;
      for (let l = 0; l < 20; l++) best = Math.min(best, t(f, 100_000));
      return `${n}: ${best.toFixed(1)} ns`;
    });
  console.log(`# the work alone, ns a call (fastest of 20 loops): ${alone.join(', ')}`);
  console.log(
    `# ${row}${history.length ? ` (history: ${history.join(', ')})` : ''}: node ${process.version}; ${rounds} rounds of ${calls} calls; ns a call (median), − floor (median of per-round differences), ÷ floor [range]`,
  );
  for (const [name, s] of Object.entries(samples)) {
    const diffs = s.map((v, i) => v - samples.floor[i]);
    const ratios = s.map((v, i) => v / samples.floor[i]);
    console.log(
      `${name.padEnd(36)} ${median(s).toFixed(0).padStart(6)} ns  ${median(diffs).toFixed(0).padStart(5)}  ${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}]  per round: ${s.map((v) => v.toFixed(0)).join(' ')}`,
    );
  }
  if (sink === 0.5) console.log('');
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
