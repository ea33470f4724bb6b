// NVML in the core layer: one nvmlInit on first use and its nvmlShutdown at exit (or at
// releaseNvml), GPUs as NVML numbers them, and a health snapshot in which whatever NVML says this
// GPU does not support is null. The facade is loaded on first use, so importing core costs nothing.
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
  utilization: { gpu: number; memory: number } | null;
  /** °C: the GPU's, and where clocks slow down and where it shuts down. */
  temperature: { current: number | null; slowdown: number | null; shutdown: number | null };
  /** Watts. */
  power: { draw: number | null; limit: number | null };
  /** MHz. */
  clocks: { sm: number | null; memory: number | null; smMax: number | null; memoryMax: number | null };
  /** Percent of the fan's maximum speed. */
  fanSpeed: number | null;
  /** Bytes. `reserved` is what the driver keeps (nvmlMemory_v2). */
  memory: { total: number; used: number; free: number; reserved: number | null } | null;
  /** Link generation and width, current and max, and throughput in KB/s. */
  pcie: {
    generation: number | null;
    width: number | null;
    maxGeneration: number | null;
    maxWidth: number | null;
    txKBps: number | null;
    rxKBps: number | null;
  };
  /** Each NVLink the GPU has: whether it is up and its version; null without NVLink. */
  nvlink: { link: number; active: boolean; version: number | null }[] | null;
  /** ECC error counts since the driver loaded (volatile) and over the GPU's life (aggregate). */
  ecc: { correctedVolatile: number; uncorrectedVolatile: number; correctedAggregate: number; uncorrectedAggregate: number } | null;
  /** Why clocks are held down now, by name (`SwPowerCap`, `HwSlowdown`, …); [] when they are not. */
  throttleReasons: string[] | null;
  /** As nvidia-smi prints it: `Default`, `Exclusive_Process`, `Prohibited`. */
  computeMode: string | null;
  /** Whether MIG (multi-instance GPU) is on now, and whether it will be after the next GPU reset. */
  migMode: { current: boolean; pending: boolean } | null;
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
  utilization(): { gpu: number; memory: number } | null {
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

  /** The NUMA node nearest the GPU, or null. */
  numaNode(): number | null {
    return maybe(() => nv().nvmlDeviceGetNumaNodeId(this.handle), 'nvmlDeviceGetNumaNodeId');
  }
}

/** What `sample()` reads: the subset of GpuHealth that `top` and the exporter show. */
export type GpuSample = Pick<
  GpuHealth,
  'index' | 'name' | 'uuid' | 'utilization' | 'memory' | 'fanSpeed' | 'processes' | 'processesError'
> & {
  /** °C. */
  temperature: number | null;
  /** Watts. */
  power: { draw: number | null; limit: number | null };
  /** MHz. */
  clocks: { sm: number | null; memory: number | null };
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
  p2p: { read: boolean; write: boolean; atomics: boolean; nvlink: boolean };
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
