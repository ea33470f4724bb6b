// Stream-ordered transfers that never block the event loop: DeviceBuffer.upload and download,
// added to DeviceBuffer here (see base/extend.ts). Host data goes through pinned blocks of the
// staging pool, the device copies are queued on the caller's stream, and a download's completion is
// an event polled from the event loop (runtime/async), so no thread, of JS or of libuv's pool,
// waits for the GPU. An upload's block goes back to the pool once its copy is done: the events
// recorded after uploads are polled by one poller, stream by stream, oldest first. An upload from
// an array the program keeps in staging memory records no event of its own: the next one recorded
// on its stream (a download's, or one at the end of the task) covers it. Downloads on one stream
// are polled oldest first (their events complete in order).
import * as cudart from '../../runtime';
import { eventSynchronize } from '../../runtime/async';
import { checkWaitOptions, NOT_READY, poll, type WaitOptions } from '../../ffi/waits';
import { describe } from '../../ffi/checks';
import { checkStatus, direct } from '../base/direct';
import { check } from '../base/errors';
import { extend } from '../base/extend';
import { assertOpen, holdAll, openArg } from '../base/lifetime';
import { checkOptions } from '../base/options';
import type { Stream } from '../device/Stream';
import { DeviceBuffer, type HostData } from './DeviceBuffer';
import { MAX_STAGED_BYTES, elementSize, stagingPool, type Lease, type TypedArrayClass } from './StagingPool';

/** Where an upload's copy is queued. */
export interface UploadOptions {
  /** The stream the copy to the device is queued on (required): work queued there after it sees the data. */
  stream: Stream;
}

/** Where a download's copy is queued, and when to stop waiting for it. */
export interface DownloadOptions extends UploadOptions, WaitOptions {}

declare module './DeviceBuffer' {
  interface DeviceBuffer {
    /**
     * Queues a copy of `src` into the start of this buffer on `options.stream` and returns at once,
     * without waiting for the device. `src` is copied on the calling thread into pinned memory of
     * the {@link stagingPool} (about a tenth of a millisecond per MiB), so it may be changed or
     * dropped as soon as upload returns; an array from `stagingPool.allocate()` or a download is
     * copied to the device directly. Work queued on the stream afterwards (a kernel, a download)
     * sees the data. Throws RangeError when `src` is larger than the buffer, Error when the buffer
     * or the stream is closed, CudaError when the copy cannot be queued.
     */
    upload(src: HostData, options: UploadOptions): this;
    /**
     * Queues a copy of the whole buffer to pinned memory of the {@link stagingPool} on
     * `options.stream` and resolves, once it is done, with a `kind` TypedArray over that memory (no
     * further copy). The wait polls from the event loop and holds no thread. Give the array back
     * with `stagingPool.release(array)` when done (the garbage collector does it otherwise);
     * every view of it reads as empty after that. Each array handed over is a new ArrayBuffer of its
     * block's size, which V8 counts as new external memory until its next young-generation
     * collection, and it collects early once 32 MiB of them are young: with many large results in
     * flight at once (64 of 1 MiB), a collection every few dozen downloads. A hot loop downloads
     * into arrays it keeps instead (`download(kept, …)` below). Rejects with RangeError when the size
     * is not a whole number of elements or passes 1 GiB, and AbortError/TimeoutError for
     * `signal`/`timeout` (the copy is not cancelled). close() while the copy is queued (or after
     * giving up on it) marks the buffer closed at once and frees it once the copy is over.
     */
    download<T extends ArrayBufferView>(kind: TypedArrayClass<T>, options: DownloadOptions): Promise<T>;
    /**
     * Queues a copy of the start of this buffer into `dst` (as many bytes as it holds) on
     * `options.stream`, and resolves with `dst` once it is there; the wait polls from the event
     * loop. When `dst` is staging memory itself (from `stagingPool.allocate()` or a download, or a
     * view of one), the device copies straight into it: nothing is copied on the calling thread and
     * no ArrayBuffer is made, so arrays a service keeps and reuses cost nothing per download (keep
     * each for one download at a time). Otherwise the copy goes through pinned staging memory and
     * the bytes are copied into `dst` on the calling thread.
     */
    download<T extends HostData>(dst: T, options: DownloadOptions): Promise<T>;
  }
}

/** Pinned copies larger than this go in pieces, each through a block of its own. */
const PIECE = 64 << 20;
const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;

// Called directly on the hot path (arguments checked here already): no facade tuple per call.
const memcpyAsync = direct('cudaMemcpyAsync');
const eventRecord = direct('cudaEventRecord');
const eventQuery = direct('cudaEventQuery');
const NOT_DONE = cudart.cudaError_t.cudaErrorNotReady;
/** The option a download takes beside the wait's. */
const STREAM_OPTION = ['stream'];

/** Events (timing off) for reuse, by device ordinal. */
const events = new Map<number, cudart.cudaEvent_t[]>();

function takeEvent(stream: Stream): cudart.cudaEvent_t {
  const free = events.get(stream.device.ordinal)?.pop();
  if (free !== undefined) return free;
  stream.device.makeCurrent();
  return check(cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming), 'cudaEventCreateWithFlags (transfer)');
}

function putEvent(ordinal: number, ev: cudart.cudaEvent_t): void {
  append(events, ordinal, ev);
}

/** Adds `value` to the list of `key` in `lists`, starting the list when there is none. */
function append<K, V>(lists: Map<K, V[]>, key: K, value: V): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}

interface Pending {
  readonly event: cudart.cudaEvent_t;
  readonly ordinal: number;
  readonly leases: Lease[];
  /** Lets go of the buffer a download given up on reads from (see download), once the event completes. */
  readonly letGo: (() => void) | null;
}

/** Copies queued from staging blocks and not yet seen complete, per stream, in the order queued. */
const pending = new Map<Stream, Pending[]>();
let polling = false;

/**
 * Copies from arrays a program keeps in staging memory that have no event after them yet, by stream:
 * the next event recorded on the stream (a download's, or the fence queued for the end of the task
 * that queued them) says when they are done, so the uploads of a request cost no event of their own.
 */
const unfenced = new Map<Stream, Lease[]>();
let fenceQueued = false;

/** `lease`'s copy was queued on `stream`: done once the next event recorded there completes. */
function fenceLater(stream: Stream, lease: Lease): void {
  append(unfenced, stream, lease);
  if (fenceQueued) return;
  fenceQueued = true;
  queueMicrotask(fenceAll);
}

/** The leases of `stream`'s copies with no event after them, taken by a caller that records one now. */
function takeUnfenced(stream: Stream): Lease[] | undefined {
  const leases = unfenced.get(stream);
  if (leases) unfenced.delete(stream);
  return leases;
}

/** Records an event after the copies still without one (the task that queued them is over). */
function fenceAll(): void {
  fenceQueued = false;
  for (const stream of unfenced.keys()) {
    // A stream closed since: nothing can be recorded there, so its copies' blocks are not reused.
    if (stream.isClosed) continue;
    try {
      whenCopied(stream, []);
    } catch {
      // cudaEventRecord failed: nothing says when the copies end, so their blocks are not reused.
    }
  }
  unfenced.clear();
}

/** Records an event after `leases`' copies (and any earlier ones without an event) on `stream`; their blocks are done with once it completes. */
function whenCopied(stream: Stream, leases: Lease[]): void {
  const event = recordAfter(stream, 'DeviceBuffer.upload');
  const earlier = takeUnfenced(stream);
  track(stream, { event, ordinal: stream.device.ordinal, leases: earlier ? earlier.concat(leases) : leases, letGo: null });
}

/** An event recorded on `stream` after the work queued so far; throws the CudaError named by `fn` (the copies' blocks are then not reused: nothing says when they end). */
function recordAfter(stream: Stream, fn: string): cudart.cudaEvent_t {
  const ev = takeEvent(stream);
  const err = eventRecord.get()(ev, stream.handle) as number;
  if (err !== 0) {
    void cudart.cudaEventDestroy(ev);
    checkStatus(err, `cudaEventRecord (${fn})`);
  }
  return ev;
}

function track(stream: Stream, p: Pending): void {
  append(pending, stream, p);
  if (polling) return;
  polling = true;
  poll('DeviceBuffer.upload', settle, {}).catch(() => undefined);
}

/** The poller's query: settles every copy seen complete; NOT_READY while any is left. */
function settle(): number {
  drain();
  if (pending.size > 0) return NOT_READY;
  polling = false;
  return 0;
}

/**
 * Gives back the blocks of every copy seen complete, oldest first per stream (a stream's copies end
 * in the order queued). The poller calls it, and so does a lease that finds no free block, so that
 * blocks come back as soon as they can be reused, not on the poller's next turn.
 */
function drain(): void {
  pending.forEach(drainStream);
}

/** Gives back the blocks of `stream`'s copies seen complete, oldest first; forgets the stream once none is left. */
function drainStream(queue: Pending[], stream: Stream): void {
  while (queue.length > 0) {
    const head = queue[0];
    const status = eventQuery.get()(head.event) as number;
    if (status === NOT_DONE) break;
    queue.shift();
    // Ended, failed or not: the device no longer reads the buffer.
    if (head.letGo !== null) head.letGo();
    // A failed copy leaves its blocks out of the pool: what the device did with them is unknown.
    if (status !== 0) continue;
    putEvent(head.ordinal, head.event);
    for (const lease of head.leases) stagingPool.copyDone(lease);
  }
  if (queue.length === 0) pending.delete(stream);
}
stagingPool.reclaim = () => {
  if (pending.size > 0) drain();
};

/** Bytes [at, at + n) of host memory, as a view (no copy). */
function hostBytes(v: HostData, at: number, n: number): Uint8Array {
  return ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset + at, n) : new Uint8Array(v, at, n);
}

/** The byte count of host memory `v`; throws TypeError naming `fn` and `param` for anything else. */
function hostLength(v: unknown, fn: string, param: string): number {
  if (!(ArrayBuffer.isView(v) || v instanceof ArrayBuffer))
    throw new TypeError(`${fn}: parameter '${param}' must be a Buffer, TypedArray, DataView or ArrayBuffer, got ${describe(v)}`);
  return v.byteLength;
}

/** Queues the copy of `n` bytes between `from` and `to` on `stream`, counted as pending on `lease`. */
function queueCopy(to: bigint, from: bigint, n: number, kind: cudart.cudaMemcpyKind, stream: Stream, lease: Lease, what: string): void {
  checkStatus(memcpyAsync.get()(to, from, n, kind, stream.handle), `${what} (cudaMemcpyAsync)`);
  lease.pending++;
}

/** Runs `queue` with a fresh lease, giving the lease back when it throws. */
function withLease(bytes: number, fn: string, queue: (lease: Lease) => void): Lease {
  const lease = stagingPool.lease(bytes, fn);
  try {
    queue(lease);
  } catch (e) {
    stagingPool.giveBack(lease);
    throw e;
  }
  return lease;
}

function upload(this: DeviceBuffer, src: HostData, options: UploadOptions): DeviceBuffer {
  const fn = 'DeviceBuffer.upload';
  assertOpen(this, 'upload');
  checkOptions(fn, options, { stream: true });
  openArg(options?.stream, 'Stream', fn, 'options.stream');
  const n = hostLength(src, fn, 'src');
  if (n > this.size) throw new RangeError(`${fn}: the source has ${n} bytes, more than the buffer's ${this.size}`);
  if (n === 0) return this;
  const { stream } = options;
  const view = ArrayBuffer.isView(src) ? src : null;
  const staged = view && stagingPool.leaseOf(view);
  if (view && staged) {
    // Staging memory already: copied from where it is, its block held until the copy is done.
    queueCopy(this.ptr, staged.block.ptr + BigInt(view.byteOffset), n, H2D, stream, staged, fn);
    fenceLater(stream, staged);
    return this;
  }
  const leases: Lease[] = [];
  try {
    for (let at = 0; at < n; at += PIECE) {
      const len = Math.min(PIECE, n - at);
      const lease = withLease(len, fn, (l) => {
        new Uint8Array(l.block.memory.buffer, 0, len).set(hostBytes(src, at, len));
        queueCopy(this.ptr + BigInt(at), l.block.ptr, len, H2D, stream, l, fn);
      });
      lease.givenBack = true; // never handed over: back to its bin when the copy is done
      leases.push(lease);
    }
  } finally {
    if (leases.length > 0) whenCopied(stream, leases);
  }
  return this;
}

async function download<T extends ArrayBufferView | HostData>(
  this: DeviceBuffer,
  target: TypedArrayClass<ArrayBufferView> | T,
  options: DownloadOptions,
): Promise<ArrayBufferView | T> {
  const fn = 'DeviceBuffer.download';
  assertOpen(this, 'download');
  const o = checkWaitOptions(options, fn, STREAM_OPTION);
  openArg(options?.stream, 'Stream', fn, 'options.stream');
  const kind = typeof target === 'function' ? (target as TypedArrayClass<ArrayBufferView>) : null;
  const element = kind ? elementSize(kind, fn) : 1;
  const n = kind ? this.size : hostLength(target, fn, 'dst');
  if (n > this.size) throw new RangeError(`${fn}: the destination has ${n} bytes, more than the buffer's ${this.size}`);
  if (n % element !== 0)
    throw new RangeError(`${fn}: the buffer's ${n} bytes are not a whole number of ${kind!.name} elements (${element} bytes each)`);
  if (n > MAX_STAGED_BYTES)
    throw new RangeError(`${fn}: ${n} bytes is more than the ${MAX_STAGED_BYTES} a download stages; use copyToAsync() for more`);
  if (n === 0) return kind ? new kind(new ArrayBuffer(0)) : (target as T);
  const { stream } = options;
  const staged = ArrayBuffer.isView(target) ? stagingPool.leaseOf(target) : undefined;
  // The device reads this buffer (a view's allocation) until the copy's event completes: a close()
  // meanwhile, or after the caller gave up, would otherwise free memory the copy still reads (a pool
  // buffer's cudaFreeAsync, ordered on another stream, lets it be reused at once).
  const letGo = holdAll([this]);
  let lease: Lease;
  try {
    lease = queueDownload(this, target, staged, n, stream, fn);
  } catch (e) {
    letGo(); // nothing was queued
    throw e;
  }
  await copied(stream, lease, !staged, fn, o, letGo);
  if (staged) return target as T;
  if (kind) return stagingPool.handOver(lease, kind, n / element);
  hostBytes(target as HostData, 0, n).set(new Uint8Array(lease.block.memory.buffer, 0, n));
  stagingPool.giveBack(lease);
  return target as T;
}

/**
 * Queues the copy of `n` bytes of `buf` for a download into `target`: straight into it when it is
 * staging memory already (`staged`, its lease, then held until the copy is done; no block lent,
 * nothing copied on this thread), else into a block lent for it. Returns the copy's lease.
 */
function queueDownload(buf: DeviceBuffer, target: unknown, staged: Lease | undefined, n: number, stream: Stream, fn: string): Lease {
  if (!staged) return withLease(n, fn, (l) => queueCopy(l.block.ptr, buf.ptr, n, D2H, stream, l, fn));
  queueCopy(staged.block.ptr + BigInt((target as ArrayBufferView).byteOffset), buf.ptr, n, D2H, stream, staged, fn);
  return staged;
}

/**
 * Resolves once the copies queued on `stream` so far are done (an event polled from the event loop),
 * then counts `lease`'s copy done; the blocks of earlier copies on the stream come back too. When the
 * wait fails or is given up on, the copy is left to the poller, which counts it done once the event
 * says so; a lease `lent` for this copy alone then goes back to the pool with it, and `letGo` (the
 * hold on the buffer copied from) is called then too.
 */
async function copied(stream: Stream, lease: Lease, lent: boolean, fn: string, o: WaitOptions, letGo: () => void): Promise<void> {
  // Should the record fail, nothing says when the copy ends: the buffer stays held (as the blocks stay out of the pool).
  const ev = recordAfter(stream, fn);
  const earlier = takeUnfenced(stream); // uploads from kept arrays queued before: done when this is
  try {
    check(await eventSynchronize(fn, ev, o, stream), `cudaEventSynchronize (${fn})`); // polled after the stream's earlier downloads
  } catch (e) {
    if (lent) lease.givenBack = true;
    track(stream, { event: ev, ordinal: stream.device.ordinal, leases: earlier ? earlier.concat(lease) : [lease], letGo });
    throw e;
  }
  letGo();
  putEvent(stream.device.ordinal, ev);
  stagingPool.copyDone(lease);
  if (earlier) for (const l of earlier) stagingPool.copyDone(l);
  // Every copy queued on the stream before this one is done too: their blocks can come back now.
  const queue = pending.get(stream);
  if (queue) drainStream(queue, stream);
}

extend(DeviceBuffer, { upload, download } as Partial<DeviceBuffer>);
