/**
 * Objects that throw, free themselves and read like JavaScript, over the runtime.
 * @module cuda-bindings/core
 */
// The methods each room adds to the classes of the rooms below it (base/extend.ts): loaded with core.
import './device/extensions';
import './memory/extensions';
import './launch/extensions';
import './graph/extensions';
export {
  CudaBindingsError,
  CudaError,
  CompileError,
  NvrtcError,
  NvvmError,
  LinkError,
  check,
  checkDriver,
  checkNvrtc,
  type CudaBindingsErrorDetails,
  type CudaLibrary,
} from './base/errors';
export { warnOnLeaks } from './base/lifetime';
export { Device, type DeviceAttributeName } from './device/Device';
export type { DeviceAttributes } from './device/DeviceAttributes';
export {
  NvmlDevice,
  NvmlError,
  acquireNvml,
  releaseNvml,
  shutdownNvml,
  formatCpuList,
  type GpuHealth,
  type GpuSample,
  type GpuProcess,
  type GpuDetails,
  type EccCounts,
  type TopologyLink,
} from './nvml/NvmlDevice';
export { Stream, type StreamOptions } from './device/Stream';
export type { StreamProtocol } from './device/extensions';
export { Event, type EventOptions, type ForeignEventOptions } from './device/Event';
export type { ForeignOptions } from './device/foreign';
export {
  DeviceBuffer,
  type HostData,
  type CopyOptions,
  type CopyStream,
  type FromPointerOptions,
  type DeviceBytes,
  type DeviceByteRange,
  type MemoryKind,
  type MemoryLocation,
  type ManagedAdvice,
  type MemoryResource,
} from './memory/DeviceBuffer';
export {
  HostBuffer,
  setPinnedMemoryAllocator,
  getPinnedMemoryAllocator,
  type HostBufferOptions,
  type HostRegisterOptions,
  type PinnedAllocator,
} from './memory/HostBuffer';
export { StridedView, type StridedViewOptions, type SliceSpec, type FromArrayInterfaceOptions } from './memory/StridedView';
export type { Dtype, ElementArray } from './memory/dtype';
export { fromDlpack, DLPACK_VERSION, type FromDlpackOptions } from './memory/dlpack';
export type { CudaArrayInterface } from './memory/array-interface';
export { CheckpointProcess, type CheckpointState, type GpuMapping } from './checkpoint/CheckpointProcess';
export { nvtx, NvtxDomain, RegisteredString, NO_PUSH_POP_TRACKING, type NvtxColor, type NvtxEvent, type NvtxMessage } from './nvtx/nvtx';
export { prefetchBatch, discardBatch, discardPrefetchBatch } from './memory/managed';
export { PinnedMemoryPool, type PinnedMemoryPoolOptions } from './memory/PinnedMemoryPool';
export { StagingPool, stagingPool, MAX_STAGED_BYTES, type TypedArrayClass } from './memory/StagingPool';
export type { UploadOptions, DownloadOptions } from './memory/transfer';
export { MemoryPool, type MemoryPoolOptions, type MemoryPoolStats, type MemoryPoolLocation } from './memory/MemoryPool';
export {
  CachingAllocator,
  setAllocator,
  getAllocator,
  type Allocator,
  type AllocateOptions,
  type CachingAllocatorOptions,
  type InstalledAllocator,
} from './memory/CachingAllocator';
export { GraphMemoryResource, type GraphMemoryStats } from './memory/GraphMemoryResource';
export { MemoryHook, type MemoryEvent, type MemoryHookPhase, type MemoryHookOptions } from './memory/MemoryHook';
export { DebugPrintHook, type DebugPrintHookOptions } from './memory/DebugPrintHook';
export { LineProfileHook, type LineProfileRow, type LineProfileNode, type LineProfileHookOptions } from './memory/LineProfileHook';
export { IpcMemoryHandle } from './ipc/IpcMemoryHandle';
export { IpcEventHandle } from './ipc/IpcEventHandle';
export { IpcBufferDescriptor } from './ipc/IpcBufferDescriptor';
export { IpcMemoryPool, type IpcMemoryPoolOptions } from './ipc/IpcMemoryPool';
export { ManagedMemoryPool, type ManagedMemoryPoolOptions } from './memory/ManagedMemoryPool';
export {
  VirtualMemoryResource,
  type VirtualMemoryResourceOptions,
  type VirtualAllocateOptions,
  type VirtualHandleType,
  type VirtualAccess,
} from './memory/VirtualMemoryResource';
export { VirtualBuffer } from './memory/VirtualBuffer';
export {
  Context,
  type ContextOptions,
  type ContextLimit,
  type ContextKind,
  type ContextScheduling,
  type CacheConfig,
  type SharedMemConfig,
} from './device/Context';
export { DeviceResources, type SMSplit } from './device/DeviceResources';
export { SMResource } from './device/SMResource';
export { GreenContext } from './device/GreenContext';
export {
  Program,
  type ProgramOptions,
  type CompileAsyncOptions,
  type ProgramFromHandleOptions,
  type ProgramBackendOptions,
} from './compile/Program';
export { Module, type ModuleOptions, type ModuleLoadAsyncOptions } from './launch/Module';
export type { WaitOptions } from '../ffi/waits';
export { ObjectCode, type CodeKind, type ObjectCodeOptions, type FatbinOptions } from './compile/ObjectCode';
export { Linker, type LinkerOptions, type LinkerBackendOptions } from './compile/Linker';
export { Kernel, type KernelAttributes, type KernelParamInfo, type SettableKernelAttribute } from './launch/Kernel';
export type { LaunchConfig, Dim, ExtendedLaunchOptions, ProgrammaticEvent } from './launch/launch-config';
export { KernelOccupancy, type ClusterQuery } from './launch/occupancy';
export { launch, type KernelNodeTarget, type TargetedLaunchConfig } from './launch/launch';
export type { KernelArgument } from './launch/kernel-argument';
export { ElementwiseKernel, type ElementwiseOptions } from './compile/ElementwiseKernel';
export { measureBandwidth, BANDWIDTH_SIZES, type BandwidthRow, type BandwidthOptions } from './memory/bandwidth';
export { Graph, GraphExec, type InstantiateOptions } from './graph/Graph';
export type { DebugDotOptions } from './graph/debug-dot';
export type { GraphMemoryUsage } from './graph/extensions';
export {
  GraphDefinition,
  GraphNode,
  KernelNode,
  CopyNode,
  MemsetNode,
  HostNode,
  EventNode,
  ChildGraphNode,
  MemAllocNode,
  MemFreeNode,
  type GraphNodeKind,
  type GraphNodeType,
  type GraphEdge,
  type KernelNodeAttributes,
  type KernelNodeChanges,
} from './graph/GraphNode';
/** Typed kernel arguments: `kernel.launch(config, buf, i32(n), f32(x))`. */
export { i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, ptr, KernelArg, KernelArgs } from '../runtime';
export {
  Communicator,
  NcclError,
  NCCL_DTYPES,
  dtypeBytes,
  type NcclDtype,
  type NcclOp,
  type CommunicatorInit,
  type CommunicatorConfig,
  type CollectiveOptions,
  type ReduceOptions,
  type RootOptions,
} from './nccl/Communicator';
export { rendezvous, rendezvousFromEnv, parseMaster, type RendezvousOptions } from './nccl/rendezvous';
export { HostArgument, In, Out, InOut, type HostArgumentDirection } from './launch/HostArgument';
export { type PreparedLaunch, type PreparedArgument, type VectorValue, type VectorComponents } from './launch/PreparedLaunch';
export { parseSignature, type ParamType, type StructType, type StructLayoutLike, type StructClassLike } from './launch/signature';
export { type VectorType } from './launch/vector-types';
export {
  GraphBuilder,
  ConditionalHandle,
  ConditionalNode,
  type GraphMemory,
  type MemsetOptions,
  type Copy2DShape,
  type CaptureOptions,
  type NodeOptions,
  type KernelNodeConfig,
  type IfNode,
  type WhileNode,
  type SwitchNode,
} from './graph/GraphBuilder';
export { StreamGraphBuilder } from './graph/StreamGraphBuilder';
export { ChannelFormatDescriptor, type ChannelKind, type ChannelType } from './texture/ChannelFormatDescriptor';
export { CudaArray, type CudaArrayOptions } from './texture/CudaArray';
export { ResourceDescriptor, type ResourceKind } from './texture/ResourceDescriptor';
export { TextureDescriptor, type TextureOptions, type AddressMode } from './texture/TextureDescriptor';
export { TextureObject } from './texture/TextureObject';
export { SurfaceObject } from './texture/SurfaceObject';
export {
  TensorMapDescriptor,
  type TensorMapDataType,
  type TensorMapCommonOptions,
  type TiledTensorMapOptions,
  type Im2colTensorMapOptions,
} from './texture/TensorMapDescriptor';
export { gpuCollectors, type GpuCollectors, type GpuCollectorsOptions } from './exporter/collectors';
export { GpuSampler, type GpuSamplerOptions, type EventCount, type XidCount } from './exporter/GpuSampler';
export type { ExporterSample, ExporterEvent, GpuReading, ProcessReading, NvmlErrorCount } from './exporter/sample';
export { DCGM_DEFAULT_COUNTERS, DCGM_ECC_COUNTERS, type DcgmCounter, type PromType } from './exporter/counters';
export {
  diagnose,
  type DiagnoseOptions,
  type DoctorReport,
  type DoctorCheck,
  type CheckStatus,
  type LibraryFinding,
  type GpuFinding,
} from './doctor/diagnose';
