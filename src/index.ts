/**
 * The CUDA APIs for Node.js, loaded at run time through koffi.
 * @module cuda-bindings
 */
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as nvjitlink from './nvjitlink';
export * as nvfatbin from './nvfatbin';
export * as nvvm from './nvvm';
export * as core from './core';
// NCCL's koffi declarations are read on its first call (src/ffi/nccl-lib.ts), and libnccl opens then.
export * as nccl from './nccl';
