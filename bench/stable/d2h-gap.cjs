// How does a synchronous 4-byte D2H copy's time depend on the loop it is timed in? Two things that
// differ between the stable run's own processes and floor.ts's one process: the calls a loop makes
// (run.ts 2,000 a loop, floor.ts 400 at its default scale) and the CPU time a binding spends between
// two copies. This times the floor's cudaMemcpy (a koffi declaration of its own, as d2h-steps.cjs),
// after a launch on a created stream (as every server of the stable run has made), in loops of 100 to
// 8,000 calls, and in loops of 2,000 with a busy wait of 0 to 2,000 ns between calls (the wait's own
// time taken off): the fastest of 7 loops, ns a call, for each of 3 passes.
//   npm run build && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-gap.cjs /tmp/k.cubin
const { floorD2H, fastest, launchEmpty, createdStream } = require('./d2h-floor.cjs');

const copy = floorD2H();
launchEmpty(process.argv[2], createdStream());

const now = process.hrtime.bigint;
/** Spins until `ns` have passed. */
function spin(ns) {
  const end = now() + BigInt(ns);
  while (now() < end);
}
/** ns a call of `calls` copies, each followed by `gap` ns of spinning; the spin's own time (timed alone) is taken off. */
function best(calls, gap) {
  if (!gap) return fastest(copy, calls).toFixed(0);
  const withSpin = fastest(() => {
    copy();
    spin(gap);
  }, calls);
  return (withSpin - fastest(() => spin(gap), calls)).toFixed(0);
}

const rows = [
  ...[100, 400, 2000, 8000].map((n) => [`${n} calls a loop`, n, 0]),
  ...[250, 500, 1000, 2000].map((gap) => [`2000 calls, ${gap} ns between`, 2000, gap]),
].map(([name, n, gap]) => ({ name, n, gap, ns: [] }));
for (let pass = 0; pass < 3; pass++) for (const r of rows) r.ns.push(best(r.n, r.gap));
for (const r of rows) console.log(`${r.name.padEnd(30)} ${r.ns.join(' ')}`);
