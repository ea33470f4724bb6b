// An NCCL communicator: one rank of a group of GPUs that run collectives together. (The facade loads
// NCCL's declarations and opens libnccl on its first call, not at import.)
import * as nccl from '../../nccl';
import { ncclDataType_t, ncclRedOp_t, ncclResult_t } from '../../nccl/enums.gen';
import { NCCL_SPLIT_NOCOLOR } from '../../nccl/constants.gen';
import { ncclConfigInitializer, uniqueIdFromBase64, uniqueIdFromBuffer } from '../../nccl/helpers';
import { ncclUniqueId, type ncclConfig_t } from '../../nccl';
import { Resource } from '../base/lifetime';
import { Device } from '../device/Device';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { Stream } from '../device/Stream';
import { describe, lookupName } from '../../ffi/checks';
import { checkOptions, type OptionKeys } from '../base/options';
import { CudaBindingsError, statusMessage, statusText } from '../../ffi/errors';

/** Element types of the collectives, by their short names (CuPy's and PyTorch's). */
export type NcclDtype = 'i8' | 'u8' | 'i32' | 'u32' | 'i64' | 'u64' | 'f16' | 'bf16' | 'f32' | 'f64' | 'f8e4m3' | 'f8e5m2';
/** Reductions: ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg. */
export type NcclOp = 'sum' | 'prod' | 'max' | 'min' | 'avg';

const DTYPES: Record<NcclDtype, { type: ncclDataType_t; bytes: number }> = {
  i8: { type: ncclDataType_t.ncclInt8, bytes: 1 },
  u8: { type: ncclDataType_t.ncclUint8, bytes: 1 },
  i32: { type: ncclDataType_t.ncclInt32, bytes: 4 },
  u32: { type: ncclDataType_t.ncclUint32, bytes: 4 },
  i64: { type: ncclDataType_t.ncclInt64, bytes: 8 },
  u64: { type: ncclDataType_t.ncclUint64, bytes: 8 },
  f16: { type: ncclDataType_t.ncclFloat16, bytes: 2 },
  bf16: { type: ncclDataType_t.ncclBfloat16, bytes: 2 },
  f32: { type: ncclDataType_t.ncclFloat32, bytes: 4 },
  f64: { type: ncclDataType_t.ncclFloat64, bytes: 8 },
  f8e4m3: { type: ncclDataType_t.ncclFloat8e4m3, bytes: 1 },
  f8e5m2: { type: ncclDataType_t.ncclFloat8e5m2, bytes: 1 },
};
const OPS: Record<NcclOp, ncclRedOp_t> = {
  sum: ncclRedOp_t.ncclSum,
  prod: ncclRedOp_t.ncclProd,
  max: ncclRedOp_t.ncclMax,
  min: ncclRedOp_t.ncclMin,
  avg: ncclRedOp_t.ncclAvg,
};

/** Every dtype name a collective takes. */
export const NCCL_DTYPES = Object.keys(DTYPES) as NcclDtype[];

/** Bytes of one element of a dtype. */
export function dtypeBytes(dtype: NcclDtype): number {
  return dtypeOf(dtype, 'dtypeBytes').bytes;
}

/** An NCCL call failed: `code` is the ncclResult_t, `codeName` its C name, `lastError` NCCL's own explanation. */
export class NcclError extends CudaBindingsError {
  /** The ncclResult_t value, e.g. 2 (ncclSystemError). */
  declare readonly code: number;
  /** The ncclResult_t's C name, e.g. `'ncclInvalidArgument'`. */
  declare readonly codeName: string;
  /** The NCCL call that failed, e.g. `'ncclAllReduce'`. */
  declare readonly fn: string;

  /** Makes the error; the message reads `codeName: NCCL's text (lastError) (in fn)`; NCCL's text is 'unknown error' when libnccl cannot give it. */
  constructor(
    code: number,
    codeName: string,
    fn: string,
    /** ncclGetLastError: what NCCL says went wrong (may be empty). */
    readonly lastError: string,
  ) {
    // A libnccl that cannot say (not loaded, no ncclGetErrorString) must not hide the failure reported.
    const text = code === 0 ? '' : statusText(() => nccl.ncclGetErrorString(code)[1], 'unknown error');
    super(statusMessage(codeName, `${text}${lastError ? ` (${lastError.trim()})` : ''}`, fn), { code, codeName, fn, library: 'libnccl' });
    this.name = 'NcclError';
  }
}

/** The NcclError of a status, with ncclGetLastError of `comm` (or of the library). */
function ncclError(code: number, fn: string, comm: nccl.ncclComm_t | null = null): NcclError {
  const name = ncclResult_t[code] ?? `ncclResult_t ${code}`;
  let last = '';
  try {
    last = nccl.ncclGetLastError(comm)[1] ?? '';
  } catch {
    /* an old library without ncclGetLastError: the code says enough */
  }
  return new NcclError(code, name, fn, last);
}

/** Throws the NcclError of a failed status; ncclInProgress (a non-blocking communicator's) is not a failure. */
function checkNccl(err: number, fn: string, comm: nccl.ncclComm_t | null = null): void {
  if (err !== ncclResult_t.ncclSuccess && err !== ncclResult_t.ncclInProgress) throw ncclError(err, fn, comm);
}

/** Options of a communicator (the fields of ncclConfig_t that users set). */
export interface CommunicatorConfig {
  /** false: init and collectives return at once and `await comm.ready()` waits (ncclConfig_t.blocking = 0). */
  blocking?: boolean;
  /** Cooperative thread array cluster size NCCL kernels use (ncclConfig_t.cgaClusterSize; NCCL picks when absent). */
  cgaClusterSize?: number;
  /** The fewest CTAs (thread blocks) NCCL uses per collective (ncclConfig_t.minCTAs). */
  minCTAs?: number;
  /** The most CTAs (thread blocks) NCCL uses per collective (ncclConfig_t.maxCTAs). */
  maxCTAs?: number;
  /** The network module to use (NCCL_NET), e.g. 'Socket' or 'IB'. */
  netName?: string;
  /** Whether split() children share this communicator's resources. */
  splitShare?: boolean;
  /** The network traffic class (ncclConfig_t.trafficClass, e.g. an InfiniBand service level). */
  trafficClass?: number;
  /** A name shown in NCCL's logs. */
  commName?: string;
  /** Whether CollNet (in-network reduction, e.g. SHARP) may be used (ncclConfig_t.collnetEnable). */
  collnetEnable?: boolean;
  /** NCCL's CTA policy flags (ncclConfig_t.CTAPolicy; NCCL_CTA_POLICY_*). */
  CTAPolicy?: number;
  /** CTAs used by NVLink SHARP collectives (ncclConfig_t.nvlsCTAs). */
  nvlsCTAs?: number;
}

/** What Communicator.init needs: this process's rank, how many ranks, rank 0's unique id, and the GPU. */
export interface CommunicatorInit {
  /** This process's rank, 0 to nranks - 1. */
  rank: number;
  /** How many ranks (processes or GPUs) the communicator has. */
  nranks: number;
  /** Rank 0's Communicator.uniqueId(), as the struct, its 128 bytes or its base64 text. */
  id: ncclUniqueId | Uint8Array | string;
  /** The GPU of this rank (default: the current device). */
  device?: Device | number;
  /** NCCL's configuration (ncclConfig_t); defaults are NCCL's. */
  config?: CommunicatorConfig;
}

/** The stream and count options every collective takes. */
export interface CollectiveOptions {
  /** Elements per rank (see each collective); by default as many as the buffers hold. */
  count?: number;
  /** The stream the collective is queued on: an open Stream (default: the legacy default stream). */
  stream?: Stream;
}
/** Options of the reducing collectives (allReduce, reduceScatter). */
export interface ReduceOptions extends CollectiveOptions {
  /** The reduction (default 'sum'). */
  op?: NcclOp;
}
/** Options of the collectives with a root rank (broadcast, reduce). */
export interface RootOptions extends CollectiveOptions {
  /** The rank that holds (broadcast) or receives (reduce) the data (default 0). */
  root?: number;
}

const COLLECTIVE_OPTIONS: OptionKeys<CollectiveOptions> = { count: true, stream: true };
const REDUCE_OPTIONS: OptionKeys<ReduceOptions> = { count: true, stream: true, op: true };
const ROOT_OPTIONS: OptionKeys<RootOptions> = { count: true, stream: true, root: true };
const REDUCE_ROOT_OPTIONS: OptionKeys<ReduceOptions & RootOptions> = { count: true, stream: true, op: true, root: true };
const CONFIG_OPTIONS: OptionKeys<CommunicatorConfig> = {
  blocking: true,
  splitShare: true,
  collnetEnable: true,
  cgaClusterSize: true,
  minCTAs: true,
  maxCTAs: true,
  trafficClass: true,
  CTAPolicy: true,
  nvlsCTAs: true,
  netName: true,
  commName: true,
};

/** A buffer that belongs to one rank: DeviceBuffer (or a view of one). */
type Buf = DeviceBuffer;

/**
 * One rank of an NCCL communicator: collectives (allReduce, broadcast, reduce, allGather,
 * reduceScatter) and point-to-point send/recv between GPUs, queued on streams. Counts are elements
 * of the buffers' dtype, not bytes.
 *
 * Lifetime: close() destroys the communicator (ncclCommDestroy); `abort()` ends it without waiting for
 * the other ranks. Failed NCCL calls throw {@link NcclError}; bad arguments throw TypeError or
 * RangeError naming the method and parameter.
 *
 * @example
 * ```ts
 * // on each rank, after the id of rank 0 reached every process (see rendezvous()):
 * using comm = Communicator.init({ rank, nranks, id, device: rank });
 * comm.allReduce(grad, grad, 'f32', { op: 'sum', stream }); // in place, summed over the ranks
 * await stream.synchronize();
 * ```
 */
export class Communicator extends Resource {
  private readonly state: { aborted: boolean };
  private rankN: number | undefined;
  private sizeN: number | undefined;
  private deviceD: Device | undefined;

  private constructor(
    /** The NCCL handle, for calls into the `cuda-bindings/nccl` facade; valid until close(). */
    readonly handle: nccl.ncclComm_t,
    known: { rank?: number; size?: number; device?: Device },
    /** Whether the communicator was made non-blocking (its calls may return before they are done). */
    readonly blocking: boolean,
  ) {
    const state = { aborted: false };
    // Destroy (or, after abort(), nothing more): the free does not hold the communicator itself.
    super(() => void (state.aborted ? undefined : nccl.ncclCommDestroy(handle)));
    this.state = state;
    this.rankN = known.rank;
    this.sizeN = known.size;
    this.deviceD = known.device;
  }

  /** A new unique id (ncclGetUniqueId), made by rank 0 and sent to every other rank. */
  static uniqueId(): ncclUniqueId {
    const [err, id] = nccl.ncclGetUniqueId();
    checkNccl(err, 'ncclGetUniqueId');
    return id!;
  }

  /**
   * One rank of a communicator of `nranks` (ncclCommInitRankConfig on `device`). Blocking by
   * default: it returns when every rank has joined. With `config: { blocking: false }` it returns
   * at once; `await comm.ready()` before using it.
   */
  static init(o: CommunicatorInit): Communicator {
    if (typeof o !== 'object' || o === null)
      throw new TypeError(
        `Communicator.init: parameter 'options' must be an object with rank, nranks and id, got ${o === null ? 'null' : typeof o}`,
      );
    checkOptions('Communicator.init', o, { rank: true, nranks: true, id: true, device: true, config: true });
    const { rank, nranks } = o;
    if (!Number.isInteger(nranks) || nranks < 1 || nranks > 2 ** 31 - 1)
      throw new RangeError(`Communicator.init: parameter 'nranks' must be a positive integer, got ${nranks}`);
    if (!Number.isInteger(rank) || rank < 0 || rank >= nranks)
      throw new RangeError(`Communicator.init: parameter 'rank' must be an integer in [0, ${nranks}), got ${rank}`);
    const id = toUniqueId(o.id, 'Communicator.init', 'id');
    const device = o.device === undefined ? Device.current() : o.device instanceof Device ? o.device : Device.get(o.device);
    const config = makeConfig(o.config, 'Communicator.init');
    device.makeCurrent();
    const [err, h] = nccl.ncclCommInitRankConfig(nranks, id, rank, config);
    checkNccl(err, 'ncclCommInitRankConfig');
    return new Communicator(h!, { rank, size: nranks, device }, o.config?.blocking !== false);
  }

  /** One communicator per device, all in this process (ncclCommInitAll): rank i drives devices[i]. */
  static initAll(devices: readonly (Device | number)[]): Communicator[] {
    if (!Array.isArray(devices) || devices.length === 0)
      throw new RangeError(
        `Communicator.initAll: parameter 'devices' must be a non-empty array of devices, got ${Array.isArray(devices) ? '[]' : typeof devices}`,
      );
    const devs = devices.map((d) => (d instanceof Device ? d : Device.get(d)));
    const ords = devs.map((d) => d.ordinal);
    if (new Set(ords).size !== ords.length)
      throw new RangeError(`Communicator.initAll: parameter 'devices' names a device twice: [${ords.join(', ')}]`);
    const [err, handles] = nccl.ncclCommInitAll(devs.length, ords);
    checkNccl(err, 'ncclCommInitAll');
    return handles!.map((h, i) => new Communicator(h, { rank: i, size: devs.length, device: devs[i] }, true));
  }

  /**
   * Runs `fn` between ncclGroupStart and ncclGroupEnd, so that the collectives it queues (on one
   * or several communicators of this process, or send/recv pairs) launch together. `fn` must not
   * wait for anything asynchronous: NCCL's group is per thread.
   */
  static group<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw new TypeError(`Communicator.group: parameter 'fn' must be a function, got ${typeof fn}`);
    checkNccl(nccl.ncclGroupStart()[0], 'ncclGroupStart');
    let out: T;
    try {
      out = fn();
    } catch (e) {
      // Ends the group whatever fn did, so later NCCL calls are not stuck inside it.
      nccl.ncclGroupEnd();
      throw e;
    }
    if (out instanceof Promise) {
      nccl.ncclGroupEnd();
      throw new TypeError("Communicator.group: parameter 'fn' returned a Promise; a group must be queued synchronously");
    }
    checkNccl(nccl.ncclGroupEnd()[0], 'ncclGroupEnd');
    return out;
  }

  /** Communicator.group on this communicator (groups are per thread, not per communicator). */
  group<T>(fn: () => T): T {
    this.live('group');
    return Communicator.group(fn);
  }

  /** This process's rank (ncclCommUserRank). */
  get rank(): number {
    return (this.rankN ??= this.query(nccl.ncclCommUserRank, 'ncclCommUserRank'));
  }

  /** How many ranks (ncclCommCount). */
  get size(): number {
    return (this.sizeN ??= this.query(nccl.ncclCommCount, 'ncclCommCount'));
  }

  /** The GPU of this rank (ncclCommCuDevice). */
  get device(): Device {
    return (this.deviceD ??= Device.get(this.query(nccl.ncclCommCuDevice, 'ncclCommCuDevice')));
  }

  private query(fn: (c: nccl.ncclComm_t) => [ncclResult_t, number | null], name: string): number {
    this.live(name);
    const [err, v] = fn(this.handle);
    checkNccl(err, name, this.handle);
    if (err === ncclResult_t.ncclInProgress)
      throw new Error(`Communicator.${name}: the communicator is still being set up; await comm.ready() first`);
    return v!;
  }

  /** ncclCommGetAsyncError: ncclSuccess, ncclInProgress (a non-blocking call still running) or an error. */
  asyncError(): ncclResult_t {
    this.live('asyncError');
    const [err, state] = nccl.ncclCommGetAsyncError(this.handle);
    checkNccl(err, 'ncclCommGetAsyncError', this.handle);
    return state!;
  }

  /**
   * Resolves once the communicator has finished what it was doing (a non-blocking init or split):
   * polls ncclCommGetAsyncError between turns of the event loop, so other work goes on. Rejects
   * with the NcclError NCCL reports, or after `timeoutMs` (then the communicator is left as it is:
   * abort() it).
   */
  async ready(options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<this> {
    checkOptions('Communicator.ready', options, { timeoutMs: true, intervalMs: true });
    const timeoutMs = options.timeoutMs ?? Infinity;
    const interval = options.intervalMs ?? 1;
    if (!(timeoutMs >= 0))
      throw new RangeError(`Communicator.ready: parameter 'timeoutMs' must be a non-negative number, got ${timeoutMs}`);
    const start = Date.now();
    for (let polls = 0; ; polls++) {
      const state = this.asyncError();
      if (state === ncclResult_t.ncclSuccess) return this;
      if (state !== ncclResult_t.ncclInProgress) throw ncclError(state, 'ncclCommGetAsyncError', this.handle);
      if (Date.now() - start > timeoutMs)
        throw new Error(`Communicator.ready: the communicator was still in progress after ${timeoutMs} ms`);
      // The first polls on the next turn; then at the interval, not spinning a core.
      await new Promise((r) => (polls < 8 ? setImmediate(r) : setTimeout(r, interval)));
    }
  }

  /**
   * New communicators from this one (ncclCommSplit): the ranks that pass the same `color` form one,
   * ordered by `key`. A rank that passes `null` (NCCL_SPLIT_NOCOLOR) gets null. Every rank must call it.
   */
  split(color: number | null, key = this.rank, config?: CommunicatorConfig): Communicator | null {
    this.live('split');
    const c = color === null ? NCCL_SPLIT_NOCOLOR : color;
    if (!Number.isInteger(c) || (c < 0 && c !== NCCL_SPLIT_NOCOLOR) || c > 2 ** 31 - 1)
      throw new RangeError(`Communicator.split: parameter 'color' must be a non-negative integer or null, got ${color}`);
    if (!Number.isInteger(key) || key < -(2 ** 31) || key > 2 ** 31 - 1)
      throw new RangeError(`Communicator.split: parameter 'key' must be an integer, got ${key}`);
    const [err, h] = nccl.ncclCommSplit(this.handle, c, key, config ? makeConfig(config, 'Communicator.split') : null);
    checkNccl(err, 'ncclCommSplit', this.handle);
    if (!h) return null;
    return new Communicator(h, { device: this.deviceD }, config ? config.blocking !== false : this.blocking);
  }

  /** Sums (or `op`s) `count` elements of `send` over every rank into `recv` on every rank. */
  allReduce(send: Buf, recv: Buf, dtype: NcclDtype, options: ReduceOptions = {}): void {
    const f = 'allReduce';
    checkOptions(`Communicator.${f}`, options, REDUCE_OPTIONS);
    const { type, count, stream } = this.prepare(f, dtype, options, [
      [send, 'send', 1],
      [recv, 'recv', 1],
    ]);
    this.run(f, 'ncclAllReduce', nccl.ncclAllReduce(send.ptr, recv.ptr, count, type, this.op(f, options.op), this.handle, stream));
  }

  /**
   * Copies `count` elements of `send` on `root` into `recv` on every rank (`send` is read on root
   * only; elsewhere it may be null). The default count is what `recv` holds, on every rank alike
   * (root's `send` must hold as many): pass `count` when the buffers are not all that size.
   */
  broadcast(send: Buf | null, recv: Buf, dtype: NcclDtype, options: RootOptions = {}): void {
    const f = 'broadcast';
    checkOptions(`Communicator.${f}`, options, ROOT_OPTIONS);
    const root = this.root(f, options.root);
    const { type, count, stream } = this.prepare(
      f,
      dtype,
      options,
      [[recv, 'recv', 1]],
      this.rank === root ? [[send as Buf, 'send', 1]] : [],
    );
    this.run(f, 'ncclBroadcast', nccl.ncclBroadcast((send ?? recv).ptr, recv.ptr, count, type, root, this.handle, stream));
  }

  /**
   * Reduces `count` elements of `send` over every rank into `recv` on `root` (`recv` may be null
   * elsewhere). The default count is what `send` holds, on every rank alike (root's `recv` must hold
   * as many).
   */
  reduce(send: Buf, recv: Buf | null, dtype: NcclDtype, options: ReduceOptions & RootOptions = {}): void {
    const f = 'reduce';
    checkOptions(`Communicator.${f}`, options, REDUCE_ROOT_OPTIONS);
    const root = this.root(f, options.root);
    const atRoot: [Buf, string, number][] = this.rank === root || recv !== null ? [[recv as Buf, 'recv', 1]] : [];
    const { type, count, stream } = this.prepare(f, dtype, options, [[send, 'send', 1]], atRoot);
    this.run(f, 'ncclReduce', nccl.ncclReduce(send.ptr, recv?.ptr ?? null, count, type, this.op(f, options.op), root, this.handle, stream));
  }

  /** Gathers `count` elements of `send` from every rank into `recv` (size × count), in rank order. */
  allGather(send: Buf, recv: Buf, dtype: NcclDtype, options: CollectiveOptions = {}): void {
    const f = 'allGather';
    checkOptions(`Communicator.${f}`, options, COLLECTIVE_OPTIONS);
    const { type, count, stream } = this.prepare(f, dtype, options, [
      [send, 'send', 1],
      [recv, 'recv', this.size],
    ]);
    this.run(f, 'ncclAllGather', nccl.ncclAllGather(send.ptr, recv.ptr, count, type, this.handle, stream));
  }

  /** Reduces `send` (size × count) over every rank; rank i gets block i (`count` elements) in `recv`. */
  reduceScatter(send: Buf, recv: Buf, dtype: NcclDtype, options: ReduceOptions = {}): void {
    const f = 'reduceScatter';
    checkOptions(`Communicator.${f}`, options, REDUCE_OPTIONS);
    const { type, count, stream } = this.prepare(f, dtype, options, [
      [recv, 'recv', 1],
      [send, 'send', this.size],
    ]);
    this.run(f, 'ncclReduceScatter', nccl.ncclReduceScatter(send.ptr, recv.ptr, count, type, this.op(f, options.op), this.handle, stream));
  }

  /** Sends block j (`count` elements) of `send` to rank j, which receives it as block i of `recv` (both size × count). */
  allToAll(send: Buf, recv: Buf, dtype: NcclDtype, options: CollectiveOptions = {}): void {
    const f = 'allToAll';
    checkOptions(`Communicator.${f}`, options, COLLECTIVE_OPTIONS);
    const n = this.size;
    const { type, count, stream } = this.prepare(f, dtype, options, [
      [send, 'send', n],
      [recv, 'recv', n],
    ]);
    this.run(f, 'ncclAlltoAll', nccl.ncclAlltoAll(send.ptr, recv.ptr, count, type, this.handle, stream));
  }

  /** Sends `count` elements of `buf` to rank `peer` (which must post a matching recv; group them). */
  send(buf: Buf, peer: number, dtype: NcclDtype, options: CollectiveOptions = {}): void {
    const f = 'send';
    checkOptions(`Communicator.${f}`, options, COLLECTIVE_OPTIONS);
    this.peer(f, peer);
    const { type, count, stream } = this.prepare(f, dtype, options, [[buf, 'buf', 1]]);
    this.run(f, 'ncclSend', nccl.ncclSend(buf.ptr, count, type, peer, this.handle, stream));
  }

  /** Receives `count` elements from rank `peer` into `buf`. */
  recv(buf: Buf, peer: number, dtype: NcclDtype, options: CollectiveOptions = {}): void {
    const f = 'recv';
    checkOptions(`Communicator.${f}`, options, COLLECTIVE_OPTIONS);
    this.peer(f, peer);
    const { type, count, stream } = this.prepare(f, dtype, options, [[buf, 'buf', 1]]);
    this.run(f, 'ncclRecv', nccl.ncclRecv(buf.ptr, count, type, peer, this.handle, stream));
  }

  /**
   * Ends a communicator whose peers may be gone (ncclCommAbort): its pending operations are
   * dropped and its resources freed without waiting for the other ranks. The communicator is closed.
   */
  abort(): void {
    if (this.isClosed) return;
    this.state.aborted = true;
    this.close();
    const [err] = nccl.ncclCommAbort(this.handle);
    checkNccl(err, 'ncclCommAbort');
  }

  /** Whether abort() ended this communicator. */
  get isAborted(): boolean {
    return this.state.aborted;
  }

  // -- argument checks, shared by the collectives

  /**
   * Checks the dtype, the stream and each buffer against `count` elements × its multiple. The
   * default count is the most that `bufs` (the buffers every rank passes) hold; `someRanks` (those
   * only the root passes) must hold as many but do not decide it, so that every rank computes the
   * same count (ranks that disagree make a collective hang or overrun).
   */
  private prepare(
    f: string,
    dtype: NcclDtype,
    o: CollectiveOptions,
    everyRank: [Buf, string, number][],
    someRanks: [Buf, string, number][] = [],
  ): { type: ncclDataType_t; count: number; stream: nccl.cudaStream_t | null } {
    this.live(f);
    const fn = `Communicator.${f}`;
    const bufs = [...everyRank, ...someRanks];
    const { type, bytes } = dtypeOf(dtype, fn);
    if (typeof o !== 'object' || o === null)
      throw new TypeError(`${fn}: parameter 'options' must be an object, got ${o === null ? 'null' : typeof o}`);
    for (const [b, name] of bufs) {
      if (!(b instanceof DeviceBuffer))
        throw new TypeError(
          `${fn}: parameter '${name}' must be a DeviceBuffer, got ${b === null ? 'null' : typeof b === 'object' ? ((b as object).constructor?.name ?? 'object') : typeof b}`,
        );
      if (b.isClosed) throw new Error(`${fn}: parameter '${name}' is a DeviceBuffer that was closed`);
      if (b.kind !== 'managed' && this.deviceD && b.device !== this.deviceD)
        throw new RangeError(
          `${fn}: parameter '${name}' is memory of device ${b.device.ordinal}, but this rank's device is ${this.deviceD.ordinal}`,
        );
    }
    const count = o.count ?? defaultCount(fn, dtype, bytes, everyRank, someRanks);
    if (!Number.isSafeInteger(count) || count < 0)
      throw new RangeError(`${fn}: parameter 'count' must be a non-negative integer, got ${count}`);
    for (const [b, name, k] of bufs) {
      const need = count * k * bytes;
      if (need > b.size) {
        const what = k === 1 ? `${count} ${dtype}` : `${k} ranks × ${count} ${dtype}`;
        throw new RangeError(
          `${fn}: parameter 'count' (${count}) is larger than '${name}' holds: ${what} is ${need} bytes, the buffer has ${b.size}`,
        );
      }
    }
    return { type, count, stream: streamHandle(o.stream, fn) };
  }

  private op(f: string, op: NcclOp | undefined): ncclRedOp_t {
    if (op === undefined) return ncclRedOp_t.ncclSum;
    return lookupName(OPS, op, `Communicator.${f}`, "parameter 'op'");
  }

  private root(f: string, root: number | undefined): number {
    const r = root ?? 0;
    if (!Number.isInteger(r) || r < 0 || r >= this.size)
      throw new RangeError(`Communicator.${f}: parameter 'root' must be a rank in [0, ${this.size}), got ${root}`);
    return r;
  }

  private peer(f: string, peer: number): void {
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.size)
      throw new RangeError(`Communicator.${f}: parameter 'peer' must be a rank in [0, ${this.size}), got ${peer}`);
  }

  private run(f: string, c: string, r: [ncclResult_t]): void {
    checkNccl(r[0], `${c} (Communicator.${f})`, this.handle);
  }
}

/**
 * The count when none is given: the most that every buffer of `everyRank` holds (buffers each rank
 * passes, so every rank computes the same). Throws RangeError when one of `someRanks` (the root's
 * alone) holds fewer: a smaller count on the root alone would not match the other ranks'.
 */
function defaultCount(
  fn: string,
  dtype: NcclDtype,
  bytes: number,
  everyRank: [Buf, string, number][],
  someRanks: [Buf, string, number][],
): number {
  const holds = ([b, , k]: [Buf, string, number]) => Math.floor(b.size / bytes / k);
  const count = Math.min(...everyRank.map(holds));
  for (const buf of someRanks)
    if (holds(buf) < count) {
      const from = everyRank.map(([, name]) => `'${name}'`).join(' and ');
      throw new RangeError(
        `${fn}: parameter '${buf[1]}' holds ${holds(buf)} ${dtype}, fewer than the ${count} of ${from}; without options.count every rank takes the count from ${from} (the buffer every rank passes), so pass the count`,
      );
    }
  return count;
}

/** The handle of a collective's `options.stream`: absent is the legacy default stream, else an open core Stream. */
function streamHandle(s: unknown, fn: string): nccl.cudaStream_t | null {
  if (s === undefined) return null;
  if (!(s instanceof Stream)) throw new TypeError(`${fn}: parameter 'options.stream' must be a Stream, got ${describe(s)}`);
  if (s.isClosed) throw new Error(`${fn}: parameter 'options.stream' is a Stream that was closed`);
  return s.handle as nccl.cudaStream_t;
}

function dtypeOf(dtype: NcclDtype, fn: string): { type: ncclDataType_t; bytes: number } {
  const d = typeof dtype === 'string' ? DTYPES[dtype] : undefined;
  if (!d || !Object.prototype.hasOwnProperty.call(DTYPES, dtype))
    throw new RangeError(`${fn}: parameter 'dtype' must be one of ${NCCL_DTYPES.join(', ')}, got ${JSON.stringify(dtype)}`);
  return d;
}

function toUniqueId(id: unknown, fn: string, p: string): ncclUniqueId {
  if (id instanceof ncclUniqueId) return id;
  try {
    if (typeof id === 'string') return uniqueIdFromBase64(id);
    if (id instanceof Uint8Array) return uniqueIdFromBuffer(id);
  } catch (e) {
    const E = e instanceof RangeError ? RangeError : TypeError;
    throw new E(`${fn}: parameter '${p}': ${(e as Error).message}`);
  }
  throw new TypeError(
    `${fn}: parameter '${p}' must be a ncclUniqueId, its 128 bytes or its base64 text, got ${id === null ? 'null' : typeof id}`,
  );
}

/** A ncclConfig_t as NCCL_CONFIG_INITIALIZER makes it, with the options set. */
function makeConfig(o: CommunicatorConfig | undefined, fn: string): ncclConfig_t {
  const c = ncclConfigInitializer();
  if (o === undefined) return c;
  if (typeof o !== 'object' || o === null)
    throw new TypeError(`${fn}: parameter 'config' must be an object, got ${o === null ? 'null' : typeof o}`);
  const bool = (k: 'blocking' | 'splitShare' | 'collnetEnable') => {
    const v = o[k];
    if (v === undefined) return;
    if (typeof v !== 'boolean') throw new TypeError(`${fn}: config.${k} must be a boolean, got ${typeof v}`);
    c[k] = v ? 1 : 0;
  };
  const int = (k: 'cgaClusterSize' | 'minCTAs' | 'maxCTAs' | 'trafficClass' | 'CTAPolicy' | 'nvlsCTAs') => {
    const v = o[k];
    if (v === undefined) return;
    if (!Number.isInteger(v) || v < 0 || v > 2 ** 31 - 1)
      throw new RangeError(`${fn}: config.${k} must be a non-negative integer, got ${v}`);
    c[k] = v;
  };
  const str = (k: 'netName' | 'commName') => {
    const v = o[k];
    if (v === undefined) return;
    if (typeof v !== 'string' || v.includes('\0')) throw new TypeError(`${fn}: config.${k} must be a string without NUL, got ${typeof v}`);
    // The struct keeps the bytes alive as long as it lives; NCCL copies them during the call.
    c[k] = Buffer.from(`${v}\0`);
  };
  checkOptions(fn, o, CONFIG_OPTIONS, 'config');
  bool('blocking');
  bool('splitShare');
  bool('collnetEnable');
  for (const k of ['cgaClusterSize', 'minCTAs', 'maxCTAs', 'trafficClass', 'CTAPolicy', 'nvlsCTAs'] as const) int(k);
  str('netName');
  str('commName');
  return c;
}
