/**
 * The CUDA APIs for Node.js, loaded at run time through koffi.
 * @module cuda-bindings
 */
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as core from './core';
import type * as nvmlNamespace from './nvml';
/**
 * NVML, the NVIDIA Management Library (`cuda-bindings/nvml`). Its module loads on first access of
 * this property, so importing the package costs nothing for it.
 */
export declare const nvml: typeof nvmlNamespace;
Object.defineProperty(exports, 'nvml', { enumerable: true, get: (): typeof nvmlNamespace => require('./nvml') });
