/**
 * The CUDA driver API as cuda-python's tuple facade.
 * @module cuda-bindings/driver
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export * from '../structs/driver.gen';
export { CStruct, type StructLayout, type StructClass } from '../structs/base';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
export {
  i8,
  u8,
  i16,
  u16,
  i32,
  u32,
  i64,
  u64,
  f16,
  f32,
  f64,
  ptr,
  KernelArg,
  KernelArgs,
  type KernelArgInput,
  type ScalarType,
  type StructValue,
} from '../ffi/kernel-args';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
export { hostCallbacks, pendingHostFunctions } from '../ffi/host-callbacks';
export { launchParamBuffer } from '../ffi/kernel-args';
export { JitOptions, type JitOptionValues } from './jit';
import { cudaLibraryInfo } from '../ffi/cuda-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libcuda file is loaded, where it resolved, and the CUDA version its driver supports (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return cudaLibraryInfo();
}
