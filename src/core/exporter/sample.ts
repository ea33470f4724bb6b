// The exporter's NVML side: every reading of every GPU, taken on the sampler's thread (a worker of its
// own, or the main thread with `thread: false`) and handed over as plain data. A call that fails is
// counted by function, GPU and status; NVML's "not supported" (and a function the driver does not
// export) leaves the value out. A GPU that answers GPU_IS_LOST is skipped for the rest of that sample,
// and the other GPUs are read as usual. NVML events (XIDs among them) are waited for with
// nvmlEventSetWait between samples.
import * as os from 'node:os';
import type * as NvmlApi from '../../nvml';
import type { OkOutputs } from '../../ffi/result';
import { acquireNvml, decodeReasons, releaseNvml } from '../nvml/NvmlDevice';
import { hostProcess, escapeControls } from './proc';

type N = typeof NvmlApi;
let api: N | undefined;
/** The NVML facade, loaded on first use. */
const nv = (): N => (api ??= require('../../nvml') as N);

/** A process using a GPU: what NVML says, and what /proc says of it. */
export interface ProcessReading {
  /** The operating system's process id (the host's, as NVML reports it). */
  pid: number;
  /** Bytes of this GPU's memory it uses, or null where NVML cannot tell. */
  gpuMemoryBytes: number | null;
  /** Its user (null where /proc does not have the process). */
  user: string | null;
  /** Its command line, else NVML's name of it, else null. */
  command: string | null;
  /** Its resident host memory, bytes. */
  rssBytes: number | null;
  /** Its user and system CPU time, seconds. */
  cpuSeconds: number | null;
}

/** One GPU in one sample. */
export interface GpuReading {
  /** NVML's index. */
  index: number;
  /** `GPU-…`; '' until NVML has told it. */
  uuid: string;
  /** The product name; '' until NVML has told it. */
  name: string;
  /** `00000000:18:00.0`; '' until NVML has told it. */
  pciBusId: string;
  /** False when the GPU answered a status that means it is gone (GPU_IS_LOST) or has no handle. */
  up: boolean;
  /** dcgm-exporter's metric name to value, for what this GPU reports (nothing for what it does not). */
  values: Record<string, number>;
  /** Each clock event (throttle) reason the GPU reports, and whether it holds the clocks down now; null where NVML cannot tell. */
  clockEventReasons: Record<string, boolean> | null;
  /** The processes using it (empty with `processes: false`). */
  processes: ProcessReading[];
  /** Whether XID events are registered for it (DCGM_FI_DEV_XID_ERRORS is served then, 0 until the first). */
  xidEvents: boolean;
}

/** NVML calls that failed, counted since the last sample was handed over. */
export interface NvmlErrorCount {
  /** The NVML function, e.g. `nvmlDeviceGetTemperature`. */
  fn: string;
  /** The GPU's NVML index as text, or '' for a call of no GPU (nvmlInit, nvmlEventSetWait). */
  gpu: string;
  /** The status's name, e.g. `NVML_ERROR_GPU_IS_LOST`, or `exception` when the call threw. */
  error: string;
  /** How many times. */
  count: number;
}

/** One sample of every GPU. */
export interface ExporterSample {
  /** What the message is: a sample. */
  kind: 'sample';
  /** When it was taken, ms since the epoch. */
  at: number;
  /** How long it took, seconds. */
  durationSeconds: number;
  /** The display driver's version, e.g. `580.65.06`, or null. */
  driverVersion: string | null;
  /** Every GPU, in NVML's order (those named by `devices` only). */
  gpus: GpuReading[];
  /** Calls that failed during this sample (and any event waits since the last). */
  errors: NvmlErrorCount[];
  /** Why NVML could not be used at all (no driver, nvmlInit failed: the error's message), or null. */
  initError: string | null;
}

/** An NVML event, as it arrived. */
export interface ExporterEvent {
  /** What the message is: an event. */
  kind: 'event';
  /** The GPU's NVML index. */
  gpu: number;
  /** The event type's name without its prefix (`XidCriticalError`, `DoubleBitEccError`, …). */
  type: string;
  /** The XID of an XidCriticalError event (else the event's data). */
  data: number;
}

/** How the sampler reads. */
export interface SamplerSettings {
  /** NVML indices of the GPUs to read; all when absent. */
  devices?: number[];
  /** Whether to list each GPU's processes (with /proc's view of them). */
  processes: boolean;
  /** Whether to take GPM samples (Hopper and later) for the DCGM_FI_PROF_* ratios. */
  gpm: boolean;
  /** Whether to wait for NVML events (XIDs, ECC errors). */
  events: boolean;
}

/** Statuses that mean "this GPU or driver does not have it": the value is left out, nothing counted. */
const ABSENT = new Set([
  3 /* NOT_SUPPORTED */, 4 /* NO_PERMISSION */, 6 /* NOT_FOUND */, 13 /* FUNCTION_NOT_FOUND */, 21 /* NO_DATA */, 26 /* DEPRECATED */,
]);
/** Statuses after which the GPU is not asked anything more this sample. */
const GONE = new Set([15 /* GPU_IS_LOST */, 16 /* RESET_REQUIRED */, 28 /* GPU_NOT_FOUND */]);
/** NVML_VALUE_NOT_AVAILABLE for an unsigned long long. */
const NOT_AVAILABLE = 0xffffffffffffffffn;
/** The NVLink field values' scope that means every link of the GPU (as DCGM reads them). */
const ALL_LINKS = 0xffffffff;
/** A wait on the event set returns at least this often, so that a stop request is seen. */
export const WAIT_SLICE_MS = 200;

/** The status's C name. */
function statusName(code: number): string {
  return nv().nvmlReturn_t[code] ?? `nvmlReturn_t ${code}`;
}

/** Reads one GPU for one sample: each call's outputs, or null (counted when it is an error). */
class GpuReader {
  /** Set once the GPU answered a GONE status: nothing more is asked this sample. */
  gone = false;

  constructor(
    private readonly sampler: NvmlSampler,
    private readonly index: number,
  ) {}

  /** The outputs of `call`, or null. */
  read<R extends readonly [number, ...unknown[]]>(fn: string, call: () => R): OkOutputs<R> | null {
    if (this.gone) return null;
    const r = this.sampler.call(fn, String(this.index), call);
    if (r === null) return null;
    if (r[0] === 0) return r.slice(1) as OkOutputs<R>;
    if (GONE.has(r[0])) this.gone = true;
    return null;
  }

  /** The first output of `call`, or null. */
  one<T>(fn: string, call: () => readonly [number, T | null, ...unknown[]]): T | null {
    const r = this.read(fn, call as () => readonly [number, ...unknown[]]);
    return r === null ? null : (r[0] as T);
  }
}

/** A GPU the sampler knows: its handle and what it learnt of it. */
interface Gpu {
  index: number;
  handle: NvmlApi.nvmlDevice_t | null;
  uuid: string;
  name: string;
  pciBusId: string;
  /** Event types registered for it (0: none yet). */
  events: bigint;
  /** GPM: whether supported (null: not asked yet), and the two sample buffers (older first). */
  gpm: { supported: boolean | null; samples: NvmlApi.nvmlGpmSample_t[]; taken: number };
}

/** The NVML event types the exporter counts (PState and clock changes are left out: they fire all the time). */
const EVENT_NAMES = [
  'SingleBitEccError',
  'DoubleBitEccError',
  'XidCriticalError',
  'PowerSourceChange',
  'SingleBitEccErrorStorm',
  'DramRetirementEvent',
  'DramRetirementFailure',
  'NonFatalPoisonError',
  'FatalPoisonError',
  'GpuUnavailableError',
  'GpuRecoveryAction',
];

/** The GPM metrics behind dcgm-exporter's DCGM_FI_PROF_* defaults (DCGM reads these the same way on Hopper and later). */
const GPM_METRICS: { metric: string; id: keyof typeof NvmlApi.nvmlGpmMetricId_t; scale: number }[] = [
  // Percentages, as ratios (DCGM divides by 100).
  { metric: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', id: 'NVML_GPM_METRIC_GRAPHICS_UTIL', scale: 1 / 100 },
  { metric: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', id: 'NVML_GPM_METRIC_ANY_TENSOR_UTIL', scale: 1 / 100 },
  { metric: 'DCGM_FI_PROF_DRAM_ACTIVE', id: 'NVML_GPM_METRIC_DRAM_BW_UTIL', scale: 1 / 100 },
  // MiB/s (nvml.h), as the bytes a second the metric's help names.
  { metric: 'DCGM_FI_PROF_PCIE_TX_BYTES', id: 'NVML_GPM_METRIC_PCIE_TX_PER_SEC', scale: 1024 * 1024 },
  { metric: 'DCGM_FI_PROF_PCIE_RX_BYTES', id: 'NVML_GPM_METRIC_PCIE_RX_PER_SEC', scale: 1024 * 1024 },
];

/** Takes samples of every GPU and waits for NVML events; one per sampler thread. */
export class NvmlSampler {
  private gpus: Gpu[] = [];
  private byHandle = new Map<bigint, Gpu>();
  private errors = new Map<string, NvmlErrorCount>();
  private active = false;
  private initError: string | null = null;
  private driverVersion: string | null = null;
  private eventSet: NvmlApi.nvmlEventSet_t | null = null;
  private eventData: NvmlApi.nvmlEventData_st | null = null;
  private eventWaitBroken = false;
  private eventNames: [bigint, string][] | null = null;
  private missing = new Set<string>();

  constructor(private readonly settings: SamplerSettings) {}

  /**
   * Runs an NVML call for `gpu`: its result, or null when it threw or the driver lacks the function.
   * A failure is counted unless it is an ABSENT status or one of `expected` (a wait's timeout).
   */
  call<R extends readonly [number, ...unknown[]]>(fn: string, gpu: string, call: () => R, expected: readonly number[] = []): R | null {
    if (this.missing.has(fn)) return null;
    let r: R;
    try {
      r = call();
    } catch (e) {
      // A function this libnvidia-ml does not export: absent, like NOT_SUPPORTED (and not asked again).
      if (/does not export/.test((e as Error).message)) {
        this.missing.add(fn);
        return null;
      }
      this.count(fn, gpu, 'exception');
      return null;
    }
    if (r[0] !== 0 && !ABSENT.has(r[0]) && !expected.includes(r[0])) this.count(fn, gpu, statusName(r[0]));
    return r;
  }

  /** Counts one failure of `fn` on `gpu`. */
  count(fn: string, gpu: string, error: string): void {
    const key = `${fn}\0${gpu}\0${error}`;
    const e = this.errors.get(key);
    if (e) e.count++;
    else this.errors.set(key, { fn, gpu, error, count: 1 });
  }

  /** Initialises NVML and finds the GPUs; false (and `initError` set) when NVML cannot be used. */
  private open(): boolean {
    if (this.active) return true;
    const n = (() => {
      try {
        return nv();
      } catch (e) {
        this.initError = messageOf(e);
        return null;
      }
    })();
    if (!n) return false;
    try {
      acquireNvml();
    } catch (e) {
      // LibraryLoadError (no libnvidia-ml) or NvmlError (nvmlInit failed: no driver loaded, no permission).
      this.initError = messageOf(e);
      this.count('nvmlInit', '', (e as { codeName?: string }).codeName ?? 'exception');
      return false;
    }
    this.active = true;
    this.initError = null;
    const count = this.call('nvmlDeviceGetCount', '', () => n.nvmlDeviceGetCount());
    const total = count && count[0] === 0 ? count[1]! : 0;
    const wanted = this.settings.devices ?? Array.from({ length: total }, (_, i) => i);
    this.gpus = wanted
      .filter((i) => i < total)
      .map((index) => ({
        index,
        handle: null,
        uuid: '',
        name: '',
        pciBusId: '',
        events: 0n,
        gpm: { supported: null, samples: [], taken: 0 },
      }));
    this.driverVersion = this.call('nvmlSystemGetDriverVersion', '', () => n.nvmlSystemGetDriverVersion(80))?.[1] ?? null;
    if (this.settings.events) {
      const set = this.call('nvmlEventSetCreate', '', () => n.nvmlEventSetCreate());
      if (set && set[0] === 0) {
        this.eventSet = set[1];
        this.eventData = new n.nvmlEventData_st();
      }
    }
    return true;
  }

  /** A handle and identity for `g` (asked again each sample until NVML gives them). */
  private identify(g: Gpu): boolean {
    const n = nv();
    const gpu = String(g.index);
    if (g.handle === null) {
      const h = this.call('nvmlDeviceGetHandleByIndex', gpu, () => n.nvmlDeviceGetHandleByIndex(g.index));
      if (!h || h[0] !== 0) return false;
      g.handle = h[1];
      this.byHandle.set(BigInt(g.handle!), g);
    }
    const h = g.handle!;
    if (!g.uuid) g.uuid = okOutput(this.call('nvmlDeviceGetUUID', gpu, () => n.nvmlDeviceGetUUID(h, 96))) ?? '';
    if (!g.name) g.name = okOutput(this.call('nvmlDeviceGetName', gpu, () => n.nvmlDeviceGetName(h, 96))) ?? '';
    if (!g.pciBusId) g.pciBusId = okOutput(this.call('nvmlDeviceGetPciInfo', gpu, () => n.nvmlDeviceGetPciInfo(h)))?.busId ?? '';
    return true;
  }

  /** Registers the GPU's events in the event set (once it answers). */
  private register(g: Gpu, r: GpuReader): void {
    if (!this.eventSet || g.events !== 0n || r.gone) return;
    const n = nv();
    const h = g.handle!;
    const supported = r.one('nvmlDeviceGetSupportedEventTypes', () => n.nvmlDeviceGetSupportedEventTypes(h));
    if (supported === null) return;
    let mask = 0n;
    for (const name of EVENT_NAMES) {
      const bit = (n as unknown as Record<string, number | undefined>)[`nvmlEventType${name}`];
      if (bit !== undefined) mask |= BigInt(bit);
    }
    mask &= supported;
    if (mask === 0n) return;
    // Some GPUs refuse a type they list as supported: fall back to XIDs alone.
    const xid = BigInt(n.nvmlEventTypeXidCriticalError);
    for (const m of mask & xid && mask !== xid ? [mask, xid] : [mask]) {
      if (r.read('nvmlDeviceRegisterEvents', () => n.nvmlDeviceRegisterEvents(h, m, this.eventSet))) {
        g.events = m;
        return;
      }
    }
  }

  /** One sample of every GPU; errors counted since the last sample are handed over with it. */
  sample(): ExporterSample {
    const t0 = performance.now();
    const at = Date.now();
    const gpus = this.open() ? this.gpus.map((g) => this.readGpu(g)) : [];
    const errors = [...this.errors.values()];
    this.errors.clear();
    return {
      kind: 'sample',
      at,
      durationSeconds: (performance.now() - t0) / 1000,
      driverVersion: this.driverVersion,
      gpus,
      errors,
      initError: this.initError,
    };
  }

  private readGpu(g: Gpu): GpuReading {
    const out: GpuReading = {
      index: g.index,
      uuid: g.uuid,
      name: g.name,
      pciBusId: g.pciBusId,
      up: false,
      values: {},
      clockEventReasons: null,
      processes: [],
      xidEvents: false,
    };
    if (!this.identify(g)) return out;
    Object.assign(out, { uuid: g.uuid, name: g.name, pciBusId: g.pciBusId });
    const n = nv();
    const h = g.handle!;
    const r = new GpuReader(this, g.index);
    const v = out.values;
    const put = (metric: string, x: number | bigint | null | undefined, scale = 1) => {
      if (x !== null && x !== undefined && !r.gone) v[metric] = Number(x) * scale;
    };
    const C = n.nvmlClockType_t;
    put(
      'DCGM_FI_DEV_SM_CLOCK',
      r.one('nvmlDeviceGetClockInfo', () => n.nvmlDeviceGetClockInfo(h, C.NVML_CLOCK_SM)),
    );
    put(
      'DCGM_FI_DEV_MEM_CLOCK',
      r.one('nvmlDeviceGetClockInfo', () => n.nvmlDeviceGetClockInfo(h, C.NVML_CLOCK_MEM)),
    );
    const temp = r.one('nvmlDeviceGetTemperature', () => n.nvmlDeviceGetTemperature(h, n.nvmlTemperatureSensors_t.NVML_TEMPERATURE_GPU));
    // DCGM leaves out a reading above 200 °C (a sensor's nonsense).
    if (temp !== null && temp <= 200) put('DCGM_FI_DEV_GPU_TEMP', temp);
    put(
      'DCGM_FI_DEV_POWER_USAGE',
      r.one('nvmlDeviceGetPowerUsage', () => n.nvmlDeviceGetPowerUsage(h)),
      1 / 1000,
    );
    put(
      'DCGM_FI_DEV_PCIE_REPLAY_COUNTER',
      r.one('nvmlDeviceGetPcieReplayCounter', () => n.nvmlDeviceGetPcieReplayCounter(h)),
    );
    const util = r.one('nvmlDeviceGetUtilizationRates', () => n.nvmlDeviceGetUtilizationRates(h));
    put('DCGM_FI_DEV_GPU_UTIL', util?.gpu);
    put('DCGM_FI_DEV_MEM_COPY_UTIL', util?.memory);
    put(
      'DCGM_FI_DEV_ENC_UTIL',
      r.one('nvmlDeviceGetEncoderUtilization', () => n.nvmlDeviceGetEncoderUtilization(h)),
    );
    put(
      'DCGM_FI_DEV_DEC_UTIL',
      r.one('nvmlDeviceGetDecoderUtilization', () => n.nvmlDeviceGetDecoderUtilization(h)),
    );
    this.readMemory(h, r, put);
    this.readFields(h, r, put);
    this.readLicense(h, r, put);
    if (this.settings.gpm) this.readGpm(g, r, put);
    this.readEcc(h, r, put);
    if (!r.gone) out.clockEventReasons = this.readReasons(h, r);
    if (this.settings.processes && !r.gone) out.processes = this.readProcesses(g, r);
    this.register(g, r);
    out.up = !r.gone;
    out.xidEvents = out.up && (g.events & BigInt(n.nvmlEventTypeXidCriticalError)) !== 0n;
    if (!out.up) {
      // What was read before the GPU went away is left out with the rest.
      out.values = {};
      out.clockEventReasons = null;
      out.processes = [];
    }
    return out;
  }

  /** Framebuffer free, used and reserved, MiB (whole, as DCGM divides). */
  private readMemory(h: NvmlApi.nvmlDevice_t, r: GpuReader, put: (m: string, x: number | null) => void): void {
    const n = nv();
    const MiB = 1024 * 1024;
    const whole = (b: bigint | number) => Math.floor(Number(b) / MiB);
    const v2 = r.one('nvmlDeviceGetMemoryInfo_v2', () => n.nvmlDeviceGetMemoryInfo_v2(h));
    if (v2) {
      put('DCGM_FI_DEV_FB_FREE', whole(v2.free));
      put('DCGM_FI_DEV_FB_USED', whole(v2.used));
      put('DCGM_FI_DEV_FB_RESERVED', whole(v2.reserved));
      return;
    }
    const v1 = r.one('nvmlDeviceGetMemoryInfo', () => n.nvmlDeviceGetMemoryInfo(h));
    if (v1) {
      put('DCGM_FI_DEV_FB_FREE', whole(v1.free));
      put('DCGM_FI_DEV_FB_USED', whole(v1.used));
    }
  }

  /** What DCGM reads as NVML field values: memory temperature, energy, remapped rows, NVLink throughput (one call). */
  private readFields(h: NvmlApi.nvmlDevice_t, r: GpuReader, put: (m: string, x: number | null) => void): void {
    const n = nv();
    const ids = [
      { fieldId: n.NVML_FI_DEV_MEMORY_TEMP },
      { fieldId: n.NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION },
      { fieldId: n.NVML_FI_DEV_REMAPPED_UNC },
      { fieldId: n.NVML_FI_DEV_REMAPPED_COR },
      { fieldId: n.NVML_FI_DEV_REMAPPED_FAILURE },
      { fieldId: n.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, scopeId: ALL_LINKS },
      { fieldId: n.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, scopeId: ALL_LINKS },
    ];
    const fv = r.one('nvmlDeviceGetFieldValues', () => n.nvmlDeviceGetFieldValues(h, ids.length, ids));
    if (!fv) return;
    const T = n.nvmlValueType_t;
    const value = (i: number): number | null => {
      const f = fv[i];
      if (!f || f.nvmlReturn !== 0) return null;
      const x = f.value;
      switch (f.valueType) {
        case T.NVML_VALUE_TYPE_DOUBLE:
          return x.dVal;
        case T.NVML_VALUE_TYPE_UNSIGNED_INT:
          return x.uiVal;
        case T.NVML_VALUE_TYPE_UNSIGNED_LONG:
          return Number(x.ulVal);
        case T.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
          return x.ullVal === NOT_AVAILABLE ? null : Number(x.ullVal);
        case T.NVML_VALUE_TYPE_SIGNED_LONG_LONG:
          return Number(x.sllVal);
        case T.NVML_VALUE_TYPE_SIGNED_INT:
          return x.siVal;
        default:
          return null;
      }
    };
    const memTemp = value(0);
    if (memTemp !== null && memTemp <= 200) put('DCGM_FI_DEV_MEMORY_TEMP', memTemp);
    put('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', value(1));
    put('DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS', value(2));
    put('DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', value(3));
    put('DCGM_FI_DEV_ROW_REMAP_FAILURE', value(4));
    const [tx, rx] = [value(5), value(6)];
    // DCGM adds the two directions of every link (KiB, as NVML counts them).
    if (tx !== null && rx !== null) put('DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL', tx + rx);
  }

  /** The vGPU license status as DCGM reads it: 0 where the GPU has no vGPU licensing, else whether the vGPU feature is licensed. */
  private readLicense(h: NvmlApi.nvmlDevice_t, r: GpuReader, put: (m: string, x: number | null) => void): void {
    const n = nv();
    const f = r.one('nvmlDeviceGetGridLicensableFeatures', () => n.nvmlDeviceGetGridLicensableFeatures(h));
    if (!f) return;
    if (!f.isGridLicenseSupported) return put('DCGM_FI_DEV_VGPU_LICENSE_STATUS', 0);
    const vgpu = f.gridLicensableFeatures
      .slice(0, f.licensableFeaturesCount)
      .find((x) => x.featureCode === n.nvmlGridLicenseFeatureCode_t.NVML_GRID_LICENSE_FEATURE_CODE_VGPU);
    if (vgpu) put('DCGM_FI_DEV_VGPU_LICENSE_STATUS', vgpu.featureState > 0 ? 1 : 0);
  }

  /** The DCGM_FI_PROF_* ratios from two GPM samples (this one and the last). */
  private readGpm(g: Gpu, r: GpuReader, put: (m: string, x: number | null, scale?: number) => void): void {
    const n = nv();
    const h = g.handle!;
    if (g.gpm.supported === null) {
      const s = r.one('nvmlGpmQueryDeviceSupport', () => n.nvmlGpmQueryDeviceSupport(h, { version: n.NVML_GPM_SUPPORT_VERSION }));
      if (r.gone) return;
      g.gpm.supported = !!s?.isSupportedDevice;
      if (g.gpm.supported) {
        for (let i = 0; i < 2; i++) {
          const a = r.one('nvmlGpmSampleAlloc', () => n.nvmlGpmSampleAlloc());
          if (a === null) break;
          g.gpm.samples.push(a);
        }
        if (g.gpm.samples.length < 2) g.gpm.supported = false;
      }
    }
    if (!g.gpm.supported) return;
    // `spare` is filled now; `last` holds the previous sample, and is the one filled next time.
    const [spare, last] = g.gpm.samples;
    if (!r.read('nvmlGpmSampleGet', () => n.nvmlGpmSampleGet(h, spare))) {
      g.gpm.taken = 0;
      return;
    }
    g.gpm.samples = [last, spare];
    if (++g.gpm.taken < 2) return;
    const got = r.one('nvmlGpmMetricsGet', () =>
      n.nvmlGpmMetricsGet({
        version: n.NVML_GPM_METRICS_GET_VERSION,
        numMetrics: GPM_METRICS.length,
        sample1: last,
        sample2: spare,
        metrics: GPM_METRICS.map((m) => ({ metricId: n.nvmlGpmMetricId_t[m.id] })),
      }),
    );
    if (!got) return;
    const metrics = got.metrics;
    GPM_METRICS.forEach((m, i) => {
      const x = metrics[i];
      if (x.nvmlReturn === 0 && Number.isFinite(x.value)) put(m.metric, x.value, m.scale);
    });
  }

  /** ECC totals (only where ECC is on: NVML says not supported otherwise). */
  private readEcc(h: NvmlApi.nvmlDevice_t, r: GpuReader, put: (m: string, x: bigint | null) => void): void {
    const n = nv();
    const M = n.nvmlMemoryErrorType_t;
    const K = n.nvmlEccCounterType_t;
    const rows: [string, number, number][] = [
      ['DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', M.NVML_MEMORY_ERROR_TYPE_CORRECTED, K.NVML_VOLATILE_ECC],
      ['DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', M.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, K.NVML_VOLATILE_ECC],
      ['DCGM_FI_DEV_ECC_SBE_AGG_TOTAL', M.NVML_MEMORY_ERROR_TYPE_CORRECTED, K.NVML_AGGREGATE_ECC],
      ['DCGM_FI_DEV_ECC_DBE_AGG_TOTAL', M.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, K.NVML_AGGREGATE_ECC],
    ];
    for (const [metric, type, counter] of rows) {
      const c = r.one('nvmlDeviceGetTotalEccErrors', () => n.nvmlDeviceGetTotalEccErrors(h, type, counter));
      if (c === null) {
        if (metric === 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL') return; // no ECC here
        continue;
      }
      put(metric, c);
    }
  }

  /** Each clock event reason the GPU supports (all NVML names where it cannot say), and whether it is active now. */
  private readReasons(h: NvmlApi.nvmlDevice_t, r: GpuReader): Record<string, boolean> | null {
    const n = nv();
    const active = r.one('nvmlDeviceGetCurrentClocksEventReasons', () => n.nvmlDeviceGetCurrentClocksEventReasons(h));
    if (active === null) return null;
    const supported = r.one('nvmlDeviceGetSupportedClocksEventReasons', () => n.nvmlDeviceGetSupportedClocksEventReasons(h));
    const on = new Set(decodeReasons(active));
    const out: Record<string, boolean> = {};
    for (const name of decodeReasons(supported ?? ~0n & 0xffffffffffffffffn)) out[name] = on.has(name);
    for (const name of on) out[name] = true;
    return out;
  }

  /** Compute and graphics processes, one row per pid, with /proc's view of each. */
  private readProcesses(g: Gpu, r: GpuReader): ProcessReading[] {
    const n = nv();
    const h = g.handle!;
    const byPid = new Map<number, ProcessReading>();
    const kinds = [
      ['nvmlDeviceGetComputeRunningProcesses', (c: number) => n.nvmlDeviceGetComputeRunningProcesses(h, c)],
      ['nvmlDeviceGetGraphicsRunningProcesses', (c: number) => n.nvmlDeviceGetGraphicsRunningProcesses(h, c)],
    ] as const;
    for (const [fn, list] of kinds) {
      // Room for a few more than counted: processes come and go between the calls.
      let room = 8;
      const TRIES = 5;
      const SHORT = n.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE;
      for (let tries = 1; tries <= TRIES; tries++) {
        const res = this.call(fn, String(g.index), () => list(room), tries < TRIES ? [SHORT] : []);
        if (res === null || r.gone) break;
        const [e, count, infos] = res;
        if (e === SHORT) {
          room = (count ?? room) + 8;
          continue;
        }
        if (e !== 0) {
          if (GONE.has(e)) r.gone = true;
          break;
        }
        for (const p of infos ?? []) {
          const used = p.usedGpuMemory === NOT_AVAILABLE ? null : Number(p.usedGpuMemory);
          const prev = byPid.get(p.pid);
          if (prev) {
            if (used !== null) prev.gpuMemoryBytes = Math.max(prev.gpuMemoryBytes ?? 0, used);
          } else {
            byPid.set(p.pid, { pid: p.pid, gpuMemoryBytes: used, user: null, command: null, rssBytes: null, cpuSeconds: null });
          }
        }
        break;
      }
    }
    for (const p of byPid.values()) {
      Object.assign(p, hostProcess(p.pid));
      if (p.command === null) {
        const name = this.call('nvmlSystemGetProcessName', String(g.index), () => n.nvmlSystemGetProcessName(p.pid, 256));
        if (name && name[0] === 0 && name[1]) p.command = escapeControls(name[1]);
      }
    }
    return [...byPid.values()];
  }

  /** Whether an event set is open and waiting on it works. */
  get waitsForEvents(): boolean {
    return this.eventSet !== null && !this.eventWaitBroken;
  }

  /** Waits up to `ms` for an NVML event; null on a timeout (or when no events can be waited for). */
  waitForEvent(ms: number): ExporterEvent | null {
    if (!this.eventSet || this.eventWaitBroken) return null;
    const n = nv();
    // A timeout is how a wait with nothing to report ends: not an error.
    const r = this.call('nvmlEventSetWait', '', () => n.nvmlEventSetWait(this.eventSet, this.eventData, Math.max(0, Math.floor(ms))), [
      n.nvmlReturn_t.NVML_ERROR_TIMEOUT,
    ]);
    if (r === null) {
      this.eventWaitBroken = true;
      return null;
    }
    // Another failure is counted; waiting again at once would spin: the caller sleeps for the rest of the slice.
    if (r[0] !== 0) return null;
    const d = r[1]!;
    const g = this.byHandle.get(BigInt(d.device));
    if (!g) return null;
    return { kind: 'event', gpu: g.index, type: this.eventName(d.eventType), data: Number(d.eventData) };
  }

  /** The name of an event type bit (`XidCriticalError`). */
  private eventName(type: bigint): string {
    this.eventNames ??= Object.entries(nv())
      .filter(([k, v]) => /^nvmlEventType\w+$/.test(k) && typeof v === 'number' && v !== 0 && (v & (v - 1)) === 0)
      .map(([k, v]) => [BigInt(v as number), k.slice('nvmlEventType'.length)]);
    return this.eventNames.find(([bit]) => bit === type)?.[1] ?? `0x${type.toString(16)}`;
  }

  /** Frees the event set and the GPM buffers, and ends this thread's use of NVML. */
  close(): void {
    if (!this.active) return;
    const n = nv();
    if (this.eventSet) this.call('nvmlEventSetFree', '', () => n.nvmlEventSetFree(this.eventSet));
    this.eventSet = null;
    for (const g of this.gpus) for (const s of g.gpm.samples) this.call('nvmlGpmSampleFree', '', () => n.nvmlGpmSampleFree(s));
    this.gpus = [];
    this.byHandle.clear();
    this.active = false;
    try {
      releaseNvml();
    } catch {
      /* nvmlShutdown failed: nothing more to do */
    }
  }
}

/** The first output of a call that succeeded, or null. */
function okOutput<T>(r: readonly [number, T | null, ...unknown[]] | null): T | null {
  return r && r[0] === 0 ? r[1] : null;
}

/** An error's message. */
function messageOf(e: unknown): string {
  return (e as Error)?.message ?? String(e);
}

/** The host's name as dcgm-exporter labels it: NODE_NAME when set, else the hostname. */
export function defaultHostname(): string {
  return process.env.NODE_NAME || os.hostname();
}
