// Waits that do not block the event loop and hold no thread of libuv's pool: each is polled from
// the event loop (see ./waits). Every function here returns a promise, reports a bad argument by
// rejecting it (with the facade's TypeError or RangeError), never by throwing, and takes
// { signal, timeout } as its last parameter. Waits that depend on the caller's thread and device
// (the legacy and per-thread default streams, a device) are pinned down when called: an event is
// recorded there, on the JS thread, and the event is polled. Copies (cudaMemcpy, memcpyHost) and
// library loads block in C and have no query: they still run on the pool.
import koffi from 'koffi';
import { libcudart as L } from '../ffi/cudart-lib.gen';
import { libcuda as D } from '../ffi/cuda-lib.gen';
import * as M from '../ffi/marshal';
import * as K from '../ffi/scratch';
import { cudaError_t, type cudaMemcpyKind } from './enums.gen';
import type { cudaEvent_t, cudaLibrary_t, cudaStream_t } from './handles.gen';
import { cudaEventDisableTiming, cudaStreamLegacy, cudaStreamPerThread } from '../ffi/constants.gen';
import type { KoffiFunction } from '../ffi/binding';
import type { Pointer } from '../ffi/marshal';
import { NOT_READY, checkWaitOptions, onPool, poll, type WaitOptions } from '../ffi/waits';
import { checkExtent, checkHandle, checkI32, checkPointer, checkSize, typeError } from '../ffi/checks';

export type { WaitOptions } from '../ffi/waits';

const fns: Record<string, KoffiFunction> = {};
/** The runtime function `name`, bound on first use. */
function rt(name: string): KoffiFunction {
  return (fns[name] ??= L.bind(name as never));
}

/** Polls `event` until it completes; destroys it afterwards when `owned`; `inOrderOf` as poll() takes it. */
async function pollEvent(fn: string, ev: bigint | null, o: WaitOptions, owned: boolean, inOrderOf?: object): Promise<[cudaError_t]> {
  const query = rt('cudaEventQuery');
  const sync = rt('cudaEventSynchronize');
  // Once the event is complete, cudaEventSynchronize returns at once and makes the completion
  // observed by the host, as a blocking wait does: stream-ordered frees become trimmable then.
  const done = () => {
    const q = query(ev) as number;
    return q === 0 ? (sync(ev) as number) : q;
  };
  const status = await poll(fn, done, o, owned ? () => rt('cudaEventDestroy')(ev) : undefined, inOrderOf);
  return [status as cudaError_t];
}

/** A fresh event (timing off) recorded into `stream` on this thread, or the error. */
function recordEvent(stream: bigint | null): [cudaError_t, bigint] {
  let err = rt('cudaEventCreateWithFlags')(K.slot[0], cudaEventDisableTiming) as cudaError_t;
  if (err !== 0) return [err, 0n];
  const ev = K.U64[0];
  err = rt('cudaEventRecord')(ev, stream) as cudaError_t;
  if (err !== 0) rt('cudaEventDestroy')(ev);
  return [err, ev];
}

let streamGetDevice: KoffiFunction | null | undefined;

/**
 * An event recorded into an ordinary stream, made on the stream's device (an event must be of the
 * stream's device), or null where the runtime cannot say which device that is.
 */
function recordOnStreamDevice(s: bigint): [cudaError_t, bigint] | null {
  let known: number;
  try {
    known = streamGetDevice === null ? -1 : ((streamGetDevice ??= rt('cudaStreamGetDevice'))(s, K.slot[0]) as number);
  } catch {
    streamGetDevice = null; // a runtime older than 12.8, which does not export it
    known = -1;
  }
  if (known !== 0 || rt('cudaGetDevice')(K.slot[1]) !== 0) return null;
  const [device, current] = [K.I32[0], K.I32[2]];
  if (device === current) return recordEvent(s);
  if (rt('cudaSetDevice')(device) !== 0) return null;
  try {
    return recordEvent(s);
  } finally {
    rt('cudaSetDevice')(current);
  }
}

/** Waits for `stream` (the facade's checks under the name `fn`); core's awaited forms call it with their own name. @internal */
export async function streamSynchronize(fn: string, stream: cudaStream_t | null, options?: WaitOptions): Promise<[cudaError_t]> {
  const s = checkHandle(stream, fn, 'stream');
  const o = checkWaitOptions(options, fn);
  // The legacy and per-thread default streams are those of the caller's thread and device.
  if (s === null || s === 0n || s === cudaStreamLegacy || s === cudaStreamPerThread) {
    const [err, ev] = recordEvent(s);
    return err !== 0 ? [err] : pollEvent(fn, ev, o, true);
  }
  const query = rt('cudaStreamQuery');
  // An idle stream's cudaStreamSynchronize returns at once and makes its completion observed by the
  // host (what a pool's trim needs of stream-ordered frees), as the blocking wait does.
  const done = () => {
    const q = query(s) as number;
    return q === 0 ? (rt('cudaStreamSynchronize')(s) as number) : q;
  };
  const first = done();
  if (first !== NOT_READY) return [first as cudaError_t];
  // The work queued so far, pinned by an event: a stream that keeps being fed may never be idle.
  const pinned = recordOnStreamDevice(s);
  if (pinned === null) return [(await poll(fn, done, o)) as cudaError_t];
  const [err, ev] = pinned;
  return err !== 0 ? [err] : pollEvent(fn, ev, o, true);
}

/**
 * Waits for `event`, under the name `fn`; `inOrderOf` (core's transfers: their stream) says the event
 * was recorded after those waited for before with the same one, which are polled first. @internal
 */
export async function eventSynchronize(fn: string, event: cudaEvent_t, options?: WaitOptions, inOrderOf?: object): Promise<[cudaError_t]> {
  const e = checkHandle(event, fn, 'event');
  return pollEvent(fn, e, checkWaitOptions(options, fn), false, inOrderOf);
}

/** Waits for the caller's current device, under the name `fn`. @internal */
export async function deviceSynchronize(fn: string, options?: WaitOptions): Promise<[cudaError_t]> {
  const o = checkWaitOptions(options, fn);
  // Makes the current device's primary context current on this thread, as any runtime call would.
  let err = rt('cudaFree')(null) as cudaError_t;
  if (err !== 0) return [err];
  const ctxGetCurrent = D.bind('cuCtxGetCurrent');
  if (ctxGetCurrent(K.slot[0]) !== 0) return [cudaError_t.cudaErrorUnknown];
  const ctx = K.U64[0];
  // An event that captures all the context's work now (cuCtxRecordEvent), polled like any other.
  err = rt('cudaEventCreateWithFlags')(K.slot[0], cudaEventDisableTiming) as cudaError_t;
  if (err !== 0) return [err];
  const ev = K.U64[0];
  if ((D.bind('cuCtxRecordEvent')(ctx, ev) as number) === 0) return pollEvent(fn, ev, o, true);
  rt('cudaEventDestroy')(ev);
  // Where the driver refuses (a stream of the context is capturing), the blocking form on the pool
  // reports it; the runtime's own call then returns at once with the runtime's error for the device.
  const res = await onPool(fn, D.bind('cuCtxSynchronize_v2'), [ctx], o);
  if (res === 0) return [cudaError_t.cudaSuccess];
  return [(rt('cudaDeviceSynchronize')() as cudaError_t) || cudaError_t.cudaErrorUnknown];
}

/** Waits until `stream` has finished the work queued so far (cudaStreamSynchronize), polled from the event loop; `options.signal`/`timeout` give up waiting (the GPU work is not cancelled). */
export async function cudaStreamSynchronize(stream: cudaStream_t | null, options?: WaitOptions): Promise<[cudaError_t]> {
  return streamSynchronize('async.cudaStreamSynchronize', stream, options);
}

/** Waits until `event` has completed (cudaEventSynchronize), polled from the event loop; `options.signal`/`timeout` give up waiting (the GPU work is not cancelled). */
export async function cudaEventSynchronize(event: cudaEvent_t, options?: WaitOptions): Promise<[cudaError_t]> {
  return eventSynchronize('async.cudaEventSynchronize', event, options);
}

/**
 * Waits until the caller's current device has finished all the work queued so far
 * (cudaDeviceSynchronize): an event recorded for its context (cuCtxRecordEvent), polled from the
 * event loop. `options.signal`/`timeout` give up waiting (the GPU work is not cancelled).
 */
export async function cudaDeviceSynchronize(options?: WaitOptions): Promise<[cudaError_t]> {
  return deviceSynchronize('async.cudaDeviceSynchronize', options);
}

/** A copy's two sides and byte count, checked: host memory must hold `count` bytes; null only where `nullable`. */
function copyArgs(fn: string, dst: Pointer, src: Pointer, count: number, nullable: boolean): [Pointer, Pointer, number] {
  const d = checkPointer(dst, fn, 'dst');
  const s = checkPointer(src, fn, 'src');
  const n = checkSize(count, fn, 'count');
  for (const [v, p] of [
    [d, 'dst'],
    [s, 'src'],
  ] as const) {
    if (v === null && !nullable) typeError(fn, p, 'host memory or an address', v);
    checkExtent(v, n, fn, p, 'count');
  }
  return [d, s, n];
}

/** cudaMemcpy on the pool under the name `fn` (core's copies call it with their own name). @internal */
export async function memcpy(
  fn: string,
  dst: Pointer,
  src: Pointer,
  count: number,
  kind: cudaMemcpyKind,
  options?: WaitOptions,
): Promise<[cudaError_t]> {
  const [d, s, n] = copyArgs(fn, dst, src, count, true);
  const k = checkI32(kind, fn, 'kind');
  const o = checkWaitOptions(options, fn);
  return [(await onPool(fn, rt('cudaMemcpy'), [M.addressOf(d), M.addressOf(s), n, k], o, [d, s])) as cudaError_t];
}

/**
 * cudaMemcpy on the thread pool (a blocking copy has no query, so it holds a pool thread until it
 * is done): the promise settles when the copy is done, and the host memory (kept alive until then)
 * must stay untouched meanwhile. `options.signal`/`timeout` reject early, but the copy runs to its
 * end. Pointers are used as they are (unified addressing), so the pool thread's device does not matter.
 */
export async function cudaMemcpy(
  dst: Pointer,
  src: Pointer,
  count: number,
  kind: cudaMemcpyKind,
  options?: WaitOptions,
): Promise<[cudaError_t]> {
  return memcpy('async.cudaMemcpy', dst, src, count, kind, options);
}

let hostMemcpy: KoffiFunction | undefined;

/**
 * Copies `count` bytes of host memory on the thread pool (the C library's memcpy); several at once
 * copy in parallel. Both sides are held until the copy is over and must stay untouched meanwhile;
 * `options.signal`/`timeout` reject early, but the copy runs to its end.
 */
export async function memcpyHost(dst: Pointer, src: Pointer, count: number, options?: WaitOptions): Promise<void> {
  const fn = 'async.memcpyHost';
  const [d, s, n] = copyArgs(fn, dst, src, count, false);
  const o = checkWaitOptions(options, fn);
  hostMemcpy ??= koffi
    .load(process.platform === 'win32' ? 'msvcrt.dll' : 'libc.so.6')
    .func('void *memcpy(void *dst, const void *src, size_t n)');
  await onPool(fn, hostMemcpy, [M.addressOf(d), M.addressOf(s), n], o, [d, s]);
}

/** Loads a library on the pool under the name `fn` from bytes or (a string) a file. @internal */
export async function libraryLoad(fn: string, code: Pointer | string, options?: WaitOptions): Promise<[cudaError_t, cudaLibrary_t | null]> {
  const file = typeof code === 'string';
  const c = file ? M.str(code, fn, 'fileName') : checkPointer(code, fn, 'code');
  if (c === null) typeError(fn, 'code', 'device code or an address', c);
  const o = checkWaitOptions(options, fn);
  const out = new BigUint64Array(1);
  const f = rt(file ? 'cudaLibraryLoadFromFile' : 'cudaLibraryLoadData');
  const err = (await onPool(fn, f, [out, file ? c : M.addressOf(c as Pointer), null, null, 0, null, null, 0], o, [out, c])) as cudaError_t;
  return err !== 0 ? [err, null] : [err, out[0] as cudaLibrary_t];
}

/**
 * cudaLibraryLoadData (without JIT or library options) on the thread pool: loading can JIT-compile
 * PTX, which takes long. `code` (a cubin, fatbin, or PTX ending in a NUL) is held until it is
 * loaded; `options.signal`/`timeout` reject early, but the load runs to its end (and is not unloaded).
 */
export async function cudaLibraryLoadData(code: Pointer, options?: WaitOptions): Promise<[cudaError_t, cudaLibrary_t | null]> {
  return libraryLoad('async.cudaLibraryLoadData', code, options);
}

/** cudaLibraryLoadFromFile (without JIT or library options) on the thread pool; as cudaLibraryLoadData. */
export async function cudaLibraryLoadFromFile(fileName: string, options?: WaitOptions): Promise<[cudaError_t, cudaLibrary_t | null]> {
  if (typeof fileName !== 'string') typeError('async.cudaLibraryLoadFromFile', 'fileName', 'a file name', fileName);
  return libraryLoad('async.cudaLibraryLoadFromFile', fileName, options);
}
