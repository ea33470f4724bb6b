// The exporter's scrape latency: `cuda-bindings exporter`'s server (the build, dist/cli/exporter.js)
// over the test suite's fake libnvidia-ml of 8 GPUs (test/cpu/fixtures/fake-nvml.c, built here with gcc
// as the tests build it; GPU 3 lost, processes on four GPUs), sampled every second on its worker thread,
// and 100 scrapes at once from a client in a process of its own, round after round: on fresh connections
// (as 100 scrapers that each connect anew) and on kept-alive ones (as Prometheus keeps its connection).
// Prints p50, p99 and the worst latency of each, and what one rendering of the page costs (a new sample
// makes the page again; every scrape until the next is served the same bytes). No GPU needed:
//   npm run bench:exporter   (or, after a build: npx tsc -p tsconfig.bench.json && node dist-bench/bench/exporter.js)
import { execFileSync, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

const CONCURRENT = 100;
const ROUNDS = 30;

/** The client: ROUNDS rounds of CONCURRENT scrapes at once, each timed from request to last byte. */
async function client(url: string, keepAlive: boolean): Promise<number[]> {
  const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: CONCURRENT }) : undefined;
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const t = performance.now();
      http
        .get(url, { agent: agent ?? false }, (res) => {
          let n = 0;
          res.on('data', (d: Buffer) => (n += d.length));
          res.on('end', () =>
            res.statusCode === 200 && n > 10_000
              ? resolve(performance.now() - t)
              : reject(new Error(`status ${res.statusCode}, ${n} bytes`)),
          );
        })
        .on('error', reject);
    });
  const all: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const times = await Promise.all(Array.from({ length: CONCURRENT }, one));
    // Round 0 warms up the server and the client.
    if (round > 0) all.push(...times);
    await new Promise((r) => setTimeout(r, 100));
  }
  agent?.destroy();
  return all;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main(): Promise<void> {
  if (process.argv[2] === '--client') {
    const times = await client(process.argv[3], process.argv[4] === 'keep-alive');
    process.send!(times);
    return;
  }
  if (!process.env.CUDA_BINDINGS_NVML) {
    // Build the fake and run again with it (its knobs are read from the environment).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exporter-bench-'));
    const lib = path.join(dir, 'libnvidia-ml-fake.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-pthread', '-Itools/codegen', '-o', lib, 'test/cpu/fixtures/fake-nvml.c']);
    const child = fork(__filename, [], {
      env: {
        ...process.env,
        CUDA_BINDINGS_NVML: lib,
        FAKE_NVML_GPUS: '8',
        FAKE_NVML_FAIL_GPU: '3',
        FAKE_NVML_PROCESSES: `0:${process.pid}:100;2:${process.pid}:50;4:1:10;6:999999:7`,
      },
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(code ?? 1);
  }

  /* eslint-disable @typescript-eslint/no-require-imports */
  const { startExporterServer } = require(path.resolve('dist', 'cli', 'exporter')) as typeof import('../src/cli/exporter');
  const { Registry } = require('prom-client') as typeof import('prom-client');
  const { gpuCollectors } = require(
    path.resolve('dist', 'core', 'exporter', 'collectors'),
  ) as typeof import('../src/core/exporter/collectors');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const srv = await startExporterServer({ port: 0, interval: 1000 });
  await srv.sampler.ready;
  const url = `${srv.url}/metrics`;
  const body = await new Promise<string>((resolve) =>
    http.get(url, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    }),
  );
  console.log(
    `exporter: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim()}), Node ${process.version}; 8 fake GPUs (1 lost), ` +
      `a page of ${body.split('\n').filter((l) => l && !l.startsWith('#')).length} samples, ${(body.length / 1024).toFixed(1)} KiB; ` +
      `${CONCURRENT} concurrent scrapes x ${ROUNDS} rounds, client in its own process`,
  );
  for (const mode of ['fresh connections', 'keep-alive'] as const) {
    const c = fork(__filename, ['--client', url, mode === 'keep-alive' ? 'keep-alive' : 'fresh']);
    const times = (
      await new Promise<number[]>((resolve, reject) => {
        c.once('message', (m) => resolve(m as number[]));
        c.once('exit', (code) => code && reject(new Error(`client exited with ${code}`)));
      })
    ).sort((a, b) => a - b);
    console.log(
      `  ${mode.padEnd(17)} p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, worst ${times[times.length - 1].toFixed(1)} ms (${times.length} scrapes)`,
    );
  }
  // What a page costs to make (once per sample): registry.metrics() with every value set again.
  const registry = new Registry();
  const gpus = gpuCollectors(registry, { sampler: srv.sampler });
  const renders: number[] = [];
  for (let i = 0; i < 200; i++) {
    srv.sampler.version++; // as a new sample does: every collector sets its values again
    const t = performance.now();
    await registry.metrics();
    renders.push(performance.now() - t);
  }
  renders.sort((a, b) => a - b);
  console.log(
    `  one rendering of the page (prom-client, values set again): median ${pct(renders, 50).toFixed(2)} ms, p99 ${pct(renders, 99).toFixed(2)} ms`,
  );
  await gpus.close();
  await srv.close();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
