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
export type { Result, OkOutputs } from './ffi/result';
// NCCL's koffi declarations are read on its first call (src/ffi/nccl-lib.ts), and libnccl opens then.
export * as nccl from './nccl';
import type * as nvmlNamespace from './nvml';

/** A module's namespace that loads the module on first use (any property read, `in`, or key listing). */
function lazyNamespace<T extends object>(load: () => T): T {
  let mod: T | undefined;
  const get = () => (mod ??= load());
  return new Proxy({} as T, {
    get: (_t, k) => (get() as any)[k],
    has: (_t, k) => k in get(),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_t, k) => {
      const d = Reflect.getOwnPropertyDescriptor(get(), k);
      return d && { ...d, configurable: true };
    },
  });
}

/**
 * NVML, the NVIDIA Management Library (`cuda-bindings/nvml`). Its module loads on first use of
 * this namespace, so importing the package costs nothing for it.
 */
export const nvml: typeof nvmlNamespace = lazyNamespace(() => require('./nvml') as typeof nvmlNamespace);
