/**
 * Objects that throw, free themselves and read like JavaScript, over the runtime.
 * @module cuda-bindings/core
 */
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
} from './errors';
export { warnOnLeaks } from './lifetime';
export { Device, type DeviceAttributeName } from './Device';
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
  type TopologyLink,
} from './nvml';
export { Stream, type StreamOptions, type CaptureOptions } from './Stream';
export { Event, type EventOptions } from './Event';
export { DeviceBuffer, type HostData, type CopyOptions, type MemoryKind, type MemoryLocation, type ManagedAdvice } from './DeviceBuffer';
export { HostBuffer, setPinnedMemoryAllocator, getPinnedMemoryAllocator, type HostBufferOptions, type PinnedAllocator } from './HostBuffer';
export { PinnedMemoryPool, type PinnedMemoryPoolOptions } from './PinnedMemoryPool';
export { MemoryPool, type MemoryPoolOptions, type MemoryPoolStats } from './MemoryPool';
export {
  CachingAllocator,
  setAllocator,
  getAllocator,
  type Allocator,
  type AllocateOptions,
  type CachingAllocatorOptions,
} from './CachingAllocator';
export { MemoryHook, type MemoryEvent, type MemoryHookPhase, type MemoryHookOptions } from './MemoryHook';
export { DebugPrintHook, type DebugPrintHookOptions } from './DebugPrintHook';
export { LineProfileHook, type LineProfileRow } from './LineProfileHook';
export { IpcMemoryHandle } from './IpcMemoryHandle';
export { IpcEventHandle } from './IpcEventHandle';
export { IpcBufferDescriptor } from './IpcBufferDescriptor';
export { IpcMemoryPool, type IpcMemoryPoolOptions } from './IpcMemoryPool';
export { ManagedMemoryPool, type ManagedMemoryPoolOptions } from './ManagedMemoryPool';
export {
  VirtualMemoryResource,
  type VirtualMemoryResourceOptions,
  type VirtualAllocateOptions,
  type VirtualHandleType,
  type VirtualAccess,
} from './VirtualMemoryResource';
export { VirtualBuffer } from './VirtualBuffer';
export {
  Context,
  type ContextOptions,
  type ContextLimit,
  type ContextKind,
  type ContextScheduling,
  type CacheConfig,
  type SharedMemConfig,
} from './Context';
export { DeviceResources, type SMSplit } from './DeviceResources';
export { SMResource } from './SMResource';
export { GreenContext } from './GreenContext';
export { Program, type ProgramOptions, type CompileAsyncOptions } from './Program';
export { Module, type ModuleOptions, type ModuleLoadAsyncOptions } from './Module';
export type { WaitOptions } from '../ffi/waits';
export { ObjectCode, type CodeKind, type ObjectCodeOptions, type FatbinOptions } from './ObjectCode';
export { Linker, type LinkerOptions } from './Linker';
export { Kernel, type LaunchConfig, type Dim, type KernelArgument, type KernelAttributes, type SettableKernelAttribute } from './Kernel';
export { ElementwiseKernel, type ElementwiseOptions } from './ElementwiseKernel';
export { measureBandwidth, BANDWIDTH_SIZES, type BandwidthRow, type BandwidthOptions } from './bandwidth';
export { Graph, GraphExec } from './Graph';
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
} from './Communicator';
export { rendezvous, rendezvousFromEnv, parseMaster, type RendezvousOptions } from './rendezvous';
export { HostArgument, In, Out, InOut, type HostArgumentDirection } from './HostArgument';
export { type PreparedLaunch, type PreparedArgument } from './PreparedLaunch';
export { parseSignature, type ParamType } from './signature';
export { GraphBuilder, type NodeOptions, type KernelNodeConfig, type IfNode, type WhileNode, type SwitchNode } from './GraphBuilder';
export { GraphNode, type GraphNodeKind } from './GraphNode';
export { ConditionalHandle } from './ConditionalHandle';
export { ChannelFormatDescriptor, type ChannelKind, type ChannelType } from './ChannelFormatDescriptor';
export { CudaArray, type CudaArrayOptions } from './CudaArray';
export { ResourceDescriptor, type ResourceKind } from './ResourceDescriptor';
export { TextureDescriptor, type TextureOptions, type AddressMode } from './TextureDescriptor';
export { TextureObject } from './TextureObject';
export { SurfaceObject } from './SurfaceObject';
export {
  TensorMapDescriptor,
  type TensorMapDataType,
  type TensorMapCommonOptions,
  type TiledTensorMapOptions,
  type Im2colTensorMapOptions,
} from './TensorMapDescriptor';
