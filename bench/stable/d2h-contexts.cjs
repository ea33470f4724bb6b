// Does a process's synchronous D2H level depend on how many CUDA contexts were made before its own?
// The stable run keeps six processes alive at once (C, the facade, core, cuda-python, CuPy, koffi),
// each with a context on the GPU, and in runs 27, 28, 31 and 32 the same three (core, cuda-python,
// CuPy) copied ~1.2 us slower than the other three for the whole run. This starts `n` children one
// after another, each making its context, a stream and one launch on it (as every server of the stable
// run does), and keeps them all alive; the children then time the floor's 4-byte cudaMemcpy D2H
// (a koffi declaration of its own) in turns, the first child first in one round and last in the next:
// the fastest of 7 loops of 1,500 calls, ns a call, per child (in the order their contexts were made)
// and round.
//   npm run build && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-contexts.cjs /tmp/k.cubin [n=6] [rounds=4]
const { spawn } = require('node:child_process');
const readline = require('node:readline');

if (process.argv[2] === '--child') {
  const { floorD2H, fastest, launchEmpty, createdStream } = require('./d2h-floor.cjs');
  const copy = floorD2H();
  launchEmpty(process.argv[3], createdStream());
  console.log('ready');
  readline.createInterface({ input: process.stdin }).on('line', () => console.log(fastest(copy).toFixed(0)));
} else {
  const [cubin, n = '6', rounds = '4'] = process.argv.slice(2);
  (async () => {
    const children = [];
    for (let i = 0; i < Number(n); i++) {
      const p = spawn(process.execPath, [__filename, '--child', cubin], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = readline.createInterface({ input: p.stdout })[Symbol.asyncIterator]();
      const next = async () => (await lines.next()).value;
      if ((await next()) !== 'ready') throw new Error(`child ${i} did not start`);
      children.push({ p, next, times: [] });
    }
    for (let r = 0; r < Number(rounds); r++) {
      const order = r % 2 === 0 ? children : [...children].reverse();
      for (const c of order) {
        c.p.stdin.write('time\n');
        c.times.push(await c.next());
      }
    }
    children.forEach((c, i) => console.log(`context ${i + 1}: ${c.times.join(' ')}`));
    for (const c of children) c.p.kill();
  })().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
