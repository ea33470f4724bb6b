/**
 * The CUDA APIs for Node.js, loaded at run time through koffi.
 * @module cuda-bindings
 */
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as core from './core';
import type * as NcclApi from './nccl';

/**
 * NCCL (`cuda-bindings/nccl`), read on first use: importing cuda-bindings loads none of its
 * declarations, and libnccl opens only on the first NCCL call.
 */
export declare const nccl: typeof NcclApi;
Object.defineProperty(exports, 'nccl', { enumerable: true, get: (): typeof NcclApi => require('./nccl') });
