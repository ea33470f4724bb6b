/**
 * NVRTC, the runtime compiler for CUDA C++, as cuda-python's tuple facade.
 * @module cuda-bindings/nvrtc
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
/** The compile off the JS thread, on the thread pool: `await nvrtc.async.nvrtcCompileProgram(prog, n, options, { signal })`. */
export * as async from './async';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
import { nvrtcLibraryInfo } from '../ffi/nvrtc-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libnvrtc file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvrtcLibraryInfo();
}
