/**
 * nvJitLink, the link-time optimising linker of CUDA 13 (cubin, PTX, LTO-IR, fatbins, host objects and libraries in; a cubin or PTX out), as a tuple facade.
 * @module cuda-bindings/nvjitlink
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
import { nvjitlinkLibraryInfo } from '../ffi/nvjitlink-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which nvJitLink library file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvjitlinkLibraryInfo();
}
