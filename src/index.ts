/**
 * The CUDA APIs for Node.js, loaded at run time through koffi.
 * @module cuda-bindings
 */
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as core from './core';

import type * as NvJitLink from './nvjitlink';
import type * as NvFatbin from './nvfatbin';
import type * as Nvvm from './nvvm';

/** nvJitLink (`cuda-bindings/nvjitlink`): its module is read on first access, its library on first call. */
export declare const nvjitlink: typeof NvJitLink;
/** nvFatbin (`cuda-bindings/nvfatbin`): its module is read on first access, its library on first call. */
export declare const nvfatbin: typeof NvFatbin;
/** libNVVM (`cuda-bindings/nvvm`): its module is read on first access, its library on first call. */
export declare const nvvm: typeof Nvvm;

// Namespaces of the further libraries are getters, so that importing the package reads none of
// their declarations until one is used.
for (const [name, load] of [
  ['nvjitlink', () => require('./nvjitlink')],
  ['nvfatbin', () => require('./nvfatbin')],
  ['nvvm', () => require('./nvvm')],
] as const) {
  Object.defineProperty(module.exports, name, { enumerable: true, configurable: true, get: load });
}
