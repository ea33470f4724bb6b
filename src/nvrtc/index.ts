/**
 * NVRTC, the runtime compiler for CUDA C++, as cuda-python's tuple facade.
 * @module cuda-bindings/nvrtc
 */
export * from './api';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums';
export * from './constants';
export * from './handles';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
export { LibraryLoadError } from '../ffi/loader';
import { nvrtcLibraryInfo } from '../ffi/nvrtc-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libnvrtc file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvrtcLibraryInfo();
}
