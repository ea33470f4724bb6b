// `cuda-bindings info`: versions, libraries, and what deviceQuery prints for each device.
import * as cudart from '../runtime';
import * as cuda from '../driver';
import * as nvrtc from '../nvrtc';
import type { Options } from './args';
import { ok, requireGpu, table, version, type Output } from './common';

export interface DeviceInfo {
  index: number;
  name: string;
  uuid: string;
  pciBusId: string;
  computeCapability: string;
  memoryTotalBytes: number;
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

export function deviceInfo(d: number, count: number): DeviceInfo {
  const [p] = ok(cudart.cudaGetDeviceProperties(d), 'cudaGetDeviceProperties');
  const attr = (a: number) => ok(cudart.cudaDeviceGetAttribute(a, d), 'cudaDeviceGetAttribute')[0]!;
  const A = cudart.cudaDeviceAttr;
  ok(cudart.cudaSetDevice(d) as [number], 'cudaSetDevice');
  const [free, total] = ok(cudart.cudaMemGetInfo(), 'cudaMemGetInfo');
  const peers: number[] = [];
  for (let o = 0; o < count; o++) if (o !== d && ok(cudart.cudaDeviceCanAccessPeer(d, o), 'cudaDeviceCanAccessPeer')[0]) peers.push(o);
  return {
    index: d,
    name: p!.name,
    uuid: uuidText(p!.uuid.bytes),
    pciBusId: ok(cudart.cudaDeviceGetPCIBusId(32, d), 'cudaDeviceGetPCIBusId')[0]!,
    computeCapability: `${p!.major}.${p!.minor}`,
    memoryTotalBytes: total!,
    memoryFreeBytes: free!,
    multiprocessors: p!.multiProcessorCount,
    clockMHz: attr(A.cudaDevAttrClockRate) / 1000,
    memoryClockMHz: attr(A.cudaDevAttrMemoryClockRate) / 1000,
    memoryBusWidthBits: attr(A.cudaDevAttrGlobalMemoryBusWidth),
    l2CacheBytes: p!.l2CacheSize,
    sharedMemPerBlockBytes: p!.sharedMemPerBlock,
    sharedMemPerBlockOptinBytes: p!.sharedMemPerBlockOptin,
    sharedMemPerMultiprocessorBytes: p!.sharedMemPerMultiprocessor,
    maxThreadsPerBlock: p!.maxThreadsPerBlock,
    maxThreadsPerMultiprocessor: p!.maxThreadsPerMultiProcessor,
    warpSize: p!.warpSize,
    eccEnabled: p!.ECCEnabled !== 0,
    peerAccess: peers,
  };
}

export function info(o: Options, out: Output): void {
  const [, runtime] = cudart.cudaRuntimeGetVersion();
  const libs = libraries();
  const partial = { runtimeVersion: version(runtime!), libraries: libs };
  if (!o.json) {
    out.log(`CUDA runtime ${version(runtime!)}`);
    for (const [k, v] of Object.entries(libs)) out.log(`${`${k}:`.padEnd(10)} ${v ?? 'not found'}`);
  }
  const count = requireGpu(partial, o.device);
  const [, driver] = cudart.cudaDriverGetVersion();
  const devices = (o.device === undefined ? Array.from({ length: count }, (_, i) => i) : [o.device]).map((d) => deviceInfo(d, count));
  if (o.json) {
    out.log(JSON.stringify({ driverVersion: version(driver!), ...partial, deviceCount: count, devices }, null, 2));
    return;
  }
  out.log(`CUDA driver ${version(driver!)} (the newest CUDA it runs); ${count} device${count === 1 ? '' : 's'}`);
  const MiB = 1024 * 1024;
  for (const d of devices) {
    out.log('');
    out.log(`Device ${d.index}: ${d.name}`);
    out.log(table(['property', 'value'], [
      ['UUID', d.uuid],
      ['PCI bus id', d.pciBusId],
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
    ]));
  }
}
