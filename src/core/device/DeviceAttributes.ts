// A device's attributes as the driver reports them (cuDeviceGetAttribute), typed as numbers or
// booleans by name: every one cuda.core's DeviceProperties has, the driver-only ones included.
import * as cuda from '../../driver';
import { driverError } from '../base/errors';

const A = cuda.CUdevice_attribute;

/**
 * A device's attributes (cuDeviceGetAttribute), got with {@link Device.attributes}: counts and sizes
 * as numbers, capabilities as booleans, named as cuda.core's `DeviceProperties` names them in
 * camelCase. Each is read from the driver on first use and kept, except the few that change while the
 * process runs (clock rates, compute mode, the watchdog, the precision ratio), read each time. An
 * attribute the installed driver does not know reads as 0 (false), as in cuda.core; any other
 * failure throws {@link CudaError}. `JSON.stringify(dev.attributes)` lists them all.
 */
export interface DeviceAttributes {
  /** The most threads a block may have. */
  readonly maxThreadsPerBlock: number;
  /** The largest x dimension of a block. */
  readonly maxBlockDimX: number;
  /** The largest y dimension of a block. */
  readonly maxBlockDimY: number;
  /** The largest z dimension of a block. */
  readonly maxBlockDimZ: number;
  /** The largest x dimension of a grid. */
  readonly maxGridDimX: number;
  /** The largest y dimension of a grid. */
  readonly maxGridDimY: number;
  /** The largest z dimension of a grid. */
  readonly maxGridDimZ: number;
  /** Shared memory a block may use without opting in, in bytes. */
  readonly maxSharedMemoryPerBlock: number;
  /** `__constant__` memory on the device, in bytes. */
  readonly totalConstantMemory: number;
  /** Threads in a warp. */
  readonly warpSize: number;
  /** The largest pitch a memory copy allows, in bytes. */
  readonly maxPitch: number;
  /** The widest 1D texture. */
  readonly maximumTexture1dWidth: number;
  /** The widest 1D texture over linear memory. */
  readonly maximumTexture1dLinearWidth: number;
  /** The widest mipmapped 1D texture. */
  readonly maximumTexture1dMipmappedWidth: number;
  /** The widest 2D texture. */
  readonly maximumTexture2dWidth: number;
  /** The tallest 2D texture. */
  readonly maximumTexture2dHeight: number;
  /** The widest 2D texture over linear memory. */
  readonly maximumTexture2dLinearWidth: number;
  /** The tallest 2D texture over linear memory. */
  readonly maximumTexture2dLinearHeight: number;
  /** The largest pitch of a 2D texture over linear memory, in bytes. */
  readonly maximumTexture2dLinearPitch: number;
  /** The widest mipmapped 2D texture. */
  readonly maximumTexture2dMipmappedWidth: number;
  /** The tallest mipmapped 2D texture. */
  readonly maximumTexture2dMipmappedHeight: number;
  /** The widest 3D texture. */
  readonly maximumTexture3dWidth: number;
  /** The tallest 3D texture. */
  readonly maximumTexture3dHeight: number;
  /** The deepest 3D texture. */
  readonly maximumTexture3dDepth: number;
  /** The widest 3D texture of the alternate limits (0 when the device has none). */
  readonly maximumTexture3dWidthAlternate: number;
  /** The tallest 3D texture of the alternate limits (0 when the device has none). */
  readonly maximumTexture3dHeightAlternate: number;
  /** The deepest 3D texture of the alternate limits (0 when the device has none). */
  readonly maximumTexture3dDepthAlternate: number;
  /** The largest width (and height) of a cubemap texture. */
  readonly maximumTexturecubemapWidth: number;
  /** The widest layered 1D texture. */
  readonly maximumTexture1dLayeredWidth: number;
  /** The most layers of a layered 1D texture. */
  readonly maximumTexture1dLayeredLayers: number;
  /** The widest layered 2D texture. */
  readonly maximumTexture2dLayeredWidth: number;
  /** The tallest layered 2D texture. */
  readonly maximumTexture2dLayeredHeight: number;
  /** The most layers of a layered 2D texture. */
  readonly maximumTexture2dLayeredLayers: number;
  /** The largest width (and height) of a layered cubemap texture. */
  readonly maximumTexturecubemapLayeredWidth: number;
  /** The most layers of a layered cubemap texture. */
  readonly maximumTexturecubemapLayeredLayers: number;
  /** The widest 1D surface. */
  readonly maximumSurface1dWidth: number;
  /** The widest 2D surface. */
  readonly maximumSurface2dWidth: number;
  /** The tallest 2D surface. */
  readonly maximumSurface2dHeight: number;
  /** The widest 3D surface. */
  readonly maximumSurface3dWidth: number;
  /** The tallest 3D surface. */
  readonly maximumSurface3dHeight: number;
  /** The deepest 3D surface. */
  readonly maximumSurface3dDepth: number;
  /** The widest layered 1D surface. */
  readonly maximumSurface1dLayeredWidth: number;
  /** The most layers of a layered 1D surface. */
  readonly maximumSurface1dLayeredLayers: number;
  /** The widest layered 2D surface. */
  readonly maximumSurface2dLayeredWidth: number;
  /** The tallest layered 2D surface. */
  readonly maximumSurface2dLayeredHeight: number;
  /** The most layers of a layered 2D surface. */
  readonly maximumSurface2dLayeredLayers: number;
  /** The largest width (and height) of a cubemap surface. */
  readonly maximumSurfacecubemapWidth: number;
  /** The largest width (and height) of a layered cubemap surface. */
  readonly maximumSurfacecubemapLayeredWidth: number;
  /** The most layers of a layered cubemap surface. */
  readonly maximumSurfacecubemapLayeredLayers: number;
  /** 32-bit registers a block may use. */
  readonly maxRegistersPerBlock: number;
  /** The typical clock rate, in kHz (read each time). */
  readonly clockRate: number;
  /** The alignment a texture's base address needs, in bytes. */
  readonly textureAlignment: number;
  /** The alignment a texture's pitch needs, in bytes. */
  readonly texturePitchAlignment: number;
  /** Whether a copy can run while a kernel runs (see asyncEngineCount). */
  readonly gpuOverlap: boolean;
  /** Streaming multiprocessors on the device. */
  readonly multiprocessorCount: number;
  /** Whether kernels have a run-time limit (a display watchdog; read each time). */
  readonly kernelExecTimeout: boolean;
  /** Whether the GPU is integrated with host memory. */
  readonly integrated: boolean;
  /** Whether host memory can be mapped into the device's address space. */
  readonly canMapHostMemory: boolean;
  /** The compute mode, a CUcomputemode value (read each time). */
  readonly computeMode: number;
  /** Whether kernels of different streams can run at once. */
  readonly concurrentKernels: boolean;
  /** Whether ECC is on. */
  readonly eccEnabled: boolean;
  /** The PCI bus number. */
  readonly pciBusId: number;
  /** The PCI device number. */
  readonly pciDeviceId: number;
  /** The PCI domain number. */
  readonly pciDomainId: number;
  /** Whether the device runs the TCC driver model (Windows). */
  readonly tccDriver: boolean;
  /** The peak memory clock rate, in kHz (read each time). */
  readonly memoryClockRate: number;
  /** The width of the global memory bus, in bits. */
  readonly globalMemoryBusWidth: number;
  /** The L2 cache, in bytes. */
  readonly l2CacheSize: number;
  /** The most threads resident on one multiprocessor. */
  readonly maxThreadsPerMultiprocessor: number;
  /** Whether the device shares one address space with the host. */
  readonly unifiedAddressing: boolean;
  /** The major compute capability (9 on an H100). */
  readonly computeCapabilityMajor: number;
  /** The minor compute capability (0 on an H100). */
  readonly computeCapabilityMinor: number;
  /** Whether globals can be cached in L1. */
  readonly globalL1CacheSupported: boolean;
  /** Whether locals can be cached in L1. */
  readonly localL1CacheSupported: boolean;
  /** Shared memory on one multiprocessor, in bytes. */
  readonly maxSharedMemoryPerMultiprocessor: number;
  /** 32-bit registers on one multiprocessor. */
  readonly maxRegistersPerMultiprocessor: number;
  /** Whether managed memory can be allocated on this system. */
  readonly managedMemory: boolean;
  /** Whether the device is on a board with several GPUs. */
  readonly multiGpuBoard: boolean;
  /** The id shared by the GPUs of one multi-GPU board. */
  readonly multiGpuBoardGroupId: number;
  /** Whether the link to the host supports every native atomic operation. */
  readonly hostNativeAtomicSupported: boolean;
  /** Single-precision over double-precision throughput (read each time). */
  readonly singleToDoublePrecisionPerfRatio: number;
  /** Whether the device can access pageable host memory coherently, without registering it. */
  readonly pageableMemoryAccess: boolean;
  /** Whether the device can access managed memory while the CPU does. */
  readonly concurrentManagedAccess: boolean;
  /** Whether compute work can be preempted. */
  readonly computePreemptionSupported: boolean;
  /** Whether registered host memory has the same address on the device as on the host. */
  readonly canUseHostPointerForRegisteredMem: boolean;
  /** Whether cooperative kernels can be launched. */
  readonly cooperativeLaunch: boolean;
  /** Shared memory a block may use after opting in (MaxDynamicSharedMemorySize), in bytes. */
  readonly maxSharedMemoryPerBlockOptin: number;
  /** Whether pageable memory is accessed through the host's page tables. */
  readonly pageableMemoryAccessUsesHostPageTables: boolean;
  /** Whether the host can access managed memory on the device without migrating it. */
  readonly directManagedMemAccessFromHost: boolean;
  /** Whether the virtual memory management API (cuMemCreate, cuMemMap, …) is supported. */
  readonly virtualMemoryManagementSupported: boolean;
  /** Whether memory can be exported as a POSIX file descriptor. */
  readonly handleTypePosixFileDescriptorSupported: boolean;
  /** Whether memory can be exported as a Win32 NT handle. */
  readonly handleTypeWin32HandleSupported: boolean;
  /** Whether memory can be exported as a Win32 KMT handle. */
  readonly handleTypeWin32KmtHandleSupported: boolean;
  /** The most blocks resident on one multiprocessor. */
  readonly maxBlocksPerMultiprocessor: number;
  /** Whether compressible memory can be allocated. */
  readonly genericCompressionSupported: boolean;
  /** The largest L2 set-aside for persisting accesses, in bytes. */
  readonly maxPersistingL2CacheSize: number;
  /** The largest access policy window, in bytes. */
  readonly maxAccessPolicyWindowSize: number;
  /** Whether cuMemCreate can ask for GPUDirect RDMA. */
  readonly gpuDirectRdmaWithCudaVmmSupported: boolean;
  /** Shared memory the driver reserves per block, in bytes. */
  readonly reservedSharedMemoryPerBlock: number;
  /** Whether sparse CUDA arrays are supported. */
  readonly sparseCudaArraySupported: boolean;
  /** Whether host memory can be registered read-only for the device. */
  readonly readOnlyHostRegisterSupported: boolean;
  /** Whether stream-ordered memory pools are supported. */
  readonly memoryPoolsSupported: boolean;
  /** Whether GPUDirect RDMA is supported. */
  readonly gpuDirectRdmaSupported: boolean;
  /** A bitmask of CUflushGPUDirectRDMAWritesOptions. */
  readonly gpuDirectRdmaFlushWritesOptions: number;
  /** The scope within which GPUDirect RDMA writes need no flush (a CUGPUDirectRDMAWritesOrdering value). */
  readonly gpuDirectRdmaWritesOrdering: number;
  /** A bitmask of the handle types a memory pool can be shared by (CUmemAllocationHandleType). */
  readonly mempoolSupportedHandleTypes: number;
  /** Whether CUDA arrays can be mapped after they are made. */
  readonly deferredMappingCudaArraySupported: boolean;
  /** The device's NUMA configuration, a CUdeviceNumaConfig value. */
  readonly numaConfig: number;
  /** The NUMA node of the device's memory. */
  readonly numaId: number;
  /** Whether switch multicast and reductions are supported. */
  readonly multicastSupported: boolean;
  /** The alignment a surface needs, in bytes. */
  readonly surfaceAlignment: number;
  /** Copy engines that can run alongside kernels. */
  readonly asyncEngineCount: number;
  /** Whether 2D texture gather is supported. */
  readonly canTex2dGather: boolean;
  /** The widest 2D texture for gather. */
  readonly maximumTexture2dGatherWidth: number;
  /** The tallest 2D texture for gather. */
  readonly maximumTexture2dGatherHeight: number;
  /** Whether streams can have priorities. */
  readonly streamPrioritiesSupported: boolean;
  /** Whether remote writes can be flushed by stream memory operations. */
  readonly canFlushRemoteWrites: boolean;
  /** Whether host memory can be registered (cudaHostRegister). */
  readonly hostRegisterSupported: boolean;
  /** Whether external timeline semaphores can be imported. */
  readonly timelineSemaphoreInteropSupported: boolean;
  /** Whether kernels can be launched with thread block clusters. */
  readonly clusterLaunch: boolean;
  /** Whether stream memory operations can be 64-bit. */
  readonly canUse64BitStreamMemOps: boolean;
  /** Whether stream memory operations can wait with NOR. */
  readonly canUseStreamWaitValueNor: boolean;
  /** Whether memory can be shared through dma_buf. */
  readonly dmaBufSupported: boolean;
  /** Whether events can be shared with other processes. */
  readonly ipcEventSupported: boolean;
  /** Memory synchronization domains of the device. */
  readonly memSyncDomainCount: number;
  /** Whether memory can be accessed through tensor maps. */
  readonly tensorMapAccessSupported: boolean;
  /** Whether memory can be exported as a fabric handle. */
  readonly handleTypeFabricSupported: boolean;
  /** Whether function pointers are unified between host and device. */
  readonly unifiedFunctionPointers: boolean;
  /** Whether contexts on the device are shared through MPS. */
  readonly mpsEnabled: boolean;
  /** The NUMA node of the host closest to the device (-1 without NUMA). */
  readonly hostNumaId: number;
  /** Whether CUDA in graphics (CIG) works with D3D12. */
  readonly d3d12CigSupported: boolean;
  /** A bitmask of the decompression algorithms the device runs (CUmemDecompressAlgorithm). */
  readonly memDecompressAlgorithmMask: number;
  /** The longest single decompression, in bytes. */
  readonly memDecompressMaximumLength: number;
  /** Whether CUDA in graphics (CIG) works with Vulkan. */
  readonly vulkanCigSupported: boolean;
  /** The PCI device id and vendor id, 16 bits each. */
  readonly gpuPciDeviceId: number;
  /** The PCI subsystem id and subsystem vendor id, 16 bits each. */
  readonly gpuPciSubsystemId: number;
  /** Whether the virtual memory management API can place memory on a host NUMA node. */
  readonly hostNumaVirtualMemoryManagementSupported: boolean;
  /** Whether memory pools can place memory on a host NUMA node. */
  readonly hostNumaMemoryPoolsSupported: boolean;
  /** Whether memory on a host NUMA node can be shared between nodes of a multi-node system. */
  readonly hostNumaMultinodeIpcSupported: boolean;
  /** Whether memory pools can place memory on the host. */
  readonly hostMemoryPoolsSupported: boolean;
  /** Whether the virtual memory management API can place memory on the host. */
  readonly hostVirtualMemoryManagementSupported: boolean;
  /** Whether pinned host memory can be shared through dma_buf. */
  readonly hostAllocDmaBufSupported: boolean;
  /** Whether the link to the host supports only some native atomic operations. */
  readonly onlyPartialHostNativeAtomicSupported: boolean;
}

/** Each attribute's driver enum, whether it is a boolean, and (false) whether it is read every time rather than kept. */
const TABLE: {
  readonly [K in keyof DeviceAttributes]: readonly [cuda.CUdevice_attribute, DeviceAttributes[K] extends boolean ? true : false, false?];
} = {
  maxThreadsPerBlock: [A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, false],
  maxBlockDimX: [A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, false],
  maxBlockDimY: [A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, false],
  maxBlockDimZ: [A.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, false],
  maxGridDimX: [A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, false],
  maxGridDimY: [A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, false],
  maxGridDimZ: [A.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, false],
  maxSharedMemoryPerBlock: [A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, false],
  totalConstantMemory: [A.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, false],
  warpSize: [A.CU_DEVICE_ATTRIBUTE_WARP_SIZE, false],
  maxPitch: [A.CU_DEVICE_ATTRIBUTE_MAX_PITCH, false],
  maximumTexture1dWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, false],
  maximumTexture1dLinearWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, false],
  maximumTexture1dMipmappedWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH, false],
  maximumTexture2dWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, false],
  maximumTexture2dHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, false],
  maximumTexture2dLinearWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, false],
  maximumTexture2dLinearHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, false],
  maximumTexture2dLinearPitch: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, false],
  maximumTexture2dMipmappedWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH, false],
  maximumTexture2dMipmappedHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT, false],
  maximumTexture3dWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, false],
  maximumTexture3dHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, false],
  maximumTexture3dDepth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, false],
  maximumTexture3dWidthAlternate: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, false],
  maximumTexture3dHeightAlternate: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE, false],
  maximumTexture3dDepthAlternate: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE, false],
  maximumTexturecubemapWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, false],
  maximumTexture1dLayeredWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH, false],
  maximumTexture1dLayeredLayers: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS, false],
  maximumTexture2dLayeredWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, false],
  maximumTexture2dLayeredHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, false],
  maximumTexture2dLayeredLayers: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, false],
  maximumTexturecubemapLayeredWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, false],
  maximumTexturecubemapLayeredLayers: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS, false],
  maximumSurface1dWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, false],
  maximumSurface2dWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, false],
  maximumSurface2dHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, false],
  maximumSurface3dWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, false],
  maximumSurface3dHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, false],
  maximumSurface3dDepth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, false],
  maximumSurface1dLayeredWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH, false],
  maximumSurface1dLayeredLayers: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS, false],
  maximumSurface2dLayeredWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH, false],
  maximumSurface2dLayeredHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT, false],
  maximumSurface2dLayeredLayers: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS, false],
  maximumSurfacecubemapWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH, false],
  maximumSurfacecubemapLayeredWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, false],
  maximumSurfacecubemapLayeredLayers: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS, false],
  maxRegistersPerBlock: [A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, false],
  clockRate: [A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, false, false],
  textureAlignment: [A.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, false],
  texturePitchAlignment: [A.CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, false],
  gpuOverlap: [A.CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, true],
  multiprocessorCount: [A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, false],
  kernelExecTimeout: [A.CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, true, false],
  integrated: [A.CU_DEVICE_ATTRIBUTE_INTEGRATED, true],
  canMapHostMemory: [A.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, true],
  computeMode: [A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, false, false],
  concurrentKernels: [A.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, true],
  eccEnabled: [A.CU_DEVICE_ATTRIBUTE_ECC_ENABLED, true],
  pciBusId: [A.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, false],
  pciDeviceId: [A.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, false],
  pciDomainId: [A.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, false],
  tccDriver: [A.CU_DEVICE_ATTRIBUTE_TCC_DRIVER, true],
  memoryClockRate: [A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, false, false],
  globalMemoryBusWidth: [A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, false],
  l2CacheSize: [A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, false],
  maxThreadsPerMultiprocessor: [A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, false],
  unifiedAddressing: [A.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, true],
  computeCapabilityMajor: [A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, false],
  computeCapabilityMinor: [A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, false],
  globalL1CacheSupported: [A.CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, true],
  localL1CacheSupported: [A.CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, true],
  maxSharedMemoryPerMultiprocessor: [A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, false],
  maxRegistersPerMultiprocessor: [A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, false],
  managedMemory: [A.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, true],
  multiGpuBoard: [A.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, true],
  multiGpuBoardGroupId: [A.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID, false],
  hostNativeAtomicSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, true],
  singleToDoublePrecisionPerfRatio: [A.CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, false, false],
  pageableMemoryAccess: [A.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, true],
  concurrentManagedAccess: [A.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, true],
  computePreemptionSupported: [A.CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, true],
  canUseHostPointerForRegisteredMem: [A.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, true],
  cooperativeLaunch: [A.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, true],
  maxSharedMemoryPerBlockOptin: [A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, false],
  pageableMemoryAccessUsesHostPageTables: [A.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, true],
  directManagedMemAccessFromHost: [A.CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, true],
  virtualMemoryManagementSupported: [A.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, true],
  handleTypePosixFileDescriptorSupported: [A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, true],
  handleTypeWin32HandleSupported: [A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED, true],
  handleTypeWin32KmtHandleSupported: [A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED, true],
  maxBlocksPerMultiprocessor: [A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, false],
  genericCompressionSupported: [A.CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, true],
  maxPersistingL2CacheSize: [A.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, false],
  maxAccessPolicyWindowSize: [A.CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, false],
  gpuDirectRdmaWithCudaVmmSupported: [A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, true],
  reservedSharedMemoryPerBlock: [A.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, false],
  sparseCudaArraySupported: [A.CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, true],
  readOnlyHostRegisterSupported: [A.CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, true],
  memoryPoolsSupported: [A.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, true],
  gpuDirectRdmaSupported: [A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, true],
  gpuDirectRdmaFlushWritesOptions: [A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, false],
  gpuDirectRdmaWritesOrdering: [A.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, false],
  mempoolSupportedHandleTypes: [A.CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, false],
  deferredMappingCudaArraySupported: [A.CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, true],
  numaConfig: [A.CU_DEVICE_ATTRIBUTE_NUMA_CONFIG, false],
  numaId: [A.CU_DEVICE_ATTRIBUTE_NUMA_ID, false],
  multicastSupported: [A.CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, true],
  surfaceAlignment: [A.CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, false],
  asyncEngineCount: [A.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, false],
  canTex2dGather: [A.CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER, true],
  maximumTexture2dGatherWidth: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH, false],
  maximumTexture2dGatherHeight: [A.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT, false],
  streamPrioritiesSupported: [A.CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, true],
  canFlushRemoteWrites: [A.CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, true],
  hostRegisterSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, true],
  timelineSemaphoreInteropSupported: [A.CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, true],
  clusterLaunch: [A.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, true],
  canUse64BitStreamMemOps: [A.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, true],
  canUseStreamWaitValueNor: [A.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, true],
  dmaBufSupported: [A.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, true],
  ipcEventSupported: [A.CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, true],
  memSyncDomainCount: [A.CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, false],
  tensorMapAccessSupported: [A.CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, true],
  handleTypeFabricSupported: [A.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, true],
  unifiedFunctionPointers: [A.CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, true],
  mpsEnabled: [A.CU_DEVICE_ATTRIBUTE_MPS_ENABLED, true],
  hostNumaId: [A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, false],
  d3d12CigSupported: [A.CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED, true],
  memDecompressAlgorithmMask: [A.CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, false],
  memDecompressMaximumLength: [A.CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH, false],
  vulkanCigSupported: [A.CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED, true],
  gpuPciDeviceId: [A.CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, false],
  gpuPciSubsystemId: [A.CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID, false],
  hostNumaVirtualMemoryManagementSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, true],
  hostNumaMemoryPoolsSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, true],
  hostNumaMultinodeIpcSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED, true],
  hostMemoryPoolsSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, true],
  hostVirtualMemoryManagementSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, true],
  hostAllocDmaBufSupported: [A.CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, true],
  onlyPartialHostNativeAtomicSupported: [A.CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED, true],
};

/** The attributes of one device: getters over the table, installed once on the prototype. */
class DeviceAttributeValues {
  private readonly known = new Map<number, number>();

  constructor(private readonly ordinal: number) {}

  /** The attribute's value: 0 when the driver does not know it (CUDA_ERROR_INVALID_VALUE), else a CudaError naming it. */
  read(name: string, attr: cuda.CUdevice_attribute, keep: boolean): number {
    const v = this.known.get(attr);
    if (v !== undefined) return v;
    const [err, value] = cuda.cuDeviceGetAttribute(attr, this.ordinal);
    if (err !== cuda.CUresult.CUDA_SUCCESS && err !== cuda.CUresult.CUDA_ERROR_INVALID_VALUE)
      throw driverError(err, `Device.attributes.${name} (cuDeviceGetAttribute ${A[attr]})`);
    const out = value ?? 0;
    if (keep) this.known.set(attr, out);
    return out;
  }

  /** Every attribute by name, for JSON.stringify and logs. */
  toJSON(): Record<string, number | boolean> {
    const all: Record<string, number | boolean> = {};
    for (const name of Object.keys(TABLE)) all[name] = (this as unknown as Record<string, number | boolean>)[name];
    return all;
  }
}

for (const [name, [attr, isBoolean, keep]] of Object.entries(TABLE) as [string, readonly [cuda.CUdevice_attribute, boolean, false?]][]) {
  Object.defineProperty(DeviceAttributeValues.prototype, name, {
    get(this: DeviceAttributeValues): number | boolean {
      const v = this.read(name, attr, keep !== false);
      return isBoolean ? v !== 0 : v;
    },
    enumerable: true,
  });
}

/** @internal The attributes of device `ordinal` (Device.attributes makes one per device). */
export function deviceAttributes(ordinal: number): DeviceAttributes {
  return new DeviceAttributeValues(ordinal) as unknown as DeviceAttributes;
}

/** @internal The driver attribute behind each name, for tests that compare with cuDeviceGetAttribute. */
export const DEVICE_ATTRIBUTE_ENUMS: Readonly<Record<keyof DeviceAttributes, cuda.CUdevice_attribute>> = Object.fromEntries(
  Object.entries(TABLE).map(([k, [a]]) => [k, a]),
) as Record<keyof DeviceAttributes, cuda.CUdevice_attribute>;
