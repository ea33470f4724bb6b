// Device memory: an allocation, or a view of part of one that keeps it alive.
import * as cudart from '../../runtime';
import { memcpy } from '../../runtime/async';
import { checkWaitOptions, unlessGivenUp, type WaitOptions } from '../../ffi/waits';
import { check, runtimeError } from '../base/errors';
import { Resource, openArg, openOptionalArg, whileHeld } from '../base/lifetime';
import { Device } from '../device/Device';
import { Stream, openStreamArg } from '../device/Stream';
import { direct, directByAddress } from '../base/direct';
import { POOL_THREADS, stagedUpload } from './staging';
import { warnIfBlocking } from './blocking-copies';
import { pinnedOr } from './pinned-views';
import { hookedCudaAllocation, hookedFree } from './MemoryHook';
import { checkOptions, onlyOption, type OptionKeys } from '../base/options';
import { describe, lookupName, nonEmpty, type HostMemory } from '../../ffi/checks';
import { FOREIGN_OPTIONS, foreignDevice, foreignValue, type ForeignOptions } from '../device/foreign';

/** What {@link DeviceBuffer.fromPointer} takes: the memory's owner, its device, and the stream it is ordered on. */
export interface FromPointerOptions extends ForeignOptions {
  /** The stream the memory is valid on (the producer's): kept with the buffer, reported by its array interface. */
  stream?: Stream;
}

/** Host memory a copy reads or writes: a Buffer, any TypedArray, a DataView or an ArrayBuffer. */
export type HostData = ArrayBufferView | ArrayBuffer;

/** Options of DeviceBuffer's copies and fill: synchronous by default, queued on a stream when given one. */
export interface CopyOptions {
  /** Queue the copy on this stream and return at once (the host memory must stay untouched until it is done). Absent: synchronous, ordered on the current stream of a {@link Stream.use} when one is in effect. */
  stream?: Stream;
}

/** The keys of CopyOptions, for checkOptions. */
const COPY_OPTIONS: OptionKeys<CopyOptions> = { stream: true };

/**
 * What a copy or fill takes after its data: CopyOptions, or the stream itself (`buf.copyFrom(src,
 * stream)`, as CuPy's and PyCUDA's copies take theirs), which is `{ stream }` spared an options bag.
 */
export type CopyStream = Stream | CopyOptions;

/**
 * @internal `options` as CopyOptions, checked (a misspelt key throws TypeError, naming `fn`): a Stream
 * given in their place is `{ stream }`, and a closed one, or another core object (an Event), throws as
 * a wrong `stream` parameter does; none is `{}`.
 */
export function copyOptions(options: CopyStream | undefined, fn: string): CopyOptions {
  if (options instanceof Resource) {
    openArg(options, 'Stream', fn, 'stream');
    return { stream: options as Stream };
  }
  checkOptions(fn, options, COPY_OPTIONS);
  return options ?? {};
}

/**
 * hostCopy's stream for anything but an open Stream: the options' checks (misspelt keys, a closed
 * or foreign stream) apart, which keeps hostCopy small enough for V8 to inline.
 */
function optionsStream(o: CopyStream, fn: string): number | null {
  // `{ stream }` passes at once; anything else (a closed Stream, another core object, other keys) is
  // checked as the general path checks it.
  if (!onlyOption(o, 'stream')) copyOptions(o, fn);
  const given = (o as CopyOptions).stream;
  return given === undefined ? null : (openStreamArg(given, fn, 'options.stream') as Stream).handleNumber;
}

const memcpySync = direct('cudaMemcpy');
/** The stream by number (see directByAddress); the host side may be a typed array, so it stays a pointer. */
const memcpyAsync = directByAddress('cudaMemcpyAsync', [4]);

const D2D = cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice;
const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;

/** Host memory as a copy passes it to koffi: a queued copy of pinned memory core viewed passes its address (pinned-views.ts). */
function hostArg(v: HostMemory, stream: number | null): HostMemory | bigint {
  return stream !== null ? pinnedOr(v) : nonEmpty(v);
}

/** How a DeviceBuffer's memory came to be: it decides how it is freed and what it can do. */
export type MemoryKind = 'device' | 'managed' | 'pool' | 'cached' | 'ipc' | 'virtual' | 'foreign' | 'resource';

/**
 * A memory resource a user can implement (cuda.core's MemoryResource): where `device.allocate(size,
 * { memoryResource })` and `setAllocator(resource)` get memory from. `allocate` returns a buffer
 * made by {@link DeviceBuffer.fromMemoryResource}, whose close() calls `deallocate`.
 */
export interface MemoryResource {
  /** `size` bytes, usable by work queued on `stream` (absent: the legacy default stream). */
  allocate(size: number, stream?: Stream): DeviceBuffer;
  /** Gives back what `allocate` handed out: called once by the buffer's close() (or the garbage collector), with the stream it was allocated on. */
  deallocate(ptr: bigint, size: number, stream?: Stream): void;
  /** Whether kernels on the device can read and write the memory. */
  readonly isDeviceAccessible: boolean;
  /** Whether the host can read and write the memory. */
  readonly isHostAccessible: boolean;
  /** The ordinal of the device the memory is on (or is for). */
  readonly deviceId: number;
}

/** Throws a TypeError naming `fn` and `param` unless `r` has MemoryResource's members. */
export function checkMemoryResource(r: unknown, fn: string, param: string): asserts r is MemoryResource {
  const m = r as Partial<MemoryResource> | null;
  if (
    m === null ||
    typeof m !== 'object' ||
    typeof m.allocate !== 'function' ||
    typeof m.deallocate !== 'function' ||
    typeof m.isDeviceAccessible !== 'boolean' ||
    typeof m.isHostAccessible !== 'boolean' ||
    !Number.isInteger(m.deviceId)
  )
    throw new TypeError(
      `${fn}: parameter '${param}' must be a MemoryResource (allocate, deallocate, isDeviceAccessible, isHostAccessible, deviceId), got ${describe(r)}`,
    );
}

/** Where managed memory should live or be read from: a device, or the host. */
export type MemoryLocation = Device | 'host';

/** Hints for managed memory (cudaMemAdvise): set with `advise(hint, where)`, cleared with `advise(hint, where, false)`. */
export type ManagedAdvice = 'readMostly' | 'preferredLocation' | 'accessedBy';

const ADVICE: Record<ManagedAdvice, [cudart.cudaMemoryAdvise, cudart.cudaMemoryAdvise]> = {
  readMostly: [cudart.cudaMemoryAdvise.cudaMemAdviseSetReadMostly, cudart.cudaMemoryAdvise.cudaMemAdviseUnsetReadMostly],
  preferredLocation: [
    cudart.cudaMemoryAdvise.cudaMemAdviseSetPreferredLocation,
    cudart.cudaMemoryAdvise.cudaMemAdviseUnsetPreferredLocation,
  ],
  accessedBy: [cudart.cudaMemoryAdvise.cudaMemAdviseSetAccessedBy, cudart.cudaMemoryAdvise.cudaMemAdviseUnsetAccessedBy],
};

function location(where: MemoryLocation, what: string): cudart.cudaMemLocationInit {
  if (where === 'host') return { type: cudart.cudaMemLocationType.cudaMemLocationTypeHost, id: 0 };
  if (where && typeof where === 'object' && Number.isInteger((where as Device).ordinal))
    return { type: cudart.cudaMemLocationType.cudaMemLocationTypeDevice, id: where.ordinal };
  throw new TypeError(
    `DeviceBuffer.${what}: parameter 'where' must be a Device or 'host', got ${typeof where === 'object' ? JSON.stringify(where) : String(where)}`,
  );
}

/**
 * The stream and MemoryResource of the buffers that DeviceBuffer.fromPointer and fromMemoryResource
 * make: a table aside rather than two fields of every buffer (a pool allocation makes one a call).
 */
const origins = new WeakMap<object, { stream: Stream | null; resource: MemoryResource | null }>();

/**
 * Device memory: an allocation (from {@link Device.allocate}, {@link Device.allocateManaged}, a
 * {@link MemoryPool}, a {@link CachingAllocator}, an IPC mapping or a {@link VirtualMemoryResource}),
 * or a view of part of one ({@link DeviceBuffer.slice}). Sizes and offsets are in bytes; pass the
 * buffer itself as a kernel argument (it goes as its device address, {@link DeviceBuffer.ptr}).
 *
 * Lifetime: close() frees the memory the way its {@link DeviceBuffer.kind} needs (cudaFree,
 * cudaFreeAsync, back to the cache, …); closing a view does nothing to the allocation, and the
 * allocation stays alive while a view of it is open. Use after close throws Error. Out of memory
 * throws {@link CudaError} (`cudaErrorMemoryAllocation`); sizes past the buffer throw RangeError.
 *
 * @example
 * ```ts
 * const dev = Device.get(0);
 * const host = new Float32Array(1 << 20).fill(1);
 * using buf = dev.allocate(host.byteLength);
 * buf.copyFrom(host);                      // synchronous
 * const back = buf.copyTo(new Float32Array(host.length));
 * using tail = buf.slice(4 * 1000);        // a view from byte 4000 to the end
 * tail.fill(0);
 * ```
 */
export class DeviceBuffer extends Resource {
  // Declared and assigned in the constructor, as Resource's (see there): a pool allocation makes one per call.
  declare private readonly address: bigint;
  /** The buffer's length in bytes. */
  declare readonly size: number;
  /** The device whose memory this is (kept alive by the buffer). */
  declare readonly device: Device;
  /** The allocation a view belongs to (kept alive by it), or null for an allocation. */
  declare readonly parent: DeviceBuffer | null;
  /** How the memory was allocated: cudaMalloc, cudaMallocManaged, a stream-ordered pool, a caching allocator, an IPC mapping, the virtual memory API, or another library ('foreign', never freed here). */
  declare readonly kind: MemoryKind;

  /** @internal Use device.allocate() or another allocator (protected so that VirtualBuffer can grow). */
  protected constructor(
    address: bigint,
    size: number,
    device: Device,
    parent: DeviceBuffer | null,
    kind: MemoryKind,
    free: (arg: unknown) => void,
    keep: unknown[],
    freeArg?: unknown,
  ) {
    super(free, keep, freeArg, false);
    this.address = address;
    this.size = size;
    this.device = device;
    this.parent = parent;
    this.kind = kind;
    this.track();
  }

  /** @internal Use device.allocate(). */
  static allocate(device: Device, size: number): DeviceBuffer {
    checkSize(size, 'Device.allocate');
    const p = hookedCudaAllocation('cudaMalloc', device.ordinal, size, () => check(cudart.cudaMalloc(size), 'cudaMalloc'));
    return new DeviceBuffer(
      p,
      size,
      device,
      null,
      'device',
      hookedFree('cudaMalloc', device.ordinal, size, size, p, () => void cudart.cudaFree(p)),
      [device],
    );
  }

  /** @internal Use device.allocateManaged(). */
  static allocateManaged(device: Device, size: number, attachHost: boolean): DeviceBuffer {
    checkSize(size, 'Device.allocateManaged');
    if (size === 0) throw new RangeError("Device.allocateManaged: parameter 'size' must be positive (cudaMallocManaged refuses 0 bytes)");
    const p = hookedCudaAllocation('cudaMallocManaged', device.ordinal, size, () =>
      check(cudart.cudaMallocManaged(size, attachHost ? cudart.cudaMemAttachHost : cudart.cudaMemAttachGlobal), 'cudaMallocManaged'),
    );
    return new DeviceBuffer(
      p,
      size,
      device,
      null,
      'managed',
      hookedFree('cudaMallocManaged', device.ordinal, size, size, p, () => void cudart.cudaFree(p)),
      [device],
    );
  }

  /**
   * @internal Wraps memory an allocator owns: `free(freeArg)` gives it back (called once, by close()
   * or the garbage collector; see Resource's constructor); `keep` are what the memory needs alive (its pool, its device).
   */
  static fromAllocation(
    address: bigint,
    size: number,
    device: Device,
    kind: MemoryKind,
    free: (arg: unknown) => void,
    keep: unknown[],
    freeArg?: unknown,
  ): DeviceBuffer {
    return new DeviceBuffer(address, size, device, null, kind, free, keep, freeArg);
  }

  /**
   * Wraps device memory another library owns (a CuPy array's `data.ptr`, a PyTorch tensor's
   * `data_ptr()`, a native addon's allocation): `size` bytes from `ptr`, of kind 'foreign'. The
   * buffer never frees the memory: close() only marks it closed (and its views with it). It holds
   * `options.owner` (the object that owns the memory) alive while it or a view of it lives, so pass
   * it whenever the owner is a JS object; the owner must not free the memory before the buffer is
   * done. `options.stream` is the stream the memory is valid on (kept alive too).
   */
  static fromPointer(ptr: bigint | number, size: number, options: FromPointerOptions = {}): DeviceBuffer {
    const fn = 'DeviceBuffer.fromPointer';
    checkOptions(fn, options, { ...FOREIGN_OPTIONS, stream: true });
    const address = foreignValue(ptr, fn, 'ptr', size === 0);
    checkSize(size, fn);
    openOptionalArg(options.stream, 'Stream', fn, 'options.stream');
    const device = foreignDevice(options.device, fn);
    const b = new DeviceBuffer(address, size, device, null, 'foreign', () => undefined, [device, options.owner, options.stream]);
    origins.set(b, { stream: options.stream ?? null, resource: null });
    return b;
  }

  /**
   * Wraps `size` bytes at `ptr` of device `resource.deviceId` that `resource.allocate` got (on
   * `options.stream`), for a {@link MemoryResource} to return: close() calls `resource.deallocate(ptr, size, stream)` once.
   * The buffer remembers the resource (`buffer.memoryResource`) and keeps it and the stream alive.
   */
  static fromMemoryResource(ptr: bigint | number, size: number, resource: MemoryResource, options: { stream?: Stream } = {}): DeviceBuffer {
    const fn = 'DeviceBuffer.fromMemoryResource';
    checkMemoryResource(resource, fn, 'resource');
    checkOptions(fn, options, { stream: true });
    const address = foreignValue(ptr, fn, 'ptr', size === 0);
    checkSize(size, fn);
    openOptionalArg(options.stream, 'Stream', fn, 'options.stream');
    const device = Device.get(resource.deviceId);
    const stream = options.stream;
    const b = new DeviceBuffer(address, size, device, null, 'resource', () => resource.deallocate(address, size, stream), [
      device,
      resource,
      stream,
    ]);
    origins.set(b, { stream: stream ?? null, resource });
    return b;
  }

  /** The MemoryResource that allocated the buffer (a view reports its allocation's), or null for memory of core's own allocators. */
  get memoryResource(): MemoryResource | null {
    return this.parent ? this.parent.memoryResource : (origins.get(this)?.resource ?? null);
  }

  /** The stream the memory is valid on, when it was given (DeviceBuffer.fromPointer's option; a view reports its allocation's); else null. */
  get stream(): Stream | null {
    return this.parent ? this.parent.stream : (origins.get(this)?.stream ?? null);
  }

  /** Whether close() was called on the buffer, or (for a view) on the allocation it belongs to. */
  override get isClosed(): boolean {
    return super.isClosed || (this.parent !== null && this.parent.isClosed);
  }

  /** The device address, as a bigint for the runtime facade (throws Error once the buffer or its allocation is closed). */
  get ptr(): bigint {
    this.alive('ptr');
    return this.address;
  }

  /** @internal The device address, or null once the buffer or its allocation is closed (one test for a launch's hot path). */
  openAddress(): bigint | null {
    return this.isClosed ? null : this.address;
  }

  private alive(what: string): void {
    if (this.parent?.isClosed) throw new Error(`DeviceBuffer.${what}: the allocation this view belongs to was closed`);
    this.live(what);
  }

  /**
   * A view of `length` bytes (default: to the end) from byte `offset`, no copy; it keeps the
   * allocation alive, and its close() frees nothing. Throws RangeError when the range goes past the buffer.
   */
  slice(offset: number, length = this.size - offset): DeviceBuffer {
    this.alive('slice');
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.size)
      throw new RangeError(`DeviceBuffer.slice: offset ${offset} is outside the buffer's ${this.size} bytes`);
    if (!Number.isSafeInteger(length) || length < 0 || offset + length > this.size)
      throw new RangeError(`DeviceBuffer.slice: ${length} bytes from ${offset} go past the buffer's ${this.size} bytes`);
    const parent = this.parent ?? this;
    return new DeviceBuffer(this.address + BigInt(offset), length, this.device, parent, this.kind, () => undefined, [parent]);
  }

  /**
   * Copies all of `src` (host memory, another DeviceBuffer, or a contiguous StridedView) into the
   * start of this buffer: waits for the copy (cudaMemcpy), or queues it on `options.stream`
   * (cudaMemcpyAsync; `copyFrom(src, stream)` is the same). Returns this buffer. Throws RangeError
   * when `src` is larger than the buffer, CudaError when the copy fails. **Blocks the event loop**
   * for ordinary (pageable) host memory, even on a stream (the driver stages it on the calling
   * thread); {@link DeviceBuffer.upload} does not. CUDA_BINDINGS_WARN_BLOCKING_COPIES=1 warns once
   * when that happens.
   */
  copyFrom(src: HostData | DeviceBuffer | DeviceBytes, options?: CopyStream): this {
    this.alive('copyFrom');
    // Host memory, the usual source: checked in line, and the copy called directly.
    if (ArrayBuffer.isView(src)) this.hostCopy(this.address, src, src.byteLength, H2D, options, 'DeviceBuffer.copyFrom');
    else this.copyFromOther(src, options);
    return this;
  }

  /** copyFrom of anything but a TypedArray, Buffer or DataView (apart: copyFrom is then small enough for V8 to inline). */
  private copyFromOther(src: HostData | DeviceBuffer | DeviceBytes, given: CopyStream | undefined): void {
    const options = copyOptions(given, 'DeviceBuffer.copyFrom');
    const device = deviceSide(src, 'DeviceBuffer.copyFrom', 'src', false);
    if (!device) hostOrDevice(src, 'copyFrom', 'src');
    openOptionalArg(options.stream, 'Stream', 'DeviceBuffer.copyFrom', 'options.stream');
    const n = device ? device.size : (src as HostData).byteLength;
    if (n > this.size) throw new RangeError(`DeviceBuffer.copyFrom: the source has ${n} bytes, more than the buffer's ${this.size}`);
    this.copy(this.address, device ? device.ptr : (src as HostData), n, device ? D2D : H2D, options, 'copyFrom');
  }

  /**
   * Copies the start of this buffer into `dst` (host memory, another DeviceBuffer, or a contiguous
   * StridedView that is not read-only), as many bytes as `dst` holds, and returns `dst`: synchronous,
   * or queued on `options.stream` (`copyTo(dst, stream)` is the same; then read `dst` only after the
   * stream is synchronized). Throws RangeError when `dst` is larger than the buffer. **Blocks the
   * event loop** for ordinary (pageable) host memory, even on a stream: the call waits for all the
   * stream's earlier work; `await buf.download(…, { stream })` does not.
   * CUDA_BINDINGS_WARN_BLOCKING_COPIES=1 warns once when that happens.
   */
  copyTo<T extends HostData | DeviceBuffer | DeviceBytes>(dst: T, options?: CopyStream): T {
    this.alive('copyTo');
    // Host memory, the usual destination: checked in line, and the copy called directly.
    if (ArrayBuffer.isView(dst)) this.hostCopy(dst, this.address, dst.byteLength, D2H, options, 'DeviceBuffer.copyTo');
    else this.copyToOther(dst, options);
    return dst;
  }

  /** copyTo into anything but a TypedArray, Buffer or DataView (apart: copyTo is then small enough for V8 to inline). */
  private copyToOther(dst: HostData | DeviceBuffer | DeviceBytes, given: CopyStream | undefined): void {
    const options = copyOptions(given, 'DeviceBuffer.copyTo');
    const device = deviceSide(dst, 'DeviceBuffer.copyTo', 'dst', true);
    if (!device) hostOrDevice(dst, 'copyTo', 'dst');
    openOptionalArg(options.stream, 'Stream', 'DeviceBuffer.copyTo', 'options.stream');
    const n = device ? device.size : (dst as HostData).byteLength;
    if (n > this.size) throw new RangeError(`DeviceBuffer.copyTo: the destination has ${n} bytes, more than the buffer's ${this.size}`);
    this.copy(device ? device.ptr : (dst as HostData), this.address, n, device ? D2D : D2H, options, 'copyTo');
  }

  /**
   * A copy between this buffer and host memory (a TypedArray, Buffer or DataView: `n` is its byte
   * length), with the checks of copyFrom's and copyTo's general path in its order: the options, the
   * stream, the size. What is rare (the errors, a copy inside a stream.use()) is in functions apart,
   * which keeps this one under the size V8 inlines (460 bytes of bytecode: it was not inlined).
   */
  private hostCopy(
    dst: cudart.Pointer,
    src: cudart.Pointer,
    n: number,
    kind: cudart.cudaMemcpyKind,
    o: CopyStream | undefined,
    fn: 'DeviceBuffer.copyFrom' | 'DeviceBuffer.copyTo',
  ): void {
    // An explicit stream only: without one the copy is synchronous (on the current stream of a
    // stream.use(), if any). An open Stream given itself needs no more checks; options go through
    // optionsStream (a plain object's `instanceof Stream` is a short walk of its prototypes).
    // The stream by its number (see directByAddress), null for none.
    const stream = o === undefined ? null : o instanceof Stream && !o.isClosed ? o.handleNumber : optionsStream(o, fn);
    if (n > this.size) throwTooLarge(fn, n, this.size);
    if (stream === null && Stream.inScope(fn) !== undefined) return this.copyInScope(dst, src, n, kind, fn);
    if (stream !== null) warnIfBlocking((kind === H2D ? src : dst) as HostData, fn);
    const d = typeof dst === 'bigint' ? dst : hostArg(dst!, stream);
    const s = typeof src === 'bigint' ? src : hostArg(src!, stream);
    const err = stream !== null ? memcpyAsync.get()(d, s, n, kind, stream) : memcpySync.get()(d, s, n, kind);
    if (err !== 0) throwCopyFailed(err, fn, stream !== null);
  }

  /** hostCopy without a stream inside a stream.use(): on the current stream, waited for. */
  private copyInScope(dst: cudart.Pointer, src: cudart.Pointer, n: number, kind: cudart.cudaMemcpyKind, fn: string): void {
    this.copy(dst, src, n, kind, {}, fn.slice('DeviceBuffer.'.length));
  }

  private copy(dst: cudart.Pointer, src: cudart.Pointer, n: number, kind: cudart.cudaMemcpyKind, o: CopyOptions, what: string): void {
    if (o.stream && kind !== D2D) warnIfBlocking((kind === H2D ? src : dst) as HostData, `DeviceBuffer.${what}`);
    if (o.stream) check(cudart.cudaMemcpyAsync(dst, src, n, kind, o.stream.handle), `DeviceBuffer.${what} (cudaMemcpyAsync)`);
    else {
      // Synchronous, but ordered on the current stream when a stream.use(fn) is in effect.
      const s = Stream.inScope(`DeviceBuffer.${what}`);
      if (s === undefined) return void check(cudart.cudaMemcpy(dst, src, n, kind), `DeviceBuffer.${what} (cudaMemcpy)`);
      check(cudart.cudaMemcpyAsync(dst, src, n, kind, s.handle), `DeviceBuffer.${what} (cudaMemcpyAsync on the current stream)`);
      check(cudart.cudaStreamSynchronize(s.handle), `DeviceBuffer.${what} (cudaStreamSynchronize of the current stream)`);
    }
  }

  /**
   * Copies host memory into the start of this buffer off the JS thread and resolves when it is in.
   * From 32 MiB up, the thread pool's threads stage it through pinned memory in parallel (one
   * cudaMemcpy from pageable memory stages it on one thread, at a fraction of the bus's speed).
   * `src` must stay untouched until the copy is over. `options.signal`/`timeout` reject with an
   * AbortError/TimeoutError, but the copy is not cancelled (and `src` is still read until it is over).
   * close() during the copy (or after giving up on it) marks the buffer closed at once and frees its
   * memory (a view's: its allocation's) only once the copy is over.
   */
  async copyFromAsync(src: HostData, options?: WaitOptions): Promise<this> {
    const fn = 'DeviceBuffer.copyFromAsync';
    this.alive('copyFromAsync');
    const n = hostBytes(src, 'copyFromAsync', 'src');
    if (n > this.size) throw new RangeError(`DeviceBuffer.copyFromAsync: the source has ${n} bytes, more than the buffer's ${this.size}`);
    const o = checkWaitOptions(options, fn);
    // Held (a view's allocation too) until the last C copy is over, also when the caller gave up waiting.
    const work = whileHeld([this], () =>
      n >= STAGED_MIN
        ? stagedUpload(this.device, this.address, hostSlice(src, 0, n))
        : inPieces(n, (at, len) => memcpy(fn, this.address + BigInt(at), hostSlice(src, at, len), len, H2D), fn),
    );
    await unlessGivenUp(fn, o, work);
    return this;
  }

  /**
   * Copies the start of this buffer into `dst` off the JS thread, in parallel pieces on the thread
   * pool; resolves with `dst`. `options.signal`/`timeout` reject with an AbortError/TimeoutError, but
   * the copy is not cancelled (`dst` is still written until it is over). close() during the copy (or
   * after giving up on it) marks the buffer closed at once and frees its memory only once the copy is over.
   */
  async copyToAsync<T extends HostData>(dst: T, options?: WaitOptions): Promise<T> {
    const fn = 'DeviceBuffer.copyToAsync';
    this.alive('copyToAsync');
    const n = hostBytes(dst, 'copyToAsync', 'dst');
    if (n > this.size)
      throw new RangeError(`DeviceBuffer.copyToAsync: the destination has ${n} bytes, more than the buffer's ${this.size}`);
    const o = checkWaitOptions(options, fn);
    // Held (a view's allocation too) until the last C copy is over, also when the caller gave up waiting.
    const work = whileHeld([this], () =>
      inPieces(n, (at, len) => memcpy(fn, hostSlice(dst, at, len), this.address + BigInt(at), len, D2H), fn),
    );
    await unlessGivenUp(fn, o, work);
    return dst;
  }

  /**
   * Sets every byte of the buffer to `value` (0–255): synchronous (cudaMemset) or queued on
   * `options.stream` (cudaMemsetAsync; `fill(value, stream)` is the same). Returns this buffer;
   * throws RangeError for another value.
   */
  fill(value: number, options?: CopyStream): this {
    this.alive('fill');
    const o = copyOptions(options, 'DeviceBuffer.fill');
    openOptionalArg(o.stream, 'Stream', 'DeviceBuffer.fill', 'options.stream');
    if (!Number.isInteger(value) || value < 0 || value > 255)
      throw new RangeError(`DeviceBuffer.fill: parameter 'value' must be a byte (0 to 255), got ${value}`);
    const s = o.stream ?? Stream.inScope('DeviceBuffer.fill');
    if (s) check(cudart.cudaMemsetAsync(this.address, value, this.size, s.handle), 'DeviceBuffer.fill (cudaMemsetAsync)');
    else check(cudart.cudaMemset(this.address, value, this.size), 'DeviceBuffer.fill (cudaMemset)');
    if (s && !o.stream) check(cudart.cudaStreamSynchronize(s.handle), 'DeviceBuffer.fill (cudaStreamSynchronize of the current stream)');
    return this;
  }

  /** Moves managed memory to `where` ahead of its use, queued on `stream` (absent: the current stream of a {@link Stream.use}, else the legacy default stream). */
  prefetch(where: MemoryLocation, stream?: Stream): this {
    this.managedOnly('prefetch');
    openOptionalArg(stream, 'Stream', 'DeviceBuffer.prefetch', 'stream');
    check(
      cudart.cudaMemPrefetchAsync(
        this.address,
        this.size,
        location(where, 'prefetch'),
        0,
        (stream ?? Stream.inScope('DeviceBuffer.prefetch'))?.handle ?? null,
      ),
      'DeviceBuffer.prefetch (cudaMemPrefetchAsync)',
    );
    return this;
  }

  /** Gives the driver a hint about managed memory (on = false clears it); see ManagedAdvice. */
  advise(advice: ManagedAdvice, where: MemoryLocation, on = true): this {
    this.managedOnly('advise');
    const pair = lookupName(ADVICE, advice, 'DeviceBuffer.advise', "parameter 'advice'");
    check(
      cudart.cudaMemAdvise(this.address, this.size, pair[on ? 0 : 1], location(where, 'advise')),
      'DeviceBuffer.advise (cudaMemAdvise)',
    );
    return this;
  }

  private managedOnly(what: string): void {
    this.alive(what);
    if (this.kind !== 'managed')
      throw new Error(
        `DeviceBuffer.${what}: only managed memory (device.allocateManaged) can be ${what === 'advise' ? 'advised' : 'prefetched'}; this buffer is ${this.kind} memory`,
      );
  }
}

/**
 * The method through which device memory that is not a DeviceBuffer (a StridedView, of a room this
 * class cannot import) takes part in DeviceBuffer's copies: it gives the address and byte count of
 * its packed bytes, or throws naming `where` and `param` (closed, not contiguous, read-only when
 * `writing`).
 */
export const asDeviceBytes: unique symbol = Symbol('cuda-bindings.asDeviceBytes');

/** Packed bytes of device memory, as a copy reads or writes them. */
export interface DeviceByteRange {
  /** The first byte's device address. */
  ptr: bigint;
  /** How many bytes. */
  size: number;
}

/** Device memory that DeviceBuffer's copies read and write besides a DeviceBuffer: a contiguous StridedView. */
export interface DeviceBytes {
  /** The packed bytes' address and count, for the copy `where`; throws when they cannot be copied (see asDeviceBytes). */
  [asDeviceBytes](where: string, param: string, writing: boolean): DeviceByteRange;
}

/** The device side of a copy: a DeviceBuffer's or a view's bytes (checked open), or null for host memory. */
function deviceSide(v: unknown, where: string, param: string, writing: boolean): { ptr: bigint; size: number } | null {
  if (v instanceof DeviceBuffer) {
    openArg(v, 'DeviceBuffer', where, param);
    return { ptr: v.ptr, size: v.size };
  }
  if (v !== null && typeof v === 'object' && asDeviceBytes in v) return (v as DeviceBytes)[asDeviceBytes](where, param, writing);
  return null;
}

/** hostCopy's RangeError for host memory larger than the buffer (`n` bytes against `size`). */
function throwTooLarge(fn: 'DeviceBuffer.copyFrom' | 'DeviceBuffer.copyTo', n: number, size: number): never {
  throw new RangeError(
    fn === 'DeviceBuffer.copyFrom'
      ? `DeviceBuffer.copyFrom: the source has ${n} bytes, more than the buffer's ${size}`
      : `DeviceBuffer.copyTo: the destination has ${n} bytes, more than the buffer's ${size}`,
  );
}

/** hostCopy's CudaError for a failed cudaMemcpy or cudaMemcpyAsync (the call's name formatted only then). */
function throwCopyFailed(err: number, fn: string, async: boolean): never {
  throw runtimeError(err, `${fn} (${async ? 'cudaMemcpyAsync' : 'cudaMemcpy'})`);
}

/** Copies smaller than this go in one piece. */
const PIECE_MIN = 4 << 20;
/** Uploads from this size up are staged through pinned memory (see staging.ts). */
const STAGED_MIN = 32 << 20;

/**
 * Runs `copy` over [0, n) in up to one piece per pool thread at once; throws the first failure as a
 * CudaError, once every piece is over (see whileHeld: no piece may still be copying when it settles).
 */
async function inPieces(n: number, copy: (at: number, len: number) => Promise<[cudart.cudaError_t]>, what: string): Promise<void> {
  const pieces = Math.max(1, Math.min(POOL_THREADS, Math.floor(n / PIECE_MIN)));
  const step = Math.ceil(n / pieces / 4096) * 4096;
  const results = await Promise.allSettled(
    Array.from({ length: pieces }, (_, i) =>
      i * step < n ? copy(i * step, Math.min(step, n - i * step)) : Promise.resolve([0] as [cudart.cudaError_t]),
    ),
  );
  for (const r of results) {
    if (r.status === 'rejected') throw r.reason;
    check(r.value, `${what} (cudaMemcpy)`);
  }
}

function hostBytes(v: HostData, what: string, p: string): number {
  if (!(ArrayBuffer.isView(v) || v instanceof ArrayBuffer))
    throw new TypeError(`DeviceBuffer.${what}: parameter '${p}' must be a Buffer, TypedArray, DataView or ArrayBuffer, got ${describe(v)}`);
  return v.byteLength;
}

/** Throws a TypeError naming DeviceBuffer.`what` unless `v` is host memory (a DeviceBuffer was handled before). */
function hostOrDevice(v: unknown, what: string, p: string): void {
  if (!(ArrayBuffer.isView(v) || v instanceof ArrayBuffer)) {
    const got =
      v === null
        ? 'null'
        : Array.isArray(v)
          ? 'an Array (copy it into a TypedArray first, e.g. new Float32Array(array))'
          : typeof v === 'object'
            ? `a ${v.constructor?.name ?? 'object'}`
            : `${typeof v} ${String(v)}`;
    throw new TypeError(
      `DeviceBuffer.${what}: parameter '${p}' must be a DeviceBuffer, Buffer, TypedArray, DataView or ArrayBuffer, got ${got}`,
    );
  }
}

/** Bytes [at, at + len) of host memory, as a view (no copy). */
function hostSlice(v: HostData, at: number, len: number): Uint8Array {
  return ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset + at, len) : new Uint8Array(v, at, len);
}

/** Throws unless `size` is a byte count. */
export function checkSize(size: number, fn: string): void {
  if (!Number.isSafeInteger(size) || size < 0) throwBadSize(size, fn);
}

/** checkSize's error (apart, so that checkSize is small enough to be inlined into hot paths). */
function throwBadSize(size: number, fn: string): never {
  throw new RangeError(`${fn}: parameter 'size' must be a non-negative integer, got ${size}`);
}
