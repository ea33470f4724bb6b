// `cuda-bindings exporter`: the GPUs' metrics for Prometheus, over node:http. Two prom-client
// registries (the text format and OpenMetrics) share one sampler; each format's page is rendered once
// per change of the sampler (a sample, an event) and served to every scrape until the next, so a
// hundred scrapes at once cost one rendering. Binds 127.0.0.1 unless told otherwise, and bounds what a
// client can make it hold: connections, requests waiting on each (ExporterConnection), the wait for a
// request, and time without traffic.
import * as http from 'node:http';
import * as net from 'node:net';
import type * as PromClient from 'prom-client';
import type { Options } from './args';
import { CommandError, oneLine, printable, type Output } from './common';
import { DEFAULT_MAX_CONNECTIONS, ExporterConnection, IDLE_TIMEOUT_MS, MAX_PIPELINED, REQUEST_WAIT_MS } from './exporter-connection';
import { gpuCollectors, type GpuCollectors } from '../core/exporter/collectors';
import { GpuSampler, type GpuSamplerOptions } from '../core/exporter/GpuSampler';

/** How the exporter's server is started. */
export interface ExporterServerOptions extends GpuSamplerOptions {
  /** TCP port (default 9400, dcgm-exporter's; 0 picks a free one). */
  port?: number;
  /** Address to listen on (default 127.0.0.1: this machine only). */
  host?: string;
  /** The host label's value (default NODE_NAME, else the hostname); null leaves it out. */
  hostname?: string | null;
  /** The most connections served at once (default 128); more are closed as they arrive. */
  maxConnections?: number;
}

/** A running exporter. */
export interface ExporterServer {
  /** The listening server; node:http serves the connections it accepts. */
  readonly server: net.Server;
  /** `http://HOST:PORT`. */
  readonly url: string;
  /** The sampler behind both registries. */
  readonly sampler: GpuSampler;
  /** Stops listening (open connections are closed) and stops the sampler. */
  close(): Promise<void>;
}

export const DEFAULT_PORT = 9400;
export const DEFAULT_HOST = '127.0.0.1';

/** Whether an Accept header prefers OpenMetrics (1.0.0, or no version) to the text format 0.0.4. */
export function prefersOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  let om = 0;
  let text = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const param = (k: string) =>
      params
        .find((p) => p.startsWith(`${k}=`))
        ?.slice(k.length + 1)
        .replace(/^"|"$/g, '');
    const q = Number(param('q') ?? '1');
    if (!Number.isFinite(q)) continue;
    const version = param('version');
    if (type === 'application/openmetrics-text' && (version === undefined || version === '1.0.0')) om = Math.max(om, q);
    else if (type === 'text/plain' && (version === undefined || version === '0.0.4')) text = Math.max(text, q);
    else if (type === '*/*' || type === 'text/*') text = Math.max(text, q);
  }
  return om > 0 && om > text;
}

/** Starts sampling and serving; resolves once the server listens (the first sample may still be on its way). */
export async function startExporterServer(options: ExporterServerOptions = {}): Promise<ExporterServer> {
  const { port = DEFAULT_PORT, host = DEFAULT_HOST, hostname, maxConnections = DEFAULT_MAX_CONNECTIONS, ...samplerOptions } = options;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1)
    throw new RangeError(
      `startExporterServer: option 'maxConnections' must be a positive whole number, got ${typeof maxConnections === 'string' ? JSON.stringify(maxConnections) : String(maxConnections)}`,
    );
  const prom = require('prom-client') as typeof PromClient;
  const sampler = new GpuSampler(samplerOptions);
  type Registry = PromClient.Registry<PromClient.RegistryContentType>;
  const text: Registry = new prom.Registry();
  const open: Registry = new prom.Registry();
  open.setContentType(prom.Registry.OPENMETRICS_CONTENT_TYPE);
  const collectors: GpuCollectors[] = [gpuCollectors(text, { sampler, hostname }), gpuCollectors(open, { sampler, hostname })];
  /** Each format's page, encoded once, as of a version of the sampler. */
  const pages = new Map<Registry, { version: number; body: Promise<Buffer> }>();
  const page = (registry: Registry): Promise<Buffer> => {
    let p = pages.get(registry);
    if (!p || p.version !== sampler.version) {
      p = { version: sampler.version, body: registry.metrics().then((t) => Buffer.from(t)) };
      pages.set(registry, p);
    }
    return p.body;
  };
  const stale = () => sampler.age > Math.max((3 * sampler.interval) / 1000, 10);

  const answer: http.RequestListener = (req, res) => {
    // A client that goes away mid-response: its socket's errors end here, not in the process.
    req.on('error', () => {});
    res.on('error', () => {});
    const send = (status: number, type: string, body: string | Buffer) => {
      if (res.destroyed || res.writableEnded || req.socket.destroyed) return;
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
    };
    const route = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(405, 'text/plain; charset=utf-8', 'only GET and HEAD\n');
    }
    if (route === '/metrics') {
      const om = prefersOpenMetrics(req.headers.accept);
      const registry = om ? open : text;
      page(registry).then(
        (body) => send(200, registry.contentType, body),
        (e) => send(500, 'text/plain; charset=utf-8', `${oneLine(String((e as Error)?.message ?? e))}\n`),
      );
      return;
    }
    if (route === '/healthz') {
      const latest = sampler.latest;
      const gpus = latest?.gpus ?? [];
      const report = {
        status: latest?.initError ? 'error' : !latest || stale() ? 'stale' : 'ok',
        error: latest?.initError ?? null,
        lastSampleAgeSeconds: latest ? Math.round(sampler.age * 1000) / 1000 : null,
        gpus: gpus.length,
        gpusUp: gpus.filter((g) => g.up).length,
      };
      return send(report.status === 'ok' ? 200 : 503, 'application/json; charset=utf-8', `${JSON.stringify(report)}\n`);
    }
    if (route === '/') return send(200, 'text/plain; charset=utf-8', 'cuda-bindings exporter: metrics at /metrics, health at /healthz\n');
    send(404, 'text/plain; charset=utf-8', 'not found: metrics at /metrics, health at /healthz\n');
  };
  const server = http.createServer(bounded(answer));
  // A malformed request or a reset before the request was read: drop that connection, keep serving.
  server.on('clientError', (_e, socket) => socket.destroy());
  // With no 'timeout' listener, node:http destroys a connection idle for this long.
  server.setTimeout(IDLE_TIMEOUT_MS);
  const { front, accepted } = frontOf(server, maxConnections);
  try {
    await new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(port, host, () => {
        front.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    for (const c of collectors) await c.close();
    await sampler.close();
    throw e;
  }
  const addr = front.address() as net.AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server: front,
    url: `http://${shown}:${addr.port}`,
    sampler,
    async close() {
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        for (const raw of accepted) raw.destroy();
      });
      for (const c of collectors) await c.close();
      await sampler.close();
    },
  };
}

/**
 * The server that listens: it hands each connection it accepts to `server` as an ExporterConnection,
 * which waits REQUEST_WAIT_MS for the first request, and closes those past `maxConnections` as they arrive.
 */
function frontOf(server: http.Server, maxConnections: number): { front: net.Server; accepted: Set<net.Socket> } {
  const front = net.createServer({ allowHalfOpen: true, noDelay: true });
  /** Every connection open, for close() to end them all. */
  const accepted = new Set<net.Socket>();
  front.on('connection', (raw: net.Socket) => {
    accepted.add(raw);
    raw.on('close', () => accepted.delete(raw));
    const conn = new ExporterConnection(raw);
    conn.awaitRequest(REQUEST_WAIT_MS);
    server.emit('connection', conn);
  });
  front.maxConnections = maxConnections;
  return { front, accepted };
}

/**
 * `handler`, for requests within bounds: a connection with more than MAX_PIPELINED requests waiting
 * for their answers is closed (the rest of its batch is dropped unanswered), and one whose last
 * answer left is closed unless its next request comes within REQUEST_WAIT_MS.
 */
function bounded(handler: http.RequestListener): http.RequestListener {
  return (req, res) => {
    const conn = req.socket as unknown as ExporterConnection;
    if (conn.destroyed) return; // the rest of a batch whose connection was closed below
    conn.requestArrived();
    if (++conn.waiting > MAX_PIPELINED) return void conn.destroy();
    res.once('close', () => {
      if (--conn.waiting === 0) conn.awaitRequest(REQUEST_WAIT_MS);
    });
    handler(req, res);
  };
}

/** Runs `cuda-bindings exporter` until SIGINT or SIGTERM; exits 1 when NVML cannot read the GPUs. */
export async function exporter(o: Options, out: Output): Promise<number> {
  const srv = await startExporterServer({
    port: o.port ?? DEFAULT_PORT,
    host: o.host ?? DEFAULT_HOST,
    interval: o.interval,
    devices: o.device === undefined ? undefined : [o.device],
    processes: o.processes,
    maxConnections: o.maxConnections,
  }).catch((e: NodeJS.ErrnoException) => {
    throw new CommandError(null, e.code ?? 'Error', `cannot listen on ${o.host ?? DEFAULT_HOST}:${o.port ?? DEFAULT_PORT}: ${e.message}`);
  });
  try {
    await srv.sampler.ready;
  } catch (e) {
    await srv.close();
    throw new CommandError(null, 'Error', `the sampler did not start: ${oneLine(String((e as Error)?.message ?? e))}`);
  }
  const first = srv.sampler.latest;
  if (first?.initError) {
    await srv.close();
    throw new CommandError(null, 'NvmlError', `NVML cannot read the GPUs: ${oneLine(first.initError)}`);
  }
  if (o.device !== undefined && first && first.gpus.length === 0) {
    await srv.close();
    throw new CommandError(null, 'UsageError', `--device ${o.device}: NVML has no GPU ${o.device}`);
  }
  const gpus = first?.gpus.length ?? 0;
  if (o.json) out.log(JSON.stringify({ url: `${srv.url}/metrics`, gpus, interval: srv.sampler.interval }));
  else out.log(`cuda-bindings exporter: ${gpus} GPU(s), every ${srv.sampler.interval} ms; listening on ${printable(srv.url)}/metrics`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await srv.close();
  return 0;
}
