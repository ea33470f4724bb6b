/**
 * NCCL, NVIDIA's collective communication library, as cuda-python's tuple facade.
 * @module cuda-bindings/nccl
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export * from './helpers';
export * from '../structs/nccl.gen';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
import { ncclLibraryInfo } from '../ffi/nccl-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libnccl file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return ncclLibraryInfo();
}
