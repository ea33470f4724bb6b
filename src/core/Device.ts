// A CUDA device: its properties, its primary context, and the factory of its streams, events and buffers.
import * as cudart from '../runtime';
import { deviceSynchronize } from '../runtime/async';
import type { WaitOptions } from '../ffi/waits';
import * as cuda from '../driver';
import { check, driverError } from './errors';
import { Stream, type StreamOptions } from './Stream';
import { Event, type EventOptions } from './Event';
import { DeviceBuffer } from './DeviceBuffer';
import { MemoryPool, type MemoryPoolOptions } from './MemoryPool';
import { getAllocator } from './CachingAllocator';
import { NvmlDevice, type GpuHealth } from './nvml';
import { openOptionalArg } from './lifetime';

const devices = new Map<number, Device>();

export class Device {
  private props?: cudart.cudaDeviceProp;
  private pool?: MemoryPool;
  private nvmlDevice?: NvmlDevice;

  private constructor(readonly ordinal: number) {}

  /** How many CUDA devices this process sees. */
  static count(): number {
    return check(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount');
  }

  /** Every device. */
  static all(): Device[] {
    return Array.from({ length: Device.count() }, (_, i) => Device.get(i));
  }

  /** Device n (one object per device). */
  static get(n = 0): Device {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`Device.get: parameter 'n' must be a device number, got ${n}`);
    let d = devices.get(n);
    if (!d) {
      const count = Device.count();
      if (n >= count) throw new RangeError(`Device.get: no device ${n}; this machine has ${count}`);
      devices.set(n, (d = new Device(n)));
    }
    return d;
  }

  /** The device the calling thread uses now. */
  static current(): Device {
    return Device.get(check(cudart.cudaGetDevice(), 'cudaGetDevice'));
  }

  /** The properties, read once (cudaGetDeviceProperties). */
  get properties(): cudart.cudaDeviceProp {
    return (this.props ??= check(cudart.cudaGetDeviceProperties(this.ordinal), 'cudaGetDeviceProperties'));
  }

  get name(): string {
    return this.properties.name;
  }

  /** `[major, minor]`. */
  get computeCapability(): [number, number] {
    return [this.properties.major, this.properties.minor];
  }

  /** `GPU-xxxxxxxx-…`, as nvidia-smi prints it. */
  get uuid(): string {
    const h = Array.from(this.properties.uuid.bytes, (x) => x.toString(16).padStart(2, '0')).join('');
    return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  get pciBusId(): string {
    return check(cudart.cudaDeviceGetPCIBusId(32, this.ordinal), 'cudaDeviceGetPCIBusId');
  }

  /**
   * The same GPU as NVML sees it, matched by UUID (then PCI bus id), never by index: CUDA's order
   * and CUDA_VISIBLE_DEVICES differ from NVML's. Initialises NVML on first use.
   */
  get nvml(): NvmlDevice {
    return (this.nvmlDevice ??= NvmlDevice.forCuda(this.uuid, () => this.pciBusId));
  }

  /** A snapshot of utilization, temperature, power, clocks, memory, links, errors and processes (see GpuHealth). */
  health(options: { pcieThroughput?: boolean } = {}): GpuHealth {
    return this.nvml.health(options);
  }

  /** An attribute by its name (`'cudaDevAttrMultiProcessorCount'` or `'MultiProcessorCount'`) or value. */
  attribute(attr: keyof typeof cudart.cudaDeviceAttr | string | number): number {
    const value = typeof attr === 'number' ? attr : (cudart.cudaDeviceAttr as unknown as Record<string, number>)[attr.startsWith('cudaDevAttr') ? attr : `cudaDevAttr${attr}`];
    if (value === undefined) throw new RangeError(`Device.attribute: no attribute named '${attr}'`);
    return check(cudart.cudaDeviceGetAttribute(value, this.ordinal), 'cudaDeviceGetAttribute');
  }

  /** Free and total memory in bytes (makes this device current). */
  memoryInfo(): { free: number; total: number } {
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
    const [err, ctx] = cuda.cuCtxGetCurrent();
    if (err !== cuda.CUresult.CUDA_SUCCESS || ctx === null) throw driverError(err, 'cuCtxGetCurrent');
    return ctx;
  }

  /** Makes this the calling thread's current device. */
  makeCurrent(): this {
    // cudaSetDevice only when the device changes: every factory calls this, and on an H100 a
    // cudaSetDevice before each cudaMalloc+cudaFree pair made the pair 69 µs instead of 3 µs.
    const [err, current] = cudart.cudaGetDevice();
    if (err !== 0 || current !== this.ordinal) check(cudart.cudaSetDevice(this.ordinal), 'cudaSetDevice');
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

  /** Whether this device can read and write `peer`'s memory directly. */
  canAccessPeer(peer: Device): boolean {
    return check(cudart.cudaDeviceCanAccessPeer(this.ordinal, peer.ordinal), 'cudaDeviceCanAccessPeer') === 1;
  }

  /** Lets this device access `peer`'s memory (already enabled is fine). */
  enablePeerAccess(peer: Device): void {
    this.makeCurrent();
    const [err] = cudart.cudaDeviceEnablePeerAccess(peer.ordinal, 0);
    if (err === cudart.cudaError_t.cudaErrorPeerAccessAlreadyEnabled) cudart.cudaGetLastError();
    else check([err], 'cudaDeviceEnablePeerAccess');
  }

  /** A new stream on this device. */
  createStream(options: StreamOptions = {}): Stream {
    this.makeCurrent();
    return Stream.create(this, options);
  }

  /** A new event on this device. */
  createEvent(options: EventOptions = {}): Event {
    this.makeCurrent();
    return Event.create(this, options);
  }

  /**
   * `size` bytes of device memory, from the allocator setAllocator() installed or else cudaMalloc.
   * `stream` is the stream the memory is used on: a caching allocator reuses it at once only there.
   */
  allocate(size: number, options: { stream?: Stream } = {}): DeviceBuffer {
    openOptionalArg(options.stream, 'Stream', 'Device.allocate', 'options.stream');
    this.makeCurrent();
    const allocator = getAllocator();
    return allocator ? allocator.allocate(size, { device: this, stream: options.stream }) : DeviceBuffer.allocate(this, size);
  }

  /**
   * `size` bytes of managed memory (cudaMallocManaged), reachable from the host and every device;
   * `attachHost` starts it attached to the host rather than to all streams.
   */
  allocateManaged(size: number, options: { attachHost?: boolean } = {}): DeviceBuffer {
    this.makeCurrent();
    return DeviceBuffer.allocateManaged(this, size, options.attachHost ?? false);
  }

  /** The device's default stream-ordered memory pool (what cudaMallocAsync uses). */
  get memoryPool(): MemoryPool {
    return (this.pool ??= MemoryPool.defaultFor(this));
  }

  /** A new stream-ordered memory pool of this device's memory. */
  createMemoryPool(options: MemoryPoolOptions = {}): MemoryPool {
    return MemoryPool.create(this, options);
  }
}
