// The facade and core against the koffi floor in one process (issue #18: "within 5% of the floor").
// run.ts gives each implementation a process of its own, and a process keeps its own luck for life
// (where its code, heap and stacks landed): for unchanged code the facade's ratio to the floor there
// moved by up to 9 points between two runs. Here the floor, the facade and core share one process,
// each with its own stream, and take turns loop by loop as in run.ts (a sample the fastest of
// `--loops` loops, round after round, each round starting with the next one); a row's figure is
// the median of its per-round ratios to the floor. The whole is repeated in `--processes` fresh
// processes, so the spread between processes shows how far one process's figure can be trusted.
// Loops are `--scale` times run.ts's (batches stay whole: 128 calls at least).
//   node dist-bench/bench/stable/floor.js [--processes 8] [--rounds 12] [--loops 5] [--scale 0.2] [--cpus 8] [--out f.json]
//   node dist-bench/bench/stable/floor.js --table f.json   (a run's table again, from its JSON)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OPS, buildKernels, gpuName, inFreshProcesses, median, options, pinTo, resultsFile } from './plan';
import { BATCH, timersFor } from './timers';

type Impl = 'koffi' | 'facade' | 'core';

/** One process's samples: per operation, the floor in ns per call and each other's ratio to it, a value per round. */
type Samples = Record<string, { floor: number[] } & Partial<Record<Exclude<Impl, 'koffi'>, number[]>>>;

interface Results {
  meta: Record<string, unknown>;
  processes: Samples[];
}

/** Times every operation that the floor and another implementation both have, in this process. */
async function child(cubin: string, rounds: number, loops: number, scale: number): Promise<Samples> {
  // Loaded here, not at the top: the parent only spawns and reads, and needs no build of the package.
  const { coreOps, facadeOps, koffiOps } = require('./ops') as typeof import('./ops');
  const impls: [Impl, ReturnType<typeof koffiOps>][] = [
    ['koffi', koffiOps(cubin)],
    ['facade', facadeOps(cubin)],
    ['core', await coreOps(cubin)],
  ];
  const out: Samples = {};
  // Round 0 warms up (JIT, lazy binding, caches) and is not kept.
  for (let round = 0; round <= rounds; round++) {
    for (const { op, kind, n } of OPS) {
      const present = impls.filter(([, [ops]]) => ops[op]);
      if (present[0]?.[0] !== 'koffi' || present.length < 2) continue;
      const order = present.map((_, i) => present[(i + round) % present.length]);
      const m = kind === 'batch' ? BATCH * Math.max(1, Math.round((n * scale) / BATCH)) : Math.max(1, Math.round(n * scale));
      const best = new Map<Impl, number>(order.map(([impl]) => [impl, Infinity]));
      for (let k = 0; k < loops; k++)
        for (const [impl, [ops, sync]] of order) {
          const t = timersFor(`${impl} ${op}`)[kind](ops[op], m, sync);
          sync();
          best.set(impl, Math.min(best.get(impl)!, t));
        }
      if (round === 0) continue;
      const floor = best.get('koffi')!;
      const row = (out[op] ??= { floor: [] });
      row.floor.push(floor);
      for (const [impl] of present) if (impl !== 'koffi') (row[impl] ??= []).push(best.get(impl)! / floor);
    }
  }
  return out;
}

const f3 = (x: number) => x.toFixed(3);

/** Per operation: the floor, and the facade's and core's ratio to it, as the median over processes [min–max] and each process's. */
function table(r: Results): string {
  const lines = [
    '| operation | floor, ns (median) | facade ÷ floor [min–max of processes] | per process | core ÷ floor [min–max] | per process |',
    '|---|---:|---:|---|---:|---|',
  ];
  for (const op of Object.keys(r.processes[0])) {
    const floor = median(r.processes.map((p) => median(p[op].floor)));
    const cells = (['facade', 'core'] as const).map((impl) => {
      const per = r.processes.flatMap((p) => (p[op][impl] ? [median(p[op][impl])] : []));
      if (!per.length) return ['', ''];
      return [`${f3(median(per))} [${f3(Math.min(...per))}–${f3(Math.max(...per))}]`, per.map(f3).join(' ')];
    });
    lines.push(`| ${op} | ${floor >= 100 ? floor.toFixed(0) : floor.toFixed(1)} | ${cells.flat().join(' | ')} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = options(args);
  if (args[0] === '--child') {
    const [cubin, rounds, loops, scale] = args.slice(1);
    console.log(JSON.stringify(await child(cubin, Number(rounds), Number(loops), Number(scale))));
    return;
  }
  if (args[0] === '--table') {
    console.log(table(JSON.parse(fs.readFileSync(args[1], 'utf8')) as Results));
    return;
  }
  const processes = Number(opt('--processes', '8'));
  const rounds = opt('--rounds', '12');
  const loops = opt('--loops', '5');
  const scale = opt('--scale', '0.2');
  const cpus = pinTo(opt('--cpus', '8'));
  const outFile = opt('--out', resultsFile('floor'));
  const cubin = buildKernels(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-floor-')));
  const results: Results = { meta: {}, processes: inFreshProcesses<Samples>(__filename, [cubin, rounds, loops, scale], processes, cpus) };
  const gpu = gpuName();
  results.meta = { date: new Date().toISOString(), gpu, node: process.version, processes, rounds, loops, scale, cpus, host: os.hostname() };
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify(results) + '\n');
  console.log(
    `# ${gpu}; Node ${process.version}; ${processes} processes of ${rounds} rounds, a sample the fastest of ${loops} loops; pinned to CPU(s) ${cpus ?? '(taskset missing: not pinned)'}; samples in ${outFile}`,
  );
  console.log(table(results));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
