// The Node side of the stable benchmark (bench/stable/run.ts): the tuple facade, core, or raw koffi
// as a long-lived process that times one operation per request, like bench/stable/c.cu.
//   node dist-bench/bench/stable/node.js facade|core|koffi <kernels.cubin>
//   then on stdin "<op> <loop|batch> <n>" -> stdout: ns per call, or "-" for an operation it lacks
// The operations themselves are in ops.ts (`koffi` is the floor of any binding made with koffi).
import * as readline from 'node:readline';
import { coreOps, facadeOps, koffiOps } from './ops';
import { timersFor } from './timers';

const [impl, cubin] = process.argv.slice(2);
if (!['facade', 'core', 'koffi'].includes(impl) || !cubin) {
  console.error('usage: node.js facade|core|koffi <kernels.cubin>');
  process.exit(2);
}

async function main(): Promise<void> {
  const [ops, sync] = impl === 'facade' ? facadeOps(cubin) : impl === 'koffi' ? koffiOps(cubin) : await coreOps(cubin);
  console.log('ready');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [name, kind, n] = line.trim().split(/\s+/);
    const f = ops[name];
    if (!f) {
      console.log('-');
      continue;
    }
    const t = timersFor(name);
    const v = (kind === 'batch' ? t.batch : t.loop)(f, Number(n), sync);
    sync();
    console.log(v.toFixed(2));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
