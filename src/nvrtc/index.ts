/**
 * NVRTC, the runtime compiler for CUDA C++, as cuda-python's tuple facade.
 * @module cuda-bindings/nvrtc
 */
export * from './api';
export * from './enums';
export * from './constants';
export * from './handles';
/** The compile off the JS thread, on the thread pool: `await nvrtc.async.nvrtcCompileProgram(prog, n, options, { signal })`. */
export * as async from './async';
export type { Pointer, HostMemory } from '../ffi/marshal';
export { LibraryLoadError } from '../ffi/loader';
import { nvrtcLibraryInfo } from '../ffi/nvrtc-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libnvrtc file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvrtcLibraryInfo();
}
