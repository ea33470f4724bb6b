// `cuda-bindings exporter` with the fake libnvidia-ml of eight GPUs (GPU 3 lost): 100 concurrent scrapes,
// clients that hang up mid-response, /healthz, promtool's check of the page, and a real Prometheus
// (Debian's prometheus package, which .ci/run installs) scraping it every second and answering queries
// for each GPU's temperature and memory used with dcgm-exporter's labels. Without promtool or
// prometheus those two tests are skipped (their names say so); with CI set they fail instead.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startExporterServer, prefersOpenMetrics, exporter, type ExporterServer } from '../../../src/cli/exporter';
import { MAX_PIPELINED } from '../../../src/cli/exporter-connection';
import { parseArgs, usage } from '../../../src/cli/args';
import { buildFakeNvml, setFakeNvmlKnob, FAKE_GPUS8, fakeReadings } from '../helpers/fake-nvml';
import { parseExposition, samplesOf, dcgmFixture, onPath } from '../helpers/exposition';

const root = path.join(__dirname, '..', '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-exporter-cli-'));
const fixture = dcgmFixture();
const saved = process.env.CUDA_BINDINGS_NVML;
const UP = [0, 1, 2, 4, 5, 6, 7];
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
let lib = '';
let srv: ExporterServer;

beforeAll(async () => {
  lib = buildFakeNvml(tmp);
  process.env.CUDA_BINDINGS_NVML = lib;
  setFakeNvmlKnob(lib, 'FAKE_NVML_GPUS', '8');
  setFakeNvmlKnob(lib, 'FAKE_NVML_FAIL_GPU', '3');
  startCli();
  srv = await startExporterServer({ port: 0, interval: 200, hostname: 'node-1' });
  if (onPath('prometheus')) prom = await startPrometheus(new URL(srv.url).host);
  await srv.sampler.ready;
}, 60_000);

afterAll(async () => {
  cliChild?.child.kill('SIGKILL');
  await stopPrometheus();
  await srv?.close();
  setFakeNvmlKnob(lib, 'FAKE_NVML_GPUS', undefined);
  setFakeNvmlKnob(lib, 'FAKE_NVML_FAIL_GPU', undefined);
  if (saved === undefined) delete process.env.CUDA_BINDINGS_NVML;
  else process.env.CUDA_BINDINGS_NVML = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A Prometheus server scraping `target` every second, started early (it needs a few seconds to scrape). */
async function startPrometheus(target: string): Promise<{ api: string; p: ChildProcess }> {
  const free = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const dir = fs.mkdtempSync(path.join(tmp, 'prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: cuda-bindings',
      `    static_configs: [{ targets: ['${target}'] }]`,
      '',
    ].join('\n'),
  );
  const p = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${free}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { api: `http://127.0.0.1:${free}`, p };
}
let prom: { api: string; p: ChildProcess } | null = null;
async function stopPrometheus(): Promise<void> {
  const p = prom?.p;
  prom = null;
  if (!p || p.exitCode !== null) return;
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
}

/** `cuda-bindings exporter` in a process of its own (started early: tsx and its worker take seconds to start). */
let cliChild: { child: ChildProcess; exited: Promise<number | null>; line: Promise<string> } | null = null;
function startCli(): void {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'src', 'cli', 'main.ts'), 'exporter', '--port', '0', '--interval', '200'],
    {
      cwd: root,
      env: { ...process.env, CUDA_BINDINGS_NVML: lib, FAKE_NVML_GPUS: '2', FAKE_NVML_FAIL_GPU: '' },
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`exporter exited with ${code}`)));
  });
  line.catch(() => {});
  cliChild = { child, exited, line };
}

interface Reply {
  status: number;
  type: string;
  body: string;
}
/** One request on a connection of its own. */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A tool the test needs: on PATH, or (with CI set) a clear failure; elsewhere the test is skipped and its name says why. */
function tool(name: string): { run: jest.It; why: string } {
  if (onPath(name)) return { run: test, why: '' };
  if (process.env.CI) return { run: test, why: '' };
  return { run: test.skip, why: ` (skipped: ${name} is not installed; apt-get install prometheus)` };
}
function needTool(name: string): void {
  if (!onPath(name)) throw new Error(`${name} is not installed: CI installs Debian's prometheus package (.ci/run's apt-get line)`);
}

describe('the command line', () => {
  test('exporter takes --port, --host and --interval; says in its help that it binds 127.0.0.1', () => {
    expect(parseArgs(['exporter', '--port', '0', '--host', '::1', '--interval', '250'])).toMatchObject({
      command: 'exporter',
      port: 0,
      host: '::1',
      interval: 250,
    });
    expect(parseArgs(['exporter', '--no-processes']).processes).toBe(false);
    expect(() => parseArgs(['exporter', '--port', '65536'])).toThrow('--port needs a TCP port (0 to 65535), got "65536"');
    expect(() => parseArgs(['exporter', '--port', 'http'])).toThrow('--port needs a TCP port (0 to 65535), got "http"');
    expect(usage('exporter')).toMatch(/Listens on 127\.0\.0\.1 \(this machine only\) unless --host says otherwise/);
    expect(usage()).toMatch(/\n {2}exporter {4}a Prometheus exporter/);
  });

  test('exporter takes --max-connections, a positive whole number, and its help says what is bounded', async () => {
    expect(parseArgs(['exporter', '--max-connections', '16']).maxConnections).toBe(16);
    expect(parseArgs(['exporter']).maxConnections).toBeUndefined();
    for (const bad of ['0', 'many', '1.5'])
      expect(() => parseArgs(['exporter', '--max-connections', bad])).toThrow(
        `--max-connections needs a positive whole number, got "${bad}"`,
      );
    expect(usage('exporter')).toMatch(/\[--max-connections 128\]/);
    expect(usage('exporter').replace(/\s+/g, ' ')).toMatch(
      /At most --max-connections connections \(default 128\) are served at once, more are closed as they arrive; a connection is closed when it sends no request within 10 s, has no traffic for 30 s, or has more than 8 requests waiting for their answers/,
    );
    await expect(startExporterServer({ port: 0, maxConnections: 0 })).rejects.toThrow(
      new RangeError("startExporterServer: option 'maxConnections' must be a positive whole number, got 0"),
    );
  });

  test('the Accept header picks the format: OpenMetrics where it is preferred (as Prometheus asks), else the text format', () => {
    expect(prefersOpenMetrics(PROMETHEUS_ACCEPT)).toBe(true);
    expect(prefersOpenMetrics('application/openmetrics-text; version=1.0.0; charset=utf-8')).toBe(true);
    expect(prefersOpenMetrics('application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.6')).toBe(false);
    expect(prefersOpenMetrics('application/openmetrics-text;version=0.0.1')).toBe(false);
    expect(prefersOpenMetrics('text/plain;version=0.0.4')).toBe(false);
    expect(prefersOpenMetrics('*/*')).toBe(false);
    expect(prefersOpenMetrics(undefined)).toBe(false);
  });

  test('`cuda-bindings exporter` listens on 127.0.0.1 unless told, says where, serves, and exits 0 on SIGTERM', async () => {
    const { child, exited, line: first } = cliChild!;
    const line = await first;
    const m = /^cuda-bindings exporter: 2 GPU\(s\), every 200 ms; listening on (http:\/\/127\.0\.0\.1:\d+)\/metrics$/.exec(line);
    expect([line, !!m]).toEqual([line, true]);
    const r = await get(`${m![1]}/metrics`);
    expect(r.status).toBe(200);
    expect(samplesOf(parseExposition(r.body), 'DCGM_FI_DEV_GPU_TEMP').map((s) => s.value)).toEqual([41, 33]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);

  test('without libnvidia-ml it fails with the reason (the CLI prints it as one line and exits 1), serving nothing', async () => {
    process.env.CUDA_BINDINGS_NVML = path.join(tmp, 'missing.so');
    const out: string[] = [];
    try {
      await expect(exporter(parseArgs(['exporter', '--port', '0']), { log: (s) => out.push(s), err: () => {} })).rejects.toThrow(
        /^NVML cannot read the GPUs: libnvidia-ml: could not load the library\./,
      );
    } finally {
      process.env.CUDA_BINDINGS_NVML = lib;
    }
    expect(out).toEqual([]);
  });
});

describe('the server', () => {
  test('binds 127.0.0.1 by default', () => {
    expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test('100 concurrent scrapes are each answered in full and correctly, half of them in OpenMetrics', async () => {
    const t0 = performance.now();
    const replies = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const start = performance.now();
        const r = await get(`${srv.url}/metrics`, i % 2 ? { accept: PROMETHEUS_ACCEPT } : {});
        return { i, r, ms: performance.now() - start };
      }),
    );
    const total = performance.now() - t0;
    for (const { i, r } of replies) {
      const om = i % 2 === 1;
      expect([i, r.status, r.type]).toEqual([
        i,
        200,
        om ? 'application/openmetrics-text; version=1.0.0; charset=utf-8' : 'text/plain; version=0.0.4; charset=utf-8',
      ]);
      expect(r.body.endsWith(om ? '\n# EOF\n' : '\n')).toBe(true);
      const p = parseExposition(r.body);
      expect(p.bad).toEqual([]);
      const temps = samplesOf(p, 'DCGM_FI_DEV_GPU_TEMP').map((s) => [Number(s.labels.gpu), s.value]);
      expect(temps).toEqual(UP.map((g) => [g, fakeReadings(g).temperature]));
      expect(samplesOf(p, 'cuda_bindings_exporter_gpu_up', { gpu: '3' })[0].value).toBe(0);
    }
    const ms = replies.map((x) => x.ms).sort((a, b) => a - b);
    process.stdout.write(
      `100 concurrent scrapes: p50 ${ms[49].toFixed(1)} ms, p99 ${ms[98].toFixed(1)} ms, all in ${total.toFixed(0)} ms\n`,
    );
  });

  test('/healthz says ok while samples are fresh, with the GPUs up; other paths 404, other methods 405, HEAD has no body', async () => {
    const h = await get(`${srv.url}/healthz`);
    expect([h.status, h.type]).toEqual([200, 'application/json; charset=utf-8']);
    expect(JSON.parse(h.body)).toMatchObject({ status: 'ok', error: null, gpus: 8, gpusUp: 7 });
    expect((await get(`${srv.url}/nope`)).status).toBe(404);
    expect((await get(`${srv.url}/metrics`, {}, 'POST')).status).toBe(405);
    const head = await get(`${srv.url}/metrics`, {}, 'HEAD');
    expect([head.status, head.body]).toEqual([200, '']);
  });

  test('clients that hang up mid-response or mid-request, or send garbage, do not break it', async () => {
    const { port } = new URL(srv.url);
    const rude = (how: 'after-first-bytes' | 'mid-request' | 'garbage' | 'before-reply') =>
      new Promise<void>((resolve) => {
        const s = net.connect(Number(port), '127.0.0.1');
        s.on('error', () => {});
        s.on('close', () => resolve());
        s.on('connect', () => {
          if (how === 'mid-request') return s.end('GET /metrics HTTP/1.1\r\nHost: x\r\nAcc');
          if (how === 'garbage') return s.write('\x16\x03\x01 not http at all\r\n\r\n');
          s.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
          if (how === 'before-reply') s.destroy();
        });
        s.once('data', () => s.destroy());
        setTimeout(() => s.destroy(), 2000);
      });
    const kinds = ['after-first-bytes', 'mid-request', 'garbage', 'before-reply'] as const;
    await Promise.all(Array.from({ length: 40 }, (_, i) => rude(kinds[i % kinds.length])));
    expect(srv.server.listening).toBe(true);
    const r = await get(`${srv.url}/metrics`);
    expect(r.status).toBe(200);
    expect(samplesOf(parseExposition(r.body), 'DCGM_FI_DEV_GPU_TEMP')).toHaveLength(7);
  });

  /** The server's open connections now. */
  const connections = (server: net.Server) => new Promise<number>((r) => server.getConnections((_e, n) => r(n)));
  /** Resolves once `f()` is true (checked every 50 ms), or rejects after `ms`. */
  async function until(f: () => Promise<boolean>, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (!(await f())) {
      if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test('clients that pipeline 20,000 requests each on 40 connections and never read: closed, the server stays small and keeps answering', async () => {
    const { port } = new URL(srv.url);
    const rss = () => process.memoryUsage().rss;
    const base = rss();
    let peak = base;
    const watch = setInterval(() => (peak = Math.max(peak, rss())), 20);
    // In a process of its own, so that its buffers are not counted here; it never reads and never closes.
    const flood = spawn(
      process.execPath,
      [
        '-e',
        `const net = require('net'); const batch = 'GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'.repeat(20000);
         let written = 0;
         for (let k = 0; k < 40; k++) { const s = net.connect(${port}, '127.0.0.1'); s.on('error', () => {}); s.pause(); s.write(batch, () => { if (++written === 40) console.log('sent'); }); }
         setTimeout(() => {}, 60000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((r) => flood.stdout!.once('data', r));
      // Before the fix, each connection held the answers to a whole read of requests (about 12 MB each here).
      await until(async () => (await connections(srv.server)) === 0, 10_000, 'the server closed the flooding connections');
      const r = await get(`${srv.url}/metrics`);
      expect(r.status).toBe(200);
      expect(samplesOf(parseExposition(r.body), 'DCGM_FI_DEV_GPU_TEMP')).toHaveLength(7);
    } finally {
      clearInterval(watch);
      flood.kill('SIGKILL');
    }
    process.stdout.write(
      `a flood of 800,000 pipelined requests: the server's RSS grew by ${((peak - base) / 2 ** 20).toFixed(0)} MiB at most\n`,
    );
    expect(Math.round((peak - base) / 2 ** 20)).toBeLessThan(100);
  });

  test(`a client may pipeline ${MAX_PIPELINED} requests and gets every answer in order; one more closes its connection`, async () => {
    const { port } = new URL(srv.url);
    const pipeline = (paths: string[]) =>
      new Promise<string>((resolve) => {
        const s = net.connect(Number(port), '127.0.0.1');
        let got = '';
        s.on('error', () => {});
        s.on('data', (d) => {
          got += d;
          if ((got.match(/HTTP\/1\.1 /g) ?? []).length === paths.length) s.end();
        });
        s.on('close', () => resolve(got));
        s.write(paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
      });
    const paths = Array.from({ length: MAX_PIPELINED }, (_, i) => (i % 2 ? '/healthz' : '/nope'));
    const answers = (await pipeline(paths)).match(/HTTP\/1\.1 \d+/g);
    expect(answers).toEqual(paths.map((p) => (p === '/healthz' ? 'HTTP/1.1 200' : 'HTTP/1.1 404')));
    const cut = (await pipeline([...paths, '/healthz'])).match(/HTTP\/1\.1 \d+/g) ?? [];
    expect(cut.length).toBeLessThan(MAX_PIPELINED + 1);
  });

  test('connections past maxConnections are closed as they arrive; an idle kept-alive one closes after 6 s, one that sends nothing after 10 s', async () => {
    const small = await startExporterServer({ port: 0, interval: 200, hostname: 'node-1', maxConnections: 3 });
    try {
      const { port } = new URL(small.url);
      const t0 = Date.now();
      const open = () => {
        const s = net.connect(Number(port), '127.0.0.1');
        s.on('error', () => {});
        return { s, closedAt: new Promise<number>((r) => s.on('close', () => r(Date.now() - t0))) };
      };
      const silent = open();
      const keptAlive = open();
      keptAlive.s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((r) => keptAlive.s.once('data', r));
      const third = open();
      await until(async () => (await connections(small.server)) === 3, 5000, 'three connections');
      const fourth = open();
      let said = '';
      fourth.s.on('data', (d) => (said += d));
      expect(await fourth.closedAt).toBeLessThan(1000);
      expect(said).toBe('');
      third.s.destroy();
      await until(async () => (await connections(small.server)) === 2, 5000, 'two connections');
      expect((await get(`${small.url}/`)).status).toBe(200);
      // node:http's keep-alive timeout (5 s, and 1 s of grace) and this server's wait for a request (10 s).
      expect(await keptAlive.closedAt).toBeGreaterThan(5000);
      expect(await keptAlive.closedAt).toBeLessThan(8000);
      expect(await silent.closedAt).toBeGreaterThan(9500);
      expect(await silent.closedAt).toBeLessThan(12_000);
    } finally {
      await small.close();
    }
  }, 30_000);

  const promtool = tool('promtool');
  promtool.run(`promtool check metrics passes the page, but for what dcgm-exporter's own names draw${promtool.why}`, async () => {
    needTool('promtool');
    const { body } = await get(`${srv.url}/metrics`);
    const r = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    // 0: clean; 3: lint problems only (1 is a page promtool cannot parse).
    expect([0, 3]).toContain(r.status);
    const p = parseExposition(body);
    const dcgmCounters = new Set(
      [...fixture.counters, ...fixture.commentedOutServed].filter((c) => c.type === 'counter').map((c) => c.name),
    );
    const problems = `${r.stdout}${r.stderr}`.split('\n').filter(Boolean);
    const unexplained = problems.filter((line) => {
      const camel = / label names should be written in 'snake_case' not 'camelCase'$/.test(line);
      const total = / counter metrics should have "_total" suffix$/.test(line);
      const typeInName = / metric name should not include type '\w+'$/.test(line);
      const name = line.split(' ')[0];
      // dcgm-exporter's label modelName is camelCase; its counters do not end in _total; one is named ..._COUNTER.
      if (camel) return !samplesOf(p, name).some((s) => 'modelName' in s.labels);
      if (total) return !dcgmCounters.has(name);
      if (typeInName) return name !== 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER';
      return true;
    });
    expect(unexplained).toEqual([]);
  });

  const prometheus = tool('prometheus');
  prometheus.run(
    `a real Prometheus scrapes it every second; its HTTP API returns each GPU's temperature and memory used with dcgm-exporter's labels${prometheus.why}`,
    async () => {
      needTool('prometheus');
      const { api, p } = prom!;
      let log = '';
      p.stderr!.on('data', (d) => (log += d));
      try {
        type Series = { metric: Record<string, string>; value: [number, string] };
        const query = async (q: string): Promise<Series[]> => {
          try {
            const r = await get(`${api}/api/v1/query?query=${encodeURIComponent(q)}`);
            return r.status === 200 ? (JSON.parse(r.body).data.result as Series[]) : [];
          } catch {
            return []; // not listening yet
          }
        };
        const end = Date.now() + 15_000;
        let temps: Series[] = [];
        let used: Series[] = [];
        while (Date.now() < end && (temps.length < UP.length || used.length < UP.length)) {
          await new Promise((r) => setTimeout(r, 100));
          [temps, used] = await Promise.all([query('DCGM_FI_DEV_GPU_TEMP'), query('DCGM_FI_DEV_FB_USED')]);
        }
        if (temps.length < UP.length) throw new Error(`Prometheus had ${temps.length} GPU temperatures after 15 s; its log:\n${log}`);
        const labels = (s: Series) => Object.fromEntries(fixture.gpuLabels.map((l) => [l, s.metric[l]]));
        for (const [series, value] of [
          [temps, (i: number) => fakeReadings(i).temperature],
          [used, (i: number) => fakeReadings(i).usedMiB],
        ] as const) {
          const rows = series
            .map((s) => ({ gpu: Number(s.metric.gpu), labels: labels(s), job: s.metric.job, value: Number(s.value[1]) }))
            .sort((a, b) => a.gpu - b.gpu);
          expect(rows).toEqual(
            UP.map((i) => ({
              gpu: i,
              labels: {
                gpu: String(i),
                UUID: FAKE_GPUS8[i].uuid,
                pci_bus_id: FAKE_GPUS8[i].busId,
                device: `nvidia${i}`,
                modelName: FAKE_GPUS8[i].name,
                Hostname: 'node-1',
                DCGM_FI_DRIVER_VERSION: '580.65.06',
              },
              job: 'cuda-bindings',
              value: value(i),
            })),
          );
        }
        // Prometheus asked for OpenMetrics; dcgm-exporter's counters are still stored under its names (no _total).
        expect((await query('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION')).length).toBe(UP.length);
        expect(await query('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total')).toEqual([]);
        expect((await query('up{job="cuda-bindings"}'))[0].value[1]).toBe('1');
      } finally {
        await stopPrometheus();
      }
    },
    40_000,
  );
});
