// A CUDA device: its properties and its primary context. The rooms above add the methods that make
// what lives on it (createStream, createEvent: device/extensions.ts; allocate, memoryPool, …:
// memory/extensions.ts), so that this module imports none of them.
import * as cudart from '../../runtime';
import { deviceSynchronize } from '../../runtime/async';
import type { WaitOptions } from '../../ffi/waits';
import type * as cuda from '../../driver';
import { check, driverError } from '../base/errors';
import type { NvmlDevice, GpuHealth } from '../nvml/NvmlDevice';
import { checkOptions } from '../base/options';
import { describe } from '../../ffi/checks';
import type { DeviceAttributes } from './DeviceAttributes';
import { SLOT0_ADDRESS, checkStatus, directByAddress } from '../base/direct';
import { I32 } from '../../ffi/scratch';

// The driver facade and the NVML room load on first use: `Device.get(0)` needs neither, and they
// were most of `require('cuda-bindings/core')`'s start-up (issue #37).
let driverApi: typeof cuda | undefined;
const driver = (): typeof cuda => (driverApi ??= require('../../driver') as typeof cuda);
let nvmlRoom: typeof import('../nvml/NvmlDevice') | undefined;
const nvml = (): typeof import('../nvml/NvmlDevice') => (nvmlRoom ??= require('../nvml/NvmlDevice') as typeof import('../nvml/NvmlDevice'));

/** A device attribute's name: the enum's (`'cudaDevAttrMultiProcessorCount'`) or without its prefix (`'MultiProcessorCount'`). */
export type DeviceAttributeName = keyof typeof cudart.cudaDeviceAttr | Unprefixed<keyof typeof cudart.cudaDeviceAttr>;
type Unprefixed<K> = K extends `cudaDevAttr${infer R}` ? R : never;

/** The Device of each device number, made on first use. */
const devices: Device[] = [];
const getDevice = directByAddress('cudaGetDevice', [0]);

/**
 * A CUDA device (a GPU as this process numbers it, after CUDA_VISIBLE_DEVICES): its properties and
 * attributes, and the factory of the streams, events, buffers and memory pools that live on it.
 *
 * There is one Device object per device number, got from {@link Device.get}, {@link Device.all}
 * or {@link Device.current}; it is never closed (it stands for the device's primary context, which
 * lives as long as the process). What it creates must be closed by you (or is freed by the garbage
 * collector) and keeps the Device alive. Calls that reach CUDA throw {@link CudaError}; with no
 * driver that is `cudaErrorInsufficientDriver` (35), with no GPU `cudaErrorNoDevice` (100).
 *
 * @example
 * ```ts
 * import { Device } from 'cuda-bindings/core';
 * const dev = Device.get(0);
 * console.log(dev.name, dev.computeCapability, dev.memoryInfo().free / 2 ** 30, 'GiB free');
 * using stream = dev.createStream();
 * using buf = dev.allocate(1024 * 4); // bytes
 * buf.copyFrom(new Float32Array(1024), { stream });
 * await stream.synchronize();
 * ```
 */
export class Device {
  private props?: cudart.cudaDeviceProp;
  private nvmlDevice?: NvmlDevice;
  private attributeValues?: DeviceAttributes;

  private constructor(
    /** The device number, 0-based, as the runtime counts devices (cudaSetDevice's argument). */
    readonly ordinal: number,
  ) {}

  /** How many CUDA devices this process sees (cudaGetDeviceCount); throws CudaError when CUDA cannot start (no driver, no device). */
  static count(): number {
    return check(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount');
  }

  /** Every device this process sees, in device-number order; throws as {@link Device.count} does. */
  static all(): Device[] {
    return Array.from({ length: Device.count() }, (_, i) => Device.get(i));
  }

  /**
   * Device `n` (default 0). The same object every time for the same `n`. Throws RangeError when `n`
   * is not a non-negative integer or the machine has fewer devices, CudaError when CUDA cannot start.
   */
  static get(n = 0): Device {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`Device.get: parameter 'n' must be a device number, got ${n}`);
    let d = devices[n];
    if (d === undefined) {
      const count = Device.count();
      if (n >= count) throw new RangeError(`Device.get: no device ${n}; this machine has ${count}`);
      devices[n] = d = new Device(n);
    }
    return d;
  }

  /**
   * The device at PCI address `pciBusId` (`'0000:1B:00.0'`, as {@link Device.pciBusId} and
   * nvidia-smi print it; cudaDeviceGetByPCIBusId). Throws TypeError for a value that is not such a
   * string, CudaError when no device this process sees is there.
   */
  static fromPciBusId(pciBusId: string): Device {
    if (typeof pciBusId !== 'string' || !/^([0-9a-f]{1,8}:)?[0-9a-f]{1,2}:[0-9a-f]{1,2}(\.[0-9a-f])?$/i.test(pciBusId))
      throw new TypeError(
        `Device.fromPciBusId: parameter 'pciBusId' must be a PCI address such as '0000:1B:00.0', got ${describe(pciBusId)}`,
      );
    return Device.get(check(cudart.cudaDeviceGetByPCIBusId(pciBusId), `cudaDeviceGetByPCIBusId(${pciBusId})`));
  }

  /** Orders devices by number, for `devices.sort(Device.compare)` (cuda.core's `<` on devices): negative, 0 or positive. */
  static compare(a: Device, b: Device): number {
    if (!(a instanceof Device) || !(b instanceof Device))
      throw new TypeError(`Device.compare: parameters 'a' and 'b' must be Devices, got ${describe(a)} and ${describe(b)}`);
    return a.ordinal - b.ordinal;
  }

  /** The device the calling (JS) thread uses now (cudaGetDevice): 0 until something makes another current. */
  static current(): Device {
    checkStatus(getDevice.get()(SLOT0_ADDRESS), 'cudaGetDevice');
    const n = I32[0];
    return devices[n] ?? Device.get(n);
  }

  /** The properties (cudaGetDeviceProperties), read on first use and cached: a struct with `name`, `totalGlobalMem` (bytes), `multiProcessorCount`, … */
  get properties(): cudart.cudaDeviceProp {
    return (this.props ??= check(cudart.cudaGetDeviceProperties(this.ordinal), 'cudaGetDeviceProperties'));
  }

  /** The product name, e.g. `'NVIDIA H100 80GB HBM3'`. */
  get name(): string {
    return this.properties.name;
  }

  /** The compute capability as `[major, minor]`, e.g. `[9, 0]` for an H100 (sm_90). */
  get computeCapability(): [number, number] {
    return [this.properties.major, this.properties.minor];
  }

  /** The compute capability as cuda.core's `arch` writes it: major and minor digits, e.g. `'90'` for an H100. */
  get arch(): string {
    const [major, minor] = this.computeCapability;
    return `${major}${minor}`;
  }

  /**
   * Every attribute the driver reports (cuDeviceGetAttribute) by name, typed as cuda.core's
   * DeviceProperties types it: `dev.attributes.multiGpuBoard` (boolean), `.maxThreadsPerBlock`
   * (number), … — see {@link DeviceAttributes}. Read on first use and kept.
   */
  get attributes(): DeviceAttributes {
    // Loaded on first use: it reads through the driver facade, which Device.get(0) does not need.
    return (this.attributeValues ??= (require('./DeviceAttributes') as typeof import('./DeviceAttributes')).deviceAttributes(this.ordinal));
  }

  /** The device's UUID as `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as nvidia-smi prints it; stable across device renumbering. */
  get uuid(): string {
    const h = Array.from(this.properties.uuid.bytes, (x) => x.toString(16).padStart(2, '0')).join('');
    return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /** The PCI address as `domain:bus:device.function` (e.g. `'0000:1B:00.0'`, cudaDeviceGetPCIBusId); read each time. */
  get pciBusId(): string {
    return check(cudart.cudaDeviceGetPCIBusId(32, this.ordinal), 'cudaDeviceGetPCIBusId');
  }

  /**
   * The same GPU as NVML sees it, matched by UUID (then PCI bus id), never by index: CUDA's order
   * and CUDA_VISIBLE_DEVICES differ from NVML's. Initialises NVML on first use.
   */
  get nvml(): NvmlDevice {
    return (this.nvmlDevice ??= nvml().NvmlDevice.forCuda(this.uuid, () => this.pciBusId));
  }

  /**
   * A snapshot of utilization, temperature, power, clocks, memory, links, errors and processes (see
   * GpuHealth) through NVML; `pcieThroughput: false` skips the PCIe throughput sample (on by default).
   * Throws NvmlError when NVML cannot be loaded or the device is not found there.
   */
  health(options: { pcieThroughput?: boolean } = {}): GpuHealth {
    checkOptions('Device.health', options, { pcieThroughput: true });
    return this.nvml.health(options);
  }

  /**
   * An attribute (cudaDeviceGetAttribute) by its name (`'cudaDevAttrMultiProcessorCount'` or
   * `'MultiProcessorCount'`) or its cudaDeviceAttr value. Throws RangeError for an unknown name,
   * CudaError when the device rejects the value.
   */
  attribute(attr: DeviceAttributeName | cudart.cudaDeviceAttr | number): number {
    const value =
      typeof attr === 'number'
        ? attr
        : (cudart.cudaDeviceAttr as unknown as Record<string, number>)[attr.startsWith('cudaDevAttr') ? attr : `cudaDevAttr${attr}`];
    if (value === undefined) throw new RangeError(`Device.attribute: no attribute named '${attr}'`);
    return check(cudart.cudaDeviceGetAttribute(value, this.ordinal), 'cudaDeviceGetAttribute');
  }

  /** Free and total device memory in bytes (cudaMemGetInfo); makes this device current. */
  memoryInfo(): {
    /** Bytes of device memory free now, as the driver reports it. */
    free: number;
    /** Bytes of device memory in all. */
    total: number;
  } {
    this.makeCurrent();
    const [free, total] = check(cudart.cudaMemGetInfo(), 'cudaMemGetInfo');
    return { free, total };
  }

  /**
   * The device's primary context (the one the runtime and this layer use), for driver API calls;
   * it makes this device current and creates the context if it did not exist yet.
   */
  get primaryContext(): cuda.CUcontext {
    this.makeCurrent();
    check(cudart.cudaFree(null), 'cudaFree(NULL) (context creation)');
    const [err, ctx] = driver().cuCtxGetCurrent();
    if (err !== 0 || ctx === null) throw driverError(err, 'cuCtxGetCurrent');
    return ctx;
  }

  /** Makes this the calling thread's current device (cudaSetDevice, only when it changes); returns this device. */
  makeCurrent(): this {
    // cudaSetDevice only when the device changes: every factory calls this, and on an H100 a
    // cudaSetDevice before each cudaMalloc+cudaFree pair made the pair 69 µs instead of 3 µs.
    if (getDevice.get()(SLOT0_ADDRESS) !== 0 || I32[0] !== this.ordinal) check(cudart.cudaSetDevice(this.ordinal), 'cudaSetDevice');
    return this;
  }

  /**
   * Waits, without blocking the event loop or holding a pool thread, until all work queued on this
   * device so far is done. `options.signal`/`timeout` reject with an AbortError/TimeoutError; the GPU
   * work is not cancelled.
   */
  async synchronize(options?: WaitOptions): Promise<void> {
    this.makeCurrent();
    check(await deviceSynchronize('Device.synchronize', options), 'cudaDeviceSynchronize');
  }

  /** Whether this device can read and write `peer`'s memory directly (cudaDeviceCanAccessPeer); see {@link Device.enablePeerAccess}. */
  canAccessPeer(peer: Device): boolean {
    return check(cudart.cudaDeviceCanAccessPeer(this.ordinal, peer.ordinal), 'cudaDeviceCanAccessPeer') === 1;
  }

  /** Lets this device access `peer`'s memory (cudaDeviceEnablePeerAccess; already enabled is fine); throws CudaError when the pair cannot. */
  enablePeerAccess(peer: Device): void {
    this.makeCurrent();
    const [err] = cudart.cudaDeviceEnablePeerAccess(peer.ordinal, 0);
    if (err === cudart.cudaError_t.cudaErrorPeerAccessAlreadyEnabled) cudart.cudaGetLastError();
    else check([err], 'cudaDeviceEnablePeerAccess');
  }
}
