// Where a launch's time goes above the koffi floor, on a GPU: the floor (cudaLaunchKernel through
// koffi with everything built once), the floor with host work of a known length added before each
// call (a spin of about 30 and 100 ns, as long as the facade's own work and more), the facade, and
// core's prepared launch, in one process, repeated in `--processes` fresh processes. floor.ts found
// the facade 2-40 ns over the floor per launch in some processes and 150-270 ns in others; the spin
// rows say whether the floor itself moves that way when the host does anything between launches.
// A variant's figure in a round is the fastest of 5 loops (the variants taking turns loop by loop,
// launches in synchronised batches of 128); a process's figure is the median over 12 rounds of the
// variant minus its floor in the same round, in ns, and of its ratio to that floor.
//   npm run build && npx tsc -p tsconfig.bench.json
//   node dist-bench/bench/stable/launch-gpu.js [--processes 8] [--cpus 8] [--out f.json]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildKernels, gpuName, inFreshProcesses, median, options, pinTo, resultsFile } from './plan';
import { timersFor } from './timers';

/** One process: each variant's ns per launch, a value per round, and the spins' calibration. */
interface Samples {
  ns: Record<string, number[]>;
  spin: { k: number; ns: number }[];
}

const ROUNDS = 12;
const LOOPS = 5;
const CALLS = 2560;
/** Each variant, and the floor it is measured against. */
const BASE: Record<string, string> = {
  'floor, empty kernel': 'floor, empty kernel',
  'floor + spin 30 ns, empty': 'floor, empty kernel',
  'floor + spin 100 ns, empty': 'floor, empty kernel',
  'facade, empty kernel': 'floor, empty kernel',
  floor: 'floor',
  'floor + 8 stores': 'floor',
  'floor + spin 30 ns': 'floor',
  'floor + spin 100 ns': 'floor',
  'facade, KernelArgs pre-packed': 'floor',
  'prepared, DeviceBuffers': 'floor',
  'prepared, bigint addresses': 'floor',
};

function child(cubin: string): Samples {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const koffi = require('koffi') as typeof import('koffi');
  const { cudart, core } = require(path.resolve('dist')) as typeof import('../../src');
  const { declarations } = require(path.resolve('dist', 'ffi', 'cudart.gen')) as {
    declarations: Record<string, [string, string, string[], string[]?]>;
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const dev = core.Device.get(0).makeCurrent();
  const stream = dev.createStream({ nonBlocking: true });
  const buf = dev.allocate(1 << 20);
  const mod = core.Module.load(cubin);
  const empty = mod.kernel('empty');
  const empty8 = mod.kernel('empty8');
  const cfg = { grid: 1, block: 1, stream };
  const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
  const [sym, ret, params, split] = declarations.cudaLaunchKernel;
  const raw = koffi.load(cudart.libraryInfo().path).func(sym, ret, split ?? params);
  const sync = () => cudart.cudaStreamSynchronize(stream.handle);

  const d = buf.ptr;
  // The floor's arguments: packed once, as C's void *args[8].
  const { packEmpty8 } = require('./ops') as typeof import('./ops');
  const args8 = packEmpty8(d);
  const { i32, u32, i64, f32, f64 } = core;
  const ka = new cudart.KernelArgs([d, d, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]);
  const kaView = new DataView(ka.buffer.buffer, ka.buffer.byteOffset, ka.buffer.byteLength);
  const word0 = 1 + 4294967296; // dim3 {1, 1, 1}: x | y << 32, then z
  const k0 = empty.handle;
  const k8 = empty8.handle;
  const h = stream.handle;
  const g = new cudart.dim3({ x: 1, y: 1, z: 1 });

  // Host work of a known length: a chain of dependent multiplies the JIT cannot drop (the result is kept).
  let sink = 1;
  const spin = (k: number) => {
    let x = sink;
    for (let i = 0; i < k; i++) x = Math.imul(x, 1103515245) + 12345;
    sink = x;
  };
  const spinNs = (k: number) => {
    const t = timersFor(`spin ${k}`).loop;
    let best = Infinity;
    for (let r = 0; r < 20; r++)
      best = Math.min(
        best,
        t(() => spin(k), 100_000, sync),
      );
    return best;
  };
  // Iterations for about 30 and 100 ns, from the time of 200 iterations in this process.
  const perIter = spinNs(200) / 200;
  const k30 = Math.max(1, Math.round(30 / perIter));
  const k100 = Math.max(1, Math.round(100 / perIter));

  const floorEmpty = () => raw(k0, word0, 1, word0, 1, null, 0, h);
  const floor8 = () => raw(k8, word0, 1, word0, 1, args8, 0, h);
  const spun = (k: number, f: () => unknown) => () => {
    spin(k);
    return f();
  };
  const ops: Record<string, () => unknown> = {
    'floor, empty kernel': floorEmpty,
    'floor + spin 30 ns, empty': spun(k30, floorEmpty),
    'floor + spin 100 ns, empty': spun(k100, floorEmpty),
    'facade, empty kernel': () => cudart.cudaLaunchKernel(k0, g, g, null, 0, h),
    floor: floor8,
    'floor + 8 stores': () => {
      kaView.setBigUint64(0, d, true);
      kaView.setBigUint64(8, d, true);
      kaView.setInt32(16, 1, true);
      kaView.setUint32(20, 2, true);
      kaView.setFloat32(24, 3, true);
      kaView.setFloat32(28, 4, true);
      kaView.setUint32(32, 5, true);
      kaView.setInt32(36, 0, true);
      kaView.setFloat64(40, 6, true);
      return raw(k8, word0, 1, word0, 1, ka.pointers, 0, h);
    },
    'floor + spin 30 ns': spun(k30, floor8),
    'floor + spin 100 ns': spun(k100, floor8),
    'facade, KernelArgs pre-packed': () => cudart.cudaLaunchKernel(k8, g, g, ka, 0, h),
    'prepared, DeviceBuffers': () => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6),
    'prepared, bigint addresses': () => prepared(cfg, d, d, 1, 2, 3, 4, 5, 6),
  };
  const names = Object.keys(BASE);
  const timers = Object.fromEntries(names.map((n) => [n, timersFor(n).batch]));
  const ns: Samples['ns'] = Object.fromEntries(names.map((n) => [n, []]));
  // Round 0 warms up and is not kept.
  for (let round = 0; round <= ROUNDS; round++) {
    const best: Record<string, number> = Object.fromEntries(names.map((n) => [n, Infinity]));
    for (let loop = 0; loop < LOOPS; loop++)
      for (const n of names) {
        best[n] = Math.min(best[n], timers[n](ops[n], CALLS, sync));
        sync();
      }
    if (round > 0) for (const n of names) ns[n].push(best[n]);
  }
  const spins = [k30, k100].map((k) => ({ k, ns: spinNs(k) }));
  stream.close();
  buf.close();
  return { ns, spin: spins };
}

interface Results {
  meta: Record<string, unknown>;
  processes: Samples[];
}

/** Per variant: ns over its floor and ratio to it, the median over processes [min–max] and each process's. */
function table(r: Results): string {
  const f = (x: number, digits: number) => x.toFixed(digits);
  const lines = [
    `spins measured in the processes: ${r.processes.map((p) => p.spin.map((s) => f(s.ns, 0)).join('/')).join(', ')} ns`,
    '',
    '| variant | ns over its floor, median [min–max] of processes | per process | ratio to its floor, median [min–max] |',
    '|---|---:|---|---:|',
  ];
  for (const n of Object.keys(BASE)) {
    const over = r.processes.map((p) => median(p.ns[n].map((x, i) => x - p.ns[BASE[n]][i])));
    const ratio = r.processes.map((p) => median(p.ns[n].map((x, i) => x / p.ns[BASE[n]][i])));
    const span = (xs: number[], d: number) => `${f(median(xs), d)} [${f(Math.min(...xs), d)}–${f(Math.max(...xs), d)}]`;
    const floorNs = r.processes.map((p) => median(p.ns[n]));
    lines.push(
      n === BASE[n]
        ? `| ${n} (ns per launch) | ${span(floorNs, 0)} | ${floorNs.map((x) => f(x, 0)).join(' ')} | |`
        : `| ${n} | ${span(over, 0)} | ${over.map((x) => f(x, 0)).join(' ')} | ${span(ratio, 3)} |`,
    );
  }
  return lines.join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const opt = options(args);
  if (args[0] === '--child') {
    console.log(JSON.stringify(child(args[1])));
    return;
  }
  if (args[0] === '--table') {
    console.log(table(JSON.parse(fs.readFileSync(args[1], 'utf8')) as Results));
    return;
  }
  const processes = Number(opt('--processes', '8'));
  const cpus = pinTo(opt('--cpus', '8'));
  const outFile = opt('--out', resultsFile('launch'));
  const cubin = buildKernels(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-launch-')));
  const results: Results = { meta: {}, processes: inFreshProcesses<Samples>(__filename, [cubin], processes, cpus) };
  const gpu = gpuName();
  results.meta = {
    date: new Date().toISOString(),
    gpu,
    node: process.version,
    processes,
    rounds: ROUNDS,
    loops: LOOPS,
    calls: CALLS,
    cpus,
  };
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify(results) + '\n');
  console.log(
    `# ${gpu}; Node ${process.version}; ${processes} processes; pinned to CPU(s) ${cpus ?? '(not pinned)'}; samples in ${outFile}`,
  );
  console.log(table(results));
}

main();
