// `cuda-bindings info`: versions, libraries, and what deviceQuery prints for each device.
import * as cudart from '../runtime';
import * as cuda from '../driver';
import * as nvrtc from '../nvrtc';
import type { Options } from './args';
import { ok, oneLine, printable, requireGpu, table, version, type Output } from './common';
import { NvmlDevice, nvmlSystemVersions, type GpuDetails, type GpuHealth } from '../core/nvml/NvmlDevice';
import { probeDriver, type DriverDevice } from '../core/nvml/driver-probe';

export interface DeviceInfo {
  index: number;
  name: string;
  uuid: string;
  pciBusId: string;
  computeCapability: string;
  memoryTotalBytes: number;
  /** Free bytes: NVML's reading where NVML is available, else cudaMemGetInfo's (which makes a CUDA context). */
  memoryFreeBytes: number;
  multiprocessors: number;
  clockMHz: number;
  memoryClockMHz: number;
  memoryBusWidthBits: number;
  l2CacheBytes: number;
  sharedMemPerBlockBytes: number;
  sharedMemPerBlockOptinBytes: number;
  sharedMemPerMultiprocessorBytes: number;
  maxThreadsPerBlock: number;
  maxThreadsPerMultiprocessor: number;
  warpSize: number;
  eccEnabled: boolean;
  /** Device indices this one can access directly. */
  peerAccess: number[];
  /** What NVML reads now (matched by UUID): every field nvidia-smi --query-gpu reports; null when NVML is not available (see `nvml.error`). */
  live: GpuDetails | null;
}

/** NVML's readings of each device, or why there are none. */
function liveReadings(devices: { uuid: string; pciBusId: string; live: GpuDetails | null }[]): { error: string | null } {
  try {
    for (const d of devices) d.live = NvmlDevice.forCuda(d.uuid, () => d.pciBusId).details();
    return { error: null };
  } catch (e) {
    for (const d of devices) d.live = null;
    // One line: the first of the message and, for a library that did not load, what to do.
    return { error: oneLine((e as Error).message) };
  }
}

/** The live section of one device as table rows. */
function liveRows(h: GpuHealth): [string, string][] {
  const na = <T>(v: T | null | undefined, f: (x: T) => string = String): string => (v === null || v === undefined ? 'n/a' : f(v));
  const MiB = 2 ** 20;
  return [
    ['NVML index', String(h.index)],
    ['utilization', na(h.utilization, (u) => `${u.gpu}% GPU, ${u.memory}% memory`)],
    [
      'temperature',
      `${na(h.temperature.current, (t) => `${t} °C`)} (slowdown ${na(h.temperature.slowdown, (t) => `${t} °C`)}, shutdown ${na(h.temperature.shutdown, (t) => `${t} °C`)})`,
    ],
    ['power', `${na(h.power.draw, (w: number) => `${w.toFixed(1)} W`)} of ${na(h.power.limit, (w: number) => `${w.toFixed(0)} W`)}`],
    ['clocks', `SM ${na(h.clocks.sm)} / ${na(h.clocks.smMax)} MHz, memory ${na(h.clocks.memory)} / ${na(h.clocks.memoryMax)} MHz`],
    ['fan', na(h.fanSpeed, (f) => `${f}%`)],
    [
      'memory used',
      na(
        h.memory,
        (m) =>
          `${(m.used / MiB).toFixed(0)} of ${(m.total / MiB).toFixed(0)} MiB${m.reserved === null ? '' : ` (${(m.reserved / MiB).toFixed(0)} MiB reserved)`}`,
      ),
    ],
    [
      'PCIe',
      `gen ${na(h.pcie.generation)} x${na(h.pcie.width)} (max gen ${na(h.pcie.maxGeneration)} x${na(h.pcie.maxWidth)}), tx ${na(h.pcie.txKBps)} KB/s, rx ${na(h.pcie.rxKBps)} KB/s`,
    ],
    [
      'NVLink',
      na(
        h.nvlink,
        (l: NonNullable<GpuHealth['nvlink']>) =>
          `${l.filter((x) => x.active).length} of ${l.length} links up${l.some((x) => x.active) ? ` (v${l.find((x) => x.active)!.version})` : ''}`,
      ),
    ],
    [
      'ECC errors',
      na(
        h.ecc,
        (e) =>
          `${e.correctedVolatile} corrected, ${e.uncorrectedVolatile} uncorrected (volatile); ${e.correctedAggregate}, ${e.uncorrectedAggregate} (aggregate)`,
      ),
    ],
    ['throttle reasons', na(h.throttleReasons, (r: string[]) => (r.length ? r.join(', ') : 'none'))],
    ['compute mode', na(h.computeMode)],
    [
      'MIG mode',
      na(
        h.migMode,
        (m) =>
          `${m.current ? 'enabled' : 'disabled'}${m.pending !== m.current ? ` (${m.pending ? 'enabled' : 'disabled'} after reset)` : ''}`,
      ),
    ],
    ['persistence mode', na(h.persistenceMode, (p) => (p ? 'enabled' : 'disabled'))],
    ['performance state', na(h.performanceState)],
    ['processes', processesText(h)],
  ];
}

/** Each process as `pid name (memory)` (names with their control characters escaped), or why NVML could not list them. */
function processesText(h: GpuHealth): string {
  if (h.processes === null) return h.processesError ? `unknown: ${printable(h.processesError)}` : 'n/a';
  if (h.processes.length === 0) return 'none';
  const memory = (b: number | null) => (b === null ? 'n/a' : `${(b / 2 ** 20).toFixed(0)} MiB`);
  return h.processes.map((p) => `${p.pid} ${p.name === null ? '?' : printable(p.name)} (${memory(p.usedMemory)})`).join(', ');
}

/** `GPU-431c7c37-cdb8-…`, as nvidia-smi prints a UUID. */
export function uuidText(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function libraries(): Record<string, string | null> {
  const tryInfo = (f: () => { path: string }) => {
    try {
      return f().path;
    } catch {
      return null;
    }
  };
  return { libcudart: cudart.libraryInfo().path, libcuda: tryInfo(cuda.libraryInfo), libnvrtc: tryInfo(nvrtc.libraryInfo) };
}

/**
 * What deviceQuery prints for device `d` (of `count`), without the live NVML section and the free
 * memory. Nothing here makes a CUDA context: a context holds hundreds of MiB and raises the clocks
 * and power that the live section reports.
 */
export function deviceInfo(d: number, count: number): Omit<DeviceInfo, 'memoryFreeBytes'> {
  const [p] = ok(cudart.cudaGetDeviceProperties(d), 'cudaGetDeviceProperties');
  const attr = (a: number) => ok(cudart.cudaDeviceGetAttribute(a, d), 'cudaDeviceGetAttribute')[0];
  const A = cudart.cudaDeviceAttr;
  const peers: number[] = [];
  for (let o = 0; o < count; o++) if (o !== d && ok(cudart.cudaDeviceCanAccessPeer(d, o), 'cudaDeviceCanAccessPeer')[0]) peers.push(o);
  return {
    index: d,
    name: p.name,
    uuid: uuidText(p.uuid.bytes),
    pciBusId: ok(cudart.cudaDeviceGetPCIBusId(32, d), 'cudaDeviceGetPCIBusId')[0],
    computeCapability: `${p.major}.${p.minor}`,
    memoryTotalBytes: p.totalGlobalMem,
    multiprocessors: p.multiProcessorCount,
    clockMHz: attr(A.cudaDevAttrClockRate) / 1000,
    memoryClockMHz: attr(A.cudaDevAttrMemoryClockRate) / 1000,
    memoryBusWidthBits: attr(A.cudaDevAttrGlobalMemoryBusWidth),
    l2CacheBytes: p.l2CacheSize,
    sharedMemPerBlockBytes: p.sharedMemPerBlock,
    sharedMemPerBlockOptinBytes: p.sharedMemPerBlockOptin,
    sharedMemPerMultiprocessorBytes: p.sharedMemPerMultiprocessor,
    maxThreadsPerBlock: p.maxThreadsPerBlock,
    maxThreadsPerMultiprocessor: p.maxThreadsPerMultiProcessor,
    warpSize: p.warpSize,
    eccEnabled: p.ECCEnabled !== 0,
    peerAccess: peers,
    live: null,
  };
}

/** Free bytes on device `d` from the runtime, for when NVML is not there (this makes the device's CUDA context). */
function freeBytes(d: number): number {
  ok(cudart.cudaSetDevice(d) as [number], 'cudaSetDevice');
  return ok(cudart.cudaMemGetInfo(), 'cudaMemGetInfo')[0];
}

/** Runs `cuda-bindings info`: versions, libraries and every device, as text or --json (the same keys on failure, null where unknown). */
export function info(o: Options, out: Output): void {
  const [runtimeErr, runtime] = cudart.cudaRuntimeGetVersion();
  const runtimeVersion = runtimeErr === 0 ? version(runtime!) : null;
  const libs = libraries();
  const partial = {
    driverVersion: null,
    runtimeVersion,
    libraries: libs,
    deviceCount: null,
    devices: null,
    nvml: null,
    driverTooOld: null,
  };
  if (!o.json) {
    out.log(`CUDA runtime ${runtimeVersion ?? 'unknown'}`);
    for (const [k, v] of Object.entries(libs)) out.log(`${`${k}:`.padEnd(10)} ${v === null ? 'not found' : printable(v)}`);
  }
  if (cudart.cudaGetDeviceCount()[0] === cudart.cudaError_t.cudaErrorInsufficientDriver) {
    const older = olderDriver(o, runtime ?? null, partial);
    if (older) return printOlderDriver(o, out, older);
  }
  const count = requireGpu(partial, o.device);
  const [driver] = ok(cudart.cudaDriverGetVersion(), 'cudaDriverGetVersion');
  const props = (o.device === undefined ? Array.from({ length: count }, (_, i) => i) : [o.device]).map((d) => deviceInfo(d, count));
  const nvml = liveReadings(props);
  const devices: DeviceInfo[] = props.map((d) => ({ ...d, memoryFreeBytes: d.live?.memory?.free ?? freeBytes(d.index) }));
  if (o.json) {
    const report = {
      ...partial,
      driverVersion: version(driver!),
      deviceCount: count,
      devices,
      nvml: { available: nvml.error === null, error: nvml.error },
      driverTooOld: null,
      error: null,
    };
    out.log(JSON.stringify(report, null, 2));
    return;
  }
  out.log(`CUDA driver ${version(driver!)} (the newest CUDA it runs); ${count} device${count === 1 ? '' : 's'}`);
  const MiB = 1024 * 1024;
  for (const d of devices) {
    out.log('');
    out.log(`Device ${d.index}: ${printable(d.name)}`);
    out.log(
      table(
        ['property', 'value'],
        [
          ['UUID', d.uuid],
          ['PCI bus id', printable(d.pciBusId)],
          ['compute capability', d.computeCapability],
          ['memory total', `${(d.memoryTotalBytes / MiB).toFixed(0)} MiB`],
          ['memory free', `${(d.memoryFreeBytes / MiB).toFixed(0)} MiB`],
          ['multiprocessors', String(d.multiprocessors)],
          ['GPU clock', `${d.clockMHz} MHz`],
          ['memory clock', `${d.memoryClockMHz} MHz`],
          ['memory bus', `${d.memoryBusWidthBits} bits`],
          ['L2 cache', `${d.l2CacheBytes / 1024} KiB`],
          ['shared memory per block', `${d.sharedMemPerBlockBytes / 1024} KiB (${d.sharedMemPerBlockOptinBytes / 1024} KiB opt-in)`],
          ['shared memory per SM', `${d.sharedMemPerMultiprocessorBytes / 1024} KiB`],
          ['max threads per block', String(d.maxThreadsPerBlock)],
          ['max threads per SM', String(d.maxThreadsPerMultiprocessor)],
          ['warp size', String(d.warpSize)],
          ['ECC', d.eccEnabled ? 'enabled' : 'disabled'],
          ['peer access to', d.peerAccess.length ? d.peerAccess.map((p) => `device ${p}`).join(', ') : count > 1 ? 'none' : '(one device)'],
        ],
      ),
    );
    out.log('');
    if (d.live) out.log(table(['live (NVML)', 'value'], liveRows(d.live)));
    else out.log(`live (NVML): not available: ${printable(nvml.error ?? '')}`);
  }
}

/** The oldest driver branch that runs each CUDA major version (minor version compatibility). */
const MIN_DRIVER: Record<number, string> = { 11: 'R450', 12: 'R525', 13: 'R580' };

/** What needs a newer driver, and which, where the driver is older than the runtime (cudaErrorInsufficientDriver). */
export interface DriverTooOld {
  /** The newest CUDA the driver runs (`'12.4'`), from cuDriverGetVersion or else NVML. */
  driverCudaVersion: string | null;
  /** The display driver's version (`'550.54.15'`), from NVML. */
  displayDriverVersion: string | null;
  /** The CUDA version the runtime needs the driver to run (the runtime's own, `'13.0'`). */
  runtimeNeeds: string | null;
  /** The oldest driver branch that runs it (`'R580'`). */
  minimumDriver: string | null;
  /** What cannot run until then. */
  needsNewerDriver: string[];
  /** Why the driver API (libcuda) could not list the GPUs, or null. */
  driverApiError: string | null;
}

/** A device as the driver API and NVML see it where the runtime cannot run: the runtime-only fields are absent. */
export type OlderDriverDevice = Pick<DeviceInfo, 'index' | 'name' | 'uuid' | 'pciBusId' | 'live'> &
  Partial<Pick<DeviceInfo, 'computeCapability' | 'memoryTotalBytes' | 'multiprocessors' | 'clockMHz' | 'memoryClockMHz'>>;

/** The devices from the driver API (any age) and NVML where the runtime needs a newer driver; null where neither can tell. */
function olderDriver(o: Options, runtime: number | null, partial: Record<string, unknown>) {
  let probe: { version: number; devices: DriverDevice[] } | null = null;
  let driverApiError: string | null = null;
  try {
    probe = probeDriver();
  } catch (e) {
    driverApiError = oneLine((e as Error).message);
  }
  let versions: ReturnType<typeof nvmlSystemVersions> | null = null;
  let nvmlDevices: NvmlDevice[] = [];
  try {
    versions = nvmlSystemVersions();
    nvmlDevices = NvmlDevice.all();
  } catch {
    /* reported in nvml.error below */
  }
  if (!probe && !versions) return null;
  const devices: OlderDriverDevice[] = probe
    ? probe.devices.map((d) => ({
        index: d.ordinal,
        name: d.name,
        uuid: d.uuid,
        pciBusId: d.pciBusId,
        computeCapability: d.computeCapability,
        memoryTotalBytes: d.totalMemory,
        multiprocessors: d.multiprocessors,
        clockMHz: d.clockMHz,
        memoryClockMHz: d.memoryClockMHz,
        live: null,
      }))
    : nvmlDevices.map((d) => ({ index: d.index, name: d.name, uuid: d.uuid, pciBusId: d.pciBusId, live: null }));
  const chosen = o.device === undefined ? devices : devices.filter((d) => d.index === o.device);
  const nvml = liveReadings(chosen);
  const cuda = probe?.version ?? versions?.cudaDriverVersion ?? null;
  const tooOld: DriverTooOld = {
    driverCudaVersion: cuda === null ? null : version(cuda),
    displayDriverVersion: versions?.driverVersion ?? null,
    runtimeNeeds: runtime === null ? null : version(runtime),
    minimumDriver: runtime === null ? null : (MIN_DRIVER[Math.floor(runtime / 1000)] ?? null),
    needsNewerDriver: ['the CUDA runtime (cudart) and everything on it: memory, streams, kernels, core objects', 'bandwidth', 'latency'],
    driverApiError,
  };
  return { ...partial, driverVersion: tooOld.driverCudaVersion, deviceCount: devices.length, devices: chosen, nvml, driverTooOld: tooOld };
}

/** Prints what olderDriver() found, as text or --json. */
function printOlderDriver(o: Options, out: Output, r: NonNullable<ReturnType<typeof olderDriver>>): void {
  const t = r.driverTooOld;
  if (o.json) {
    const nvml = { available: r.nvml.error === null, error: r.nvml.error };
    out.log(JSON.stringify({ ...r, nvml, error: null }, null, 2));
    return;
  }
  out.log(
    `CUDA driver ${t.driverCudaVersion ?? 'unknown'} (display driver ${t.displayDriverVersion ?? 'unknown'}): older than the CUDA ${t.runtimeNeeds ?? '?'} runtime needs; ` +
      `install driver ${t.minimumDriver ?? 'a newer one'} or newer for ${t.needsNewerDriver.join('; ')}`,
  );
  out.log(`${r.deviceCount} device${r.deviceCount === 1 ? '' : 's'} (from the driver API and NVML)`);
  const MiB = 2 ** 20;
  for (const d of r.devices) {
    out.log('');
    out.log(`Device ${d.index}: ${printable(d.name)}`);
    const rows: [string, string][] = [
      ['UUID', d.uuid],
      ['PCI bus id', printable(d.pciBusId)],
    ];
    if (d.computeCapability !== undefined) rows.push(['compute capability', d.computeCapability]);
    if (d.memoryTotalBytes !== undefined) rows.push(['memory total', `${(d.memoryTotalBytes / MiB).toFixed(0)} MiB`]);
    if (d.multiprocessors !== undefined) rows.push(['multiprocessors', String(d.multiprocessors)]);
    out.log(table(['property', 'value'], rows));
    out.log('');
    if (d.live) out.log(table(['live (NVML)', 'value'], liveRows(d.live)));
    else out.log(`live (NVML): not available: ${printable(r.nvml.error ?? '')}`);
  }
}
