// GPU collectors on a prom-client registry: a Node service that already serves prom-client metrics
// adds the GPUs to its own registry (`gpuCollectors(registry)`) instead of running a second server.
// Every value comes from the sampler's memory (GpuSampler): a scrape never waits on a GPU.
// prom-client is loaded here, on first use, never by the package's root import.
import type * as PromClient from 'prom-client';
import { checkOptions } from '../base/options';
import { DCGM_DEFAULT_COUNTERS, DCGM_ECC_COUNTERS, DRIVER_VERSION_LABEL, GPU_LABELS, XID_LABEL, type DcgmCounter } from './counters';
import { GpuSampler, type GpuSamplerOptions } from './GpuSampler';
import { defaultHostname, type GpuReading } from './sample';

/** Options of gpuCollectors: the sampler's (unless `sampler` shares one) and the labels. */
export interface GpuCollectorsOptions extends GpuSamplerOptions {
  /** A sampler to read, shared with other registries (it is not closed with these collectors); the sampler options are then refused. */
  sampler?: GpuSampler;
  /** The host label's value (default: NODE_NAME, else the hostname); null leaves the label out, as dcgm-exporter's --no-hostname. */
  hostname?: string | null;
  /** The host label's name: `Hostname` (dcgm-exporter's releases, the default) or `hostname` (its main branch since 2026-05). */
  hostnameLabel?: 'Hostname' | 'hostname';
}

/** What gpuCollectors registered, and how to take it back. */
export interface GpuCollectors {
  /** The sampler the collectors read. */
  readonly sampler: GpuSampler;
  /** Resolves once the first sample is in (a scrape before it has no GPU metrics yet). */
  readonly ready: Promise<void>;
  /** The names of the metrics registered. */
  readonly metricNames: readonly string[];
  /** Removes the metrics from the registry, and stops the sampler unless it was passed in. */
  close(): Promise<void>;
}

type Labels = Record<string, string>;

let prom: typeof PromClient | undefined;
/** prom-client, loaded on first use. */
const promClient = (): typeof PromClient => (prom ??= require('prom-client') as typeof PromClient);

const SAMPLER_KEYS = ['interval', 'devices', 'processes', 'gpm', 'events', 'thread'] as const;

/**
 * Registers the GPU metrics on `registry`: dcgm-exporter's default counters that NVML reads (its names,
 * types, help and labels), the ECC totals, per-process GPU memory with the process's user, command,
 * resident memory and CPU time, clock event (throttle) reasons, XIDs and NVML events, and the
 * exporter's own health. Starts a GpuSampler (a worker thread reading NVML every `interval` ms)
 * unless `sampler` is given.
 *
 * ```ts
 * import { Registry } from 'prom-client';
 * import { gpuCollectors } from 'cuda-bindings/core';
 * const registry = new Registry();
 * const gpus = gpuCollectors(registry, { interval: 5000 });
 * await gpus.ready;
 * console.log(await registry.metrics());
 * await gpus.close();
 * ```
 */
export function gpuCollectors(
  registry: PromClient.Registry<PromClient.RegistryContentType>,
  options: GpuCollectorsOptions = {},
): GpuCollectors {
  checkOptions('gpuCollectors', options, {
    sampler: true,
    hostname: true,
    hostnameLabel: true,
    interval: true,
    devices: true,
    processes: true,
    gpm: true,
    events: true,
    thread: true,
  });
  const p = promClient();
  if (!(registry instanceof p.Registry)) throw new TypeError(`gpuCollectors: parameter 'registry' must be a prom-client Registry`);
  const { sampler: shared, hostname: host, hostnameLabel = 'Hostname' } = options;
  if (shared !== undefined && !(shared instanceof GpuSampler)) throw new TypeError(`gpuCollectors: option 'sampler' must be a GpuSampler`);
  if (shared && SAMPLER_KEYS.some((k) => options[k] !== undefined))
    throw new TypeError(`gpuCollectors: the sampler's options (${SAMPLER_KEYS.join(', ')}) go to the GpuSampler passed as 'sampler'`);
  if (hostnameLabel !== 'Hostname' && hostnameLabel !== 'hostname')
    throw new TypeError(`gpuCollectors: option 'hostnameLabel' must be 'Hostname' or 'hostname', got ${String(hostnameLabel)}`);
  const hostname = host === undefined ? defaultHostname() : host;
  const sampler =
    shared ??
    new GpuSampler(
      Object.fromEntries(SAMPLER_KEYS.filter((k) => options[k] !== undefined).map((k) => [k, options[k]])) as GpuSamplerOptions,
    );

  const hostLabels: Labels = hostname === null ? {} : { [hostnameLabel]: hostname };
  const gpuLabelNames = [...GPU_LABELS, ...Object.keys(hostLabels), DRIVER_VERSION_LABEL];
  const processLabelNames = ['pid', 'user', 'command'];
  /** dcgm-exporter's labels of a GPU, in its order. */
  const gpuLabels = (g: GpuReading): Labels => {
    const l: Labels = { gpu: String(g.index), UUID: g.uuid, pci_bus_id: g.pciBusId, device: `nvidia${g.index}`, modelName: g.name };
    Object.assign(l, hostLabels);
    const driver = sampler.latest?.driverVersion;
    if (driver) l[DRIVER_VERSION_LABEL] = driver;
    return l;
  };
  /** The labels of GPU `index` as the latest sample knows it (only its index where it does not). */
  const labelsOf = (index: number): Labels => {
    const g = sampler.latest?.gpus.find((x) => x.index === index);
    return g ? gpuLabels(g) : { gpu: String(index), device: `nvidia${index}`, ...hostLabels };
  };

  const metrics: { name: string }[] = [];
  const registers = [registry] as PromClient.Registry[];
  const isOpenMetrics = () => registry.contentType === p.Registry.OPENMETRICS_CONTENT_TYPE;

  /**
   * A metric whose values are rebuilt from the sampler when it has moved on since the last scrape
   * (`fill` sets them); kind gauge, or counter (reset, then increased by the value).
   */
  function define(
    kind: 'gauge' | 'counter',
    name: string,
    help: string,
    labelNames: string[],
    fill: (set: (l: Labels, v: number) => void) => void,
  ) {
    let seen = -1;
    // Rebuilt from the latest sample once per sample: a gauge is set to each value, a counter reset and increased by it.
    const collect = (): void => {
      if (seen === sampler.version) return;
      seen = sampler.version;
      metric.reset();
      if (metric instanceof p.Gauge) fill((l, v) => (metric as PromClient.Gauge).set(l, v));
      else fill((l, v) => (metric as PromClient.Counter).inc(l, v));
    };
    const config = { name, help, labelNames, registers, collect };
    const metric: PromClient.Gauge | PromClient.Counter = kind === 'gauge' ? new p.Gauge(config) : new p.Counter(config);
    metrics.push(metric as unknown as { name: string });
    return metric;
  }

  /** A dcgm-exporter metric: a gauge per GPU that reports it. */
  const dcgm = (c: DcgmCounter) => {
    const g = define('gauge', c.name, c.help, gpuLabelNames, (set) => {
      for (const gpu of sampler.latest?.gpus ?? []) {
        const v = gpu.values[c.name];
        if (gpu.up && v !== undefined) set(gpuLabels(gpu), v);
      }
    });
    // dcgm-exporter's counters keep their names: in the text format they are counters; in OpenMetrics,
    // whose counters must end in _total (which Prometheus would then store), they are of type unknown.
    if (c.type === 'counter') Object.defineProperty(g, 'type', { get: () => (isOpenMetrics() ? 'unknown' : 'counter') });
  };
  for (const c of [...DCGM_DEFAULT_COUNTERS, ...DCGM_ECC_COUNTERS]) {
    if (c.name === 'DCGM_FI_DEV_XID_ERRORS') {
      // The last XID, 0 until the first (served where XID events are registered, or one arrived).
      define('gauge', c.name, c.help, [...gpuLabelNames, XID_LABEL], (set) => {
        for (const gpu of sampler.latest?.gpus ?? []) {
          const last = sampler.lastXid.get(gpu.index);
          if (gpu.xidEvents || last !== undefined) set({ ...gpuLabels(gpu), [XID_LABEL]: String(last ?? 0) }, last ?? 0);
        }
      });
    } else dcgm(c);
  }

  const processes = () => (sampler.latest?.gpus ?? []).flatMap((g) => g.processes.map((pr) => ({ g, pr })));
  const processLabels = (pr: { pid: number; user: string | null; command: string | null }): Labels => ({
    pid: String(pr.pid),
    user: pr.user ?? '',
    command: pr.command ?? '',
  });
  define(
    'gauge',
    'gpu_process_memory_used_bytes',
    "GPU memory a process uses on this GPU, in bytes (NVML's process list), with the process's user and command line.",
    [...gpuLabelNames, ...processLabelNames],
    (set) => {
      for (const { g, pr } of processes())
        if (pr.gpuMemoryBytes !== null) set({ ...gpuLabels(g), ...processLabels(pr) }, pr.gpuMemoryBytes);
    },
  );
  /** One row per process using any GPU (a process on two GPUs is counted once). */
  const hostRows = (value: (pr: ReturnType<typeof processes>[number]['pr']) => number | null) => (set: (l: Labels, v: number) => void) => {
    const seen = new Set<number>();
    for (const { pr } of processes()) {
      const v = value(pr);
      if (seen.has(pr.pid) || v === null) continue;
      seen.add(pr.pid);
      set({ ...hostLabels, ...processLabels(pr) }, v);
    }
  };
  const hostProcessLabels = [...Object.keys(hostLabels), ...processLabelNames];
  define(
    'gauge',
    'gpu_process_host_memory_resident_bytes',
    'Resident host memory of a process that uses a GPU, in bytes (/proc VmRSS).',
    hostProcessLabels,
    hostRows((pr) => pr.rssBytes),
  );
  define(
    'counter',
    'gpu_process_host_cpu_seconds_total',
    'Host CPU time (user and system) of a process that uses a GPU, in seconds (/proc stat).',
    hostProcessLabels,
    hostRows((pr) => pr.cpuSeconds),
  );
  define(
    'gauge',
    'gpu_clocks_event_reason_active',
    'Whether a clocks event (throttle) reason holds the GPU clocks down now (1) or not (0), for each reason the GPU reports.',
    [...gpuLabelNames, 'reason'],
    (set) => {
      for (const g of sampler.latest?.gpus ?? [])
        for (const [reason, on] of Object.entries(g.clockEventReasons ?? {})) set({ ...gpuLabels(g), reason }, on ? 1 : 0);
    },
  );
  define('counter', 'gpu_xid_errors_total', 'XID errors reported by NVML events, by GPU and XID.', [...gpuLabelNames, 'xid'], (set) => {
    for (const x of sampler.xids) set({ ...labelsOf(x.gpu), xid: String(x.xid) }, x.count);
  });
  define(
    'counter',
    'gpu_nvml_events_total',
    'NVML events received (XIDs, ECC errors, power source changes and others), by GPU and event type.',
    [...gpuLabelNames, 'event'],
    (set) => {
      for (const e of sampler.events) set({ ...labelsOf(e.gpu), event: e.type }, e.count);
    },
  );
  define(
    'gauge',
    'cuda_bindings_exporter_gpu_up',
    'Whether the last sample read the GPU (1), or NVML failed it (0: GPU lost, no handle).',
    gpuLabelNames,
    (set) => {
      for (const g of sampler.latest?.gpus ?? []) set(gpuLabels(g), g.up ? 1 : 0);
    },
  );
  define(
    'counter',
    'cuda_bindings_exporter_nvml_errors_total',
    'NVML calls that failed (not counting "not supported"), by function, GPU index and status.',
    ['function', 'gpu', 'error'],
    (set) => {
      for (const e of sampler.errors) set({ function: e.fn, gpu: e.gpu, error: e.error }, e.count);
    },
  );
  define('counter', 'cuda_bindings_exporter_samples_total', 'Samples of the GPUs taken.', [], (set) => set({}, sampler.samples));
  define('gauge', 'cuda_bindings_exporter_sample_duration_seconds', 'How long the last sample of the GPUs took, in seconds.', [], (set) => {
    if (sampler.latest) set({}, sampler.latest.durationSeconds);
  });
  define(
    'gauge',
    'cuda_bindings_exporter_last_sample_timestamp_seconds',
    'When the last sample of the GPUs was taken, in seconds since the epoch.',
    [],
    (set) => {
      if (sampler.latest) set({}, sampler.latest.at / 1000);
    },
  );
  define(
    'counter',
    'cuda_bindings_exporter_sampler_restarts_total',
    "Times the sampler's thread failed and was started again.",
    [],
    (set) => set({}, sampler.restarts),
  );

  const metricNames = metrics.map((m) => m.name);
  let closed = false;
  return {
    sampler,
    ready: sampler.ready,
    metricNames,
    async close() {
      if (closed) return;
      closed = true;
      for (const name of metricNames) if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
      if (!shared) await sampler.close();
    },
  };
}
