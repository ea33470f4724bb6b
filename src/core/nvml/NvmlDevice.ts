// NVML in the core layer: one nvmlInit on first use and its nvmlShutdown at exit (or at
// releaseNvml), GPUs as NVML numbers them, and a health snapshot in which whatever NVML says this
// GPU does not support is null. The facade is loaded on first use, so importing core costs nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as NvmlApi from '../../nvml';
import { checkOptions } from '../base/options';
import type { OkOutputs } from '../../ffi/result';
import { CudaBindingsError, statusMessage } from '../../ffi/errors';

type N = typeof NvmlApi;
let api: N | undefined;
/** The NVML facade, loaded on first use. */
const nv = (): N => (api ??= require('../../nvml') as N);

/** An NVML call failed: `code` is the nvmlReturn_t, `codeName` its C name, `fn` the call. */
export class NvmlError extends CudaBindingsError {
  /** The nvmlReturn_t value, e.g. 3 (NVML_ERROR_NOT_SUPPORTED). */
  declare readonly code: number;
  /** The nvmlReturn_t's C name, e.g. `'NVML_ERROR_NOT_SUPPORTED'`. */
  declare readonly codeName: string;
  /** The NVML call that failed, e.g. `'nvmlDeviceGetPowerUsage'`. */
  declare readonly fn: string;

  /** Makes the error; `explanation` is NVML's text for the status (nvmlErrorString). */
  constructor(code: number, codeName: string, fn: string, explanation: string) {
    super(statusMessage(codeName, explanation, fn), { code, codeName, fn, library: 'libnvidia-ml' });
    this.name = 'NvmlError';
  }
}

function nvmlError(code: number, fn: string): NvmlError {
  const n = nv();
  const name = n.nvmlReturn_t[code] ?? `nvmlReturn_t ${code}`;
  let text = 'unknown error';
  try {
    text = n.nvmlErrorString(code)[1];
  } catch {
    /* the library could not say */
  }
  return new NvmlError(code, name, fn, text);
}

/** The outputs of a facade call, or an NvmlError. */
function must<R extends readonly [number, ...unknown[]]>(r: R, fn: string): OkOutputs<R> {
  if (r[0] !== 0) throw nvmlError(r[0], fn);
  return r.slice(1) as OkOutputs<R>;
}

/** Statuses that mean "this GPU (or this driver) does not have it": the field is null. */
const ABSENT = new Set([3 /* NOT_SUPPORTED */, 4 /* NO_PERMISSION */, 6 /* NOT_FOUND */, 13 /* FUNCTION_NOT_FOUND */]);

/** The first output of a call, or null when NVML says the GPU or driver lacks it (or the symbol is missing). */
function maybe<T>(call: () => [number, T | null, ...unknown[]], fn: string): T | null {
  let r: [number, T | null, ...unknown[]];
  try {
    r = call();
  } catch (e) {
    // A function the installed libnvidia-ml does not export.
    if (/does not export/.test((e as Error).message)) return null;
    throw e;
  }
  if (r[0] === 0) return r[1];
  if (ABSENT.has(r[0])) return null;
  throw nvmlError(r[0], fn);
}

// ---------------------------------------------------------------------------------------------
// the session: nvmlInit once, nvmlShutdown once

let users = 0;
let implicit = false;

/** Initialises NVML for a user of it (counted); pair with releaseNvml. */
export function acquireNvml(): void {
  if (users === 0) must(nv().nvmlInit(), 'nvmlInit');
  users++;
}

/** Ends one use of NVML; the last one shuts it down (nvmlShutdown). */
export function releaseNvml(): void {
  if (users === 0) return;
  users--;
  if (users === 0) {
    handles.clear();
    must(nv().nvmlShutdown(), 'nvmlShutdown');
  }
}

/** The implicit session of the layers above: opened on first use, closed at exit or by shutdownNvml(). */
function ensureNvml(): void {
  if (implicit) return;
  acquireNvml();
  implicit = true;
  process.once('exit', shutdownNvml);
}

/** Ends the implicit NVML session now (it reopens on the next use); nvmlShutdown runs when no other user holds NVML. */
export function shutdownNvml(): void {
  if (!implicit) return;
  implicit = false;
  process.removeListener('exit', shutdownNvml);
  releaseNvml();
}

/** Whether NVML is initialised by this layer now. */
export function nvmlActive(): boolean {
  return users > 0;
}

// ---------------------------------------------------------------------------------------------
// GPUs

/** What `health()` reports; each field is null where NVML says this GPU does not support it. */
export interface GpuHealth {
  /** NVML's index (not CUDA's: CUDA_VISIBLE_DEVICES and CUDA's ordering differ). */
  index: number;
  /** The product name, e.g. `'NVIDIA H100 80GB HBM3'`. */
  name: string;
  /** `GPU-xxxxxxxx-…`, the same as Device.uuid. */
  uuid: string;
  /** The PCI address, `domain:bus:device.function`. */
  pciBusId: string;
  /** Percent of time a kernel ran (gpu) and memory was read or written (memory), over the last sample period. */
  utilization: {
    /** Percent of the last sample period during which a kernel ran on the GPU. */
    gpu: number;
    /** Percent of the last sample period during which device memory was read or written. */
    memory: number;
  } | null;
  /** °C: the GPU's, and where clocks slow down and where it shuts down. */
  temperature: {
    /** The GPU's temperature now, °C. */
    current: number | null;
    /** The temperature at which the GPU slows its clocks down, °C. */
    slowdown: number | null;
    /** The temperature at which the GPU shuts down, °C. */
    shutdown: number | null;
  };
  /** Watts. */
  power: {
    /** Power the GPU and its memory draw now, watts (nvmlDeviceGetPowerUsage). */
    draw: number | null;
    /** The power limit the driver enforces, watts (nvmlDeviceGetEnforcedPowerLimit). */
    limit: number | null;
  };
  /** MHz. */
  clocks: {
    /** The SM clock now, MHz. */
    sm: number | null;
    /** The memory clock now, MHz. */
    memory: number | null;
    /** The highest SM clock the GPU runs at, MHz. */
    smMax: number | null;
    /** The highest memory clock the GPU runs at, MHz. */
    memoryMax: number | null;
  };
  /** Percent of the fan's maximum speed. */
  fanSpeed: number | null;
  /** Bytes. `reserved` is what the driver keeps (nvmlMemory_v2). */
  memory: {
    /** Bytes of device memory in all. */
    total: number;
    /** Bytes allocated. */
    used: number;
    /** Bytes not allocated. */
    free: number;
    /** Bytes the driver and firmware keep for themselves; null where the driver lacks nvmlMemory_v2. */
    reserved: number | null;
  } | null;
  /** Link generation and width, current and max, and throughput in KB/s. */
  pcie: {
    /** The PCIe generation the link runs at now (it drops while the GPU idles). */
    generation: number | null;
    /** The lanes the link uses now. */
    width: number | null;
    /** The highest PCIe generation this GPU and the system support together. */
    maxGeneration: number | null;
    /** The most lanes this GPU and the system support together. */
    maxWidth: number | null;
    /** KB/s the GPU sent over PCIe, measured over about 20 ms; null when `pcieThroughput: false`. */
    txKBps: number | null;
    /** KB/s the GPU received over PCIe, measured over about 20 ms; null when `pcieThroughput: false`. */
    rxKBps: number | null;
  };
  /** Each NVLink the GPU has: whether it is up and its version; null without NVLink. */
  nvlink:
    | {
        /** The link's number, from 0. */
        link: number;
        /** Whether the link is up. */
        active: boolean;
        /** The link's NVLink version; null when the link is down or NVML does not report it. */
        version: number | null;
      }[]
    | null;
  /** ECC error counts since the driver loaded (volatile) and over the GPU's life (aggregate). */
  ecc: {
    /** Corrected (single-bit) errors since the driver loaded. */
    correctedVolatile: number;
    /** Uncorrected (double-bit) errors since the driver loaded. */
    uncorrectedVolatile: number;
    /** Corrected errors over the GPU's life. */
    correctedAggregate: number;
    /** Uncorrected errors over the GPU's life. */
    uncorrectedAggregate: number;
  } | null;
  /** Why clocks are held down now, by name (`SwPowerCap`, `HwSlowdown`, …); [] when they are not. */
  throttleReasons: string[] | null;
  /** As nvidia-smi prints it: `Default`, `Exclusive_Process`, `Prohibited`. */
  computeMode: string | null;
  /** Whether MIG (multi-instance GPU) is on now, and whether it will be after the next GPU reset. */
  migMode: {
    /** Whether MIG is on now. */
    current: boolean;
    /** Whether MIG will be on after the next GPU reset. */
    pending: boolean;
  } | null;
  /** Whether the driver stays loaded with no client (persistence mode). */
  persistenceMode: boolean | null;
  /** `P0` (fastest) to `P15`. */
  performanceState: string | null;
  /** Processes using the GPU: pid, name, bytes of GPU memory (null where NVML cannot tell), compute or graphics. */
  processes: GpuProcess[] | null;
  /** Why `processes` is null though the GPU lists processes (NVML failed to list them now), or null. */
  processesError: string | null;
}

/** A process that uses a GPU, as GpuHealth.processes lists it. */
export interface GpuProcess {
  /** The operating system's process id. */
  pid: number;
  /** The process's name (its executable), or null where NVML cannot read it. */
  name: string | null;
  /** Bytes of GPU memory it uses, or null where NVML cannot tell (e.g. under MIG or in a container). */
  usedMemory: number | null;
  /** Whether it runs compute (CUDA) work, graphics work, or both. */
  type: 'compute' | 'graphics' | 'compute+graphics';
}

/** nvidia-smi's names of the compute modes. */
const COMPUTE_MODES = ['Default', 'Exclusive_Thread', 'Prohibited', 'Exclusive_Process'];
/** How often a process list is asked for before processes that keep starting make it give up. */
const LIST_TRIES = 5;
/** NVML_VALUE_NOT_AVAILABLE for an unsigned long long. */
const NOT_AVAILABLE = 0xffffffffffffffffn;

const handles = new Map<number, NvmlDevice>();

/** A GPU as NVML sees it (nvidia-smi's view): reachable without CUDA, numbered by NVML. */
export class NvmlDevice {
  private constructor(
    /** NVML's index of the GPU. */
    readonly index: number,
    /** The nvmlDevice_t. */
    readonly handle: NvmlApi.nvmlDevice_t,
  ) {}

  /** How many GPUs NVML sees (initialises NVML on first use). */
  static count(): number {
    ensureNvml();
    return must(nv().nvmlDeviceGetCount(), 'nvmlDeviceGetCount')[0];
  }

  /** Every GPU, in NVML's order. */
  static all(): NvmlDevice[] {
    return Array.from({ length: NvmlDevice.count() }, (_, i) => NvmlDevice.get(i));
  }

  /** GPU `index` in NVML's order (one object per GPU). */
  static get(index: number): NvmlDevice {
    if (!Number.isInteger(index) || index < 0)
      throw new RangeError(`NvmlDevice.get: parameter 'index' must be an NVML device index, got ${index}`);
    ensureNvml();
    let d = handles.get(index);
    if (!d) {
      const [h] = must(nv().nvmlDeviceGetHandleByIndex(index), 'nvmlDeviceGetHandleByIndex');
      handles.set(index, (d = new NvmlDevice(index, h)));
    }
    return d;
  }

  /** The GPU with this UUID (`GPU-…`), or null. */
  static byUuid(uuid: string): NvmlDevice | null {
    ensureNvml();
    const [err, h] = nv().nvmlDeviceGetHandleByUUID(uuid);
    if (err === 6 /* NOT_FOUND */ || err === 2 /* INVALID_ARGUMENT */) return null;
    must([err], 'nvmlDeviceGetHandleByUUID');
    return NvmlDevice.fromHandle(h!);
  }

  /** The GPU at this PCI bus id (`00000000:18:00.0` or `0000:18:00.0`), or null. */
  static byPciBusId(busId: string): NvmlDevice | null {
    ensureNvml();
    const [err, h] = nv().nvmlDeviceGetHandleByPciBusId(busId);
    if (err === 6 || err === 2) return null;
    must([err], 'nvmlDeviceGetHandleByPciBusId');
    return NvmlDevice.fromHandle(h!);
  }

  /** The NVML GPU of a CUDA device: by its UUID, else by its PCI bus id (never by index). */
  static forCuda(uuid: string, pciBusId: () => string): NvmlDevice {
    const d = NvmlDevice.byUuid(uuid) ?? NvmlDevice.byPciBusId(pciBusId());
    if (!d)
      throw new NvmlError(
        6,
        'NVML_ERROR_NOT_FOUND',
        'nvmlDeviceGetHandleByUUID',
        `NVML has no GPU with UUID ${uuid} or PCI bus id ${pciBusId()}`,
      );
    return d;
  }

  private static fromHandle(h: NvmlApi.nvmlDevice_t): NvmlDevice {
    const [i] = must(nv().nvmlDeviceGetIndex(h), 'nvmlDeviceGetIndex');
    return NvmlDevice.get(i);
  }

  private _name?: string;
  private _uuid?: string;
  private _bus?: string;

  /** The product name, as nvidia-smi prints it. */
  get name(): string {
    return (this._name ??= must(nv().nvmlDeviceGetName(this.handle, 96), 'nvmlDeviceGetName')[0]);
  }

  /** `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as nvidia-smi prints it. */
  get uuid(): string {
    return (this._uuid ??= must(nv().nvmlDeviceGetUUID(this.handle, 96), 'nvmlDeviceGetUUID')[0]);
  }

  /** `00000000:18:00.0`, as nvidia-smi prints it. */
  get pciBusId(): string {
    return (this._bus ??= must(nv().nvmlDeviceGetPciInfo(this.handle), 'nvmlDeviceGetPciInfo')[0].busId);
  }

  /** Utilization, in percent (one call: what `top` samples). */
  utilization(): {
    /** Percent of the last sample period during which a kernel ran on the GPU. */
    gpu: number;
    /** Percent of the last sample period during which device memory was read or written. */
    memory: number;
  } | null {
    const u = maybe(() => nv().nvmlDeviceGetUtilizationRates(this.handle), 'nvmlDeviceGetUtilizationRates');
    return u && { gpu: u.gpu, memory: u.memory };
  }

  /**
   * Everything GpuHealth lists, read now. `pcieThroughput: false` leaves out the PCIe throughput
   * (null), which NVML measures over about 20 ms per direction.
   */
  health(options: { pcieThroughput?: boolean } = {}): GpuHealth {
    checkOptions('NvmlDevice.health', options, { pcieThroughput: true });
    const throughput = options.pcieThroughput ?? true;
    const n = nv();
    const h = this.handle;
    const E = n.nvmlEnableState_t;
    const clock = (t: number, max = false) =>
      maybe(
        () => (max ? n.nvmlDeviceGetMaxClockInfo(h, t) : n.nvmlDeviceGetClockInfo(h, t)),
        max ? 'nvmlDeviceGetMaxClockInfo' : 'nvmlDeviceGetClockInfo',
      );
    const mW = (v: number | null) => (v === null ? null : v / 1000);
    const mig = maybe(() => {
      const [e, cur, pend] = n.nvmlDeviceGetMigMode(h);
      return [e, e === 0 ? { current: cur === 1, pending: pend === 1 } : null];
    }, 'nvmlDeviceGetMigMode');
    const persistence = maybe(() => n.nvmlDeviceGetPersistenceMode(h), 'nvmlDeviceGetPersistenceMode');
    const mode = maybe(() => n.nvmlDeviceGetComputeMode(h), 'nvmlDeviceGetComputeMode');
    const pstate = maybe(() => n.nvmlDeviceGetPerformanceState(h), 'nvmlDeviceGetPerformanceState');
    const reasons = maybe(() => n.nvmlDeviceGetCurrentClocksEventReasons(h), 'nvmlDeviceGetCurrentClocksEventReasons');
    return {
      index: this.index,
      name: this.name,
      uuid: this.uuid,
      pciBusId: this.pciBusId,
      utilization: this.utilization(),
      temperature: {
        current: maybe(() => n.nvmlDeviceGetTemperature(h, n.nvmlTemperatureSensors_t.NVML_TEMPERATURE_GPU), 'nvmlDeviceGetTemperature'),
        slowdown: maybe(
          () => n.nvmlDeviceGetTemperatureThreshold(h, n.nvmlTemperatureThresholds_t.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
          'nvmlDeviceGetTemperatureThreshold',
        ),
        shutdown: maybe(
          () => n.nvmlDeviceGetTemperatureThreshold(h, n.nvmlTemperatureThresholds_t.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN),
          'nvmlDeviceGetTemperatureThreshold',
        ),
      },
      power: {
        draw: mW(maybe(() => n.nvmlDeviceGetPowerUsage(h), 'nvmlDeviceGetPowerUsage')),
        limit: mW(maybe(() => n.nvmlDeviceGetEnforcedPowerLimit(h), 'nvmlDeviceGetEnforcedPowerLimit')),
      },
      clocks: {
        sm: clock(n.nvmlClockType_t.NVML_CLOCK_SM),
        memory: clock(n.nvmlClockType_t.NVML_CLOCK_MEM),
        smMax: clock(n.nvmlClockType_t.NVML_CLOCK_SM, true),
        memoryMax: clock(n.nvmlClockType_t.NVML_CLOCK_MEM, true),
      },
      fanSpeed: maybe(() => n.nvmlDeviceGetFanSpeed(h), 'nvmlDeviceGetFanSpeed'),
      memory: this.memory(),
      pcie: {
        generation: maybe(() => n.nvmlDeviceGetCurrPcieLinkGeneration(h), 'nvmlDeviceGetCurrPcieLinkGeneration'),
        width: maybe(() => n.nvmlDeviceGetCurrPcieLinkWidth(h), 'nvmlDeviceGetCurrPcieLinkWidth'),
        maxGeneration: maybe(() => n.nvmlDeviceGetMaxPcieLinkGeneration(h), 'nvmlDeviceGetMaxPcieLinkGeneration'),
        maxWidth: maybe(() => n.nvmlDeviceGetMaxPcieLinkWidth(h), 'nvmlDeviceGetMaxPcieLinkWidth'),
        txKBps: throughput
          ? maybe(() => n.nvmlDeviceGetPcieThroughput(h, n.nvmlPcieUtilCounter_t.NVML_PCIE_UTIL_TX_BYTES), 'nvmlDeviceGetPcieThroughput')
          : null,
        rxKBps: throughput
          ? maybe(() => n.nvmlDeviceGetPcieThroughput(h, n.nvmlPcieUtilCounter_t.NVML_PCIE_UTIL_RX_BYTES), 'nvmlDeviceGetPcieThroughput')
          : null,
      },
      nvlink: this.nvlinks(),
      ecc: this.ecc(),
      throttleReasons: reasons === null ? null : decodeReasons(reasons),
      computeMode: mode === null ? null : (COMPUTE_MODES[mode] ?? `mode ${mode}`),
      migMode: mig,
      persistenceMode: persistence === null ? null : persistence === E.NVML_FEATURE_ENABLED,
      performanceState: pstate === null || pstate === n.nvmlPstates_t.NVML_PSTATE_UNKNOWN ? null : `P${pstate}`,
      ...this.processesOrWhy(),
    };
  }

  /** The few readings `top` and the exporter show, read now (fewer calls than health()). */
  sample(): GpuSample {
    const n = nv();
    const h = this.handle;
    const mW = (v: number | null) => (v === null ? null : v / 1000);
    const clock = (t: number) => maybe(() => n.nvmlDeviceGetClockInfo(h, t), 'nvmlDeviceGetClockInfo');
    return {
      index: this.index,
      name: this.name,
      uuid: this.uuid,
      utilization: this.utilization(),
      memory: this.memory(),
      temperature: maybe(() => n.nvmlDeviceGetTemperature(h, n.nvmlTemperatureSensors_t.NVML_TEMPERATURE_GPU), 'nvmlDeviceGetTemperature'),
      power: {
        draw: mW(maybe(() => n.nvmlDeviceGetPowerUsage(h), 'nvmlDeviceGetPowerUsage')),
        limit: mW(maybe(() => n.nvmlDeviceGetEnforcedPowerLimit(h), 'nvmlDeviceGetEnforcedPowerLimit')),
      },
      clocks: { sm: clock(n.nvmlClockType_t.NVML_CLOCK_SM), memory: clock(n.nvmlClockType_t.NVML_CLOCK_MEM) },
      fanSpeed: maybe(() => n.nvmlDeviceGetFanSpeed(h), 'nvmlDeviceGetFanSpeed'),
      ...this.processesOrWhy(),
    };
  }

  /** The processes, or null and why NVML could not list them now: a snapshot reports the rest all the same. */
  private processesOrWhy(): Pick<GpuHealth, 'processes' | 'processesError'> {
    try {
      return { processes: this.processes(), processesError: null };
    } catch (e) {
      if (!(e instanceof NvmlError)) throw e;
      return { processes: null, processesError: e.message };
    }
  }

  /** Memory in bytes; `reserved` where the driver reports it (nvmlMemory_v2). */
  memory(): GpuHealth['memory'] {
    const n = nv();
    let v2: NvmlApi.nvmlMemory_v2_t | null = null;
    try {
      const [e, m] = n.nvmlDeviceGetMemoryInfo_v2(this.handle);
      if (e === 0) v2 = m;
      else if (!ABSENT.has(e) && e !== n.nvmlReturn_t.NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
        throw nvmlError(e, 'nvmlDeviceGetMemoryInfo_v2');
    } catch (e) {
      if (!/does not export/.test((e as Error).message)) throw e;
    }
    if (v2) return { total: Number(v2.total), used: Number(v2.used), free: Number(v2.free), reserved: Number(v2.reserved) };
    const m = maybe(() => n.nvmlDeviceGetMemoryInfo(this.handle), 'nvmlDeviceGetMemoryInfo');
    return m && { total: Number(m.total), used: Number(m.used), free: Number(m.free), reserved: null };
  }

  /** Each NVLink: up or not, and its version; null where the GPU has none. */
  nvlinks(): GpuHealth['nvlink'] {
    const n = nv();
    const out: NonNullable<GpuHealth['nvlink']> = [];
    for (let link = 0; link < n.NVML_NVLINK_MAX_LINKS; link++) {
      const [e, s] = n.nvmlDeviceGetNvLinkState(this.handle, link);
      if (e === n.nvmlReturn_t.NVML_ERROR_INVALID_ARGUMENT) break; // past the GPU's last link
      if (ABSENT.has(e)) {
        if (link === 0) return null;
        break;
      }
      must([e], 'nvmlDeviceGetNvLinkState');
      const active = s === n.nvmlEnableState_t.NVML_FEATURE_ENABLED;
      out.push({
        link,
        active,
        version: active ? maybe(() => n.nvmlDeviceGetNvLinkVersion(this.handle, link), 'nvmlDeviceGetNvLinkVersion') : null,
      });
    }
    return out;
  }

  /** ECC error counts, or null where ECC is not supported (or off). */
  ecc(): GpuHealth['ecc'] {
    const n = nv();
    const M = n.nvmlMemoryErrorType_t;
    const C = n.nvmlEccCounterType_t;
    const count = (t: number, c: number) => maybe(() => n.nvmlDeviceGetTotalEccErrors(this.handle, t, c), 'nvmlDeviceGetTotalEccErrors');
    const cv = count(M.NVML_MEMORY_ERROR_TYPE_CORRECTED, C.NVML_VOLATILE_ECC);
    if (cv === null) return null;
    const num = (v: bigint | null) => (v === null ? 0 : Number(v));
    return {
      correctedVolatile: num(cv),
      uncorrectedVolatile: num(count(M.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, C.NVML_VOLATILE_ECC)),
      correctedAggregate: num(count(M.NVML_MEMORY_ERROR_TYPE_CORRECTED, C.NVML_AGGREGATE_ECC)),
      uncorrectedAggregate: num(count(M.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, C.NVML_AGGREGATE_ECC)),
    };
  }

  /**
   * The processes using the GPU (compute and graphics), with their names; null where the GPU cannot
   * list them. Throws NvmlError when NVML fails, e.g. NVML_ERROR_INSUFFICIENT_SIZE when processes
   * keep starting faster than the list can be read.
   */
  processes(): GpuProcess[] | null {
    const n = nv();
    const byPid = new Map<number, GpuProcess>();
    let supported = false;
    const kinds = [
      ['compute', (c: number) => n.nvmlDeviceGetComputeRunningProcesses(this.handle, c), 'nvmlDeviceGetComputeRunningProcesses'],
      ['graphics', (c: number) => n.nvmlDeviceGetGraphicsRunningProcesses(this.handle, c), 'nvmlDeviceGetGraphicsRunningProcesses'],
    ] as const;
    for (const [type, call, fn] of kinds) {
      // Asked with room for a few more than last counted: processes come and go between the calls.
      let room = 8;
      for (let tries = 1; ; tries++) {
        const [e, count, infos] = call(room);
        if (e === n.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE) {
          if (tries === LIST_TRIES)
            throw new NvmlError(
              e,
              'NVML_ERROR_INSUFFICIENT_SIZE',
              fn,
              `the list of processes kept growing while it was read (${tries} tries)`,
            );
          room = (count ?? room) + 8;
          continue;
        }
        if (ABSENT.has(e)) break;
        must([e], fn);
        supported = true;
        for (const p of infos ?? []) {
          const prev = byPid.get(p.pid);
          const used = p.usedGpuMemory === NOT_AVAILABLE ? null : Number(p.usedGpuMemory);
          if (prev) {
            prev.type = 'compute+graphics';
            if (used !== null) prev.usedMemory = Math.max(prev.usedMemory ?? 0, used);
          } else {
            byPid.set(p.pid, { pid: p.pid, name: null, usedMemory: used, type });
          }
        }
        break;
      }
    }
    if (!supported) return null;
    for (const p of byPid.values()) p.name = maybe(() => n.nvmlSystemGetProcessName(p.pid, 256), 'nvmlSystemGetProcessName');
    return [...byPid.values()];
  }

  /** How the path between this GPU and `other` runs, as `nvidia-smi topo -m` abbreviates it (`NV4`, `PIX`, `SYS`, …). */
  topology(other: NvmlDevice): TopologyLink {
    const n = nv();
    if (other === this)
      return { kind: 'X', nvlinks: 0, nvlinkVersion: null, level: null, p2p: { read: true, write: true, atomics: true, nvlink: false } };
    // Links straight to the other GPU, and links to NVSwitches (which reach every GPU on them).
    let direct = 0;
    let switched = 0;
    let nvlinkVersion: number | null = null;
    const links = this.nvlinks() ?? [];
    for (const l of links) {
      if (!l.active) continue;
      const pci = maybe(() => n.nvmlDeviceGetNvLinkRemotePciInfo(this.handle, l.link), 'nvmlDeviceGetNvLinkRemotePciInfo');
      if (pci && sameBus(pci.busId, other.pciBusId)) {
        direct++;
        nvlinkVersion = l.version;
      } else if (
        maybe(() => n.nvmlDeviceGetNvLinkRemoteDeviceType(this.handle, l.link), 'nvmlDeviceGetNvLinkRemoteDeviceType') ===
        n.nvmlIntNvLinkDeviceType_t.NVML_NVLINK_DEVICE_TYPE_SWITCH
      ) {
        switched++;
        nvlinkVersion ??= l.version;
      }
    }
    const level = maybe(() => n.nvmlDeviceGetTopologyCommonAncestor(this.handle, other.handle), 'nvmlDeviceGetTopologyCommonAncestor');
    const T = n.nvmlGpuTopologyLevel_t;
    const abbrev: Record<number, string> = {
      [T.NVML_TOPOLOGY_INTERNAL]: 'X',
      [T.NVML_TOPOLOGY_SINGLE]: 'PIX',
      [T.NVML_TOPOLOGY_MULTIPLE]: 'PXB',
      [T.NVML_TOPOLOGY_HOSTBRIDGE]: 'PHB',
      [T.NVML_TOPOLOGY_NODE]: 'NODE',
      [T.NVML_TOPOLOGY_SYSTEM]: 'SYS',
    };
    const p2p = (i: number) =>
      maybe(() => n.nvmlDeviceGetP2PStatus(this.handle, other.handle, i), 'nvmlDeviceGetP2PStatus') ===
      n.nvmlGpuP2PStatus_t.NVML_P2P_STATUS_OK;
    const C = n.nvmlGpuP2PCapsIndex_t;
    // Through NVSwitches, as nvidia-smi counts them: every switched link, where NVLink P2P works.
    const nvlinks = direct > 0 ? direct : switched > 0 && p2p(C.NVML_P2P_CAPS_INDEX_NVLINK) ? switched : 0;
    if (nvlinks === 0) nvlinkVersion = null;
    return {
      kind: nvlinks > 0 ? `NV${nvlinks}` : level === null ? '?' : (abbrev[level] ?? `level ${level}`),
      nvlinks,
      nvlinkVersion,
      level: level === null ? null : (abbrev[level] ?? null),
      p2p: {
        read: p2p(C.NVML_P2P_CAPS_INDEX_READ),
        write: p2p(C.NVML_P2P_CAPS_INDEX_WRITE),
        atomics: p2p(C.NVML_P2P_CAPS_INDEX_ATOMICS),
        nvlink: p2p(C.NVML_P2P_CAPS_INDEX_NVLINK),
      },
    };
  }

  /** The CPUs nearest the GPU (`0-15`), as nvidia-smi topo prints them; null where NVML cannot tell. */
  cpuAffinity(): number[] | null {
    const n = nv();
    const words = 16; // 1024 CPUs
    const set = maybe(() => n.nvmlDeviceGetCpuAffinity(this.handle, words), 'nvmlDeviceGetCpuAffinity');
    return set && bitsOf(set);
  }

  /** The GPU's own NUMA node (`GPU NUMA ID` in nvidia-smi topo: GPUs whose memory is a node, as over C2C), or null. */
  numaNode(): number | null {
    return maybe(() => nv().nvmlDeviceGetNumaNodeId(this.handle), 'nvmlDeviceGetNumaNodeId');
  }

  /**
   * The NUMA nodes nearest the GPU (`NUMA Affinity` in nvidia-smi topo): NVML's memory affinity at node
   * scope, else the kernel's `numa_node` of the PCI device; null where neither can tell.
   */
  numaAffinity(sysfs = '/sys/bus/pci/devices'): number[] | null {
    const n = nv();
    const set = maybe(() => n.nvmlDeviceGetMemoryAffinity(this.handle, 16, n.NVML_AFFINITY_SCOPE_NODE), 'nvmlDeviceGetMemoryAffinity');
    const nodes = set && bitsOf(set);
    if (nodes && nodes.length > 0) return nodes;
    // sysfs names the device with a 4-digit domain in lower case: 0000:18:00.0.
    const dev = this.pciBusId.toLowerCase().replace(/^0000(?=[0-9a-f]{4}:)/, '');
    try {
      const node = Number(fs.readFileSync(path.join(sysfs, dev, 'numa_node'), 'utf8').trim());
      return Number.isInteger(node) && node >= 0 ? [node] : null;
    } catch {
      return null;
    }
  }

  /** Everything GpuDetails lists (what nvidia-smi --query-gpu reports), read now; null where NVML lacks a value. */
  details(): GpuDetails {
    const r = new SoftReader();
    const h = this.handle;
    return {
      ...this.health(),
      ...identityDetails(h, r),
      ...readingDetails(h, r),
      ...memoryErrorDetails(h, r),
      ...systemDetails(h, r),
      errors: r.errors,
    };
  }
}

/** What `sample()` reads: the subset of GpuHealth that `top` and the exporter show. */
export type GpuSample = Pick<
  GpuHealth,
  'index' | 'name' | 'uuid' | 'utilization' | 'memory' | 'fanSpeed' | 'processes' | 'processesError'
> & {
  /** °C. */
  temperature: number | null;
  /** Watts: what the GPU draws now and its enforced limit, as GpuHealth's. */
  power: GpuHealth['power'];
  /** MHz: the SM and memory clocks now, as GpuHealth's. */
  clocks: Pick<GpuHealth['clocks'], 'sm' | 'memory'>;
};

/** How two GPUs connect. */
export interface TopologyLink {
  /** `X` (itself), `NV<n>` (n NVLinks), `PIX`, `PXB`, `PHB`, `NODE`, `SYS` as in `nvidia-smi topo -m`. */
  kind: string;
  /** How many NVLinks join the two GPUs (0: none). */
  nvlinks: number;
  /** The NVLink version of those links, or null without NVLink. */
  nvlinkVersion: number | null;
  /** The closest common PCIe ancestor, abbreviated as above. */
  level: string | null;
  /** Peer-to-peer support NVML reports. */
  p2p: {
    /** Whether one GPU can read the other's memory peer to peer. */
    read: boolean;
    /** Whether one GPU can write the other's memory peer to peer. */
    write: boolean;
    /** Whether peer-to-peer atomics work between them. */
    atomics: boolean;
    /** Whether peer-to-peer traffic between them goes over NVLink. */
    nvlink: boolean;
  };
}

function sameBus(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/^0000(?=[0-9a-f]{4}:)/, '');
  return norm(a) === norm(b);
}

/** Set bits of 64-bit words, lowest first. */
function bitsOf(words: bigint[]): number[] {
  const out: number[] = [];
  words.forEach((w, i) => {
    for (let b = 0; b < 64; b++) if ((w >> BigInt(b)) & 1n) out.push(i * 64 + b);
  });
  return out;
}

/** `[0,1,2,3,8]` -> `0-3,8`. */
export function formatCpuList(cpus: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cpus.length;) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j] + 1) j++;
    parts.push(i === j ? `${cpus[i]}` : `${cpus[i]}-${cpus[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

let reasonNames: [bigint, string][] | undefined;
/** The names of the set bits of a clocks event (throttle) reason mask. */
export function decodeReasons(mask: bigint): string[] {
  reasonNames ??= (() => {
    const seen = new Map<bigint, string>();
    for (const [k, v] of Object.entries(nv())) {
      const m = /^nvmlClocks(Event|Throttle)Reason(\w+)$/.exec(k);
      if (!m || typeof v !== 'number' || m[2] === 'None' || m[2] === 'All') continue;
      const bit = BigInt(v);
      if (bit === 0n || (bit & (bit - 1n)) !== 0n) continue;
      // The newer "Event" name wins over the "Throttle" alias of the same bit.
      if (!seen.has(bit) || m[1] === 'Event') seen.set(bit, m[2]);
    }
    return [...seen].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  })();
  return reasonNames.filter(([bit]) => (mask & bit) !== 0n).map(([, name]) => name);
}

// ---------------------------------------------------------------------------------------------
// details: every reading nvidia-smi --query-gpu reports, from NVML alone

/** ECC error counts of one kind over one period, by where in the GPU they were found. */
export interface EccCounts {
  /** Errors in device memory (NVML_MEMORY_LOCATION_DEVICE_MEMORY). */
  deviceMemory: number | null;
  /** Errors in DRAM (Turing and later; the same location as deviceMemory). */
  dram: number | null;
  /** Errors in the register file. */
  registerFile: number | null;
  /** Errors in the L1 cache. */
  l1Cache: number | null;
  /** Errors in the L2 cache. */
  l2Cache: number | null;
  /** Errors in texture memory. */
  textureMemory: number | null;
  /** Errors in the CBU. */
  cbu: number | null;
  /** Errors in SRAM (Turing and later). */
  sram: number | null;
  /** Errors in all locations (nvmlDeviceGetTotalEccErrors). */
  total: number | null;
}

/** What `details()` reports: GpuHealth and every further reading nvidia-smi's --query-gpu shows; null where NVML lacks it. */
export interface GpuDetails extends GpuHealth {
  /** The display driver's version, e.g. `'580.65.06'`. */
  driverVersion: string | null;
  /** The newest CUDA the driver runs, as CUDA writes it (13000 for 13.0). */
  cudaDriverVersion: number | null;
  /** The board's serial number. */
  serial: string | null;
  /** The /dev/nvidia<minor> number. */
  minorNumber: number | null;
  /** e.g. `'96.00.A5.00.03'`. */
  vbiosVersion: string | null;
  /** The infoROM image and object versions, and whether its checksum is valid. */
  inforom: {
    /** The infoROM image's version. */
    image: string | null;
    /** The version of the infoROM's OEM object. */
    oem: string | null;
    /** The version of the infoROM's ECC object. */
    ecc: string | null;
    /** The version of the infoROM's power management object. */
    power: string | null;
    /** Whether the infoROM's checksum is valid (nvmlDeviceValidateInforom). */
    checksumValid: boolean | null;
  };
  /** What NVML recommends to recover the GPU (`None`, `Reset`, `Reboot`, `Drain P2P`, `Drain and Reset`). */
  recoveryAction: string | null;
  /** `major.minor`, e.g. `'9.0'`. */
  computeCapability: string | null;
  /** The PCI identity (numbers; nvidia-smi prints them in hex). */
  pci: {
    /** The PCI domain. */
    domain: number;
    /** The PCI bus number. */
    bus: number;
    /** The PCI device number on that bus. */
    device: number;
    /** The PCI base class code (3: display controller). */
    baseClass: number;
    /** The PCI subclass code. */
    subClass: number;
    /** The 16-bit device id (high half) and 16-bit vendor id (low half) in one number. */
    deviceId: number;
    /** The 32-bit subsystem id: subsystem device id and subsystem vendor id. */
    subsystemId: number;
  } | null;
  /** PCIe generations beyond GpuHealth.pcie: what the GPU itself supports. */
  pcieGpuMaxGeneration: number | null;
  /** Display: whether a display is initialised (active) on the GPU; `mode` is null where the driver deprecated it. */
  display: {
    /** Whether a physical display is connected to one of the GPU's connectors. */
    mode: boolean | null;
    /** Whether a display is initialised on the GPU (e.g. an X server uses it). */
    active: boolean | null;
  };
  /** `None`, `HMM` or `ATS`: how the GPU reaches system-allocated memory. */
  addressingMode: string | null;
  /** Per-process accounting: on or off, and how many processes it keeps. */
  accounting: {
    /** Whether per-process accounting is on. */
    mode: boolean | null;
    /** How many processes' records the accounting buffer keeps. */
    bufferSize: number | null;
  };
  /** The Windows driver model (TCC/WDDM/MCDM), null on Linux. */
  driverModel: {
    /** The driver model now. */
    current: string | null;
    /** The driver model after the next reboot. */
    pending: string | null;
  };
  /** The GPU operation mode (`All On`, `Compute`, `Low Double Precision`). */
  operationMode: {
    /** The operation mode now. */
    current: string | null;
    /** The operation mode after the next reboot. */
    pending: string | null;
  };
  /** Bit masks of the clocks event (throttle) reasons the GPU supports and those active now. */
  clocksEventReasons: {
    /** The reasons this GPU can report, as a bit mask of nvmlClocksEventReason* bits. */
    supported: number | null;
    /** The reasons that hold the clocks down now, as a bit mask (GpuHealth.throttleReasons names them). */
    active: number | null;
  };
  /** Microseconds each reason has held the clocks down since the driver loaded. */
  clocksEventReasonCounters: {
    /** Held down to stay within the power limit (software power cap). */
    swPowerCap: number | null;
    /** Held down to match the slowest clock of the GPU's sync boost group. */
    syncBoost: number | null;
    /** Held down by software to keep the GPU and memory below their maximum operating temperatures. */
    swThermalSlowdown: number | null;
    /** Held down by hardware (by half or more) because the temperature is too high. */
    hwThermalSlowdown: number | null;
    /** Held down by hardware (by half or more) because an external power brake was asserted. */
    hwPowerBrakeSlowdown: number | null;
  };
  /** Percent busy of the video encoder, decoder, JPEG decoder and optical flow accelerator. */
  engineUtilization: {
    /** Percent of the sample period the video encoder was busy. */
    encoder: number | null;
    /** Percent of the sample period the video decoder was busy. */
    decoder: number | null;
    /** Percent of the sample period the JPEG decoder was busy. */
    jpeg: number | null;
    /** Percent of the sample period the optical flow accelerator was busy. */
    ofa: number | null;
  };
  /** Encoder sessions, their average frames per second and latency (µs). */
  encoderStats: {
    /** How many encoder sessions run now. */
    sessionCount: number;
    /** Their moving average of frames encoded per second. */
    averageFps: number;
    /** Their moving average encode latency, µs. */
    averageLatency: number;
  } | null;
  /** Whether DRAM encryption is on now and after the next reboot. */
  dramEncryption: {
    /** Whether DRAM encryption is on now. */
    current: boolean;
    /** Whether it will be on after the next reboot. */
    pending: boolean;
  } | null;
  /** Whether ECC is on now and after the next reboot. */
  eccMode: {
    /** Whether ECC is on now. */
    current: boolean;
    /** Whether ECC will be on after the next reboot. */
    pending: boolean;
  } | null;
  /** ECC errors by kind, period and location. */
  eccErrors: {
    /** Corrected (single-bit) errors. */
    corrected: {
      /** Since the driver loaded. */
      volatile: EccCounts;
      /** Over the GPU's life. */
      aggregate: EccCounts;
    };
    /** Uncorrected (double-bit) errors. */
    uncorrected: {
      /** Since the driver loaded. */
      volatile: EccCounts;
      /** Over the GPU's life. */
      aggregate: EccCounts;
    };
  };
  /** Unique uncorrected SRAM ECC errors (nvmlDeviceGetSramEccErrorStatus). */
  sramEcc: {
    /** Uncorrectable parity errors since the driver loaded. */
    volatileParity: number;
    /** Uncorrectable SEC-DED errors since the driver loaded. */
    volatileSecDed: number;
    /** Uncorrectable parity errors over the GPU's life. */
    aggregateParity: number;
    /** Uncorrectable SEC-DED errors over the GPU's life. */
    aggregateSecDed: number;
    /** Whether the errors passed the threshold at which field diagnostics should be run. */
    thresholdExceeded: boolean;
    /** Uncorrectable errors over the GPU's life in the L2 cache. */
    l2: number;
    /** Uncorrectable errors over the GPU's life in the SMs. */
    sm: number;
    /** Uncorrectable errors over the GPU's life in the microcontrollers. */
    mcu: number;
    /** Uncorrectable errors over the GPU's life in the PCIe interface. */
    pcie: number;
    /** Uncorrectable errors over the GPU's life elsewhere. */
    other: number;
  } | null;
  /** Pages retired for repeated single-bit and for double-bit errors, and whether a retirement waits for a reboot. */
  retiredPages: {
    /** Pages retired for repeated single-bit ECC errors. */
    singleBitEcc: number | null;
    /** Pages retired for a double-bit ECC error. */
    doubleBitEcc: number | null;
    /** Whether a page waits to be retired at the next reboot. */
    pending: boolean | null;
  };
  /** Rows remapped for correctable and uncorrectable errors, and whether one waits for a reset or failed. */
  remappedRows: {
    /** Rows remapped for correctable errors. */
    correctable: number;
    /** Rows remapped for uncorrectable errors. */
    uncorrectable: number;
    /** Whether a remapping waits for the next GPU reset. */
    pending: boolean;
    /** Whether a remapping failed. */
    failure: boolean;
  } | null;
  /** Banks by how many spare rows they have left. */
  remappedRowsHistogram: {
    /** Banks with all their spare rows left. */
    max: number;
    /** Banks with many spare rows left. */
    high: number;
    /** Banks with some spare rows left. */
    partial: number;
    /** Banks with few spare rows left. */
    low: number;
    /** Banks with no spare rows left. */
    none: number;
  } | null;
  /** °C: how far the GPU is below its slowdown point (T.Limit), and the memory's temperature. */
  temperatureExtra: {
    /** How far the GPU is below its nearest slowdown threshold, °C (nvmlDeviceGetMarginTemperature). */
    tlimit: number | null;
    /** The memory's temperature, °C. */
    memory: number | null;
  };
  /** Watts, beyond GpuHealth.power (whose `limit` is the enforced one). */
  powerExtra: {
    /** Whether power management is on. */
    management: boolean | null;
    /** Power drawn, averaged over 1 s, watts (Ampere and later, not GA100). */
    average: number | null;
    /** Power drawn now, watts. */
    instant: number | null;
    /** The power limit set (nvmlDeviceGetPowerManagementLimit), watts. */
    requestedLimit: number | null;
    /** The power limit by default, watts. */
    defaultLimit: number | null;
    /** The lowest power limit that can be set, watts. */
    minLimit: number | null;
    /** The highest power limit that can be set, watts. */
    maxLimit: number | null;
  };
  /** MHz, beyond GpuHealth.clocks. */
  clocksExtra: {
    /** The graphics clock now, MHz. */
    graphics: number | null;
    /** The video encoder/decoder clock now, MHz. */
    video: number | null;
    /** The highest graphics clock the GPU runs at, MHz. */
    graphicsMax: number | null;
    /** The application clocks set: what the GPU runs compute work at, MHz. */
    applications: {
      /** The graphics application clock, MHz. */
      graphics: number | null;
      /** The memory application clock, MHz. */
      memory: number | null;
    };
    /** The application clocks by default, MHz. */
    defaultApplications: {
      /** The default graphics application clock, MHz. */
      graphics: number | null;
      /** The default memory application clock, MHz. */
      memory: number | null;
    };
  };
  /** Whether the GSP firmware runs now, and by default. */
  gspMode: {
    /** Whether the GSP firmware runs now. */
    current: boolean;
    /** Whether it runs by default. */
    default: boolean;
  } | null;
  /** Whether the chip-to-chip link (Grace Hopper) is on. */
  c2cMode: boolean | null;
  /** Confidential-computing protected memory, bytes. */
  protectedMemory: {
    /** Bytes of protected memory in all. */
    total: number;
    /** Bytes of it allocated. */
    used: number;
    /** Bytes of it not allocated. */
    free: number;
  } | null;
  /** NVLink fabric registration: state, status, clique, cluster and health. */
  fabric: {
    /** How far registration got: `Not Supported`, `Not Started`, `In Progress` or `Completed`. */
    state: string;
    /** `Success`, or NVML's text for the status registration ended with. */
    status: string;
    /** The id of the fabric clique the GPU belongs to. */
    cliqueId: number;
    /** The UUID of the cluster the GPU belongs to. */
    clusterUuid: string;
    /** The fabric's health as nvidia-smi words it; each part is `True`, `False` or `N/A`. */
    health: {
      /** `Healthy`, `Unhealthy`, `Limited Capacity` or `N/A`. */
      summary: string;
      /** Whether the fabric's bandwidth is degraded. */
      bandwidth: string;
      /** Whether route recovery is in progress. */
      routeRecovery: string;
      /** Whether a route is unhealthy. */
      routeUnhealthy: string;
      /** Whether recovery from an access timeout is in progress. */
      accessTimeoutRecovery: string;
      /** Whether the fabric's configuration is incorrect. */
      incorrectConfiguration: string;
    };
  } | null;
  /** Where the GPU sits in its chassis (rack-scale systems). */
  platform: {
    /** The serial number of the chassis the GPU is in. */
    chassisSerialNumber: string;
    /** The slot in the chassis the GPU is in (switch slots counted). */
    slotNumber: number;
    /** The tray index among the chassis's compute slots (switches not counted). */
    trayIndex: number;
    /** The index of the node within its slot. */
    hostId: number;
    /** How its NVLink peers connect: `Direct Connected` or `Switch Connected`. */
    peerType: string;
    /** The GPU's id within its node. */
    moduleId: number;
    /** The InfiniBand GUID the platform reports, `0x` and 16 hex digits. */
    gpuFabricGuid: string;
  } | null;
  /** The hostname set on the GPU. */
  hostname: string | null;
  /** For a value that is null though the GPU should have it: NVML's reason, by the value's path (e.g. `display.mode`). */
  errors: Record<string, string>;
}

/** Reads for details(): the outputs of a call, or null where NVML lacks it (its reason kept when it is not "not supported"). */
class SoftReader {
  readonly errors: Record<string, string> = {};

  /** The outputs of `call`, or null; `key` names the value in GpuDetails.errors. */
  read<R extends readonly [number, ...unknown[]]>(key: string, call: () => R): OkOutputs<R> | null {
    let r: R;
    try {
      r = call();
    } catch (e) {
      if (/does not export/.test((e as Error).message)) return null;
      throw e;
    }
    if (r[0] === 0) return r.slice(1) as OkOutputs<R>;
    if (!ABSENT.has(r[0])) {
      let text = `nvmlReturn_t ${r[0]}`;
      try {
        text = nv().nvmlErrorString(r[0])[1];
      } catch {
        /* the library could not say */
      }
      this.errors[key] = text;
    }
    return null;
  }

  /** The first output of `call`, or null. */
  one<T>(key: string, call: () => readonly [number, T | null, ...unknown[]]): T | null {
    const r = this.read(key, call as () => readonly [number, ...unknown[]]);
    return r === null ? null : (r[0] as T);
  }
}

const num = (v: bigint | number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));
const watts = (mW: number | null): number | null => (mW === null ? null : mW / 1000);
const enabled = (v: number | null): boolean | null => (v === null ? null : v === 1);
/** A C char array's bytes as text, up to the first NUL. */
const cText = (b: Uint8Array): string => Buffer.from(b).toString('utf8').split('\0')[0];

/** Field values (nvmlDeviceGetFieldValues) by field id, each a number or null. */
function fieldValues(h: NvmlApi.nvmlDevice_t, ids: number[]): Map<number, number | null> {
  const n = nv();
  const out = new Map<number, number | null>(ids.map((id) => [id, null]));
  let r: ReturnType<N['nvmlDeviceGetFieldValues']>;
  try {
    r = n.nvmlDeviceGetFieldValues(
      h,
      ids.length,
      ids.map((fieldId) => ({ fieldId })),
    );
  } catch (e) {
    if (/does not export/.test((e as Error).message)) return out;
    throw e;
  }
  if (r[0] !== 0) return out;
  const T = n.nvmlValueType_t;
  for (const f of r[1] ?? []) {
    if (f.nvmlReturn !== 0) continue;
    const v = f.value;
    const decoded: Record<number, () => number> = {
      [T.NVML_VALUE_TYPE_DOUBLE]: () => v.dVal,
      [T.NVML_VALUE_TYPE_UNSIGNED_INT]: () => v.uiVal,
      [T.NVML_VALUE_TYPE_UNSIGNED_LONG]: () => Number(v.ulVal),
      [T.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG]: () => Number(v.ullVal),
      [T.NVML_VALUE_TYPE_SIGNED_LONG_LONG]: () => Number(v.sllVal),
      [T.NVML_VALUE_TYPE_SIGNED_INT]: () => v.siVal,
    };
    const read = decoded[f.valueType];
    if (read) out.set(f.fieldId, read());
  }
  return out;
}

/** Whether the infoROM's checksum is valid (nvmlDeviceValidateInforom has no output: its status says), or null. */
function validateInforom(h: NvmlApi.nvmlDevice_t): boolean | null {
  const n = nv();
  try {
    const [e] = n.nvmlDeviceValidateInforom(h);
    return e === 0 ? true : e === n.nvmlReturn_t.NVML_ERROR_CORRUPTED_INFOROM ? false : null;
  } catch (e) {
    if (/does not export/.test((e as Error).message)) return null;
    throw e;
  }
}

/** Identity, versions, PCI and modes. */
function identityDetails(h: NvmlApi.nvmlDevice_t, r: SoftReader) {
  const n = nv();
  const I = n.nvmlInforomObject_t;
  const inforom = (o: number, key: string) => r.one(key, () => n.nvmlDeviceGetInforomVersion(h, o, 16));
  const cc = r.read('computeCapability', () => n.nvmlDeviceGetCudaComputeCapability(h));
  const pci = r.one('pci', () => n.nvmlDeviceGetPciInfoExt(h));
  const check = validateInforom(h);
  const addressing = r.one('addressingMode', () => n.nvmlDeviceGetAddressingMode(h));
  const model = r.read('driverModel', () => n.nvmlDeviceGetDriverModel(h));
  const gom = r.read('operationMode', () => n.nvmlDeviceGetGpuOperationMode(h));
  const DRIVER_MODELS = ['WDDM', 'TCC', 'MCDM'];
  const GOM = ['All On', 'Compute', 'Low Double Precision'];
  return {
    driverVersion: r.one('driverVersion', () => n.nvmlSystemGetDriverVersion(80)),
    cudaDriverVersion: r.one('cudaDriverVersion', () => n.nvmlSystemGetCudaDriverVersion()),
    serial: r.one('serial', () => n.nvmlDeviceGetSerial(h, 30)),
    minorNumber: r.one('minorNumber', () => n.nvmlDeviceGetMinorNumber(h)),
    vbiosVersion: r.one('vbiosVersion', () => n.nvmlDeviceGetVbiosVersion(h, 32)),
    inforom: {
      image: r.one('inforom.image', () => n.nvmlDeviceGetInforomImageVersion(h, 16)),
      oem: inforom(I.NVML_INFOROM_OEM, 'inforom.oem'),
      ecc: inforom(I.NVML_INFOROM_ECC, 'inforom.ecc'),
      power: inforom(I.NVML_INFOROM_POWER, 'inforom.power'),
      checksumValid: check,
    },
    computeCapability: cc && `${cc[0]}.${cc[1]}`,
    pci: pci && {
      domain: pci.domain,
      bus: pci.bus,
      device: pci.device,
      baseClass: pci.baseClass,
      subClass: pci.subClass,
      deviceId: pci.pciDeviceId,
      subsystemId: pci.pciSubSystemId,
    },
    pcieGpuMaxGeneration: r.one('pcieGpuMaxGeneration', () => n.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)),
    display: {
      mode: enabled(r.one('display.mode', () => n.nvmlDeviceGetDisplayMode(h))),
      active: enabled(r.one('display.active', () => n.nvmlDeviceGetDisplayActive(h))),
    },
    addressingMode: addressing && (['None', 'HMM', 'ATS'][addressing.value] ?? `mode ${addressing.value}`),
    accounting: {
      mode: enabled(r.one('accounting.mode', () => n.nvmlDeviceGetAccountingMode(h))),
      bufferSize: r.one('accounting.bufferSize', () => n.nvmlDeviceGetAccountingBufferSize(h)),
    },
    driverModel: { current: model && (DRIVER_MODELS[model[0]] ?? null), pending: model && (DRIVER_MODELS[model[1]] ?? null) },
    operationMode: { current: gom && (GOM[gom[0]] ?? null), pending: gom && (GOM[gom[1]] ?? null) },
  };
}

/** Clocks, power, temperature, utilization of the engines and the clocks event reasons. */
function readingDetails(h: NvmlApi.nvmlDevice_t, r: SoftReader) {
  const n = nv();
  const C = n.nvmlClockType_t;
  const clock = (t: number, key: string) => r.one(key, () => n.nvmlDeviceGetClockInfo(h, t));
  const fv = fieldValues(h, [
    n.NVML_FI_DEV_POWER_AVERAGE,
    n.NVML_FI_DEV_POWER_INSTANT,
    n.NVML_FI_DEV_MEMORY_TEMP,
    n.NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP,
    n.NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST,
    n.NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN,
    n.NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN,
    n.NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
    n.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION,
  ]);
  const constraints = r.read('powerExtra.limits', () => n.nvmlDeviceGetPowerManagementLimitConstraints(h));
  const margin = r.one('temperatureExtra.tlimit', () => n.nvmlDeviceGetMarginTemperature(h));
  const engine = (key: string, call: () => readonly [number, number | null, ...unknown[]]) => r.one(`engineUtilization.${key}`, call);
  const stats = r.read('encoderStats', () => n.nvmlDeviceGetEncoderStats(h));
  const supported = r.one('clocksEventReasons.supported', () => n.nvmlDeviceGetSupportedClocksEventReasons(h));
  const active = r.one('clocksEventReasons.active', () => n.nvmlDeviceGetCurrentClocksEventReasons(h));
  const recovery = fv.get(n.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) ?? null;
  return {
    recoveryAction:
      recovery === null ? null : (['None', 'Reset', 'Reboot', 'Drain P2P', 'Drain and Reset'][recovery] ?? `action ${recovery}`),
    clocksEventReasons: { supported: num(supported), active: num(active) },
    clocksEventReasonCounters: {
      swPowerCap: fv.get(n.NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP) ?? null,
      syncBoost: fv.get(n.NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST) ?? null,
      swThermalSlowdown: fv.get(n.NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN) ?? null,
      hwThermalSlowdown: fv.get(n.NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN) ?? null,
      hwPowerBrakeSlowdown: fv.get(n.NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN) ?? null,
    },
    engineUtilization: {
      encoder: engine('encoder', () => n.nvmlDeviceGetEncoderUtilization(h)),
      decoder: engine('decoder', () => n.nvmlDeviceGetDecoderUtilization(h)),
      jpeg: engine('jpeg', () => n.nvmlDeviceGetJpgUtilization(h)),
      ofa: engine('ofa', () => n.nvmlDeviceGetOfaUtilization(h)),
    },
    encoderStats: stats && { sessionCount: stats[0], averageFps: stats[1], averageLatency: stats[2] },
    temperatureExtra: { tlimit: margin && margin.marginTemperature, memory: fv.get(n.NVML_FI_DEV_MEMORY_TEMP) ?? null },
    powerExtra: {
      management: enabled(r.one('powerExtra.management', () => n.nvmlDeviceGetPowerManagementMode(h))),
      average: watts(fv.get(n.NVML_FI_DEV_POWER_AVERAGE) ?? null),
      instant: watts(fv.get(n.NVML_FI_DEV_POWER_INSTANT) ?? null),
      requestedLimit: watts(r.one('powerExtra.requestedLimit', () => n.nvmlDeviceGetPowerManagementLimit(h))),
      defaultLimit: watts(r.one('powerExtra.defaultLimit', () => n.nvmlDeviceGetPowerManagementDefaultLimit(h))),
      minLimit: watts(constraints && constraints[0]),
      maxLimit: watts(constraints && constraints[1]),
    },
    clocksExtra: {
      graphics: clock(C.NVML_CLOCK_GRAPHICS, 'clocksExtra.graphics'),
      video: clock(C.NVML_CLOCK_VIDEO, 'clocksExtra.video'),
      graphicsMax: r.one('clocksExtra.graphicsMax', () => n.nvmlDeviceGetMaxClockInfo(h, C.NVML_CLOCK_GRAPHICS)),
      applications: {
        graphics: r.one('clocksExtra.applications', () => n.nvmlDeviceGetApplicationsClock(h, C.NVML_CLOCK_GRAPHICS)),
        memory: r.one('clocksExtra.applications', () => n.nvmlDeviceGetApplicationsClock(h, C.NVML_CLOCK_MEM)),
      },
      defaultApplications: {
        graphics: r.one('clocksExtra.defaultApplications', () => n.nvmlDeviceGetDefaultApplicationsClock(h, C.NVML_CLOCK_GRAPHICS)),
        memory: r.one('clocksExtra.defaultApplications', () => n.nvmlDeviceGetDefaultApplicationsClock(h, C.NVML_CLOCK_MEM)),
      },
    },
  };
}

/** ECC modes and counts, retired pages and remapped rows. */
function memoryErrorDetails(h: NvmlApi.nvmlDevice_t, r: SoftReader) {
  const n = nv();
  const M = n.nvmlMemoryErrorType_t;
  const K = n.nvmlEccCounterType_t;
  const L = n.nvmlMemoryLocation_t;
  const counts = (type: number, counter: number, key: string): EccCounts => {
    const at = (loc: number) => num(r.one(key, () => n.nvmlDeviceGetMemoryErrorCounter(h, type, counter, loc)));
    return {
      deviceMemory: at(L.NVML_MEMORY_LOCATION_DEVICE_MEMORY),
      dram: at(L.NVML_MEMORY_LOCATION_DRAM),
      registerFile: at(L.NVML_MEMORY_LOCATION_REGISTER_FILE),
      l1Cache: at(L.NVML_MEMORY_LOCATION_L1_CACHE),
      l2Cache: at(L.NVML_MEMORY_LOCATION_L2_CACHE),
      textureMemory: at(L.NVML_MEMORY_LOCATION_TEXTURE_MEMORY),
      cbu: at(L.NVML_MEMORY_LOCATION_CBU),
      sram: at(L.NVML_MEMORY_LOCATION_SRAM),
      total: num(r.one(key, () => n.nvmlDeviceGetTotalEccErrors(h, type, counter))),
    };
  };
  const ecc = r.read('eccMode', () => n.nvmlDeviceGetEccMode(h));
  const dram = r.read('dramEncryption', () => n.nvmlDeviceGetDramEncryptionMode(h));
  const sram = r.one('sramEcc', () => n.nvmlDeviceGetSramEccErrorStatus(h));
  const retired = (cause: number) => {
    const res = r.read('retiredPages', () => {
      const out = n.nvmlDeviceGetRetiredPages(h, cause, 0);
      // With no room given, NVML answers the count with SUCCESS or INSUFFICIENT_SIZE.
      return (out[0] === n.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE ? [0, out[1]] : out) as readonly [number, number | null];
    });
    return res === null ? null : res[0];
  };
  const rows = r.read('remappedRows', () => n.nvmlDeviceGetRemappedRows(h));
  const hist = r.one('remappedRowsHistogram', () => n.nvmlDeviceGetRowRemapperHistogram(h));
  const pending = r.one('retiredPages.pending', () => n.nvmlDeviceGetRetiredPagesPendingStatus(h));
  return {
    eccMode: ecc && { current: ecc[0] === 1, pending: ecc[1] === 1 },
    dramEncryption: dram && { current: dram[0].encryptionState === 1, pending: dram[1].encryptionState === 1 },
    eccErrors: {
      corrected: {
        volatile: counts(M.NVML_MEMORY_ERROR_TYPE_CORRECTED, K.NVML_VOLATILE_ECC, 'eccErrors'),
        aggregate: counts(M.NVML_MEMORY_ERROR_TYPE_CORRECTED, K.NVML_AGGREGATE_ECC, 'eccErrors'),
      },
      uncorrected: {
        volatile: counts(M.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, K.NVML_VOLATILE_ECC, 'eccErrors'),
        aggregate: counts(M.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, K.NVML_AGGREGATE_ECC, 'eccErrors'),
      },
    },
    sramEcc: sram && {
      volatileParity: Number(sram.volatileUncParity),
      volatileSecDed: Number(sram.volatileUncSecDed),
      aggregateParity: Number(sram.aggregateUncParity),
      aggregateSecDed: Number(sram.aggregateUncSecDed),
      thresholdExceeded: sram.bThresholdExceeded !== 0,
      l2: Number(sram.aggregateUncBucketL2),
      sm: Number(sram.aggregateUncBucketSm),
      mcu: Number(sram.aggregateUncBucketMcu),
      pcie: Number(sram.aggregateUncBucketPcie),
      other: Number(sram.aggregateUncBucketOther),
    },
    retiredPages: {
      singleBitEcc: retired(n.nvmlPageRetirementCause_t.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
      doubleBitEcc: retired(n.nvmlPageRetirementCause_t.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR),
      pending: enabled(pending),
    },
    remappedRows: rows && { correctable: rows[0], uncorrectable: rows[1], pending: rows[2] !== 0, failure: rows[3] !== 0 },
    remappedRowsHistogram: hist && { max: hist.max, high: hist.high, partial: hist.partial, low: hist.low, none: hist.none },
  };
}

/** nvidia-smi's words for a fabric health field: 0 not supported, 1 true, 2 false. */
function fabricHealth(mask: number, shift: number): string {
  return ['N/A', 'True', 'False'][(mask >> shift) & 3] ?? 'N/A';
}

/** GSP and C2C modes, protected memory, fabric, platform and hostname. */
function systemDetails(h: NvmlApi.nvmlDevice_t, r: SoftReader) {
  const n = nv();
  const gsp = r.read('gspMode', () => n.nvmlDeviceGetGspFirmwareMode(h));
  const c2c = r.one('c2cMode', () => n.nvmlDeviceGetC2cModeInfoV(h));
  const cc = r.one('protectedMemory', () => n.nvmlDeviceGetConfComputeProtectedMemoryUsage(h));
  const fabric = r.one('fabric', () => n.nvmlDeviceGetGpuFabricInfoV(h));
  const platform = r.one('platform', () => n.nvmlDeviceGetPlatformInfo(h));
  const hostname = r.one('hostname', () => n.nvmlDeviceGetHostname_v1(h));
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  const uuid = (b: Uint8Array) => hex(b).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  let status = '';
  if (fabric) status = fabric.status === 0 ? 'Success' : n.nvmlErrorString(fabric.status)[1];
  return {
    gspMode: gsp && { current: gsp[0] !== 0, default: gsp[1] !== 0 },
    c2cMode: c2c && c2c.isC2cEnabled !== 0,
    protectedMemory: cc && { total: Number(cc.total), used: Number(cc.used), free: Number(cc.free) },
    fabric: fabric && {
      state: ['Not Supported', 'Not Started', 'In Progress', 'Completed'][fabric.state] ?? `state ${fabric.state}`,
      status,
      cliqueId: fabric.cliqueId,
      clusterUuid: uuid(fabric.clusterUuid),
      health: {
        summary: ['N/A', 'Healthy', 'Unhealthy', 'Limited Capacity'][fabric.healthSummary] ?? 'N/A',
        bandwidth: fabricHealth(fabric.healthMask, n.NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW),
        routeRecovery: fabricHealth(fabric.healthMask, n.NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY),
        routeUnhealthy: fabricHealth(fabric.healthMask, n.NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY),
        accessTimeoutRecovery: fabricHealth(fabric.healthMask, n.NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY),
        incorrectConfiguration: fabricHealth(fabric.healthMask, n.NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION),
      },
    },
    platform: platform && {
      chassisSerialNumber: cText(platform.chassisSerialNumber),
      slotNumber: platform.slotNumber,
      trayIndex: platform.trayIndex,
      hostId: platform.hostId,
      peerType: ['Direct Connected', 'Switch Connected'][platform.peerType] ?? `peer type ${platform.peerType}`,
      moduleId: platform.moduleId,
      gpuFabricGuid: `0x${hex(platform.ibGuid).slice(0, 16)}`,
    },
    hostname: hostname && hostname.value,
  };
}

/** The driver's version (`'550.54.15'`) and the newest CUDA it runs (12040), as NVML reports them; null where it cannot tell. */
export function nvmlSystemVersions(): { driverVersion: string | null; cudaDriverVersion: number | null } {
  ensureNvml();
  const r = new SoftReader();
  const n = nv();
  return {
    driverVersion: r.one('driverVersion', () => n.nvmlSystemGetDriverVersion(80)),
    cudaDriverVersion: r.one('cudaDriverVersion', () => n.nvmlSystemGetCudaDriverVersion()),
  };
}
