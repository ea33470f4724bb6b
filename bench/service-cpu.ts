// The service of examples/gpuService.ts on a CPU, no GPU needed: where its JavaScript thread's time
// and memory go under load (issue #34's event-loop delay and RSS). The service runs unchanged on a
// fake libcudart (test/cpu/fixtures/fake-cudart.c's kernels variant with bench/fixtures/fake-gpu-queue.c:
// one library thread runs the copies, the saxpy launches and the frees in the order queued, and an
// event completes once the work before it has run), loaded by bench/service-load.ts as on the GPU.
// Prints the runs, the service's memory after a warm-up and a trim, right after the runs, and after
// a trim again, and what `--trace-gc` said during the runs (collections by kind and why, their pauses,
// V8 heap bytes allocated per request). The copies and the saxpy run on the CPU (one thread), so the
// throughput is far below a GPU's: compare only the JS thread's figures, within one run. With
// --no-gpu-work the fake's copies and kernels do nothing, so that the JS side alone sets the pace (as
// on the H100, where the JS thread is the bottleneck), and every 200 answer counts as wrong.
//   npx tsx bench/service-cpu.ts [--seconds 10] [--concurrency 64] [--pageable-inputs] [--handover-results] [--cpu-prof FILE] [--node-arg --FLAG]… [--no-gpu-work]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildKernelsFake } from './fake-kernels';
import { call, load, withService, type ServiceStats } from './service';
import { longStretches, type CpuProfile } from './service-profile';
import { gcSummary, renderRuns, type Row } from './service-stats';

const root = path.join(__dirname, '..');
/** The kernels variant's functions that fake-gpu-queue.c defines its own way (renamed out of the way). */
const REPLACED = [
  'cudaMemcpyAsync',
  'cudaLaunchKernel',
  'cudaEventCreate',
  'cudaEventCreateWithFlags',
  'cudaEventDestroy',
  'cudaEventRecord',
  'cudaEventQuery',
  'cudaEventSynchronize',
  'cudaStreamSynchronize',
  'cudaStreamQuery',
  'cudaDeviceSynchronize',
  'cudaHostRegister',
];

interface Settings {
  seconds: number;
  concurrency: number[];
  /** The service's own flags (--pageable-inputs, --handover-results), passed on. */
  serviceArgs: string[];
  cpuProf?: string;
  /** Further flags for the service's node (--node-arg, repeatable). */
  nodeArgs: string[];
  /** The fake GPU's copies and kernels do nothing (FAKE_GPU_NO_WORK=1): the JS side sets the pace, and every answer is wrong. */
  noGpuWork: boolean;
}

function parse(argv: readonly string[]): Settings {
  const s: Settings = { seconds: 10, concurrency: [64], serviceArgs: [], nodeArgs: [], noGpuWork: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--pageable-inputs' || a === '--handover-results') s.serviceArgs.push(a);
    else if (a === '--seconds' && Number(v) > 0) s.seconds = Number(argv[++i]);
    else if (a === '--concurrency' && /^\d+(,\d+)*$/.test(v ?? '')) s.concurrency = argv[++i].split(',').map(Number);
    else if (a === '--cpu-prof' && v) s.cpuProf = path.resolve(argv[++i]);
    else if (a === '--node-arg' && v?.startsWith('--')) s.nodeArgs.push(argv[++i]);
    else if (a === '--no-gpu-work') s.noGpuWork = true;
    else
      throw new Error(
        `bad argument ${a} (the arguments are --seconds S, --concurrency 16,64, --pageable-inputs, --handover-results, --cpu-prof FILE, --node-arg --FLAG, --no-gpu-work)`,
      );
  }
  return s;
}

const mib = (b: number) => (b / 2 ** 20).toFixed(1);

/** One line of the service's memory: RSS, V8 heap, external (of which ArrayBuffers), the rest of RSS, staging pool. */
function memoryLine(when: string, m: ServiceStats & { stagingUsedBytes?: number; stagingFreeBytes?: number }): string {
  const h = m.heap;
  const rest = m.rssBytes - h.heapTotal - h.external;
  return `| ${when} | ${mib(m.rssBytes)} | ${mib(h.heapTotal)} (${mib(h.heapUsed)}) | ${mib(h.external)} (${mib(h.arrayBuffers)}) | ${mib(rest)} | ${mib(m.stagingUsedBytes ?? 0)} / ${mib(m.stagingFreeBytes ?? 0)} |`;
}

/** The collections of the runs, by kind, as a markdown table. */
function gcTable(log: string, requests: number): string {
  const g = gcSummary(log);
  const lines = ['| collection | count | pause total / max (ms) | over 3 ms | why (count) |', '|---|---:|---|---:|---|'];
  for (const [kind, k] of Object.entries(g.kinds)) {
    const why = Object.entries(k.reasons)
      .map(([r, n]) => `${r} (${n})`)
      .join(', ');
    lines.push(`| ${kind} | ${k.count} | ${k.totalMs.toFixed(1)} / ${k.maxMs.toFixed(2)} | ${k.over3ms} | ${why} |`);
  }
  lines.push(
    '',
    `V8 heap allocated: ${mib(g.allocatedBytes)} MiB over ${requests} requests, ${(g.allocatedBytes / requests / 1024).toFixed(1)} KiB a request`,
  );
  return lines.join('\n');
}

/** The long stretches of work in the service's profile of the runs (`file`). */
function profileReport(file: string): string {
  const l = longStretches(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, 3);
  const share = (ms: number) => `${ms.toFixed(0)} ms (${((100 * ms) / l.totalMs).toFixed(0)}%)`;
  return [
    `${file}: during the runs, ${l.count} stretches of work over 3 ms (max ${l.maxMs.toFixed(1)} ms), ${l.totalMs.toFixed(0)} ms of ${l.busyMs.toFixed(0)} ms busy`,
    '',
    '| where the time of the long stretches went | ms (share) |',
    '|---|---:|',
    ...Object.entries(l.byBucket)
      .sort((a, b) => b[1] - a[1])
      .map(([b, ms]) => `| ${b} | ${share(ms)} |`),
    '',
    `top functions there: ${l.topFunctions.map(([f, ms]) => `${f} ${ms.toFixed(0)} ms`).join('; ')}`,
  ].join('\n');
}

/** The service's CPU profile, started and stopped by SIGUSR2 (the parent sends one before the runs and one after); written to $SERVICE_CPU_PROFILE. */
async function profileOnSignal(file: string): Promise<void> {
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method: string, params: object = {}) =>
    new Promise<{ profile?: unknown }>((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r as object))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  let on = false;
  process.on('SIGUSR2', () => {
    on = !on;
    void (on ? post('Profiler.start') : post('Profiler.stop').then((r) => fs.writeFileSync(file, JSON.stringify(r.profile))));
  });
}

async function parent(): Promise<void> {
  const settings = parse(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-service-cpu-'));
  try {
    const env = {
      ...process.env,
      CUDA_BINDINGS_CUDART: buildKernelsFake(dir, 'libcudart-fake-service.so', ['bench/fixtures/fake-gpu-queue.c'], REPLACED, root),
      SERVICE_CPU_PROFILE: settings.cpuProf ?? '',
      FAKE_GPU_NO_WORK: settings.noGpuWork ? '1' : '',
    };
    const nodeArgs = ['--trace-gc', ...settings.nodeArgs];
    const extra = settings.serviceArgs;
    await withService(
      extra,
      async (base, service) => {
        await load(base, 16, 2, 'warm-up');
        const before = await call(base, '/trim', 'POST');
        const from = service.output().length;
        const rows: Row[] = [];
        const cpuBefore = (await call(base, '/stats')).cpuMicros;
        if (settings.cpuProf) service.child.kill('SIGUSR2');
        for (const c of settings.concurrency) rows.push(await load(base, c, settings.seconds, 'service on the fake GPU'));
        if (settings.cpuProf) {
          service.child.kill('SIGUSR2');
          await new Promise((r) => setTimeout(r, 500)); // the profile written before the trims
        }
        const log = service.output().slice(from);
        const under = await call(base, '/stats');
        const requests = rows.reduce((n, r) => n + r.requests, 0);
        const after = await call(base, '/trim', 'POST');
        const later = await new Promise((r) => setTimeout(r, 1000)).then(() => call(base, '/trim', 'POST'));
        console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, Node ${process.version}; ${settings.seconds} s per run\n`);
        console.log(renderRuns(rows));
        console.log(
          '\n| service memory (MiB) | RSS | V8 heap (used) | external (ArrayBuffers) | RSS less heap and external | staging used / free |',
        );
        console.log('|---|---:|---:|---:|---:|---:|');
        for (const [when, m] of [
          ['after warm-up and trim', before],
          ['right after the runs', under],
          ['after trim', after],
          ['1 s and a trim later', later],
        ] as const)
          console.log(memoryLine(when, m));
        console.log(`\n${gcTable(log, requests)}`);
        console.log(
          `\nthe service's CPU time (all its threads) during the runs: ${((under.cpuMicros - cpuBefore) / requests).toFixed(1)} µs a request`,
        );
      },
      { script: path.join('bench', 'service-cpu.ts'), nodeArgs, env },
    );
    if (settings.cpuProf) console.log(`\n${profileReport(settings.cpuProf)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The service itself (--serve), on the fake: the example's service with the fake's saxpy. */
async function serveOnFake(): Promise<void> {
  const { Device, Module } = await import('cuda-bindings/core');
  const { createService, serve, serviceOptions } = await import('../examples/gpuService');
  if (process.env.SERVICE_CPU_PROFILE) await profileOnSignal(process.env.SERVICE_CPU_PROFILE);
  const dev = Device.get(0).makeCurrent();
  const module = Module.fromHandle(1);
  const s = createService(dev, module.kernel('saxpy'), serviceOptions(process.argv));
  const { base, stop } = await serve(s, 0);
  console.log(`listening on ${base.origin}`);
  const end = () => void stop().then(() => process.exit(0));
  process.once('SIGINT', end);
  process.once('SIGTERM', end);
}

(process.argv.includes('--serve') ? serveOnFake() : parent()).catch((e) => {
  console.error(`bench/service-cpu: ${(e as Error).stack}`);
  process.exitCode = 1;
});
