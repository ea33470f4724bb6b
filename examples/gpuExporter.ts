// gpuExporter: the GPUs' metrics on a prom-client registry of your own, served by your own server.
//   npx tsx examples/gpuExporter.ts [--port 9835] [--host 127.0.0.1]
//   curl http://127.0.0.1:9835/metrics
// core.gpuCollectors registers dcgm-exporter's metrics (DCGM_FI_DEV_GPU_TEMP, DCGM_FI_DEV_FB_USED, …),
// per-process GPU memory, XIDs and the exporter's health on the registry; NVML is read on a worker
// thread, so a scrape never waits on a GPU. A service that already has a registry passes that one.
// (`npx cuda-bindings exporter` is the ready-made server: OpenMetrics, /healthz.) Listens on localhost
// only; prints `listening on http://HOST:PORT/metrics` once ready (port 0 picks a free one). Exits with
// status 1, and one line on stderr saying why, when the driver (libnvidia-ml) is missing.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { gpuCollectors } from 'cuda-bindings/core';

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

async function main(): Promise<void> {
  const port = Number(option('port', '9835'));
  const host = option('host', '127.0.0.1');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535, got ${option('port', '')}`);

  const registry = new Registry();
  const gpus = gpuCollectors(registry, { interval: 1000 });
  await gpus.ready;
  const initError = gpus.sampler.latest?.initError;
  if (initError) throw new Error(initError);

  const server = http.createServer(async (req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') return res.writeHead(404).end('not found: try /metrics\n');
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  console.log(`listening on http://${host}:${(server.address() as AddressInfo).port}/metrics`);
  const stop = () => server.close(() => void gpus.close());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((e) => {
  console.error(`gpuExporter: ${(e as Error).message.split('\n')[0]}`);
  process.exitCode = 1;
});
