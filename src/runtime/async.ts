// Waits that do not block the event loop: the wait runs on libuv's thread pool and the promise
// settles on the JS thread. Every function here returns a promise and reports a bad argument by
// rejecting it (with the facade's TypeError or RangeError), never by throwing. A pool thread has its own current device and its own per-thread
// default stream, so waits that depend on the caller's thread are first pinned down on it: a
// special stream becomes an event recorded on the JS thread, a device becomes its context.
import koffi from 'koffi';
import { libcudart as L } from '../ffi/cudart-lib';
import { libcuda as D } from '../ffi/cuda-lib';
import * as M from '../ffi/marshal';
import * as K from '../ffi/scratch';
import { cudaError_t, type cudaMemcpyKind } from './enums.gen';
import type { cudaEvent_t, cudaStream_t } from './handles.gen';
import type { KoffiFunction } from '../ffi/binding';
import type { Pointer } from '../ffi/marshal';
import { cudaEventDisableTiming, cudaStreamLegacy, cudaStreamPerThread } from '../ffi/constants.gen';


// koffi refuses more than 256 asynchronous calls queued at once; more waits than this wait here,
// in order, for one in flight to finish. (The pool's threads are shared with fs and dns: a wait
// holds one until its work is done.)
const MAX_IN_FLIGHT = 128;
let inFlight = 0;
const queued: (() => void)[] = [];

/** Runs a bound function on the thread pool; resolves with its status. */
function poolCall(f: KoffiFunction, ...args: unknown[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = () => {
      inFlight++;
      f.async(...args, (err: unknown, status: number) => {
        inFlight--;
        queued.shift()?.();
        if (err) reject(err);
        else resolve(status);
      });
    };
    if (inFlight < MAX_IN_FLIGHT) start();
    else queued.push(start);
  });
}

/** Runs a bound function on the thread pool; resolves with its status as a facade tuple. */
async function onPool(f: KoffiFunction, ...args: unknown[]): Promise<[cudaError_t]> {
  return [(await poolCall(f, ...args)) as cudaError_t];
}

let eventCreate: KoffiFunction | undefined;
let eventRecord: KoffiFunction | undefined;
let eventDestroy: KoffiFunction | undefined;
let eventSync: KoffiFunction | undefined;
let streamSync: KoffiFunction | undefined;

/** Records a fresh event into `stream` on this thread and waits for it on the pool. */
async function waitThroughEvent(stream: bigint | null): Promise<[cudaError_t]> {
  eventCreate ??= L.bind('cudaEventCreateWithFlags');
  eventRecord ??= L.bind('cudaEventRecord');
  eventDestroy ??= L.bind('cudaEventDestroy');
  eventSync ??= L.bind('cudaEventSynchronize');
  let err = eventCreate(K.slot[0], cudaEventDisableTiming) as cudaError_t;
  if (err !== 0) return [err];
  const ev = K.U64[0];
  try {
    err = eventRecord(ev, stream) as cudaError_t;
    if (err !== 0) return [err];
    return await onPool(eventSync, ev);
  } finally {
    eventDestroy(ev);
  }
}

/** Waits until `stream` has finished its work, off the JS thread (cudaStreamSynchronize). */
export async function cudaStreamSynchronize(stream: cudaStream_t | null): Promise<[cudaError_t]> {
  const s = M.handle(stream, 'async.cudaStreamSynchronize', 'stream');
  // The legacy and per-thread default streams are those of the caller's thread and device.
  if (s === null || s === 0n || s === cudaStreamLegacy || s === cudaStreamPerThread) return waitThroughEvent(s);
  streamSync ??= L.bind('cudaStreamSynchronize');
  return onPool(streamSync, s);
}

/** Waits until `event` has completed, off the JS thread (cudaEventSynchronize). */
export async function cudaEventSynchronize(event: cudaEvent_t): Promise<[cudaError_t]> {
  const e = M.handle(event, 'async.cudaEventSynchronize', 'event');
  eventSync ??= L.bind('cudaEventSynchronize');
  return onPool(eventSync, e);
}

let ctxGetCurrent: KoffiFunction | undefined;
let ctxSync: KoffiFunction | undefined;
let free: KoffiFunction | undefined;

/**
 * Waits until the caller's current device has finished all its work, off the JS thread
 * (cudaDeviceSynchronize). The pool thread synchronizes the device's context, read on this thread.
 */
export async function cudaDeviceSynchronize(): Promise<[cudaError_t]> {
  free ??= L.bind('cudaFree');
  // Makes the current device's primary context current on this thread, as any runtime call would.
  let err = free(null) as cudaError_t;
  if (err !== 0) return [err];
  ctxGetCurrent ??= D.bind('cuCtxGetCurrent');
  ctxSync ??= D.bind('cuCtxSynchronize_v2');
  err = ctxGetCurrent(K.slot[0]) as number;
  if (err !== 0) return [cudaError_t.cudaErrorUnknown];
  const ctx = K.U64[0];
  const res = await poolCall(ctxSync, ctx);
  if (res === 0) return [cudaError_t.cudaSuccess];
  // The driver's status is not the runtime's: the work is over, so the runtime's own call returns
  // at once with the runtime's error for the device.
  return [(L.bind('cudaDeviceSynchronize')() as cudaError_t) || cudaError_t.cudaErrorUnknown];
}

let memcpy: KoffiFunction | undefined;
let hostMemcpy: KoffiFunction | undefined;
/** Host memory that copies on the pool are reading or writing. */
const inUse = new Set<unknown[]>();

/** A copy's two sides and byte count, checked: host memory must hold `count` bytes; null only where `nullable`. */
function copyArgs(fn: string, dst: Pointer, src: Pointer, count: number, nullable: boolean): [Pointer, Pointer, number] {
  const d = M.pointer(dst, fn, 'dst');
  const s = M.pointer(src, fn, 'src');
  const n = M.size(count, fn, 'count');
  for (const [v, p] of [[d, 'dst'], [s, 'src']] as const) {
    if (v === null && !nullable) M.typeError(fn, p, 'host memory or an address', v);
    M.checkExtent(v, n, fn, p, 'count');
  }
  return [d, s, n];
}

/** Runs a copy on the pool with raw addresses; the memory behind `dst` and `src` is held until it is over. */
async function copyOnPool(f: KoffiFunction, d: Pointer, s: Pointer, ...rest: unknown[]): Promise<number> {
  const held = [d, s];
  inUse.add(held);
  try {
    return await poolCall(f, M.addressOf(d), M.addressOf(s), ...rest);
  } finally {
    inUse.delete(held);
  }
}

/**
 * cudaMemcpy on the thread pool: the promise settles when the copy is done, and the host memory
 * (kept alive until then) must stay untouched meanwhile. Pointers are used as they are (unified
 * addressing), so the pool thread's current device does not matter.
 */
export async function cudaMemcpy(dst: Pointer, src: Pointer, count: number, kind: cudaMemcpyKind): Promise<[cudaError_t]> {
  const [d, s, n] = copyArgs('async.cudaMemcpy', dst, src, count, true);
  const k = M.i32(kind, 'async.cudaMemcpy', 'kind');
  memcpy ??= L.bind('cudaMemcpy');
  return [(await copyOnPool(memcpy, d, s, n, k)) as cudaError_t];
}

/**
 * Copies `count` bytes of host memory on the thread pool (the C library's memcpy); several at once
 * copy in parallel. Both sides are held until the promise settles and must stay untouched meanwhile.
 */
export async function memcpyHost(dst: Pointer, src: Pointer, count: number): Promise<void> {
  const [d, s, n] = copyArgs('async.memcpyHost', dst, src, count, false);
  hostMemcpy ??= koffi.load(process.platform === 'win32' ? 'msvcrt.dll' : 'libc.so.6').func('void *memcpy(void *dst, const void *src, size_t n)');
  await copyOnPool(hostMemcpy, d, s, n);
}
