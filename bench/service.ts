// The service benchmark of issue #34 (`npm run bench:service`, on a GPU machine): examples/gpuService.ts
// loaded over kept-alive connections from a client in a process of its own (bench/service-load.ts) at
// each concurrency, and C doing the same work in the same run (bench/service.cu, compiled here with
// nvcc): one thread, and one thread per stream. Prints the runs and the targets as markdown tables;
// the raw rows go to bench/results/service-<date>.json (not in --short mode).
//   npx tsx bench/service.ts [--seconds 15] [--concurrency 16,64,256] [--c-threads 8] [--short] [--handover]
// The service's memory is read after a warm-up and a trim (memoryPool.trim(0), the staging pool's
// blocks freed, a garbage collection), and again after the runs and a trim.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { judge, parseArgs, renderTables, type Memory, type Row } from './service-stats';

const root = path.join(__dirname, '..');
const tsx = ['--import', 'tsx'];

/** Compiles bench/service.cu for this machine's GPU (or nvcc's default architecture where it cannot tell). */
function compileC(dir: string): string {
  const exe = path.join(dir, 'service');
  const src = path.join(root, 'bench', 'service.cu');
  const native = spawnSync('nvcc', ['-O2', '-arch=native', '-o', exe, src], { encoding: 'utf8' });
  if (native.status === 0) return exe;
  const plain = spawnSync('nvcc', ['-O2', '-o', exe, src], { encoding: 'utf8' });
  if (plain.status !== 0) throw new Error(`nvcc failed:\n${plain.stderr || native.stderr}`);
  return exe;
}

/** Runs a child to its end; resolves with its last stdout line parsed as a Row. */
function rowOf(cmd: string, args: string[]): Row {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{'))
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (status ${r.status}):\n${r.stderr}${r.stdout}`);
  return JSON.parse(last) as Row;
}

/** A service started as a child process: the child, its base URL, and what it printed so far. */
export interface StartedService {
  child: ChildProcess;
  base: string;
  output: () => string;
}

/**
 * Starts `node --expose-gc <nodeArgs> --import tsx <script> --serve <extra>` (the example by default)
 * with `env`; resolves once it prints `listening on <url>`.
 */
export function startService(
  extra: string[] = [],
  how: { script?: string; nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<StartedService> {
  const script = how.script ?? path.join('examples', 'gpuService.ts');
  const child = spawn(process.execPath, ['--expose-gc', ...(how.nodeArgs ?? []), ...tsx, script, '--serve', ...extra], {
    cwd: root,
    env: how.env ?? process.env,
  });
  let err = '';
  let out = '';
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) resolve({ child, base: m[1], output: () => out });
    });
    child.on('exit', (code) => reject(new Error(`the service exited (${code}) before listening:\n${err}${out}`)));
  });
}

/** What the service's GET /stats and POST /trim answer (examples/gpuService.ts). */
export interface ServiceStats {
  loopDelayMs: { p50: number; p99: number; max: number };
  rssBytes: number;
  cpuMicros: number;
  heap: { heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  deviceUsedBytes: number;
}

/** GET (or `method`) `what` of the service at `base`: its stats. */
export async function call(base: string, what: string, method = 'GET'): Promise<ServiceStats> {
  const res = await fetch(new URL(what, base), { method });
  if (!res.ok) throw new Error(`${method} ${what}: ${res.status} ${await res.text()}`);
  return (await res.json()) as ServiceStats;
}

/** One load run at `concurrency`: the client's row with the service's event-loop delay of the run. */
export async function load(base: string, concurrency: number, seconds: number, name: string): Promise<Row> {
  await call(base, '/stats?reset=1');
  const child = spawn(process.execPath, [...tsx, path.join('bench', 'service-load.ts'), base, String(concurrency), String(seconds), name], {
    cwd: root,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the load generator failed (${code}):\n${err}${out}`);
  const row = JSON.parse(out.trim().split('\n').pop()!) as Row;
  row.loopDelayMs = (await call(base, '/stats')).loopDelayMs;
  return row;
}

const PINNED = 'service (inputs and results in kept staging arrays: upload, saxpy, await download)';
const PAGEABLE = 'service, inputs in ordinary arrays (staged per upload)';
const HANDED_OVER = 'service, results handed over (download(Float32Array), release)';

/** Starts the service with `extra` arguments (and `how`, as startService takes it), runs `fn` against it, and stops it. */
export async function withService(
  extra: string[],
  fn: (base: string, service: StartedService) => Promise<void>,
  how: Parameters<typeof startService>[1] = {},
): Promise<void> {
  const service = await startService(extra, how);
  const { child, base } = service;
  try {
    await fn(base, service);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  const settings = parseArgs(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-service-'));
  try {
    const exe = compileC(dir);
    const seconds = String(settings.seconds);
    const c: Row[] = [];
    for (const mode of ['pageable', 'staged'])
      for (const threads of [1, settings.cThreads]) c.push(rowOf(exe, [mode, String(threads), seconds]));
    // The same service with its inputs in ordinary arrays, each upload copying them into staging memory
    // on the JS thread: shown beside, not judged.
    const pageable: Row[] = [];
    await withService(['--pageable-inputs'], async (base) => {
      await load(base, 16, Math.min(2, settings.seconds), 'warm-up');
      for (const n of settings.concurrency) pageable.push(await load(base, n, settings.seconds, PAGEABLE));
    });
    // The same service with each download handing over a fresh array (download(Float32Array), release):
    // shown, not judged (--handover).
    const handedOver: Row[] = [];
    if (settings.handover)
      await withService(['--handover-results'], async (base) => {
        await load(base, 16, Math.min(2, settings.seconds), 'warm-up');
        for (const n of settings.concurrency) handedOver.push(await load(base, n, settings.seconds, HANDED_OVER));
      });
    await withService([], async (base) => {
      await load(base, 16, Math.min(2, settings.seconds), 'warm-up');
      const before = await call(base, '/trim', 'POST');
      const js: Row[] = [];
      for (const n of settings.concurrency) js.push(await load(base, n, settings.seconds, PINNED));
      const after = await call(base, '/trim', 'POST');
      const memory: Memory = {
        deviceBefore: before.deviceUsedBytes,
        deviceAfter: after.deviceUsedBytes,
        rssBefore: before.rssBytes,
        rssAfter: after.rssBytes,
      };
      const verdicts = judge(js, c[0], memory);
      console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, Node ${process.version}; ${settings.seconds} s per run\n`);
      console.log(renderTables([...c, ...js, ...pageable, ...handedOver], verdicts));
      const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
      const parts = (m: ServiceStats) =>
        `RSS ${mib(m.rssBytes)}, V8 heap ${mib(m.heap.heapTotal)} (used ${mib(m.heap.heapUsed)}), external ${mib(m.heap.external)} (ArrayBuffers ${mib(m.heap.arrayBuffers)})`;
      console.log(`\nthe service's memory after a trim: before the runs ${parts(before)}; after ${parts(after)}`);
      if (!settings.short) {
        const file = path.join(root, 'bench', 'results', `service-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
        fs.writeFileSync(file, JSON.stringify({ settings, rows: [...c, ...js, ...pageable, ...handedOver], memory, verdicts }, null, 2));
        console.log(`\nraw: ${path.relative(root, file)}`);
      }
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a program (bench/service-cpu.ts imports the helpers above).
if (require.main === module)
  main().catch((e) => {
    console.error(`bench/service: ${(e as Error).message}`);
    process.exitCode = 1;
  });
