/**
 * The CUDA APIs for Node.js, loaded at run time through koffi.
 * @module cuda-bindings
 */
export * as cudart from './runtime';
export * as cuda from './driver';
export * as nvrtc from './nvrtc';
export * as core from './core';
import type * as NcclApi from './nccl';

/** A module namespace read on its first use: a proxy that requires the module when touched. */
function lazyNamespace<T extends object>(load: () => T): T {
  let mod: T | undefined;
  const m = () => (mod ??= load());
  return new Proxy({} as T, {
    get: (_, k) => (m() as Record<string | symbol, unknown>)[k],
    has: (_, k) => k in m(),
    ownKeys: () => Reflect.ownKeys(m()),
    getOwnPropertyDescriptor: (_, k) => {
      const d = Object.getOwnPropertyDescriptor(m(), k);
      return d && { value: (m() as Record<string | symbol, unknown>)[k], enumerable: d.enumerable, writable: false, configurable: true };
    },
  });
}

/**
 * NCCL (`cuda-bindings/nccl`), read on first use: importing cuda-bindings loads none of its
 * declarations, and libnccl opens only on the first NCCL call.
 */
export const nccl: typeof NcclApi = lazyNamespace(() => require('./nccl') as typeof NcclApi);
