// The main thread's side of the exporter: starts the sampler's thread (a worker, or a timer on this
// thread with `thread: false`), keeps the latest sample and the running counts (NVML errors by
// function, GPU and status; NVML events by GPU and type; XIDs by GPU and number), and serves them from
// memory: reading them never waits on a GPU.
import * as path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';
import { checkOptions } from '../base/options';
import { NvmlSampler, type NvmlErrorCount, type ExporterEvent, type ExporterSample, type SamplerSettings } from './sample';
import type { SamplerThreadInput } from './worker';

/** How a GpuSampler reads the GPUs. */
export interface GpuSamplerOptions {
  /** Milliseconds between samples (default 1000). */
  interval?: number;
  /** NVML indices of the GPUs to read (default: every GPU). */
  devices?: number[];
  /** List each GPU's processes, with their user, command, resident memory and CPU time from /proc (default true). */
  processes?: boolean;
  /** Take GPM samples for the DCGM_FI_PROF_* ratios on Hopper and later (default true). */
  gpm?: boolean;
  /** Wait for NVML events: XIDs and ECC errors (default true). */
  events?: boolean;
  /** Sample on a worker thread of its own (default true); false samples on this thread, on a timer. */
  thread?: boolean;
}

/** An NVML event type counted on one GPU. */
export interface EventCount {
  /** The GPU's NVML index. */
  gpu: number;
  /** The event type (`XidCriticalError`, `DoubleBitEccError`, …). */
  type: string;
  /** How many arrived since the sampler started. */
  count: number;
}

/** An XID counted on one GPU. */
export interface XidCount {
  /** The GPU's NVML index. */
  gpu: number;
  /** The XID's number. */
  xid: number;
  /** How many arrived since the sampler started. */
  count: number;
}

const DEFAULT_INTERVAL = 1000;

/**
 * Samples every GPU through NVML on an interval, off the event loop by default, and keeps the
 * readings in memory. `gpuCollectors()` makes one; several registries can share one (`sampler` option).
 */
export class GpuSampler {
  /** Milliseconds between samples. */
  readonly interval: number;
  /** Whether the sampling runs on a worker thread. */
  readonly threaded: boolean;
  /** The latest sample, or null before the first. */
  latest: ExporterSample | null = null;
  /** Moves on every change (a sample, an event): what reads the sampler can tell whether anything is new. */
  version = 0;
  /** Samples taken. */
  samples = 0;
  /** Times the sampler's thread failed and was started again. */
  restarts = 0;
  /** Resolves once the first sample is in; rejects when the sampler's thread cannot start. */
  readonly ready: Promise<void>;

  private readonly errorCounts = new Map<string, NvmlErrorCount>();
  private readonly eventCounts = new Map<string, EventCount>();
  private readonly xidCounts = new Map<string, XidCount>();
  private readonly lastXids = new Map<number, number>();
  private readonly settings: SamplerSettings;
  private readonly stopFlag = new SharedArrayBuffer(4);
  private worker: WorkerThreads.Worker | null = null;
  private inline: NvmlSampler | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private settle!: { resolve: () => void; reject: (e: unknown) => void };

  /** Starts sampling. */
  constructor(options: GpuSamplerOptions = {}) {
    checkOptions('GpuSampler', options, { interval: true, devices: true, processes: true, gpm: true, events: true, thread: true });
    const interval = options.interval ?? DEFAULT_INTERVAL;
    if (!Number.isInteger(interval) || interval < 1)
      throw new RangeError(`GpuSampler: option 'interval' must be a positive whole number of milliseconds, got ${interval}`);
    if (options.devices !== undefined && !(Array.isArray(options.devices) && options.devices.every((d) => Number.isInteger(d) && d >= 0)))
      throw new TypeError(`GpuSampler: option 'devices' must be an array of NVML device indices`);
    this.interval = interval;
    this.threaded = options.thread ?? true;
    this.settings = {
      devices: options.devices,
      processes: options.processes ?? true,
      gpm: options.gpm ?? true,
      events: options.events ?? true,
    };
    this.ready = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    // Nobody has to await it: a failure to start also shows in the health metrics.
    this.ready.catch(() => {});
    if (this.threaded) this.startWorker();
    else this.startInline();
  }

  /** NVML failures counted since the sampler started, by function, GPU and status. */
  get errors(): NvmlErrorCount[] {
    return [...this.errorCounts.values()];
  }

  /** NVML events counted since the sampler started, by GPU and type. */
  get events(): EventCount[] {
    return [...this.eventCounts.values()];
  }

  /** XIDs counted since the sampler started, by GPU and number. */
  get xids(): XidCount[] {
    return [...this.xidCounts.values()];
  }

  /** The last XID of each GPU that had one, by NVML index. */
  get lastXid(): ReadonlyMap<number, number> {
    return this.lastXids;
  }

  /** Seconds since the latest sample was taken (Infinity before the first). */
  get age(): number {
    return this.latest ? (Date.now() - this.latest.at) / 1000 : Infinity;
  }

  private startWorker(): void {
    const { Worker } = require('node:worker_threads') as typeof WorkerThreads;
    const input: SamplerThreadInput = { settings: this.settings, interval: this.interval, stop: this.stopFlag };
    const workerData = { cudaBindingsExporter: input };
    const file = path.join(__dirname, `worker${path.extname(__filename)}`);
    // From TypeScript source (tests, tsx), the worker registers tsx first; the built package runs worker.js.
    const w = file.endsWith('.ts')
      ? new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(file)});`, {
          eval: true,
          workerData,
          env: process.env,
        })
      : new Worker(file, { workerData, env: process.env });
    // A sampler does not keep the process alive by itself (a server does), once its first sample is in:
    // until then it does, so that `await ready` in a script without a server gets its answer.
    if (this.samples > 0) w.unref();
    this.worker = w;
    w.on('message', (m: ExporterSample | ExporterEvent) => this.receive(m));
    w.on('error', (e) => {
      this.count({ fn: 'worker', gpu: '', error: (e as Error).name || 'Error', count: 1 });
      if (this.samples === 0) this.settle.reject(e);
    });
    w.on('exit', () => {
      if (this.worker === w) this.worker = null;
      // A thread that never gave a sample will not start the next time either: `ready` has said why.
      if (this.closed || this.samples === 0) return;
      // The thread died (an exception in the sampler): start another after an interval.
      this.restarts++;
      this.version++;
      const t = setTimeout(() => !this.closed && this.startWorker(), this.interval);
      t.unref();
    });
  }

  private startInline(): void {
    const sampler = (this.inline = new NvmlSampler(this.settings));
    const tick = () => {
      this.timer = null;
      if (this.closed) return;
      try {
        this.receive(sampler.sample());
        // A poll of the event set that never blocks: at most an interval late.
        for (let e = sampler.waitForEvent(0); e; e = sampler.waitForEvent(0)) this.receive(e);
      } catch (e) {
        // Nothing in a sample should throw; if something does, it is counted and the next sample is taken as usual.
        this.count({ fn: 'sample', gpu: '', error: (e as Error)?.name || 'Error', count: 1 });
        this.version++;
      }
      this.timer = setTimeout(tick, this.interval);
      this.timer.unref();
    };
    // The first sample on the next turn of the loop: the constructor returns at once, as with a worker
    // (that timer holds the process until the first sample is in, as the worker does).
    this.timer = setTimeout(tick, 0);
  }

  private count(e: NvmlErrorCount): void {
    const key = `${e.fn}\0${e.gpu}\0${e.error}`;
    const c = this.errorCounts.get(key);
    if (c) c.count += e.count;
    else this.errorCounts.set(key, { ...e });
  }

  private receive(m: ExporterSample | ExporterEvent): void {
    if (m.kind === 'sample') {
      this.latest = m;
      this.samples++;
      for (const e of m.errors) this.count(e);
      this.version++;
      if (this.samples === 1) {
        this.worker?.unref();
        this.settle.resolve();
      }
      return;
    }
    const key = `${m.gpu}\0${m.type}`;
    const c = this.eventCounts.get(key);
    if (c) c.count++;
    else this.eventCounts.set(key, { gpu: m.gpu, type: m.type, count: 1 });
    if (m.type === 'XidCriticalError') {
      const k = `${m.gpu}\0${m.data}`;
      const x = this.xidCounts.get(k);
      if (x) x.count++;
      else this.xidCounts.set(k, { gpu: m.gpu, xid: m.data, count: 1 });
      this.lastXids.set(m.gpu, m.data);
    }
    this.version++;
  }

  /** Stops sampling (the worker ends its NVML session); resolves once the sampler's thread has exited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle.reject(new Error('GpuSampler: closed before the first sample'));
    if (this.timer) clearTimeout(this.timer);
    this.inline?.close();
    this.inline = null;
    const w = this.worker;
    if (!w) return;
    const stop = new Int32Array(this.stopFlag);
    Atomics.store(stop, 0, 1);
    Atomics.notify(stop, 0);
    await new Promise<void>((resolve) => {
      // The worker stops within a wait slice; one stuck in a GPU call is terminated after 5 s.
      const t = setTimeout(() => void w.terminate(), 5000);
      w.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
