/**
 * The CUDA runtime API as cuda-python's tuple facade.
 * @module cuda-bindings/runtime
 */
export * from './api.gen';
export type { Result, OkOutputs } from '../ffi/result';
export * from './enums.gen';
export * from './constants.gen';
export * from './handles.gen';
export * from './helpers';
/** Promise forms of the waits (polled from the event loop, no pool thread) and of blocking copies and loads (on the pool): `await cudart.async.cudaStreamSynchronize(s, { signal })`. */
export * as async from './async';
export * from '../structs/runtime.gen';
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
export { perThreadDefaultStream } from '../ffi/binding';
import { libcudart, cudartLibraryInfo } from '../ffi/cudart-lib';
import { cudaError_t } from './enums.gen';
import type { cudaError_tOk } from './api.gen';
import type { Result } from '../ffi/result';
import type { LibraryInfo } from '../ffi/binding';
export type { LibraryInfo };

/** Which libcudart file is loaded, where it resolved, and its version (loads it on first call). */
export function libraryInfo(): LibraryInfo {
  return cudartLibraryInfo();
}

/** The version of the libcudart that is loaded, as cuda-python's getLocalRuntimeVersion(). */
export function getLocalRuntimeVersion(): Result<cudaError_tOk, Exclude<cudaError_t, cudaError_tOk>, [number]> {
  const v = new Int32Array(1);
  const err = libcudart.bind('cudaRuntimeGetVersion')(v) as cudaError_t;
  return err === cudaError_t.cudaSuccess ? [err, v[0]] : [err, null];
}
