/**
 * The CUDA APIs for Node.js, loaded at run time through koffi.
 *
 * In the published build every namespace but `cudart` loads on its first use (tools/lazy-root.cjs
 * rewrites these re-exports after tsc), so `require('cuda-bindings')` costs the runtime facade only.
 * @module cuda-bindings
 */
export type { Result, OkOutputs } from './ffi/result';
/** The base of every error the package throws for a failure of its own: `catch (e) { if (e instanceof CudaBindingsError) … }`. */
export { CudaBindingsError, type CudaLibrary } from './ffi/errors';
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as nvjitlink from './nvjitlink';
export * as nvfatbin from './nvfatbin';
export * as nvvm from './nvvm';
export * as core from './core';
/** NCCL (`cuda-bindings/nccl`); its koffi declarations are read on its first call. */
export * as nccl from './nccl';
/** NVML, the NVIDIA Management Library (`cuda-bindings/nvml`). */
export * as nvml from './nvml';
