/**
 * NVML, the NVIDIA Management Library behind nvidia-smi, as cuda-python's tuple facade:
 * `const [err, count] = nvmlDeviceGetCount()`. Call `nvmlInit()` first and `nvmlShutdown()` last
 * (the core layer's `device.health()` does both for you).
 * @module cuda-bindings/nvml
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export * from '../structs/nvml.gen';
export { CStruct, type StructLayout, type StructClass } from '../structs/base';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
import { nvmlLibraryInfo } from '../ffi/nvml-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libnvidia-ml file is loaded and where it resolved (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvmlLibraryInfo();
}
