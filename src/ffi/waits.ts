// How the awaited forms wait without holding a thread of libuv's pool (which fs, dns and zlib share):
// a wait is a query (cudaEventQuery, cudaStreamQuery) polled from the event loop. One poller serves
// every pending wait: it checks on each turn of the loop (setImmediate) while some wait is younger
// than SPIN_MS, so a short wait settles within microseconds, then on a 1 ms timer (the finest Node's
// timers go), so a long wait costs about one query (~0.3 µs) per millisecond. Calls that block in C
// and have no query (a cudaMemcpy, a compile) still run on the pool: `onPool` below, with the same
// options. Every wait takes { signal, timeout }; giving up rejects the promise but cancels no GPU work.
import type { KoffiFunction } from './binding';
import { describe } from './checks';

/** Options of every awaited wait, copy and compile. */
export interface WaitOptions {
  /** Rejects the promise with an AbortError when aborted (the GPU work goes on: it is not cancelled). */
  signal?: AbortSignal;
  /** Milliseconds to wait before rejecting with a TimeoutError (the GPU work goes on). */
  timeout?: number;
}

/** cudaErrorNotReady, and the same value that NVRTC's and the driver's queries do not use. */
export const NOT_READY = 600;
/** How long a new wait is polled on every turn of the event loop before it falls back to the timer. */
const SPIN_MS = 0.25;

const WAIT_KEYS = ['signal', 'timeout'];

/**
 * Checks a WaitOptions object for `fn` (unknown keys, the signal's and the timeout's types; `extra`
 * names further keys that the caller accepts), and throws the AbortError of a signal already aborted.
 */
export function checkWaitOptions(options: unknown, fn: string, extra: readonly string[] = []): WaitOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`${fn}: parameter 'options' must be an object such as { signal, timeout }, got ${describe(options)}`);
  for (const k of Object.keys(options)) {
    if (!WAIT_KEYS.includes(k) && !extra.includes(k))
      throw new TypeError(`${fn}: unknown option '${k}' (the options are ${[...WAIT_KEYS, ...extra].join(', ')})`);
  }
  const { signal, timeout } = options as WaitOptions;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new TypeError(`${fn}: option 'signal' must be an AbortSignal, got ${describe(signal)}`);
  if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout >= 0)))
    throw new RangeError(`${fn}: option 'timeout' must be a non-negative number of milliseconds, got ${describe(timeout)}`);
  if (signal?.aborted) throw abortError(fn, signal.reason);
  return { signal, timeout };
}

/** The error a wait rejects with when its signal aborts: an AbortError, or a TimeoutError for AbortSignal.timeout(). */
export function abortError(fn: string, reason: unknown): DOMException {
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
  const e = new DOMException(
    `${fn}: ${timedOut ? 'timed out (signal)' : 'aborted'}; the GPU work was not cancelled`,
    timedOut ? 'TimeoutError' : 'AbortError',
  );
  return Object.assign(e, { cause: reason });
}

/** The error a wait rejects with when its `timeout` passes. */
export function timeoutError(fn: string, ms: number): DOMException {
  return new DOMException(`${fn}: timed out after ${ms} ms; the GPU work was not cancelled`, 'TimeoutError');
}

/**
 * A promise that `start` settles, unless the options' signal aborts or the timeout passes first;
 * then `stop` (what `start` returned) runs and the promise rejects naming `fn`.
 */
export function guarded<T>(
  fn: string,
  o: WaitOptions,
  start: (resolve: (v: T) => void, reject: (e: unknown) => void) => () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const { signal, timeout } = o;
    if (signal?.aborted) return reject(abortError(fn, signal.reason));
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const giveUp = (e: unknown) => {
      if (settled) return;
      finish();
      stop();
      reject(e);
    };
    const onAbort = () => giveUp(abortError(fn, signal!.reason));
    const stop = start(
      (v) => {
        if (settled) return;
        finish();
        resolve(v);
      },
      (e) => {
        if (settled) return;
        finish();
        reject(e);
      },
    );
    if (settled) return;
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeout !== undefined) timer = setTimeout(() => giveUp(timeoutError(fn, timeout)), timeout);
  });
}

interface Waiter {
  since: number;
  query: () => number;
  done: (status: number) => void;
  fail: (e: unknown) => void;
  /** A wait that ends first (an event recorded before on the same stream): this one is not polled while that one is pending. */
  after?: Waiter;
  status?: number;
}

const waiters = new Set<Waiter>();
/** The latest wait of each order (see poll's `inOrderOf`). */
const latest = new WeakMap<object, Waiter>();
let scheduled = false;

/** Adds `w` to the waits polled, after the latest pending one of `inOrderOf`; starts the poller. */
function addWaiter(w: Waiter, inOrderOf: object | undefined): void {
  if (inOrderOf !== undefined) {
    const before = latest.get(inOrderOf);
    if (before !== undefined && waiters.has(before)) w.after = before;
    latest.set(inOrderOf, w);
  }
  waiters.add(w);
  schedule();
}

function schedule(): void {
  if (scheduled || waiters.size === 0) return;
  scheduled = true;
  const now = performance.now();
  let young = false;
  for (const w of waiters) if (now - w.since < SPIN_MS) young = true;
  if (young) setImmediate(tick);
  else setTimeout(tick, 1);
}

function tick(): void {
  scheduled = false;
  let finished: Waiter[] | undefined;
  for (const w of waiters) {
    if (w.after !== undefined) {
      if (waiters.has(w.after)) continue; // what ends first has not ended: nor has this
      w.after = undefined;
    }
    let status: number;
    try {
      status = w.query();
    } catch (e) {
      waiters.delete(w);
      w.fail(e);
      continue;
    }
    if (status !== NOT_READY) {
      waiters.delete(w);
      w.status = status;
      (finished ??= []).push(w);
    }
  }
  // Settled on the next turn, after what the work's last JS host function queued with setImmediate
  // (core's deferred frees and releases), as a wait on the pool did.
  if (finished !== undefined) setImmediate(settleAll, finished);
  schedule();
}

function settleAll(finished: Waiter[]): void {
  for (const w of finished) w.done(w.status!);
}

/** Pending polled waits (for tests and diagnostics). */
export function pendingWaits(): number {
  return waiters.size;
}

/**
 * Resolves with the first status other than NOT_READY that `query` returns, polled from the event
 * loop; `release` runs once, when the wait ends in any way (done, aborted, timed out). Waits given
 * the same `inOrderOf` (a stream, for events recorded on it one after another) end in the order
 * they began: only the oldest pending one of them is polled.
 */
export function poll(fn: string, query: () => number, o: WaitOptions, release: () => void = nothing, inOrderOf?: object): Promise<number> {
  if (o.signal === undefined && o.timeout === undefined) return pollToTheEnd(query, release, inOrderOf);
  let released = false;
  const once = () => {
    if (released) return;
    released = true;
    release();
  };
  const p = guarded<number>(fn, o, (resolve, reject) => {
    const first = query();
    if (first !== NOT_READY) {
      once();
      resolve(first);
      return () => {};
    }
    const w: Waiter = { since: performance.now(), query, done: (s) => (once(), resolve(s)), fail: (e) => (once(), reject(e)) };
    addWaiter(w, inOrderOf);
    return () => {
      waiters.delete(w);
      once();
    };
  });
  // An already-aborted signal rejects before `start` runs: release what the caller set up.
  return p.catch((e) => {
    once();
    throw e;
  });
}

const nothing = (): void => {};

/** poll() with no signal and no timeout: nothing to give up on, so no guard (a download's wait, on core's hot path). */
function pollToTheEnd(query: () => number, release: () => void, inOrderOf: object | undefined): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let first: number;
    try {
      first = query();
    } catch (e) {
      release();
      return reject(e);
    }
    if (first !== NOT_READY) {
      release();
      return resolve(first);
    }
    const done = (status: number) => (release(), resolve(status));
    const fail = (e: unknown) => (release(), reject(e));
    addWaiter({ since: performance.now(), query, done, fail }, inOrderOf);
  });
}

// koffi refuses more than 256 asynchronous calls queued at once; more calls than this wait here,
// in order, for one in flight to finish.
const MAX_IN_FLIGHT = 128;
let inFlight = 0;
const queued: (() => void)[] = [];

/** What calls on the pool read or write (host memory, option strings): held until each call returns. */
const inUse = new Set<readonly unknown[]>();

/**
 * Runs a bound function on the thread pool (it holds a pool thread until it returns); resolves with
 * its result. Giving up (signal, timeout) rejects at once; the call itself runs to its end, and
 * `keep` (the memory it uses) stays referenced until then.
 */
export function onPool(
  fn: string,
  f: KoffiFunction,
  args: unknown[],
  o: WaitOptions = {},
  keep: readonly unknown[] = args,
): Promise<number> {
  return guarded<number>(fn, o, (resolve, reject) => {
    inUse.add(keep);
    const start = () => {
      inFlight++;
      f.async(...args, (err: unknown, status: number) => {
        inFlight--;
        inUse.delete(keep);
        queued.shift()?.();
        if (err) reject(err);
        else resolve(status);
      });
    };
    if (inFlight < MAX_IN_FLIGHT) start();
    else queued.push(start);
    return () => {};
  });
}

/**
 * `work`, or a rejection naming `fn` once the options' signal aborts or their timeout passes first
 * (`work` itself goes on; what it uses stays referenced by it).
 */
export function unlessGivenUp<T>(fn: string, o: WaitOptions, work: Promise<T>): Promise<T> {
  if (o.signal === undefined && o.timeout === undefined) return work;
  work.catch(() => undefined); // a failure after giving up is no unhandled rejection
  return guarded<T>(fn, o, (resolve, reject) => {
    work.then(resolve, reject);
    return () => {};
  });
}
