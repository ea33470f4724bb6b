// Core's rows of the stable benchmark on the CPU, no GPU needed (issue #37: where core's time over the
// koffi floor goes). A fake libcudart (test/cpu/fixtures/fake-cudart.c's kernels variant, with
// bench/fixtures/fake-pool.c for stream-ordered allocation) returns at once from every call timed
// here, so a row is what JavaScript does around the call: the floor (the facade's own koffi
// declarations called with arguments prepared once, as bench/stable/ops.ts's koffiOps), the tuple
// facade, and core. They take turns loop by loop in one process (a sample the fastest of 5 loops),
// round after round; a row gives ns per call (median over rounds) and core's ratio to the floor and
// its ns over it (medians of the per-round figures). On a shared machine the times move with its load;
// `--callgrind` counts instructions instead (valgrind's callgrind, JIT warmed up first, then 20,000
// calls between two calls of a marker function, at which callgrind writes its counts out), which
// repeat to the instruction from run to run: under callgrind node runs with --single-threaded (V8
// compiles and collects on the JS thread), since valgrind runs one thread at a time and a background
// compile that had not finished by the counted stretch moved a row by hundreds of instructions
// (D2H's core 1,269–1,836 in three runs). FAKE_THRASH_KB=n makes the fake's stream-ordered allocation
// and free write a byte in every line of an n KiB buffer first, pushing what JavaScript touched out of
// the caches as a real driver call may; run so under callgrind with --cache-sim=yes (bench/README.md,
// "The exports written once", has the command), a row's simulated cache misses count what core
// touches that the floor does not. Runs against the build from the repo root:
//   npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/core-cpu.js [--rounds 15] [--only <row>] [--callgrind]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildKernelsFake } from './fake-kernels';

if (!process.env.CUDA_BINDINGS_CORE_CPU_BENCH) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'core-cpu-bench-'));
  const lib = buildKernelsFake(dir, 'libcudart-fake.so', ['bench/fixtures/fake-extra.c']);
  const env = { ...process.env, CUDA_BINDINGS_CUDART: lib, CUDA_BINDINGS_CORE_CPU_BENCH: '1' };
  const callgrind = process.argv.includes('--callgrind');
  const node = [process.execPath, '--expose-gc', ...(callgrind ? ['--single-threaded'] : []), __filename, ...process.argv.slice(2)];
  const out = path.join(dir, 'callgrind.out');
  const grind = [
    'valgrind',
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--dump-before=bench_mark',
    '--separate-threads=yes',
    `--callgrind-out-file=${out}`,
  ];
  const r = spawnSync(callgrind ? grind[0] : node[0], callgrind ? [...grind.slice(1), ...node] : node.slice(1), {
    stdio: callgrind ? ['inherit', 'pipe', 'inherit'] : 'inherit',
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (callgrind) console.log(instructionTable(r.stdout, out));
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}

/**
 * The table of a callgrind run: the child printed, in order, each measured stretch as JSON
 * [row, implementation, calls]; dump 2k (callgrind numbers them from 1) holds stretch k's instructions.
 */
function instructionTable(stdout: string, out: string): string {
  const stretches = stdout
    .split('\n')
    .filter((l) => l.startsWith('['))
    .map((l) => JSON.parse(l) as [string, string, number]);
  // The JS thread's file of each dump (V8 compiles and collects on threads of its own too).
  const irOf = (k: number) => Number(/^(?:summary|totals): (\d+)/m.exec(fs.readFileSync(`${out}.${2 * (k + 1)}-01`, 'utf8'))![1]);
  const rows = new Map<string, Record<string, number>>();
  stretches.forEach(([row, impl, calls], k) => {
    const r = rows.get(row) ?? {};
    r[impl] = irOf(k) / calls;
    rows.set(row, r);
  });
  const lines = [
    '# callgrind: instructions per call (node --single-threaded: compiles and collections counted where they fall), JIT warmed up first',
    '| row | floor | facade | core | core ÷ floor | core − floor | core − facade |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [row, r] of rows)
    lines.push(
      `| ${row} | ${r.floor.toFixed(0)} | ${r.facade?.toFixed(0) ?? ''} | ${r.core.toFixed(0)} | ${(r.core / r.floor).toFixed(2)}× | ${(r.core - r.floor).toFixed(0)} | ${r.facade === undefined ? '' : (r.core - r.facade).toFixed(0)} |`,
    );
  return lines.join('\n');
}

/* eslint-disable @typescript-eslint/no-require-imports */
const koffi = require('koffi') as typeof import('koffi');
const { core, cudart } = require(path.resolve('dist')) as typeof import('../src');
const { Kernel } = require(path.resolve('dist', 'core', 'launch', 'Kernel')) as typeof import('../src/core/launch/Kernel');
type Decl = [string, string, string[], string[]?];
const decls = require(path.resolve('dist', 'ffi', 'cudart.gen')).declarations as Record<string, Decl>;
/* eslint-enable @typescript-eslint/no-require-imports */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const opt = (name: string, dflt: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);

type Op = () => unknown;
type Row = { name: string; n: number; floor: Op; facade?: Op; core: Op };

async function rows(): Promise<Row[]> {
  const lib = koffi.load(process.env.CUDA_BINDINGS_CUDART!);
  const R = (name: string) => {
    const [sym, ret, params, split] = decls[name];
    return lib.func(sym, ret, split ?? params);
  };
  const { Device, i32, u32, i64, f32, f64 } = core;
  const dev = Device.get(0).makeCurrent();
  const s = dev.createStream({ nonBlocking: true });
  const ev = dev.createEvent({ timing: false });
  const buf = dev.allocate(1 << 20);
  const pinned = new core.HostBuffer(4096);
  const pinnedView = new Int32Array(pinned.bytes.buffer, pinned.bytes.byteOffset, 1);
  const hv = new Int32Array([1]);
  const pool = dev.memoryPool;
  // Handle 3 is the fake's empty kernel; the module is a stand-in that stays open.
  const empty = new Kernel(cudart.cudaKernel_t(3), 'empty', { isClosed: false } as never);
  const empty8 = new Kernel(cudart.cudaKernel_t(3), 'empty8', { isClosed: false } as never);
  const cfg = { grid: 1, block: 1, stream: s };
  const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
  const exec = (await s.capture(() => empty.launch(cfg))).instantiate();
  const [sh, eh, d, ph, poolH] = [s.handle, ev.handle, buf.ptr, pinned.ptr, pool.handle];
  const g = new cudart.dim3({ x: 1, y: 1, z: 1 });
  const packed = new cudart.KernelArgs([d, d, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]);
  // The floor's outputs go to memory outside V8's heap, passed by address, as ops.ts' koffiOps (and
  // the facade's and core's scratch slots) since 2026-11-27: koffi takes a bigint faster than a typed array.
  const page = koffi.alloc('uint8_t', 64);
  const i32out = BigInt(koffi.address(page) as bigint | number);
  const slotView = new BigUint64Array(koffi.view(page, 64) as ArrayBuffer);
  const slot = i32out;
  const w0 = 1 + 4294967296; // dim3 {1, 1, 1} as its two eight-byte words
  const [
    getDevice,
    eventRecord,
    mallocFromPool,
    freeAsync,
    memcpy,
    memcpyAsync,
    launchKernel,
    graphLaunch,
    eventQuery,
    malloc,
    free,
    streamQuery,
  ] = [
    'cudaGetDevice',
    'cudaEventRecord',
    'cudaMallocFromPoolAsync',
    'cudaFreeAsync',
    'cudaMemcpy',
    'cudaMemcpyAsync',
    'cudaLaunchKernel',
    'cudaGraphLaunch',
    'cudaEventQuery',
    'cudaMalloc',
    'cudaFree',
    'cudaStreamQuery',
  ].map(R);
  const graphH = (exec as unknown as { handle: bigint }).handle;
  return [
    {
      name: 'cudaGetDevice (Device.current)',
      n: 400_000,
      floor: () => getDevice(i32out),
      facade: () => cudart.cudaGetDevice(),
      core: () => Device.current(),
    },
    {
      name: 'cudaEventQuery (event.query)',
      n: 400_000,
      floor: () => eventQuery(eh),
      facade: () => cudart.cudaEventQuery(eh),
      core: () => ev.query(),
    },
    {
      name: 'cudaStreamQuery (stream.query)',
      n: 400_000,
      floor: () => streamQuery(sh),
      facade: () => cudart.cudaStreamQuery(sh),
      core: () => s.query(),
    },
    {
      name: 'cudaEventRecord (event.record(stream))',
      n: 400_000,
      floor: () => eventRecord(eh, sh),
      facade: () => cudart.cudaEventRecord(eh, sh),
      core: () => ev.record(s),
    },
    {
      name: 'cudaMallocFromPoolAsync+cudaFreeAsync (pool.allocate/close)',
      n: 200_000,
      floor: () => (mallocFromPool(slot, 1 << 20, poolH, sh), freeAsync(slotView[0], sh)),
      facade: () => cudart.cudaFreeAsync(cudart.cudaMallocFromPoolAsync(1 << 20, poolH, sh)[1], sh),
      core: () => pool.allocate(1 << 20, s).close(),
    },
    {
      name: 'cudaMalloc+cudaFree (device.allocate/close)',
      n: 100_000,
      floor: () => (malloc(slot, 1 << 20), free(slotView[0])),
      facade: () => cudart.cudaFree(cudart.cudaMalloc(1 << 20)[1]),
      core: () => dev.allocate(1 << 20).close(),
    },
    {
      name: 'cudaMemcpy D2H 4 B (buf.copyTo)',
      n: 400_000,
      floor: () => memcpy(hv, d, 4, 2),
      facade: () => cudart.cudaMemcpy(hv, d, 4, 2),
      core: () => buf.copyTo(hv),
    },
    {
      name: 'cudaMemcpyAsync H2D 4 B pinned (buf.copyFrom(view, stream))',
      n: 400_000,
      floor: () => memcpyAsync(d, ph, 4, 1, sh),
      facade: () => cudart.cudaMemcpyAsync(d, ph, 4, 1, sh),
      core: () => buf.copyFrom(pinnedView, s),
    },
    {
      name: 'cudaMemcpyAsync H2D 4 B pinned (buf.copyFrom(view, { stream }))',
      n: 400_000,
      floor: () => memcpyAsync(d, ph, 4, 1, sh),
      facade: () => cudart.cudaMemcpyAsync(d, ph, 4, 1, sh),
      core: () => buf.copyFrom(pinnedView, { stream: s }),
    },
    {
      name: 'cudaGraphLaunch (exec.launch(stream))',
      n: 400_000,
      floor: () => graphLaunch(graphH, sh),
      facade: () => cudart.cudaGraphLaunch(graphH as never, sh),
      core: () => exec.launch(s),
    },
    {
      name: 'cudaLaunchKernel empty (kernel.launch(cfg))',
      n: 400_000,
      floor: () => launchKernel(3n, w0, 1, w0, 1, null, 0, sh),
      facade: () => cudart.cudaLaunchKernel(3n, g, g, null, 0, sh),
      core: () => empty.launch(cfg),
    },
    {
      name: 'cudaLaunchKernel 8 typed arguments (kernel.launch(cfg, buf, buf, i32(1), …))',
      n: 200_000,
      floor: () => launchKernel(3n, w0, 1, w0, 1, packed.pointers, 0, sh),
      facade: () => cudart.cudaLaunchKernel(3n, g, g, packed, 0, sh),
      core: () => empty8.launch(cfg, buf, buf, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)),
    },
    {
      name: 'cudaLaunchKernel 8 arguments (prepared(cfg, buf, buf, 1, …))',
      n: 200_000,
      floor: () => launchKernel(3n, w0, 1, w0, 1, packed.pointers, 0, sh),
      facade: () => cudart.cudaLaunchKernel(3n, g, g, packed, 0, sh),
      core: () => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6),
    },
  ];
}

/** A timing loop compiled for one row and implementation (its own call site, as bench/stable/timers.ts). */
function loop(name: string): (f: Op, n: number) => number {
  return new Function(
    'f',
    'n',
    `// ${name}\nconst t = process.hrtime.bigint();\nfor (let i = 0; i < n; i++) f();\nreturn Number(process.hrtime.bigint() - t) / n;`,
  ) as (f: Op, n: number) => number;
}

/** Under callgrind: each row and implementation warmed up, then 20,000 calls between two marks. */
function counted(all: Row[]): void {
  const mark = koffi.load(process.env.CUDA_BINDINGS_CUDART!).func('void bench_mark(void)');
  const CALLS = 20_000;
  for (const r of all)
    for (const impl of ['floor', 'facade', 'core'] as const) {
      const f = r[impl];
      if (!f) continue;
      const l = loop(`${impl} ${r.name}`);
      for (let k = 0; k < 5; k++) l(f, CALLS);
      mark();
      l(f, CALLS);
      mark();
      console.log(JSON.stringify([r.name, impl, CALLS]));
    }
}

async function main(): Promise<void> {
  const only = opt('--only', '');
  const all = (await rows()).filter((r) => r.name.includes(only));
  if (process.argv.includes('--callgrind')) return counted(all);
  const ROUNDS = Number(opt('--rounds', '15'));
  const impls = ['floor', 'facade', 'core'] as const;
  const samples = all.map(() => ({ floor: [] as number[], facade: [] as number[], core: [] as number[] }));
  const loops = all.map((r) => Object.fromEntries(impls.map((i) => [i, loop(`${i} ${r.name}`)])));
  for (let round = 0; round <= ROUNDS; round++)
    all.forEach((r, k) => {
      const order = impls.map((_, j) => impls[(j + round) % impls.length]).filter((i) => r[i]);
      const best: Record<string, number> = {};
      for (let rep = 0; rep < 5; rep++)
        for (const i of order) best[i] = Math.min(best[i] ?? Infinity, loops[k][i](r[i]!, Math.ceil(r.n / 10)));
      // Round 0 warms up (JIT, lazy binding) and is not kept.
      if (round > 0) for (const i of order) samples[k][i].push(best[i]);
    });
  console.log(
    `# node ${process.version}; koffi ${koffi.version}; fake libcudart; ${ROUNDS} rounds, a sample the fastest of 5 loops; ns per call`,
  );
  console.log('| row | floor | facade | core | core ÷ floor | core − floor, ns | core − facade, ns |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  all.forEach((r, k) => {
    const { floor, facade, core: c } = samples[k];
    const per = (f: (i: number) => number) => median(c.map((_, i) => f(i)));
    const fmt = (xs: number[]) => (xs.length ? median(xs).toFixed(1) : '');
    console.log(
      `| ${r.name} | ${fmt(floor)} | ${fmt(facade)} | ${fmt(c)} | ${per((i) => c[i] / floor[i]).toFixed(2)}× | ${per((i) => c[i] - floor[i]).toFixed(1)} | ${facade.length ? per((i) => c[i] - facade[i]).toFixed(1) : ''} |`,
    );
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
