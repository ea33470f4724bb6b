// gpuService: a node:http service doing GPU work without blocking its event loop. Each request to
// GET /saxpy?k=K&a=A&n=N takes two buffers of N floats from the device's memory pool on one of 8
// non-blocking streams, uploads input pair K (two Float32Arrays kept in pinned staging memory, so the
// copies go straight from there; with --pageable-inputs in ordinary arrays, copied through staging memory),
// runs saxpy (y = A * x + y), downloads y into one of 64 result arrays the service keeps in staging
// memory (the copy lands there directly; awaited by polling from the event loop), answers with 64
// samples of it as float32 bytes, and frees the buffers. At most 64 requests are on the GPU at once:
// the others wait for a result array. A size the device cannot hold gets a 400. With
// --handover-results, each download hands over a fresh array (download(Float32Array), then
// stagingPool.release): simpler, but every hand-over is a new ArrayBuffer of the result's size, which
// V8 counts as new external memory (past 32 MiB of them it collects its young generation at the next
// ArrayBuffer allocation: with 64 results of 1 MiB in flight, a collection every 16 to 32 requests).
//   npx tsx examples/gpuService.ts                      # serves 600 requests to itself, checks them
//   npx tsx examples/gpuService.ts --serve [--port N]   # serves on 127.0.0.1 until SIGINT
//   … [--pageable-inputs] [--handover-results]          # inputs in ordinary Float32Arrays; results handed over
// In --serve mode it prints `listening on http://127.0.0.1:PORT`; GET /stats gives the event-loop
// delay (ms, less the monitor's 1 ms period; `?reset=1` starts it again), RSS and device memory,
// and POST /trim trims the memory pool and the staging pool first (bench/service.ts uses both).
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { cudart } from 'cuda-bindings';
import {
  CudaError,
  Device,
  Program,
  stagingPool,
  f32,
  i32,
  type DeviceBuffer,
  type Kernel,
  type LaunchConfig,
  type Stream,
} from 'cuda-bindings/core';
import { INPUTS, N, SAMPLES, SAXPY_SOURCE, makeInputs, requestFor, sampleIndex, send, type SaxpyRequest } from './lib/saxpy';

const STREAMS = 8;
/** Result arrays, and so requests on the GPU at once. */
const RESULTS = 64;
const MONITOR_MS = 1;

/** How the service keeps its inputs and gets its results (see the opening comment). */
export interface ServiceOptions {
  pageableInputs?: boolean;
  handoverResults?: boolean;
}

/** What the service works with: the device, its streams, the kernel, the input pairs, the result arrays, the next stream to use. */
export interface Service {
  dev: Device;
  streams: Stream[];
  saxpy: Kernel;
  /** The launch config, one object for every launch (its stream and grid set each time): a kernel launched with the config object it saw last takes its fast path. */
  launch: LaunchConfig;
  inputs: [Float32Array, Float32Array][];
  /** Free result arrays (none with handoverResults), and the requests waiting for one. */
  results: Float32Array[];
  waiting: ((result: Float32Array) => void)[];
  handoverResults: boolean;
  next: number;
}

/** A free result array, or a promise of the next one given back. */
function takeResult(s: Service): Float32Array | Promise<Float32Array> {
  return s.results.pop() ?? new Promise((resolve) => s.waiting.push(resolve));
}

/** Gives a result array to the request waiting longest, or back to the free ones. */
function giveResult(s: Service, result: Float32Array): void {
  const next = s.waiting.shift();
  if (next) next(result);
  else s.results.push(result);
}

/** y = a * x + y for request `r` on `stream`, its samples out; the result goes to `result`, or is handed over when null. */
async function saxpySamples(
  s: Service,
  stream: Stream,
  x: DeviceBuffer,
  y: DeviceBuffer,
  r: SaxpyRequest,
  result: Float32Array | null,
): Promise<Buffer> {
  const [xs, ys] = s.inputs[r.k];
  x.upload(xs.subarray(0, r.n), { stream });
  y.upload(ys.subarray(0, r.n), { stream });
  s.launch.stream = stream;
  s.launch.grid = Math.ceil(r.n / 256);
  s.saxpy.launch(s.launch, f32(r.a), x, y, i32(r.n));
  const samples = new Float32Array(SAMPLES);
  if (result) {
    await y.download(result.subarray(0, r.n), { stream }); // into staging memory: the copy lands there directly
    for (let j = 0; j < SAMPLES; j++) samples[j] = sampleIndex(j) < r.n ? result[sampleIndex(j)] : NaN;
  } else {
    const handed = await y.download(Float32Array, { stream });
    for (let j = 0; j < SAMPLES; j++) samples[j] = handed[sampleIndex(j)] ?? NaN;
    stagingPool.release(handed);
  }
  return Buffer.from(samples.buffer);
}

/** Request `r` on the GPU: two buffers from the pool on the next stream, the work, the answer. */
async function gpuRequest(s: Service, r: SaxpyRequest, result: Float32Array | null): Promise<[number, string | Buffer]> {
  const stream = s.streams[s.next++ % STREAMS];
  const pool = s.dev.memoryPool;
  let x: DeviceBuffer | undefined;
  let y: DeviceBuffer | undefined;
  try {
    x = pool.allocate(4 * r.n, stream);
    y = pool.allocate(4 * r.n, stream);
  } catch (e) {
    x?.close();
    if (e instanceof CudaError && e.code === cudart.cudaError_t.cudaErrorMemoryAllocation)
      return [400, `n = ${r.n} floats do not fit on the device\n`];
    throw e;
  }
  try {
    if (r.n > N) return [400, `the inputs have ${N} elements; n = ${r.n} is more\n`];
    return [200, await saxpySamples(s, stream, x, y, r, result)];
  } finally {
    x.close(); // freed in the stream's order (cudaFreeAsync): no wait
    y.close();
  }
}

/** A parameter of the query as an integer in [min, max], or null. */
function intParam(q: URLSearchParams, name: string, min: number, max: number): number | null {
  const v = Number(q.get(name));
  return q.has(name) && Number.isSafeInteger(v) && v >= min && v <= max ? v : null;
}

/** One request: checked, then the GPU work once a result array is free; resolves with the status and the body. */
async function saxpyRequest(s: Service, q: URLSearchParams): Promise<[number, string | Buffer]> {
  const k = intParam(q, 'k', 0, INPUTS - 1);
  const a = intParam(q, 'a', 1, 4);
  const n = intParam(q, 'n', 1, Number.MAX_SAFE_INTEGER);
  if (k === null || a === null || n === null) return [400, `k must be 0 to ${INPUTS - 1}, a 1 to 4, n a positive integer\n`];
  if (s.handoverResults) return gpuRequest(s, { k, a, n }, null);
  const result = await takeResult(s);
  try {
    return await gpuRequest(s, { k, a, n }, result);
  } finally {
    giveResult(s, result);
  }
}

/** Event-loop delay, process and device memory, as GET /stats reports them. */
function stats(s: Service, loop: ReturnType<typeof monitorEventLoopDelay>) {
  const ms = (ns: number) => Math.max(0, ns / 1e6 - MONITOR_MS);
  const { free, total } = s.dev.memoryInfo();
  const pool = s.dev.memoryPool.stats;
  return {
    loopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max), samples: loop.count },
    rssBytes: process.memoryUsage.rss(),
    cpuMicros: (({ user, system }) => user + system)(process.cpuUsage()), // the process's CPU time so far (all threads)
    // Where the RSS is: V8's heap, and memory outside it that JS objects hold (ArrayBuffers, wasm memories).
    heap: (({ heapTotal, heapUsed, external, arrayBuffers }) => ({ heapTotal, heapUsed, external, arrayBuffers }))(process.memoryUsage()),
    deviceUsedBytes: total - free,
    poolReservedBytes: pool.reservedBytes,
    poolUsedBytes: pool.usedBytes,
    stagingUsedBytes: stagingPool.usedBytes(),
    stagingFreeBytes: stagingPool.freeBytes(),
  };
}

/** Gives back what the pools keep: waits for the streams, trims the memory pool, frees the staging blocks. */
async function trim(s: Service): Promise<void> {
  await Promise.all(s.streams.map((st) => st.synchronize()));
  s.dev.memoryPool.trim(0);
  stagingPool.freeAllBlocks();
  // With --expose-gc: the dropped staging blocks' memory goes. V8 frees a WebAssembly memory's pages
  // on a collection after the one that finds it unreachable (a CPU test: 292 MiB still external right
  // after the first, 4 MiB after a second 200 ms later), so collect twice.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 200));
  gc?.();
}

function handler(s: Service, loop: ReturnType<typeof monitorEventLoopDelay>): http.RequestListener {
  return (req, res) => {
    const [path, query] = (req.url ?? '/').split('?', 2);
    const params = new URLSearchParams(query);
    const reply = (status: number, body: string | Buffer) => res.writeHead(status).end(body);
    const failed = (e: unknown) => reply(500, `${(e as Error).message}\n`);
    if (path === '/saxpy' && req.method === 'GET') {
      saxpyRequest(s, params).then(([status, body]) => reply(status, body), failed);
    } else if (path === '/stats' && req.method === 'GET') {
      reply(200, JSON.stringify(stats(s, loop)));
      if (params.get('reset') === '1') loop.reset();
    } else if (path === '/trim' && req.method === 'POST') {
      trim(s).then(() => reply(200, JSON.stringify(stats(s, loop))), failed);
    } else reply(404, 'try GET /saxpy?k=0&a=2&n=262144, GET /stats or POST /trim\n');
  };
}

/** Sends `count` requests, `concurrency` at a time, over kept-alive connections; returns what is wrong. */
async function selfCheck(base: URL, count: number, concurrency: number): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const problems: string[] = [];
  let seq = 0;
  const client = async () => {
    for (let i = seq++; i < count; i = seq++) {
      const r = requestFor(i);
      const o = await send(agent, base, r);
      const want = r.n === N ? 200 : 400;
      if (o.status !== want || o.wrong > 0) problems.push(`request ${i} (n = ${r.n}): status ${o.status}, ${o.wrong} wrong samples`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  agent.destroy();
  return problems;
}

/** The pair copied into arrays of pinned staging memory, which upload() copies to the device directly. */
function pinned(pair: [Float32Array, Float32Array]): [Float32Array, Float32Array] {
  return pair.map((a) => {
    const p = stagingPool.allocate(Float32Array, a.length);
    p.set(a);
    return p;
  }) as [Float32Array, Float32Array];
}

/** A service on `dev` launching `saxpy`, its inputs and results kept as `options` say (see the opening comment). */
export function createService(dev: Device, saxpy: Kernel, options: ServiceOptions = {}): Service {
  dev.memoryPool.releaseThreshold = 1 << 30; // keep up to 1 GiB between requests rather than give it back each time
  const handoverResults = options.handoverResults ?? false;
  return {
    dev,
    streams: Array.from({ length: STREAMS }, () => dev.createStream({ nonBlocking: true })),
    saxpy,
    launch: { grid: N / 256, block: 256 },
    inputs: Array.from({ length: INPUTS }, (_, k) => (options.pageableInputs ? makeInputs(k) : pinned(makeInputs(k)))),
    results: handoverResults ? [] : Array.from({ length: RESULTS }, () => stagingPool.allocate(Float32Array, N)),
    waiting: [],
    handoverResults,
    next: 0,
  };
}

/** The service's options from the command line. */
export function serviceOptions(argv: readonly string[]): ServiceOptions {
  return { pageableInputs: argv.includes('--pageable-inputs'), handoverResults: argv.includes('--handover-results') };
}

/** Serves `s` on 127.0.0.1:`port` (0: any free port); `stop` closes the server, trims, and closes the streams. */
export async function serve(
  s: Service,
  port: number,
): Promise<{ base: URL; server: http.Server; loop: ReturnType<typeof monitorEventLoopDelay>; stop: () => Promise<void> }> {
  const loop = monitorEventLoopDelay({ resolution: MONITOR_MS });
  loop.enable();
  const server = http.createServer(handler(s, loop));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const stop = async () => {
    loop.disable();
    await new Promise((resolve) => server.close(resolve));
    await trim(s);
    s.streams.forEach((st) => st.close());
  };
  return { base, server, loop, stop };
}

async function main(): Promise<void> {
  const serving = process.argv.includes('--serve');
  const portAt = process.argv.indexOf('--port');
  const port = portAt >= 0 ? Number(process.argv[portAt + 1]) : 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535, got ${process.argv[portAt + 1]}`);
  const dev = Device.get(0).makeCurrent();
  const program = await Program.compileAsync(SAXPY_SOURCE);
  const module = await program.loadAsync();
  const s = createService(dev, module.kernel('saxpy'), serviceOptions(process.argv));
  const { base, server, loop, stop } = await serve(s, port);
  console.log(`listening on ${base.origin}`);
  const end = () => void stop().then(() => module.close());
  if (serving) {
    process.once('SIGINT', end);
    process.once('SIGTERM', end);
    return;
  }
  const count = 600;
  const started = performance.now();
  const problems = await selfCheck(base, count, 16);
  const seconds = (performance.now() - started) / 1000;
  const st = stats(s, loop);
  console.log(
    `${count} requests (every 50th impossible) at concurrency 16 in ${seconds.toFixed(2)} s: ${(count / seconds).toFixed(0)} req/s; event-loop delay p50 ${st.loopDelayMs.p50.toFixed(2)} ms, p99 ${st.loopDelayMs.p99.toFixed(2)} ms, max ${st.loopDelayMs.max.toFixed(2)} ms`,
  );
  for (const p of problems.slice(0, 10)) console.log(p);
  server.closeAllConnections();
  end();
  console.log(problems.length === 0 ? 'Result = PASS' : `Result = FAIL (${problems.length} wrong answers)`);
  if (problems.length > 0) process.exitCode = 1;
}

// Run as a program (not when bench/service-cpu.ts imports the service to run it on a fake GPU).
if (require.main === module)
  main().catch((e) => {
    console.error(`gpuService: ${(e as Error).message.split('\n')[0]}`);
    process.exitCode = 1;
  });
