// JS functions as CUDA host functions (cudaLaunchHostFunc, cudaStreamAddCallback, and the driver's
// twins). CUDA calls them from its own thread; koffi relays each call to the JS thread while the
// CUDA thread waits. So:
//  - one native trampoline per kind is registered once, for the life of the process, and each
//    launch passes it a token as its user data; the token finds the JS function. No registration
//    is ever released under a pending call, and koffi's limit of 8192 registrations never binds;
//  - a JS exception in a callback must not escape into koffi (that ends the process): it is caught
//    and emitted as an 'error' event on `hostCallbacks` (printed to stderr when nobody listens);
//  - while callbacks are pending the event loop is kept alive, so the process does not exit
//    under them;
//  - a blocking wait on the JS thread for a stream with a pending callback would deadlock (the
//    callback needs the thread that waits), so it is refused with an error that says what to use.
import { EventEmitter } from 'node:events';
import koffi from 'koffi';
import { handle, typeError } from './marshal';

/** Emits 'error' (error, details) when a JS host function throws. */
export const hostCallbacks = new EventEmitter();

interface Pending {
  fn: (...args: unknown[]) => void;
  kind: 'hostFn' | 'streamCallback';
  userData: unknown;
  stream: bigint;
  where: string;
}

const byToken = new Map<bigint, Pending>();
let nextToken = 1n;
/** Streams with JS host functions that have not run yet, and how many; the key 0n is the legacy default stream. */
const pendingByStream = new Map<bigint, number>();
let keepAlive: NodeJS.Timeout | undefined;

function report(e: unknown, where: string): void {
  if (hostCallbacks.listenerCount('error') > 0) hostCallbacks.emit('error', e, { where });
  else process.stderr.write(`cuda-bindings: a host function passed to ${where} threw: ${(e as Error)?.stack ?? String(e)}\n`);
}

/** Forgets a token: its callback ran, or its launch failed. */
function settle(token: bigint): Pending | undefined {
  const p = byToken.get(token);
  if (!p) return undefined;
  byToken.delete(token);
  const n = (pendingByStream.get(p.stream) ?? 1) - 1;
  if (n > 0) pendingByStream.set(p.stream, n);
  else pendingByStream.delete(p.stream);
  if (byToken.size === 0) {
    if (keepAlive) {
      clearInterval(keepAlive);
      keepAlive = undefined;
    }
    // Out of the callback first: the frees may wait for the device.
    if (deferred.length) setImmediate(runDeferred);
  }
  return p;
}

// Frees that wait for the device (cudaFree, cudaFreeHost) must not run while a JS host function is
// pending: the device would wait for the callback and the callback for this thread. A finalizer can
// run at any time, so such frees wait here until no host function is pending.
const deferred: (() => void)[] = [];

function runDeferred(): void {
  while (deferred.length && byToken.size === 0) deferred.shift()!();
}

/** Runs `free` now, or once no JS host function is pending (see above). */
export function whenNoHostFunctionsPending(free: () => void): void {
  if (byToken.size === 0) free();
  else deferred.push(free);
}

function run(token: bigint | number, args: (userData: unknown) => unknown[]): void {
  // koffi hands 64-bit integers over as numbers when they fit.
  const p = settle(BigInt(token));
  if (!p) return;
  try {
    p.fn(...args(p.userData));
  } catch (e) {
    report(e, p.where);
  }
}

let hostFnTrampoline: bigint | undefined;
let streamCallbackTrampoline: bigint | undefined;

function trampoline(kind: 'hostFn' | 'streamCallback'): bigint {
  if (kind === 'hostFn') {
    return (hostFnTrampoline ??= koffi.register(
      (token: bigint | number) => run(token, (u) => [u]),
      koffi.pointer(koffi.proto('void', ['uint64_t'])),
    ) as bigint);
  }
  return (streamCallbackTrampoline ??= koffi.register(
    (stream: bigint | number, status: number, token: bigint | number) => run(token, (u) => [BigInt(stream), status, u]),
    koffi.pointer(koffi.proto('void', ['uint64_t', 'int', 'uint64_t'])),
  ) as bigint);
}

/** What a launch passes to C for a host function: the function pointer and the user data. */
export interface HostFnRegistration {
  ptr: bigint;
  userData: unknown;
  /** Forgets the callback when the launch failed and CUDA will never call it. */
  cancel(): void;
}

/**
 * Prepares `fn` as a host function for a launch on `stream`: `kind` 'hostFn' gets (userData),
 * 'streamCallback' gets (stream, status, userData). A bigint is a native function pointer and
 * passes through with the user data untouched.
 */
export function registerHostFn(
  fn: unknown, userData: unknown, stream: bigint | null, kind: 'hostFn' | 'streamCallback', where: string, param: string,
): HostFnRegistration {
  if (typeof fn === 'bigint' || fn === null) return { ptr: handle(fn, where, param) ?? 0n, userData, cancel: () => undefined };
  if (typeof fn !== 'function') typeError(where, param, 'a JS function or a native function pointer (bigint)', fn);
  const token = nextToken++;
  const key = stream ?? 0n;
  byToken.set(token, { fn: fn as (...args: unknown[]) => void, kind, userData, stream: key, where });
  pendingByStream.set(key, (pendingByStream.get(key) ?? 0) + 1);
  keepAlive ??= setInterval(() => undefined, 1 << 30);
  guardExit();
  return { ptr: trampoline(kind), userData: token, cancel: () => void settle(token) };
}

let exitGuarded = false;
/**
 * A process that exits (process.exit) while a JS host function is pending would never finish: the
 * CUDA thread calling the function waits for this thread, and Node's exit joins the thread pool,
 * where a wait on that stream may be blocked for good. So when the process exits with host
 * functions pending, it ends at once with its exit code (_exit: no more JS and no atexit handlers;
 * stdout and stderr to files and pipes are written synchronously on Linux, so nothing printed is lost).
 */
function guardExit(): void {
  if (exitGuarded || process.platform !== 'linux') return;
  exitGuarded = true;
  process.on('exit', (code) => {
    if (byToken.size === 0) return;
    try {
      koffi.load('libc.so.6').func('void _exit(int)')(typeof code === 'number' ? code : 0);
    } catch {
      // No libc to call: the exit goes on as Node does it.
    }
  });
}

const LEGACY = 1n;
const PER_THREAD = 2n;

/**
 * Refuses a blocking wait that would deadlock: one on a stream with a pending JS host function, or
 * on the device or the legacy default stream (which wait for other streams) while any is pending.
 */
export function guardBlockingWait(where: string, stream?: bigint | null): void {
  const pending = byToken.size;
  if (pending === 0) return;
  const s = stream ?? 0n;
  const blocked = stream === undefined || s === 0n || s === LEGACY || s === PER_THREAD ? pending > 0 : pendingByStream.has(s);
  if (blocked) {
    throw new Error(
      `${where}: ${pending} JS host function${pending === 1 ? ' is' : 's are'} still pending, and they run on this thread: ` +
        `a blocking wait here would never return. Await the promise form instead (cudart.async.cudaStreamSynchronize and the like).`,
    );
  }
}

/** How many JS host functions have been launched and not run yet. */
export function pendingHostFunctions(): number {
  return byToken.size;
}

// Unnamed: koffi's type names are per process, and a module can be loaded more than once in one.
const HostFnProto = koffi.pointer(koffi.proto('void', ['void *']));
const persistent = new WeakMap<object, bigint>();

/**
 * A native pointer that runs `fn(userData)` on the JS thread, for a graph host node: it may run at
 * every launch of the graph, for as long as the graph lives, so the registration is kept for the
 * life of the process (one per distinct function). An exception is reported like any host function's.
 */
export function persistentHostFn(fn: (userData: bigint) => void, where: string): bigint {
  let ptr = persistent.get(fn);
  if (ptr === undefined) {
    ptr = koffi.register((userData: bigint) => {
      try {
        fn(userData);
      } catch (e) {
        report(e, where);
      }
    }, HostFnProto) as bigint;
    persistent.set(fn, ptr);
  }
  return ptr;
}
