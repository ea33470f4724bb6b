// A CUDA stream: work queued in order; waits that do not block the event loop.
import * as cudart from '../../runtime';
import { streamSynchronize } from '../../runtime/async';
import type { WaitOptions } from '../../ffi/waits';
import { check } from '../base/errors';
import { addressNumber, checkStatus, directByAddress } from '../base/direct';
import { Resource, openArg, whileHeld } from '../base/lifetime';
import { Device } from './Device';
import { checkOptions, type OptionKeys } from '../base/options';
import { FOREIGN_OPTIONS, foreignDevice, foreignValue, type ForeignOptions } from './foreign';
import { AsyncLocalStorage } from 'node:async_hooks';

const streamQuery = directByAddress('cudaStreamQuery', [0]);
const NOT_READY = cudart.cudaError_t.cudaErrorNotReady;

/** How {@link Device.createStream} makes a stream. */
export interface StreamOptions {
  /** Does not synchronize with the legacy default stream (cudaStreamNonBlocking). */
  nonBlocking?: boolean;
  /** Lower numbers run first; see cudaDeviceGetStreamPriorityRange. */
  priority?: number;
}

/** The keys of StreamOptions, for checkOptions. */
export const STREAM_OPTIONS: OptionKeys<StreamOptions> = { nonBlocking: true, priority: true };

/** The streams close() leaves alone: the legacy and per-thread default streams, shared by everyone. */
const permanent = new WeakSet<Stream>();
/**
 * The stream `use(fn)` put in effect, carried across `await` (CuPy's current stream, the JavaScript
 * way). Made at the first use(): until then asking for the current stream costs one comparison, and
 * a process that never calls use() never turns Node's promise hooks on.
 */
let scope: AsyncLocalStorage<Stream> | null = null;
/** The default streams made so far, by `<handle>@<device number>`. */
const defaults = new Map<string, Stream>();

/**
 * A CUDA stream: work queued on it (copies, kernels, host functions) runs in order; work on
 * different streams may overlap. Made by {@link Device.createStream}.
 *
 * Lifetime: close() destroys the stream (cudaStreamDestroy) after the work queued on it; `using`
 * closes it at the end of the block, and the garbage collector is only a safety net. A stream keeps
 * its Device alive. Methods on a closed stream throw Error (`Stream.query: the Stream was closed`);
 * failures of CUDA calls throw {@link CudaError}.
 *
 * @example
 * ```ts
 * const dev = Device.get(0);
 * using stream = dev.createStream({ nonBlocking: true });
 * using start = dev.createEvent();
 * using end = dev.createEvent();
 * start.record(stream);
 * kernel.launch({ grid: 64, block: 256, stream }, buf, i32(n));
 * end.record(stream);
 * await stream.synchronize();
 * console.log(end.elapsedSince(start), 'ms');
 * ```
 */
export class Stream extends Resource {
  /** @internal The handle as a number (exact: an address is below 2^53), for core's directByAddress calls. */
  declare readonly handleNumber: number;

  private constructor(
    /** The runtime handle, for calls into the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaStream_t,
    /** The device the stream was created on. */
    readonly device: Device,
    keep: unknown[] = [device],
    /** Whether close() destroys the stream: false for one wrapped with {@link Stream.fromHandle}, which another library owns. */
    readonly owned = true,
  ) {
    super(owned ? () => void cudart.cudaStreamDestroy(handle) : () => undefined, keep);
    this.handleNumber = addressNumber(handle, 'Stream.fromHandle');
  }

  /** @internal A stream made elsewhere for this package (a green context's): destroyed at close(), keeping `keep` alive until then. */
  static adopt(handle: cudart.cudaStream_t, device: Device, keep: unknown[]): Stream {
    return new Stream(handle, device, keep);
  }

  /**
   * Wraps a stream another library made (CuPy's `stream.ptr`, PyTorch's `cuda_stream`, a native
   * addon's `cudaStream_t`) so core can queue work on it. The wrapper never destroys the stream:
   * close() only marks it closed. It holds `options.owner` (whatever owns the stream) alive while it
   * lives; the owner must not destroy the stream before the wrapper is done with it. `handle` 0 is the
   * legacy default stream.
   */
  static fromHandle(handle: cudart.cudaStream_t | bigint | number, options: ForeignOptions = {}): Stream {
    const fn = 'Stream.fromHandle';
    checkOptions(fn, options, FOREIGN_OPTIONS);
    const h = cudart.cudaStream_t(foreignValue(handle, fn, 'handle', true));
    const device = foreignDevice(options.device, fn);
    return new Stream(h, device, [device, options.owner], false);
  }

  /**
   * @internal The legacy (`cudaStreamLegacy`) or per-thread (`cudaStreamPerThread`) default stream of
   * `device`, one object each, never destroyed and never closed (close() does nothing).
   */
  static defaultOf(device: Device, handle: cudart.cudaStream_t): Stream {
    const key = `${handle}@${device.ordinal}`;
    let s = defaults.get(key);
    if (!s) {
      defaults.set(key, (s = new Stream(handle, device, [device], false)));
      permanent.add(s);
    }
    return s;
  }

  /**
   * The legacy default stream of the current device (CuPy's `Stream.null`; handle
   * `cudaStreamLegacy`): what work without a stream goes to. It syncs with every blocking stream of
   * its device. The same object each time for a device; close() does nothing to it.
   */
  static get null(): Stream {
    return Stream.defaultOf(Device.current(), cudart.cudaStreamLegacy);
  }

  /**
   * The per-thread default stream of the current device (CuPy's `Stream.ptds`; handle
   * `cudaStreamPerThread`): the JS thread's own default stream, which does not sync with the legacy
   * one. The same object each time for a device; close() does nothing to it.
   */
  static get perThread(): Stream {
    return Stream.defaultOf(Device.current(), cudart.cudaStreamPerThread);
  }

  /**
   * The stream in effect here: the one of the innermost {@link Stream.use} this code runs in (across
   * `await`), else the legacy default stream ({@link Stream.null}). Core's copies, launches and
   * allocations given no stream use it.
   */
  static get current(): Stream {
    return Stream.inScope('Stream.current') ?? Stream.null;
  }

  /**
   * Runs `fn` with this stream as the current stream and returns what it returns (a Promise from an
   * async `fn`). Inside, and in everything `fn` awaits or starts, copies, kernel launches, event
   * records and pool allocations given no stream go to this stream; concurrent `use` scopes (two
   * requests in flight) each see their own. Nesting is allowed: the innermost wins.
   */
  use<T>(fn: (stream: this) => T): T {
    this.live('use');
    if (typeof fn !== 'function') throw new TypeError(`Stream.use: parameter 'fn' must be a function, got ${typeof fn}`);
    return (scope ??= new AsyncLocalStorage<Stream>()).run(this, () => fn(this));
  }

  /**
   * @internal The stream a `use(fn)` put in effect where this runs, or undefined (what core's calls
   * given no stream use). Throws Error naming `where` when that stream was closed since.
   */
  static inScope(where: string): Stream | undefined {
    if (scope === null) return undefined;
    const s = scope.getStore();
    if (s?.isClosed) throw new Error(`${where}: the current stream (put in effect by stream.use) was closed`);
    return s;
  }

  /**
   * A string that is the same for every Stream object over one CUDA stream (a Map key): the handle
   * in hex; for the legacy and per-thread default streams (handles 0 or 1, and 2) it names the
   * device too (`'legacy@0'`, `'perThread@0'`), since each device has its own.
   */
  get key(): string {
    const h = BigInt(this.handle);
    if (h === 0n || h === 1n) return `legacy@${this.device.ordinal}`;
    if (h === 2n) return `perThread@${this.device.ordinal}`;
    return `0x${h.toString(16)}`;
  }

  /** Whether `other` is a Stream over the same CUDA stream (the same {@link Stream.key}), such as two wrappers of one foreign handle. */
  equals(other: unknown): boolean {
    return other instanceof Stream && other.key === this.key;
  }

  /**
   * The stream protocol cuda.core reads (`__cuda_stream__`): `[0, handle]`, the protocol's version
   * and the handle as a bigint. {@link Device.createStream} accepts any object that has it.
   */
  __cuda_stream__(): [number, bigint] {
    this.live('__cuda_stream__');
    return [0, BigInt(this.handle)];
  }

  /** The stream's priority (cudaStreamGetPriority): lower numbers run first; see cudaDeviceGetStreamPriorityRange. */
  get priority(): number {
    this.live('priority');
    return check(cudart.cudaStreamGetPriority(this.handle), 'Stream.priority (cudaStreamGetPriority)');
  }

  /** Whether the stream does not sync with the legacy default stream (made with `nonBlocking: true`; cudaStreamGetFlags). */
  get isNonBlocking(): boolean {
    this.live('isNonBlocking');
    return (
      (check(cudart.cudaStreamGetFlags(this.handle), 'Stream.isNonBlocking (cudaStreamGetFlags)') & cudart.cudaStreamNonBlocking) !== 0
    );
  }

  /** Destroys the stream after its queued work (nothing for a wrapped one); the default streams ({@link Stream.null}, {@link Stream.perThread}) are never closed. */
  override close(): void {
    if (!permanent.has(this)) super.close();
  }

  /** @internal Use device.createStream(). */
  static create(device: Device, o: StreamOptions): Stream {
    const flags = o.nonBlocking ? cudart.cudaStreamNonBlocking : cudart.cudaStreamDefault;
    const h = check(cudart.cudaStreamCreateWithPriority(flags, o.priority ?? 0), 'cudaStreamCreateWithPriority');
    return new Stream(h, device);
  }

  /**
   * Waits, without blocking the event loop or holding a pool thread, until the work queued so far is
   * done. `options.signal`/`timeout` reject with an AbortError/TimeoutError; the GPU work is not cancelled.
   * close() during the wait marks the stream closed at once and destroys it only once the wait is over.
   */
  async synchronize(options?: WaitOptions): Promise<void> {
    this.live('synchronize');
    // Held open while the wait polls the handle: a close() meanwhile destroys it after the last poll.
    check(await whileHeld([this], () => streamSynchronize('Stream.synchronize', this.handle, options)), 'cudaStreamSynchronize');
  }

  /** Whether all the stream's work is done (cudaStreamQuery), without waiting; throws CudaError when queued work failed. */
  query(): boolean {
    this.live('query');
    // Called directly: the handle is an open stream's (the facade's checks and result array would be work done twice).
    const err = streamQuery.get()(this.handleNumber);
    if (err === NOT_READY) return false;
    checkStatus(err, 'cudaStreamQuery');
    return true;
  }

  /**
   * Runs `fn` on the JS thread once the work queued so far is done (cudaLaunchHostFunc). Work queued
   * after it waits for `fn` to return, so do not wait synchronously on the stream meanwhile; an
   * exception thrown by `fn` ends the process (use {@link Stream.hostCallback} to get it back).
   */
  onComplete(fn: () => void): void {
    this.live('onComplete');
    check(
      cudart.cudaLaunchHostFunc(this.handle, () => fn(), null),
      'cudaLaunchHostFunc',
    );
  }

  /** Resolves with what `fn` returns once the work queued so far is done (a host function); rejects with what `fn` throws. */
  hostCallback<T>(fn: () => T): Promise<T> {
    return new Promise((resolve, reject) => {
      this.live('hostCallback');
      this.onComplete(() => {
        try {
          resolve(fn());
        } catch (e) {
          reject(e);
        }
      });
    });
  }
}

/** @internal Whether a stream.use() scope is in effect here (its stream may have been closed since): one test when none ever was. */
export function inStreamScope(): boolean {
  return scope !== null && scope.getStore() !== undefined;
}

/**
 * An optional Stream parameter of a hot path (absent: the current stream of a stream.use(), else
 * null for the legacy default stream): an open Stream of this module at once, anything else through
 * openArg, which throws as openOptionalArg does (or accepts a Stream of another copy of this package).
 */
export function openStreamArg(stream: unknown, where: string, param: string): Stream | null {
  // No stream: the current stream of a stream.use() scope, else the legacy default stream.
  if (stream === undefined) return Stream.inScope(where) ?? null;
  if (!(stream instanceof Stream) || stream.isClosed) openArg(stream, 'Stream', where, param);
  return stream as Stream;
}
