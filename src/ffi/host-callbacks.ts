// JS functions as CUDA host functions (cudaLaunchHostFunc, cudaStreamAddCallback, the driver's
// twins, graph host nodes). CUDA calls them from its own thread; koffi relays each call to the JS
// thread while the CUDA thread waits. So:
//  - one native trampoline per signature is registered once, for the life of the process, and each
//    use passes it a token as its user data; the token finds the JS function. A graph host node's
//    function (cudaHostNodeParams.fn) goes through the same trampoline, its token in the struct's
//    userData. No registration is ever released, and koffi's limit of 8192 registrations never
//    binds: there are two;
//  - a function launched on a stream runs once and its token is forgotten when it ran; one launched
//    on a capturing stream (cudaStreamIsCapturing) is recorded into a graph and runs at every launch
//    of it, so its token is kept until the graph and its execs are closed (core's Graph and
//    GraphExec release it; with the facade alone it is kept for the life of the process), and it is
//    not pending: nothing waits for it before the graph is launched;
//  - a JS exception in a callback must not escape into koffi (that ends the process): it is caught
//    and emitted as an 'error' event on `hostCallbacks` (printed to stderr when nobody listens);
//  - while launched functions are pending the event loop is kept alive, so the process does not
//    exit under them; so are a graph's functions from a launch through core's GraphExec.launch until
//    they ran (the facade's cudaGraphLaunch is not counted);
//  - a blocking wait on the JS thread for a stream with a pending callback would deadlock (the
//    callback needs the thread that waits), so it is refused with an error that says what to use.
import { EventEmitter } from 'node:events';
import koffi from 'koffi';
import { checkHandle, typeError } from './checks';
import { libcudart } from './cudart-lib.gen';
import { libcuda } from './cuda-lib.gen';
import { CU_STREAM_CAPTURE_STATUS_ACTIVE, cudaStreamCaptureStatusActive, cudaStreamLegacy, cudaStreamPerThread } from './constants.gen';
import type { KoffiFunction } from './binding';

/** Emits 'error' (error, details) when a JS host function throws. */
export const hostCallbacks = new EventEmitter();

interface Entry {
  fn: (...args: unknown[]) => void;
  kind: 'hostFn' | 'streamCallback';
  userData: unknown;
  stream: bigint;
  where: string;
  /** 'once': launched on a stream, forgotten when it runs; 'graph': runs at every launch of a graph until released. */
  life: 'once' | 'graph';
  /** For 'graph' entries: how many Graphs/GraphExecs hold it (released at 0 once claimed). */
  refs: number;
  /** A host node's function whose params were passed to CUDA: a graph may hold it, so it is kept for good. */
  escaped?: boolean;
  /** For 'graph' entries: the streams of core's launches that have not run it yet, oldest first. */
  launches?: bigint[];
  /** For 'graph' entries: no holder keeps it; it is forgotten once its outstanding launches ran it. */
  released?: boolean;
}

const byToken = new Map<bigint, Entry>();
let nextToken = 1n;
/** Launched functions that have not run yet. */
let pending = 0;
/** Streams with launched JS host functions that have not run yet, and how many; the key 0n is the legacy default stream. */
const pendingByStream = new Map<bigint, number>();
/** Tokens captured into the graph a stream is capturing, until core's Stream.capture claims them. */
const capturedByStream = new Map<bigint, bigint[]>();
let keepAlive: NodeJS.Timeout | undefined;
let exitGrace: NodeJS.Timeout | undefined;
const EXIT_GRACE_MS = 10;

function report(e: unknown, where: string): void {
  if (hostCallbacks.listenerCount('error') > 0) hostCallbacks.emit('error', e, { where });
  else process.stderr.write(`cuda-bindings: a host function passed to ${where} threw: ${(e as Error)?.stack ?? String(e)}\n`);
}

/** One more call pending on `stream`: the event loop stays alive and blocking waits are refused. */
function addPending(stream: bigint): void {
  pending++;
  pendingByStream.set(stream, (pendingByStream.get(stream) ?? 0) + 1);
  keepAlive ??= setInterval(() => undefined, 1 << 30);
  guardExit();
}

/** A call pending on `stream` ran (or will never run). */
function donePending(stream: bigint): void {
  pending--;
  const n = (pendingByStream.get(stream) ?? 1) - 1;
  if (n > 0) pendingByStream.set(stream, n);
  else pendingByStream.delete(stream);
  if (pending === 0) {
    if (keepAlive) {
      clearInterval(keepAlive);
      keepAlive = undefined;
    }
    // Out of the callback first: the frees may wait for the device.
    if (deferred.length) setImmediate(runDeferred);
  }
}

/** Forgets a launched token: its callback ran, or its launch failed. */
function settle(token: bigint): Entry | undefined {
  const p = byToken.get(token);
  if (!p) return undefined;
  byToken.delete(token);
  if (p.life === 'once') donePending(p.stream);
  return p;
}

// Frees that wait for the device (cudaFree, cudaFreeHost) must not run while a JS host function is
// pending: the device would wait for the callback and the callback for this thread. A finalizer can
// run at any time, so such frees wait here until no host function is pending.
const deferred: (() => void)[] = [];

function runDeferred(): void {
  while (deferred.length && pending === 0) deferred.shift()!();
}

/** Whether a JS host function is pending (a free that may wait for the device must wait for it: see above). */
export function hostFunctionsPending(): boolean {
  return pending !== 0;
}

/** Runs `free` now, or once no JS host function is pending (see above). */
export function whenNoHostFunctionsPending(free: () => void): void {
  if (pending === 0) free();
  else deferred.push(free);
}

function run(token: bigint | number, args: (userData: unknown) => unknown[]): void {
  // koffi hands 64-bit integers over as numbers when they fit.
  const t = BigInt(token);
  const p = byToken.get(t);
  if (!p) {
    // A launched token is called once and forgotten after; only a released graph token comes back.
    report(
      new Error(
        `a JS host function of a graph ran after it was released (its Graph and GraphExecs were closed or collected, or its host node params struct was collected); it was skipped`,
      ),
      'a graph',
    );
    return;
  }
  if (p.life === 'once') settle(t);
  else if (p.launches?.length) {
    donePending(p.launches.shift()!);
    if (p.released && p.launches.length === 0) byToken.delete(t);
  }
  try {
    p.fn(...args(p.userData));
  } catch (e) {
    report(e, p.where);
  }
  // The CUDA thread that called this is still on its way out of koffi's trampoline when the
  // function returns: a process that exits at once can crash under it. A few ms of grace (one
  // timer, re-armed) let it leave first.
  if (exitGrace) exitGrace.refresh();
  else exitGrace = setTimeout(() => undefined, EXIT_GRACE_MS);
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

let isCapturingRt: KoffiFunction | undefined;
let isCapturingDrv: KoffiFunction | undefined;
const captureStatus = new Int32Array(2);

/** Whether `stream` is capturing into a graph (a failed query counts as not capturing: the launch then fails the same way). */
function capturing(stream: bigint | null, where: string): boolean {
  const driver = !where.startsWith('cuda');
  const f = driver ? (isCapturingDrv ??= libcuda.bind('cuStreamIsCapturing')) : (isCapturingRt ??= libcudart.bind('cudaStreamIsCapturing'));
  captureStatus[0] = 0;
  return f(stream, captureStatus) === 0 && captureStatus[0] === (driver ? CU_STREAM_CAPTURE_STATUS_ACTIVE : cudaStreamCaptureStatusActive);
}

/**
 * Prepares `fn` as a host function for a launch on `stream`: `kind` 'hostFn' gets (userData),
 * 'streamCallback' gets (stream, status, userData). A bigint is a native function pointer and
 * passes through with the user data untouched. On a capturing stream the function is kept for the
 * graph's launches (see the top of this file).
 */
export function registerHostFn(
  fn: unknown,
  userData: unknown,
  stream: bigint | null,
  kind: 'hostFn' | 'streamCallback',
  where: string,
  param: string,
): HostFnRegistration {
  if (typeof fn === 'bigint' || fn === null) return { ptr: checkHandle(fn, where, param) ?? 0n, userData, cancel: () => undefined };
  if (typeof fn !== 'function') typeError(where, param, 'a JS function or a native function pointer (bigint)', fn);
  const token = nextToken++;
  const key = stream ?? 0n;
  const entry: Entry = { fn: fn as (...args: unknown[]) => void, kind, userData, stream: key, where, life: 'once', refs: 0 };
  if (capturing(stream, where)) {
    entry.life = 'graph';
    byToken.set(token, entry);
    const list = capturedByStream.get(key);
    if (list) list.push(token);
    else capturedByStream.set(key, [token]);
    return { ptr: trampoline(kind), userData: token, cancel: () => void forgetCaptured(key, token) };
  }
  byToken.set(token, entry);
  addPending(key);
  return { ptr: trampoline(kind), userData: token, cancel: () => void settle(token) };
}

function forgetCaptured(stream: bigint, token: bigint): void {
  byToken.delete(token);
  const list = capturedByStream.get(stream);
  const i = list ? list.indexOf(token) : -1;
  if (i >= 0) list!.splice(i, 1);
}

/**
 * The tokens of the JS host functions captured on `stream` since the last claim (core's
 * Stream.capture takes them for its Graph); they stay registered until released.
 */
export function claimCapturedHostFns(stream: bigint | null): bigint[] {
  const key = stream ?? 0n;
  const list = capturedByStream.get(key) ?? [];
  capturedByStream.delete(key);
  return list;
}

/** One more holder (a Graph, a GraphExec) of the captured functions `tokens`. */
export function retainHostFns(tokens: readonly bigint[]): void {
  for (const t of tokens) {
    const e = byToken.get(t);
    if (e) e.refs++;
  }
}

/**
 * One holder less of `tokens`; a function no holder keeps is forgotten once the launches counted
 * for it have run it (a later call of it is reported, not run).
 */
export function releaseHostFns(tokens: readonly bigint[]): void {
  for (const t of tokens) {
    const e = byToken.get(t);
    if (!e || e.life !== 'graph' || --e.refs > 0) continue;
    if (e.launches?.length) e.released = true;
    else byToken.delete(t);
  }
}

/**
 * Counts a launch on `stream` of a graph that runs the captured functions `tokens` (core's
 * GraphExec.launch): each is pending until it ran, so blocking waits are refused meanwhile and the
 * process stays alive for it. `failed` undoes the count of a launch CUDA refused.
 */
export function launchHostFns(tokens: readonly bigint[], stream: bigint | null, failed = false): void {
  const key = stream ?? 0n;
  for (const t of tokens) {
    const e = byToken.get(t);
    if (!e || e.life !== 'graph') continue;
    if (failed) {
      const i = e.launches ? e.launches.lastIndexOf(key) : -1;
      if (i < 0) continue;
      e.launches!.splice(i, 1);
      donePending(key);
    } else {
      (e.launches ??= []).push(key);
      addPending(key);
    }
  }
}

/** How many JS host functions are kept for graphs (captured, or set on host node params). */
export function graphHostFunctions(): number {
  let n = 0;
  for (const e of byToken.values()) if (e.life === 'graph') n++;
  return n;
}

// A graph host node's function lives as long as the object that holds its token (the params struct
// and every copy or parent of it): when that is collected, the token is forgotten. Once the params
// were passed to CUDA, a graph (or an exec made from it, or a clone) may call it at any later
// launch, and the facade cannot see when the last of them is destroyed: it is then kept for good.
const nodeTokens = new FinalizationRegistry<bigint>((t) => {
  if (!byToken.get(t)?.escaped) byToken.delete(t);
});

/** The token of a graph host node's JS function; `holder` keeps it: it is forgotten once `holder` is collected. */
export interface GraphHostFn {
  /** The trampoline: what C's `fn` field holds. */
  ptr: bigint;
  /** What C's `userData` field holds. */
  token: bigint;
  holder: object;
}

/** Prepares `fn` as a graph host node's function, run at every launch with `userData` (see GraphHostFn). */
export function graphHostFn(fn: (userData: bigint) => void, userData: bigint, where: string): GraphHostFn {
  const token = nextToken++;
  byToken.set(token, { fn: fn as (...args: unknown[]) => void, kind: 'hostFn', userData, stream: 0n, where, life: 'graph', refs: 1 });
  const holder = { token };
  nodeTokens.register(holder, token);
  return { ptr: trampoline('hostFn'), token, holder };
}

/**
 * A new token for the function of graph host node token `token`, with other user data (for a struct
 * whose token a graph or a copy may share); undefined when `token` is not a live one of ours.
 */
export function rebindGraphHostFn(token: bigint, userData: bigint, where: string): GraphHostFn | undefined {
  const e = byToken.get(token);
  return e && e.life === 'graph' ? graphHostFn(e.fn as (userData: bigint) => void, userData, where) : undefined;
}

/** Whether a graph host node's function was passed to CUDA (and is kept for good). */
export function graphHostFnPassed(token: bigint): boolean {
  return byToken.get(token)?.escaped === true;
}

/** Keeps a graph host node's function for good: its params were passed to CUDA. */
export function keepGraphHostFn(token: bigint): void {
  const e = byToken.get(token);
  if (e) e.escaped = true;
}

/** The user data a graph host node's function gets, by its token (undefined when it is not ours). */
export function graphHostFnUserData(token: bigint): bigint | undefined {
  const e = byToken.get(token);
  return e && e.life === 'graph' ? (e.userData as bigint) : undefined;
}

/** Sets the user data a graph host node's function gets, by its token. */
export function setGraphHostFnUserData(token: bigint, userData: bigint): void {
  const e = byToken.get(token);
  if (e) e.userData = userData;
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
    if (pending === 0) return;
    try {
      koffi.load('libc.so.6').func('void _exit(int)')(typeof code === 'number' ? code : 0);
    } catch {
      // No libc to call: the exit goes on as Node does it.
    }
  });
}

/**
 * Refuses a blocking wait that would deadlock: one on a stream with a pending JS host function, or
 * on the device or the legacy default stream (which wait for other streams) while any is pending.
 */
export function guardBlockingWait(where: string, stream?: bigint | null): void {
  if (pending === 0) return;
  const s = stream ?? 0n;
  const blocked =
    stream === undefined || s === 0n || s === cudaStreamLegacy || s === cudaStreamPerThread ? pending > 0 : pendingByStream.has(s);
  if (blocked) {
    throw new Error(
      `${where}: ${pending} JS host function${pending === 1 ? ' is' : 's are'} still pending, and they run on this thread: ` +
        `a blocking wait here would never return. Await the promise form instead (cudart.async.cudaStreamSynchronize and the like).`,
    );
  }
}

/** How many JS host functions have been launched and not run yet (those kept for graphs are not counted). */
export function pendingHostFunctions(): number {
  return pending;
}
