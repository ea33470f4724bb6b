/**
 * nvFatbin, which bundles cubins, PTX and LTO-IR for several architectures into one fat binary, as a tuple facade.
 * @module cuda-bindings/nvfatbin
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';
export { LibraryLoadError } from '../ffi/loader';
export { CudaBindingsError, type CudaLibrary } from '../ffi/errors';
import { nvfatbinLibraryInfo } from '../ffi/nvfatbin-lib';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which nvFatbin library file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return nvfatbinLibraryInfo();
}
