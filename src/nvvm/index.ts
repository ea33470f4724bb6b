/**
 * libNVVM, the compiler from NVVM IR (LLVM IR for CUDA, text or bitcode) to PTX, as a tuple facade.
 * @module cuda-bindings/nvvm
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
/** The compile off the JS thread, on the thread pool: `await nvvm.async.nvvmCompileProgram(prog, n, options, { signal })`. */
export * as async from './async';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
import { nvvmLibraryInfo } from '../ffi/nvvm-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libNVVM library file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvvmLibraryInfo();
}
