// Which implementation's process makes a synchronous 4-byte D2H copy slow? In the stable run's own
// processes core's D2H row is ~1.2 us over the floor's, as are cuda-python's and CuPy's over C's, while
// in one process (floor.ts) core and the floor are level. This makes the setup of the implementations
// named (ops.ts: koffi, facade, core, in that order; none: one kernel launch only), then times the
// floor's cudaMemcpy (a koffi declaration of its own, as d2h-steps.cjs) and each implementation's own
// D2H op: after the setup, and again after one pass over every op of each implementation (a round of
// the stable run, 200 calls an op). The fastest of 7 loops of 1,500 calls, ns a call.
//   npm run build && npx tsc -p tsconfig.bench.json && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-setup.cjs /tmp/k.cubin koffi,core
const path = require('node:path');
const { floorD2H, fastest, launchEmpty } = require('./d2h-floor.cjs');
const ops = require(path.resolve('dist-bench/bench/stable/ops.js'));

const [cubin, which = 'none'] = process.argv.slice(2);
const floor = floorD2H();
const best = (f) => fastest(f).toFixed(0);

(async () => {
  const out = [`floor at start ${best(floor)}`];
  const impls = [];
  if (which === 'none') launchEmpty(cubin, null);
  else
    for (const name of ['koffi', 'facade', 'core'])
      if (which.split(',').includes(name))
        impls.push([name, await { koffi: ops.koffiOps, facade: ops.facadeOps, core: ops.coreOps }[name](cubin)]);
  const times = (label) => {
    const own = impls.map(([name, [o]]) => `${name} ${best(o.cudaMemcpy_D2H_4B)}`).join(', ');
    out.push(`${label}: floor ${best(floor)}${own ? `, ${own}` : ''}`);
  };
  times(`after the setup of ${which}`);
  for (const [, [o, sync]] of impls) {
    for (const f of Object.values(o)) {
      for (let i = 0; i < 200; i++) f();
      sync();
    }
  }
  times('after 200 calls of every op');
  console.log(out.join('\n'));
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
