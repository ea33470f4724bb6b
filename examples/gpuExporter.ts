// gpuExporter: a Prometheus exporter of GPU metrics from NVML, on node:http.
//   npx tsx examples/gpuExporter.ts [--port 9835] [--host 127.0.0.1]
//   curl http://127.0.0.1:9835/metrics
// Serves the text exposition format Prometheus scrapes: utilization, memory, power, temperature,
// clocks and per-process memory of every GPU, labelled by NVML index and UUID. Listens on localhost
// only; prints `listening on http://HOST:PORT/metrics` once ready (port 0 picks a free one).
// Exits with status 1, and one line on stderr saying why, when the driver (libnvidia-ml) is missing.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NvmlDevice, shutdownNvml, type GpuSample } from 'cuda-bindings/core';

/** A label value in the exposition format: backslash, double quote and newline escaped. */
export function labelValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

interface Metric {
  name: string;
  help: string;
  /** One value per label set; a null value (the GPU does not report it) is left out. */
  values: { labels: Record<string, string>; value: number | null }[];
}

/** The metrics of one scrape, from samples of every GPU. */
export function metrics(samples: GpuSample[]): Metric[] {
  const gpu = (s: GpuSample) => ({ gpu: String(s.index), uuid: s.uuid, name: s.name });
  const per = (name: string, help: string, value: (s: GpuSample) => number | null | undefined): Metric => ({
    name,
    help,
    values: samples.map((s) => ({ labels: gpu(s), value: value(s) ?? null })),
  });
  return [
    per(
      'gpu_utilization_ratio',
      'Fraction of the last sample period in which a kernel ran (0-1).',
      (s) => s.utilization && s.utilization.gpu / 100,
    ),
    per(
      'gpu_memory_utilization_ratio',
      'Fraction of the last sample period in which device memory was read or written (0-1).',
      (s) => s.utilization && s.utilization.memory / 100,
    ),
    per('gpu_memory_used_bytes', 'Device memory in use, in bytes.', (s) => s.memory?.used),
    per('gpu_memory_total_bytes', 'Device memory in all, in bytes.', (s) => s.memory?.total),
    per('gpu_power_watts', 'Power draw, in watts.', (s) => s.power.draw),
    per('gpu_power_limit_watts', 'Enforced power limit, in watts.', (s) => s.power.limit),
    per('gpu_temperature_celsius', 'GPU temperature, in degrees Celsius.', (s) => s.temperature),
    per('gpu_sm_clock_hertz', 'SM clock, in hertz.', (s) => s.clocks.sm && s.clocks.sm * 1e6),
    per('gpu_memory_clock_hertz', 'Memory clock, in hertz.', (s) => s.clocks.memory && s.clocks.memory * 1e6),
    per('gpu_fan_speed_ratio', 'Fan speed as a fraction of its maximum (0-1).', (s) => s.fanSpeed && s.fanSpeed / 100),
    {
      name: 'gpu_process_memory_used_bytes',
      help: 'Device memory a process uses, in bytes.',
      values: samples.flatMap((s) =>
        (s.processes ?? []).map((p) => ({ labels: { ...gpu(s), pid: String(p.pid), process: p.name ?? '' }, value: p.usedMemory })),
      ),
    },
  ];
}

/** The text exposition format (version 0.0.4) of a list of gauges. */
export function exposition(ms: Metric[]): string {
  const o: string[] = [];
  for (const m of ms) {
    o.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} gauge`);
    for (const v of m.values) {
      if (v.value === null || !Number.isFinite(v.value)) continue;
      const labels = Object.entries(v.labels)
        .map(([k, x]) => `${k}="${labelValue(x)}"`)
        .join(',');
      o.push(`${m.name}{${labels}} ${v.value}`);
    }
  }
  return o.join('\n') + '\n';
}

/** Starts the server; resolves once it listens. */
export function serve(port: number, host = '127.0.0.1'): Promise<http.Server> {
  const devices = NvmlDevice.all();
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
      return;
    }
    try {
      const body = exposition(metrics(devices.map((d) => d.sample())));
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body);
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`);
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

async function main(): Promise<void> {
  const port = Number(option('port', '9835'));
  const host = option('host', '127.0.0.1');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535, got ${option('port', '')}`);
  const server = await serve(port, host);
  const addr = server.address() as AddressInfo;
  console.log(`listening on http://${host}:${addr.port}/metrics`);
  const stop = () => server.close(() => shutdownNvml());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`gpuExporter: ${(e as Error).message.split('\n')[0]}`);
    process.exitCode = 1;
  });
}
