// Does what a process ran before change its synchronous 4-byte D2H copy? The stable run's core D2H
// row was level with koffi's when the run also had the pinned copy, event and query rows and no In/Out
// rows, and ~1.17x it otherwise, on one host with the same code (bench/README.md). This makes core's
// setup of ops.ts in a fresh process, then times the floor's D2H (d2h-floor.cjs) and core's own after
// each step of a history: 200 calls of one op (then a wait on core's stream), the In/Out op, the same
// op again. The fastest of 7 loops of 1,500 calls, ns a call.
//   npm run build && npx tsc -p tsconfig.bench.json && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-history.cjs /tmp/k.cubin cudaEventRecord
const path = require('node:path');
const { floorD2H, fastest } = require('./d2h-floor.cjs');
const ops = require(path.resolve('dist-bench/bench/stable/ops.js'));

const [cubin, op] = process.argv.slice(2);
const floor = floorD2H();
const best = (f) => fastest(f).toFixed(0);

(async () => {
  const [o, sync] = await ops.coreOps(cubin);
  if (!o[op]) throw new Error(`no core op '${op}' (${Object.keys(o).join(', ')})`);
  const out = [`op ${op}`];
  const times = (label) => out.push(`${label}: floor ${best(floor)}, core ${best(o.cudaMemcpy_D2H_4B)}`);
  const run = (name, calls) => {
    for (let i = 0; i < calls; i++) o[name]();
    sync();
  };
  times('after the setup');
  run(op, 200);
  times(`after 200 x ${op}`);
  run('InOut_4MiB', 20);
  times('after 20 x InOut_4MiB');
  run(op, 200);
  times(`after 200 x ${op} again`);
  console.log(out.join('\n'));
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
