// Memory that a stream capture records as graph memory nodes (cuda.core's GraphMemoryResource):
// cudaMallocAsync on a capturing stream adds an allocation node to the graph being captured, and
// cudaFreeAsync a free node (or, after the capture, frees it once the graph has run).
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { openOptionalArg } from '../base/lifetime';
import { describe } from '../../ffi/checks';
import type { Device } from '../device/Device';
import type { Stream } from '../device/Stream';
import { DeviceBuffer, checkSize, type MemoryResource } from './DeviceBuffer';

/** What graph memory holds on a device now and at most, in bytes (cudaDeviceGetGraphMemAttribute). */
export interface GraphMemoryStats {
  /** Memory reserved for graph allocations. */
  reservedBytes: number;
  /** The most reserved since the peaks were last reset. */
  reservedHighBytes: number;
  /** Memory in graph allocations now. */
  usedBytes: number;
  /** The most in use since the peaks were last reset. */
  usedHighBytes: number;
}

const A = cudart.cudaGraphMemAttributeType;
const resources = new Map<number, GraphMemoryResource>();

/**
 * A {@link MemoryResource} of graph memory, for stream capture (cuda.core's GraphMemoryResource):
 * `allocate(size, stream)` on a capturing stream records an allocation node (cudaMallocAsync), and
 * the buffer's close() a free node (cudaFreeAsync) while the capture goes on, or frees it in the
 * stream's order afterwards. Outside a capture allocate throws Error: use device memory there.
 * One per device ({@link GraphMemoryResource.of}); it holds nothing to close.
 *
 * @example
 * ```ts
 * const gmr = GraphMemoryResource.of(dev);
 * const graph = await stream.capture(() => {
 *   const tmp = dev.allocate(1 << 20, { stream, memoryResource: gmr });
 *   kernel.launch({ grid, block, stream }, tmp, n);
 *   tmp.close(); // a free node
 * });
 * ```
 */
export class GraphMemoryResource implements MemoryResource {
  private constructor(
    /** The device whose graph memory this is. */
    readonly device: Device,
  ) {}

  /** The device's graph memory resource (one per device). */
  static of(device: Device): GraphMemoryResource {
    if (device === null || typeof device !== 'object' || !Number.isInteger(device.ordinal))
      throw new TypeError(`GraphMemoryResource.of: parameter 'device' must be a Device, got ${describe(device)}`);
    let r = resources.get(device.ordinal);
    if (!r) resources.set(device.ordinal, (r = new GraphMemoryResource(device)));
    return r;
  }

  /** The device's ordinal. */
  get deviceId(): number {
    return this.device.ordinal;
  }

  /** True: kernels read and write graph memory. */
  get isDeviceAccessible(): boolean {
    return true;
  }

  /** False: the host cannot. */
  get isHostAccessible(): boolean {
    return false;
  }

  /** `size` bytes as an allocation node of the graph `stream` is capturing; throws Error when it is not capturing. */
  allocate(size: number, stream?: Stream): DeviceBuffer {
    const fn = 'GraphMemoryResource.allocate';
    checkSize(size, fn);
    openOptionalArg(stream, 'Stream', fn, 'stream');
    if (stream === undefined) throw new TypeError(`${fn}: parameter 'stream' must be the Stream being captured, got undefined`);
    const status = check(cudart.cudaStreamIsCapturing(stream.handle), `${fn} (cudaStreamIsCapturing)`);
    if (status !== cudart.cudaStreamCaptureStatus.cudaStreamCaptureStatusActive)
      throw new Error(
        `${fn}: the stream is not capturing (${cudart.cudaStreamCaptureStatus[status] ?? status}); graph memory is allocated only during a capture`,
      );
    this.device.makeCurrent();
    const ptr = check(cudart.cudaMallocAsync(size, stream.handle), `${fn} (cudaMallocAsync)`);
    return DeviceBuffer.fromMemoryResource(ptr, size, this, { stream });
  }

  /** Frees graph memory in `stream`'s order (a free node while it captures); the legacy default stream's once `stream` is closed. */
  deallocate(ptr: bigint, size: number, stream?: Stream): void {
    void size;
    check(cudart.cudaFreeAsync(ptr, stream && !stream.isClosed ? stream.handle : null), 'GraphMemoryResource.deallocate (cudaFreeAsync)');
  }

  /** Gives graph memory that no graph uses now back to the device (cudaDeviceGraphMemTrim). */
  trim(): void {
    check(cudart.cudaDeviceGraphMemTrim(this.device.ordinal), 'GraphMemoryResource.trim (cudaDeviceGraphMemTrim)');
  }

  /** Reserved and used graph memory, now and at their peak. */
  get stats(): GraphMemoryStats {
    const get = (a: cudart.cudaGraphMemAttributeType) =>
      Number(
        check(cudart.cudaDeviceGetGraphMemAttribute(this.device.ordinal, a), 'GraphMemoryResource.stats (cudaDeviceGetGraphMemAttribute)'),
      );
    return {
      reservedBytes: get(A.cudaGraphMemAttrReservedMemCurrent),
      reservedHighBytes: get(A.cudaGraphMemAttrReservedMemHigh),
      usedBytes: get(A.cudaGraphMemAttrUsedMemCurrent),
      usedHighBytes: get(A.cudaGraphMemAttrUsedMemHigh),
    };
  }

  /** Starts the peaks of `stats` again from the current figures (the only value they may be set to is 0). */
  resetPeaks(): void {
    for (const a of [A.cudaGraphMemAttrReservedMemHigh, A.cudaGraphMemAttrUsedMemHigh])
      check(
        cudart.cudaDeviceSetGraphMemAttribute(this.device.ordinal, a, 0n),
        'GraphMemoryResource.resetPeaks (cudaDeviceSetGraphMemAttribute)',
      );
  }
}
