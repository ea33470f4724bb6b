// cuda.core's ManagedMemoryResource: stream-ordered managed (unified) memory from a cudaMemPool whose
// allocation type is managed (CUDA 13). Its buffers are managed memory: reachable from the host and
// every device, and prefetch()/advise() work on them.
import { describe } from '../../ffi/checks';
import * as cudart from '../../runtime';
import { CudaError, check, runtimeError } from '../base/errors';
import { Resource } from '../base/lifetime';
import { addressNumber } from '../base/direct';
import { type DeviceBuffer, checkSize, type MemoryLocation } from './DeviceBuffer';
import { Device } from '../device/Device';
import { Stream } from '../device/Stream';
import { allocateFromPool } from './MemoryPool';
import { checkOptions } from '../base/options';

/** How {@link ManagedMemoryPool.create} makes a pool. */
export interface ManagedMemoryPoolOptions {
  /** Where the memory prefers to live (default: the device). */
  preferredLocation?: MemoryLocation;
  /** Bytes the pool keeps reserved after a synchronize instead of giving them back (default 0). */
  releaseThreshold?: number;
}

/**
 * A stream-ordered pool of managed memory (reachable from the host and every device), allocated and
 * freed in a stream's order like a {@link MemoryPool}. Needs CUDA 13 and a device with concurrent
 * managed access.
 *
 * Lifetime: close() destroys the pool (cudaMemPoolDestroy); its buffers keep it alive. Creating one
 * where the device or driver cannot throws {@link CudaError} (cudaErrorNotSupported).
 *
 * @example
 * ```ts
 * using pool = ManagedMemoryPool.create(dev, { preferredLocation: dev });
 * using buf = pool.allocate(4096, stream);
 * ```
 */
export class ManagedMemoryPool extends Resource {
  /** @internal The handle as a number (exact: an address is below 2^53), for core's directByAddress calls. */
  declare readonly handleNumber: number;

  private constructor(
    /** The runtime handle (cudaMemPool_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaMemPool_t,
    /** The device the pool belongs to. */
    readonly device: Device,
  ) {
    super(() => void cudart.cudaMemPoolDestroy(handle), [device]);
    this.handleNumber = addressNumber(handle, 'ManagedMemoryPool');
  }

  /**
   * A managed memory pool for `device` (cudaMemPoolCreate, allocation type managed). Where the
   * device or driver has no managed pools (no concurrent managed access, no memory pools, or a
   * driver before CUDA 13), a CudaError of cudaErrorNotSupported that says which.
   */
  static create(device: Device, options: ManagedMemoryPoolOptions = {}): ManagedMemoryPool {
    if (!(device instanceof Device))
      throw new TypeError(`ManagedMemoryPool.create: parameter 'device' must be a Device, got ${describe(device)}`);
    checkOptions('ManagedMemoryPool.create', options, { preferredLocation: true, releaseThreshold: true });
    const where = options.preferredLocation ?? device;
    if (where !== 'host' && !(where instanceof Device))
      throw new TypeError(`ManagedMemoryPool.create: option 'preferredLocation' must be a Device or 'host', got ${describe(where)}`);
    if (options.releaseThreshold !== undefined) checkSize(options.releaseThreshold, 'ManagedMemoryPool.create (options.releaseThreshold)');
    const unsupported = (why: string) =>
      new CudaError(
        cudart.cudaError_t.cudaErrorNotSupported,
        'cudaErrorNotSupported',
        'ManagedMemoryPool.create',
        `managed memory pools are not supported here: ${why}`,
      );
    if (device.attribute('MemoryPoolsSupported') !== 1) throw unsupported(`device ${device.ordinal} has no stream-ordered memory pools`);
    if (device.attribute('ConcurrentManagedAccess') !== 1)
      throw unsupported(`device ${device.ordinal} has no concurrent managed access (cudaDevAttrConcurrentManagedAccess is 0)`);
    const props = new cudart.cudaMemPoolProps({
      allocType: cudart.cudaMemAllocationType.cudaMemAllocationTypeManaged,
      handleTypes: cudart.cudaMemAllocationHandleType.cudaMemHandleTypeNone,
      location:
        where === 'host'
          ? { type: cudart.cudaMemLocationType.cudaMemLocationTypeHost, id: 0 }
          : { type: cudart.cudaMemLocationType.cudaMemLocationTypeDevice, id: where.ordinal },
    });
    device.makeCurrent();
    const [err, h] = cudart.cudaMemPoolCreate(props);
    if (err === cudart.cudaError_t.cudaErrorNotSupported || err === cudart.cudaError_t.cudaErrorInvalidValue) {
      cudart.cudaGetLastError();
      const [, version] = cudart.cudaDriverGetVersion();
      throw unsupported(
        `cudaMemPoolCreate refused a managed pool with ${cudart.cudaError_t[err]} (driver API version ${version ?? 'unknown'}; managed pools need CUDA 13)`,
      );
    }
    if (err !== 0 || h === null) throw runtimeError(err, 'ManagedMemoryPool.create (cudaMemPoolCreate)');
    const pool = new ManagedMemoryPool(h, device);
    if (options.releaseThreshold !== undefined)
      check(
        cudart.cudaMemPoolSetAttribute(h, cudart.cudaMemPoolAttr.cudaMemPoolAttrReleaseThreshold, BigInt(options.releaseThreshold)),
        'ManagedMemoryPool.create (cudaMemPoolSetAttribute)',
      );
    return pool;
  }

  /** `size` bytes of managed memory, ready in `stream`'s order; close() frees it in the same order. */
  allocate(size: number, stream: Stream): DeviceBuffer {
    this.live('allocate');
    checkSize(size, 'ManagedMemoryPool.allocate');
    if (!(stream instanceof Stream))
      throw new TypeError(`ManagedMemoryPool.allocate: parameter 'stream' must be a Stream, got ${describe(stream)}`);
    if (stream.isClosed) throw new Error("ManagedMemoryPool.allocate: parameter 'stream' was closed");
    return allocateFromPool(this, size, stream, 'managed', 'ManagedMemoryPool', 'ManagedMemoryPool.allocate (cudaMallocFromPoolAsync)');
  }

  /** Gives reserved memory back until the pool holds at most `keepBytes`. */
  trim(keepBytes = 0): void {
    this.live('trim');
    checkSize(keepBytes, 'ManagedMemoryPool.trim');
    check(cudart.cudaMemPoolTrimTo(this.handle, keepBytes), 'ManagedMemoryPool.trim (cudaMemPoolTrimTo)');
  }
}
