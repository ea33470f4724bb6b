/**
 * Objects that throw, free themselves and read like JavaScript, over the runtime.
 * @module cuda-bindings/core
 */
export { CudaError, CompileError, NvrtcError, check } from './errors';
export { warnOnLeaks } from './lifetime';
export { Device } from './Device';
export { Stream, type StreamOptions, type CaptureOptions } from './Stream';
export { Event, type EventOptions } from './Event';
export { DeviceBuffer, type HostData, type CopyOptions, type MemoryKind, type MemoryLocation, type ManagedAdvice } from './DeviceBuffer';
export { HostBuffer, type HostBufferOptions } from './HostBuffer';
export { MemoryPool, type MemoryPoolOptions, type MemoryPoolStats } from './MemoryPool';
export { CachingAllocator, setAllocator, getAllocator, type Allocator, type AllocateOptions, type CachingAllocatorOptions } from './CachingAllocator';
export { Program, type ProgramOptions } from './Program';
export { Module, type ModuleOptions } from './Module';
export { Kernel, type LaunchConfig, type Dim, type KernelArgument, type KernelAttributes, type SettableKernelAttribute } from './Kernel';
export { ElementwiseKernel, type ElementwiseOptions } from './ElementwiseKernel';
export { Graph, GraphExec } from './Graph';
/** Typed kernel arguments: `kernel.launch(config, buf, i32(n), f32(x))`. */
export { i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, ptr, KernelArg, KernelArgs } from '../runtime';
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
export { TensorMapDescriptor, type TensorMapDataType, type TensorMapCommonOptions, type TiledTensorMapOptions, type Im2colTensorMapOptions } from './TensorMapDescriptor';
