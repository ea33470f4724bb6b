// The stable benchmark (`npm run bench:stable`, on a GPU machine after `npm run build`): C, the tuple
// facade, core, cuda-python, CuPy and raw koffi as long-lived processes, pinned to the same CPUs,
// taking turns operation by operation, round after round. Each row reports every implementation's
// median over the rounds with its spread (min–max), each round's sample being the fastest of five
// timed loops (the implementations taking turns loop by loop), and its ratio to C: the median of
// the per-round ratios, each against C's figure of the same round. The raw samples go to a JSON file.
// The two shortest calls (OPS' `short`) keep every loop's figure, `--short-loops` a round, and a
// second table gives each implementation's two modes and two ratios to C: its fast mode's over C's
// fast mode's, and the median of its loop-by-loop ratios (each loop against C's loop of the same turn).
// Every timed loop starts from the same state of the CUDA driver: each implementation first launches
// an empty kernel and waits for it (`--no-settle`: not). A process's synchronous D2H copy and
// stream query took ~1.1 us longer after such a wait than after a batch of pinned async copies
// (bench/README.md, "Two driver states, and every timed loop settled into one"), and which came
// last depended on the rows each implementation has.
//   node dist-bench/bench/stable/run.js [--rounds 10] [--loops 5] [--short-loops 20] [--cpus 8] [--ops a,b] [--no-settle] [--warm N] [--core-b DIR] [--out bench/results/stable.json]
//   (`--core-b DIR`: a seventh server, core as built in DIR (its dist/ and dist-bench/, e.g. a git
//   worktree of another branch), so that two versions of core are timed in one run beside one floor)
//   (`--ops`: only these rows, by name, for every implementation that has them; `--core-v8-flags
//   "--a --b"`: V8 flags for core's process alone, e.g. a larger inlining budget, to measure what it changes)
//   node dist-bench/bench/stable/run.js --compare a.json b.json   (do two runs agree within 15%?)
//   node dist-bench/bench/stable/run.js --table run.json            (a run's table again, from its JSON)
//   node dist-bench/bench/stable/run.js --floor a.json [b.json …]    (facade and core over the koffi floor, per run)
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { IMPLS, OPS, buildKernels, gpuName, median, options, pinTo, resultsFile, twoModes, type Impl } from './plan';

interface Results {
  meta: Record<string, unknown>;
  ops: typeof OPS;
  /** samples[impl][op]: ns per call, one per round (null where the implementation lacks the operation). */
  samples: Record<string, Record<string, (number | null)[]>>;
  /** loops[impl][op][round]: every loop's ns per call, in turn order, for the short operations (absent before issue #37). */
  loops?: Record<string, Record<string, number[][]>>;
}

/** An implementation's loops of a short operation, and each one's ratio to C's loop of the same turn. */
function shortLoops(r: Results, impl: string, op: string): { all: number[]; paired: number[] } {
  const mine = r.loops?.[impl]?.[op] ?? [];
  const c = r.loops?.c?.[op] ?? [];
  return {
    all: mine.flat(),
    paired: mine.flatMap((round, i) => round.flatMap((x, k) => (c[i]?.[k] ? [x / c[i][k]] : []))),
  };
}

/** A short operation's ratios to C for an implementation: fast mode over C's fast mode, and the median loop-by-loop ratio. */
function shortRatios(r: Results, impl: string, op: string): { fast: number; paired: number } | null {
  const { all, paired } = shortLoops(r, impl, op);
  const c = shortLoops(r, 'c', op).all;
  if (!all.length || !c.length || !paired.length) return null;
  return { fast: twoModes(all).fast / twoModes(c).fast, paired: median(paired) };
}

/** The short operations' modes: per implementation, each mode's median ns and share of loops, and the two ratios to C. */
function modesTable(r: Results): string {
  const lines = [
    '| operation | implementation | fast mode, ns [loops] | slow mode, ns [loops] | fast ÷ C fast | loop-by-loop ÷ C (median) |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const { op, short } of r.ops) {
    if (!short) continue;
    for (const impl of IMPLS) {
      const { all } = shortLoops(r, impl, op);
      if (!all.length) continue;
      const m = twoModes(all);
      const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
      const ratios = impl === 'c' ? null : shortRatios(r, impl, op);
      lines.push(
        `| ${op} | ${impl} | ${f(m.fast)} [${m.fastCount}] | ${m.two ? `${f(m.slow)} [${m.slowCount}]` : '(one mode)'} | ${ratios ? `${ratios.fast.toFixed(2)}×` : ''} | ${ratios ? `${ratios.paired.toFixed(2)}×` : ''} |`,
      );
    }
  }
  return lines.join('\n');
}

/**
 * Per-round ratios of impl to C (or to `against`, on the same operation) for one operation (rounds
 * where either is missing are left out).
 */
function ratios(r: Results, impl: string, op: string, against = 'c'): number[] {
  const base = against === 'c' ? (r.ops.find((o) => o.op === op)?.base ?? op) : op;
  const xs = r.samples[impl]?.[op] ?? [];
  const cs = r.samples[against]?.[base] ?? [];
  return xs.flatMap((x, i) => (x !== null && cs[i] ? [x / cs[i]!] : []));
}

/**
 * The facade and core (and core-b, where a run has it) against the koffi floor, the facade against
 * cuda-python and core against CuPy: the median of the per-round ratios, for each run given (issue
 * #18's "within 5% of the floor" and "no row slower than cuda-python", #37's "no core row slower than CuPy").
 */
function floors(runs: Results[]): string {
  const b = runs.some((r) => r.samples['core-b']);
  const pairs: [string, string][] = [
    ['facade', 'koffi'],
    ['core', 'koffi'],
    ...(b ? [['core-b', 'koffi'] as [string, string]] : []),
    ['facade', 'cuda-python'],
    ['core', 'cupy'],
    ...(b ? [['core-b', 'cupy'] as [string, string]] : []),
  ];
  const head = pairs.map(([a, b]) => `${a} / ${b}`);
  const lines = [`| operation | ${head.join(' | ')} |`, `|---|${head.map(() => '---:').join('|')}|`];
  for (const { op } of runs[0].ops) {
    const cells = pairs.map(([a, b]) => {
      const ms = runs.map((r) => ratios(r, a, op, b)).map((rs) => (rs.length ? median(rs).toFixed(3) : ''));
      return ms.every((m) => m === '') ? '' : ms.join(' / ');
    });
    if (cells.some(Boolean)) lines.push(`| ${op} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function table(r: Results): string {
  const impls = IMPLS.filter((i) => r.samples[i]);
  const lines = [`| operation (ns per call) | ${impls.join(' | ')} |`, `|---|${impls.map(() => '---:').join('|')}|`];
  for (const { op } of r.ops) {
    const cells = impls.map((impl) => {
      const xs = (r.samples[impl]?.[op] ?? []).filter((x): x is number => x !== null);
      if (!xs.length) return '';
      const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
      const rs = ratios(r, impl, op);
      return `${f(median(xs))} [${f(Math.min(...xs))}–${f(Math.max(...xs))}]${impl !== 'c' && rs.length ? ` ${median(rs).toFixed(2)}×` : ''}`;
    });
    if (cells.some(Boolean)) lines.push(`| ${op} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function compare(a: Results, b: Results): string {
  const lines = ['| operation | implementation | ratio to C, run 1 | run 2 | difference |', '|---|---|---:|---:|---:|'];
  let worst = 0;
  for (const { op } of a.ops) {
    for (const impl of IMPLS) {
      if (impl === 'c') continue;
      const ra = ratios(a, impl, op);
      const rb = ratios(b, impl, op);
      if (!ra.length || !rb.length) continue;
      const x = median(ra);
      const y = median(rb);
      const d = Math.abs(x / y - 1);
      worst = Math.max(worst, d);
      lines.push(`| ${op} | ${impl} | ${x.toFixed(2)}× | ${y.toFixed(2)}× | ${(100 * d).toFixed(1)}%${d > 0.15 ? ' **over 15%**' : ''} |`);
      // The short operations' ratios from their modes too (runs from before issue #37 have none).
      const sa = shortRatios(a, impl, op);
      const sb = shortRatios(b, impl, op);
      if (!sa || !sb) continue;
      for (const k of ['fast', 'paired'] as const) {
        const dk = Math.abs(sa[k] / sb[k] - 1);
        const label = k === 'fast' ? 'fast mode ÷ C fast mode' : 'loop-by-loop ÷ C';
        lines.push(
          `| ${op} (${label}) | ${impl} | ${sa[k].toFixed(2)}× | ${sb[k].toFixed(2)}× | ${(100 * dk).toFixed(1)}%${dk > 0.15 ? ' **over 15%**' : ''} |`,
        );
      }
    }
  }
  lines.push('', `Largest difference between the two runs: ${(100 * worst).toFixed(1)}%.`);
  return lines.join('\n');
}

/** A server process answering one request per line. */
class Server {
  private lines: AsyncIterator<string>;
  constructor(
    readonly impl: Impl,
    private proc: ChildProcessWithoutNullStreams,
    readonly stderr: string[],
  ) {
    this.lines = readline.createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
    proc.stderr.on('data', (d) => stderr.push(String(d)));
  }
  async next(timeoutMs: number): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const t = new Promise<never>(
      (_, rej) => (timer = setTimeout(() => rej(new Error(`${this.impl}: no answer in ${timeoutMs} ms`)), timeoutMs)),
    );
    try {
      const r = await Promise.race([this.lines.next(), t]);
      if (r.done) throw new Error(`${this.impl} exited: ${this.stderr.join('').slice(-500)}`);
      return r.value;
    } finally {
      clearTimeout(timer);
    }
  }
  async ask(op: string, kind: string, n: number): Promise<number | null> {
    this.proc.stdin.write(`${op} ${kind} ${n}\n`);
    const a = (await this.next(120_000)).trim();
    return a === '-' ? null : Number(a);
  }
  stop(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}

/** The op with which each implementation settles before a timed loop: an empty kernel launched and waited for (core's own: ops.ts `settle`). */
const SETTLE: Record<Impl, string> = {
  c: 'launch+sync_empty',
  facade: 'launch+sync_empty',
  core: 'settle',
  'cuda-python': 'launch+sync_empty',
  cupy: 'launch+sync_empty',
  koffi: 'launch+sync_empty',
  'core-b': 'settle',
};

/** Starts implementation `impl`'s server (`cmd`, in directory `cwd`), or notes why it did not start. */
async function start(impl: Impl, cmd: string[], cpus: string | null, notes: string[], cwd?: string): Promise<Server | null> {
  const argv = cpus ? ['taskset', '-c', cpus, ...cmd] : cmd;
  const proc = spawn(argv[0], argv.slice(1), { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NCCL_NVLS_ENABLE: '0' } });
  const err: string[] = [];
  const s = new Server(impl, proc, err);
  try {
    while ((await s.next(120_000)).trim() !== 'ready');
    return s;
  } catch (e) {
    notes.push(`${impl} left out: ${(e as Error).message.replace(/\s+/g, ' ').slice(0, 300)}`);
    proc.kill();
    return null;
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = options(args);
  if (args[0] === '--table') {
    const r = JSON.parse(fs.readFileSync(args[1], 'utf8')) as Results;
    console.log(table(r));
    if (r.loops) console.log(`\n${modesTable(r)}`);
    return;
  }
  if (args[0] === '--floor') {
    console.log(floors(args.slice(1).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Results)));
    return;
  }
  if (args[0] === '--compare') {
    const [a, b] = args.slice(1, 3).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Results);
    console.log(compare(a, b));
    return;
  }
  const rounds = Number(opt('--rounds', '10'));
  const loops = Number(opt('--loops', '5'));
  const shortLoopCount = Number(opt('--short-loops', '20'));
  // One CPU for every process (they take turns, so only one runs at a time). With two (8,9) a
  // process's samples fell into two modes, 1.3-2x apart, as it ran on one CPU or the other, and the
  // two H100 runs of 2026-11-23 disagreed by up to 46% on the shortest calls.
  const cpus = pinTo(opt('--cpus', '8'));
  const outFile = opt('--out', resultsFile('stable'));
  const wanted = opt('--ops', '');
  const coreFlags = opt('--core-v8-flags', '').split(' ').filter(Boolean);
  const settle = !args.includes('--no-settle');
  // --warm N: before each loop, N untimed calls of the row's own operation (at most a loop's), then the
  // settle. A server idles while the others take their turns; after 300 ms idle the floor's pool pair
  // was 10-13% slower and core's excess over it larger (bench/README.md, "The second settled pair").
  // In full runs it made every implementation's pool pair slower and core's excess no smaller
  // (runs 46-49, "Two versions of core in one run"), so the runs reported do not use it.
  const warm = Number(opt('--warm', '0'));
  const coreB = args.includes('--core-b') ? path.resolve(opt('--core-b', '')) : null;
  if (coreB !== null && !fs.existsSync(path.join(coreB, 'dist-bench', 'bench', 'stable', 'node.js')))
    throw new Error(`--core-b: ${coreB} has no dist-bench/bench/stable/node.js (build it there first)`);
  const ops = wanted ? OPS.filter((o) => wanted.split(',').includes(o.op)) : OPS;
  if (wanted && ops.length !== wanted.split(',').length)
    throw new Error(
      `--ops: no such row among ${wanted
        .split(',')
        .filter((w) => !OPS.some((o) => o.op === w))
        .join(', ')}`,
    );
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stable-'));
  const cubin = buildKernels(work);
  execFileSync('nvcc', ['-O2', '-o', path.join(work, 'c'), 'bench/stable/c.cu', '-lcuda'], { stdio: 'inherit' });
  const notes: string[] = [];
  const node = process.execPath;
  const here = path.join('dist-bench', 'bench', 'stable', 'node.js');
  const cmds: Record<Impl, string[] | null> = {
    c: [path.join(work, 'c'), cubin],
    facade: [node, here, 'facade', cubin],
    core: [node, ...coreFlags, here, 'core', cubin],
    'cuda-python': ['python3', 'bench/stable/py.py', 'cuda-python', cubin],
    cupy: ['python3', 'bench/stable/py.py', 'cupy', cubin],
    koffi: [node, here, 'koffi', cubin],
    // Run in its own directory, whose dist/ it loads (ops.ts resolves 'dist' from the working directory).
    'core-b': coreB === null ? null : [node, ...coreFlags, path.join(coreB, here), 'core', cubin],
  };
  const servers: Server[] = [];
  for (const impl of IMPLS) {
    const cmd = cmds[impl];
    const s = cmd && (await start(impl, cmd, cpus, notes, impl === 'core-b' ? coreB! : undefined));
    if (s) servers.push(s);
  }
  if (!servers.some((s) => s.impl === 'c')) throw new Error(`the C server did not start: ${notes.join('; ')}`);
  const samples: Results['samples'] = {};
  for (const s of servers) samples[s.impl] = Object.fromEntries(ops.map((o) => [o.op, []]));
  const loopsOf: NonNullable<Results['loops']> = {};
  for (const s of servers) loopsOf[s.impl] = Object.fromEntries(ops.filter((o) => o.short).map((o) => [o.op, []]));
  // Round 0 warms every process up (JIT, lazy binding, caches) and is not kept.
  for (let round = 0; round <= rounds; round++) {
    const t0 = Date.now();
    // Each round starts with the next implementation, so none always follows the same one.
    const order = servers.map((_, i) => servers[(i + round) % servers.length]);
    for (const { op, kind, n, nFor, short } of ops) {
      // A sample is the fastest of `loops` timed loops: what the machine adds (another process, an
      // interrupt, a frequency dip) only ever slows a loop down. The implementations take turns loop
      // by loop (C, facade, …, C, facade, …), so a slow spell of the machine falls on all of them
      // alike, not on whichever ran its loops back to back while it lasted.
      // A short operation: more loops of fewer calls (the same calls in all), every one kept.
      const count = short ? shortLoopCount : loops;
      const calls = (impl: Impl) => Math.max(1, Math.round(((nFor?.[impl] ?? n) * loops) / count));
      const v = new Map<Server, (number | null)[]>(order.map((s) => [s, []]));
      for (let k = 0; k < count; k++)
        for (const s of order) {
          if (warm > 0) await s.ask(op, kind, Math.min(warm, calls(s.impl)));
          if (settle) await s.ask(SETTLE[s.impl], 'loop', 1);
          v.get(s)!.push(await s.ask(op, kind, calls(s.impl)));
        }
      if (round > 0)
        for (const s of order) {
          const t = v.get(s)!;
          samples[s.impl][op].push(t[0] === null ? null : Math.min(...(t as number[])));
          if (short && t[0] !== null) loopsOf[s.impl][op].push(t as number[]);
        }
    }
    process.stderr.write(`round ${round}/${rounds}${round === 0 ? ' (warm-up, not kept)' : ''}: ${Date.now() - t0} ms\n`);
  }
  for (const s of servers) {
    s.stop();
    // What a server said of itself on stderr (`# …` lines: an operation it had to leave out, and why).
    for (const l of s.stderr.join('').split('\n')) if (l.startsWith('# ')) notes.push(`${s.impl}: ${l.slice(2)}`);
  }
  const gpu = gpuName();
  const results: Results = {
    meta: {
      date: new Date().toISOString(),
      gpu,
      node: process.version,
      rounds,
      loops,
      shortLoops: shortLoopCount,
      cpus,
      ...(coreFlags.length ? { coreV8Flags: coreFlags } : {}),
      settle,
      ...(warm > 0 ? { warm } : {}),
      ...(coreB !== null ? { coreB } : {}),
      host: os.hostname(),
      notes,
    },
    ops,
    samples,
    loops: loopsOf,
  };
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify(results, null, 1) + '\n');
  console.log(
    `# ${gpu}; Node ${process.version}; ${rounds} rounds, a sample the fastest of ${loops} loops; pinned to CPU(s) ${cpus ?? '(taskset missing: not pinned)'}; raw samples in ${outFile}`,
  );
  for (const n of notes) console.log(`# ${n}`);
  console.log(table(results));
  console.log(`\nThe two shortest calls, every loop (${shortLoopCount} a round): each implementation's modes, and its ratios to C\n`);
  console.log(modesTable(results));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
