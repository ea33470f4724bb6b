// What the memory room adds to Device (allocate, allocateManaged, memoryPool, createMemoryPool) and
// to VirtualMemoryResource (the VirtualBuffers it makes): Device.ts and VirtualMemoryResource.ts
// import none of these classes for it (see base/extend.ts).
import { extend } from '../base/extend';
import { assertOpen, openOptionalArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { checkFileDescriptor } from '../../ffi/checks';
import { Device } from '../device/Device';
import { Stream } from '../device/Stream';
import { DeviceBuffer, checkMemoryResource, type MemoryResource } from './DeviceBuffer';
import { MemoryPool, MEMORY_POOL_OPTIONS, type MemoryPoolOptions } from './MemoryPool';
import { allocateOn } from './CachingAllocator';
import { VirtualMemoryResource, type VirtualAllocateOptions } from './VirtualMemoryResource';
import { VirtualBuffer } from './VirtualBuffer';
import { StridedView, type StridedViewOptions } from './StridedView';
import type { CudaArrayInterface } from './array-interface';
import { exportDlpack } from './dlpack';
// DeviceBuffer's managed-memory reads, discard and discardPrefetch.
import './managed';
// DeviceBuffer's upload and download (stream-ordered, through the staging pool).
import './transfer';

declare module '../device/Device' {
  interface Device {
    /**
     * `size` bytes of device memory: from `options.memoryResource` when given, else from the
     * allocator setAllocator() installed (for this device, else for all), else cudaMalloc. `stream`
     * is the stream the memory is used on: a caching allocator reuses it at once only there. The
     * buffer keeps this device alive; close it to free the memory. Throws CudaError
     * (`cudaErrorMemoryAllocation`) when the device is out of memory, TypeError for a closed stream.
     */
    allocate(size: number, options?: { stream?: Stream; memoryResource?: MemoryResource }): DeviceBuffer;
    /**
     * `size` bytes of managed memory (cudaMallocManaged), reachable from the host and every device;
     * `attachHost` starts it attached to the host rather than to all streams. `size` is in bytes; close
     * the buffer to free it.
     */
    allocateManaged(size: number, options?: { attachHost?: boolean }): DeviceBuffer;
    /** The device's default stream-ordered memory pool (cudaMallocAsync's, unless cudaDeviceSetMemPool made another current); shared, never destroyed by close(). */
    readonly memoryPool: MemoryPool;
    /** A new stream-ordered memory pool of this device's memory (cudaMemPoolCreate); closing it destroys the pool. */
    createMemoryPool(options?: MemoryPoolOptions): MemoryPool;
  }
}

declare module './DeviceBuffer' {
  interface DeviceBuffer {
    /** The buffer as an N-d typed view (StridedView.of(this, options)): default bytes, one dimension over the whole buffer. */
    view(options?: StridedViewOptions): StridedView;
    /**
     * The buffer as a `__cuda_array_interface__` (version 3) plain object: a view's (see
     * StridedView.toArrayInterface), laid out by `options` (default: the bytes, typestr '|u1').
     */
    toArrayInterface(options?: StridedViewOptions): CudaArrayInterface;
  }
}

declare module './StridedView' {
  interface StridedView {
    /**
     * The view as a DLPack 1.0 tensor for native code in this process: the address (a bigint) of a
     * DLManagedTensorVersioned (data at element [0, …, 0], device kDLCUDA, strides in elements, the
     * read-only flag of a read-only view). The consumer owns it and must call its deleter once; until
     * then the view and its memory stay alive (closing them frees nothing before). See fromDlpack
     * for the other direction.
     */
    toDlpack(): bigint;
  }
}

declare module './VirtualMemoryResource' {
  interface VirtualMemoryResource {
    /** `size` bytes (rounded up to the granularity) in a range of `options.reserve` bytes reserved for growth. */
    allocate(size: number, options?: VirtualAllocateOptions): VirtualBuffer;
    /**
     * Maps memory another process exported with `buffer.exportHandles()` (its POSIX file descriptors,
     * received here, with their sizes, in the same order) as one VirtualBuffer of this resource's
     * device. close() unmaps it; the descriptors stay the caller's to close.
     */
    importHandles(handles: readonly { fd: number; size: number }[]): VirtualBuffer;
  }
}

/** Each device's default pool, made on first use. */
const defaultPools = new WeakMap<Device, MemoryPool>();

extend(Device, {
  allocate(size: number, options: { stream?: Stream; memoryResource?: MemoryResource } = {}): DeviceBuffer {
    checkOptions('Device.allocate', options, { stream: true, memoryResource: true });
    openOptionalArg(options.stream, 'Stream', 'Device.allocate', 'options.stream');
    if (options.memoryResource !== undefined) checkMemoryResource(options.memoryResource, 'Device.allocate', 'options.memoryResource');
    this.makeCurrent();
    return allocateOn(this, size, options.stream ?? Stream.inScope('Device.allocate'), 'Device.allocate', options.memoryResource);
  },

  allocateManaged(size: number, options: { attachHost?: boolean } = {}): DeviceBuffer {
    checkOptions('Device.allocateManaged', options, { attachHost: true });
    this.makeCurrent();
    return DeviceBuffer.allocateManaged(this, size, options.attachHost ?? false);
  },

  get memoryPool(): MemoryPool {
    let pool = defaultPools.get(this);
    if (!pool) defaultPools.set(this, (pool = MemoryPool.defaultFor(this)));
    return pool;
  },

  createMemoryPool(options: MemoryPoolOptions = {}): MemoryPool {
    checkOptions('Device.createMemoryPool', options, MEMORY_POOL_OPTIONS);
    return MemoryPool.create(this, options);
  },
});

extend(VirtualMemoryResource, {
  allocate(size: number, options: VirtualAllocateOptions = {}): VirtualBuffer {
    if (!Number.isSafeInteger(size) || size <= 0)
      throw new RangeError(`VirtualMemoryResource.allocate: parameter 'size' must be a positive integer, got ${size}`);
    checkOptions('VirtualMemoryResource.allocate', options, { reserve: true });
    if (options.reserve !== undefined && (!Number.isSafeInteger(options.reserve) || options.reserve < size))
      throw new RangeError(
        `VirtualMemoryResource.allocate: option 'reserve' must be an integer of at least 'size' (${size}), got ${options.reserve}`,
      );
    void this.device.primaryContext; // the driver calls below need a context current
    return VirtualBuffer.create(this, size, this.roundUp(options.reserve ?? size));
  },

  importHandles(handles: readonly { fd: number; size: number }[]): VirtualBuffer {
    if (!Array.isArray(handles) || handles.length === 0)
      throw new TypeError("VirtualMemoryResource.importHandles: parameter 'handles' must be a non-empty array of { fd, size }");
    handles.forEach((h, i) => {
      // An element that is no object has no fd (a bare number is not one: it has no size either).
      checkFileDescriptor(
        h !== null && typeof h === 'object' ? h.fd : undefined,
        'VirtualMemoryResource.importHandles',
        `handles[${i}].fd`,
      );
      if (!Number.isSafeInteger(h.size) || h.size <= 0 || h.size % this.granularity !== 0)
        throw new RangeError(
          `VirtualMemoryResource.importHandles: parameter 'handles[${i}].size' must be a positive multiple of the granularity (${this.granularity}), got ${h.size}`,
        );
    });
    void this.device.primaryContext; // the driver calls below need a context current
    return VirtualBuffer.importChunks(this, handles);
  },
});

extend(DeviceBuffer, {
  view(options: StridedViewOptions = {}): StridedView {
    return StridedView.of(this, options);
  },

  toArrayInterface(options: StridedViewOptions = {}): CudaArrayInterface {
    return StridedView.of(this, options).toArrayInterface();
  },
});

extend(StridedView, {
  toDlpack(): bigint {
    assertOpen(this, 'toDlpack');
    return exportDlpack(this);
  },
});
