// A driver context, as PyCUDA's Context and cuda.core's: created with flags, pushed and popped on
// the calling thread's stack, synchronized, its limits and cache preferences read and set. The
// primary context (the one the runtime and the rest of this layer use) is a Context too.
import * as cuda from '../../driver';
import { Device } from './Device';
import { driverError } from '../base/errors';
import { driverGet, driverOk } from '../base/driver-check';
import { Resource } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { describe, lookupName } from '../../ffi/checks';

/** How a thread waits for the device: let CUDA choose, spin, yield, or block. */
export type ContextScheduling = 'auto' | 'spin' | 'yield' | 'blockingSync';

/** How {@link Context.create} makes a context. */
export interface ContextOptions {
  /** How a thread waiting for the device behaves (default 'auto'). */
  scheduling?: ContextScheduling;
  /** Keep the local-memory allocation of kernels at its largest rather than shrinking it (CU_CTX_LMEM_RESIZE_TO_MAX). */
  lmemResizeToMax?: boolean;
}

/** The context limits (cuCtxGetLimit / cuCtxSetLimit), by name. */
export type ContextLimit =
  | 'stackSize'
  | 'printfFifoSize'
  | 'mallocHeapSize'
  | 'devRuntimeSyncDepth'
  | 'devRuntimePendingLaunchCount'
  | 'maxL2FetchGranularity'
  | 'persistingL2CacheSize';

/** The preference between shared memory and L1 (cuCtxSetCacheConfig). */
export type CacheConfig = 'none' | 'shared' | 'l1' | 'equal';

/** The shared memory bank size (cuCtxSetSharedMemConfig; ignored by devices since Maxwell). */
export type SharedMemConfig = 'default' | 'fourByte' | 'eightByte';

const SCHEDULING: Record<ContextScheduling, number> = {
  auto: cuda.CUctx_flags.CU_CTX_SCHED_AUTO,
  spin: cuda.CUctx_flags.CU_CTX_SCHED_SPIN,
  yield: cuda.CUctx_flags.CU_CTX_SCHED_YIELD,
  blockingSync: cuda.CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC,
};

const LIMITS: Record<ContextLimit, cuda.CUlimit> = {
  stackSize: cuda.CUlimit.CU_LIMIT_STACK_SIZE,
  printfFifoSize: cuda.CUlimit.CU_LIMIT_PRINTF_FIFO_SIZE,
  mallocHeapSize: cuda.CUlimit.CU_LIMIT_MALLOC_HEAP_SIZE,
  devRuntimeSyncDepth: cuda.CUlimit.CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
  devRuntimePendingLaunchCount: cuda.CUlimit.CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
  maxL2FetchGranularity: cuda.CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY,
  persistingL2CacheSize: cuda.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
};

const CACHE: Record<CacheConfig, cuda.CUfunc_cache> = {
  none: cuda.CUfunc_cache.CU_FUNC_CACHE_PREFER_NONE,
  shared: cuda.CUfunc_cache.CU_FUNC_CACHE_PREFER_SHARED,
  l1: cuda.CUfunc_cache.CU_FUNC_CACHE_PREFER_L1,
  equal: cuda.CUfunc_cache.CU_FUNC_CACHE_PREFER_EQUAL,
};

const SHARED: Record<SharedMemConfig, cuda.CUsharedconfig> = {
  default: cuda.CUsharedconfig.CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
  fourByte: cuda.CUsharedconfig.CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE,
  eightByte: cuda.CUsharedconfig.CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE,
};

function nameOf<T extends string>(table: Record<T, number>, value: number): T {
  return (Object.keys(table) as T[]).find((k) => table[k] === value) ?? (String(value) as T);
}

/** How a Context came to be: it decides what close() does. */
export type ContextKind = 'created' | 'primary' | 'borrowed';

let initialised = false;
function init(fn: string): void {
  if (!initialised) {
    driverOk(cuda.cuInit(0), `${fn} (cuInit)`);
    initialised = true;
  }
}

/**
 * A driver API context (CUcontext): a device's address space and state, for code that mixes driver
 * calls with core (as PyCUDA's contexts). Most code needs none: the runtime and core use each
 * device's primary context, and {@link Device.primaryContext} gives its handle.
 *
 * Lifetime by {@link Context.kind}: close() destroys a 'created' context, releases a retained
 * 'primary' one, and does nothing to a 'borrowed' one (it belongs to a green context or to other
 * code). Methods after close throw Error; driver failures throw {@link CudaError} named by CUresult.
 *
 * @example
 * ```ts
 * using ctx = Context.create(Device.get(0), { scheduling: 'blockingSync' }); // current now
 * ctx.setLimit('printfFifoSize', 16 << 20);                                  // bytes
 * ctx.pop();
 * ```
 */
export class Context extends Resource {
  private constructor(
    /** The driver's handle. */
    readonly handle: cuda.CUcontext,
    /** The device the context is on. */
    readonly device: Device,
    private readonly ownership: ContextKind,
    /** What owns a borrowed context (a green context): once it is closed, so is this. */
    private readonly owner: { readonly isClosed: boolean } | null = null,
  ) {
    super(
      ownership === 'created'
        ? () => void cuda.cuCtxDestroy(handle)
        : ownership === 'primary'
          ? () => void cuda.cuDevicePrimaryCtxRelease(device.ordinal)
          : () => undefined,
      owner ? [device, owner] : [device],
    );
  }

  /** Throws when this context, or the green context it belongs to, was closed. */
  protected override live(what: string): void {
    super.live(what);
    if (this.owner?.isClosed) throw new Error(`Context.${what}: the green context this context belongs to was closed`);
  }

  /**
   * A new context on `device` (cuCtxCreate), made current on the calling thread (pushed on its
   * stack), as PyCUDA's `device.make_context()`. close() destroys it. Most code wants the primary
   * context instead, which the runtime shares.
   */
  static create(device: Device, options: ContextOptions = {}): Context {
    if (!(device instanceof Device)) throw new TypeError(`Context.create: parameter 'device' must be a Device, got ${describe(device)}`);
    checkOptions('Context.create', options, { scheduling: true, lmemResizeToMax: true });
    const sched = lookupName(SCHEDULING, options.scheduling ?? 'auto', 'Context.create', "option 'scheduling'");
    init('Context.create');
    const flags = sched | (options.lmemResizeToMax ? cuda.CUctx_flags.CU_CTX_LMEM_RESIZE_TO_MAX : 0);
    return new Context(driverGet(cuda.cuCtxCreate(null, flags, device.ordinal), 'Context.create (cuCtxCreate)'), device, 'created');
  }

  /** `device`'s primary context, retained until close() (cuDevicePrimaryCtxRetain / Release); not made current. */
  static primary(device: Device): Context {
    if (!(device instanceof Device)) throw new TypeError(`Context.primary: parameter 'device' must be a Device, got ${describe(device)}`);
    init('Context.primary');
    return new Context(
      driverGet(cuda.cuDevicePrimaryCtxRetain(device.ordinal), 'Context.primary (cuDevicePrimaryCtxRetain)'),
      device,
      'primary',
    );
  }

  /** The calling thread's current context, or null; close() on it does nothing (it is not this object's). */
  static current(): Context | null {
    init('Context.current');
    const h = cuda.cuCtxGetCurrent();
    driverOk(h, 'Context.current (cuCtxGetCurrent)');
    if (h[1] === null || h[1] === (0n as unknown)) return null;
    return new Context(h[1], Device.get(driverGet(cuda.cuCtxGetDevice(), 'Context.current (cuCtxGetDevice)')), 'borrowed');
  }

  /** @internal A context owned elsewhere (a green context's): usable while `owner` is open, and keeps it alive. */
  static borrow(handle: cuda.CUcontext, device: Device, owner: { readonly isClosed: boolean }): Context {
    return new Context(handle, device, 'borrowed', owner);
  }

  /** Makes this the calling thread's current context, above the one before (cuCtxPushCurrent). */
  push(): this {
    this.live('push');
    driverOk(cuda.cuCtxPushCurrent(this.handle), 'Context.push (cuCtxPushCurrent)');
    return this;
  }

  /** Takes this context off the calling thread's stack (cuCtxPopCurrent); it must be the current one. */
  pop(): this {
    this.live('pop');
    const [err, top] = cuda.cuCtxGetCurrent();
    if (err !== 0) throw driverError(err, 'Context.pop (cuCtxGetCurrent)');
    if (top !== this.handle)
      throw new Error(
        `Context.pop: this context is not the current one (the current is ${top === null ? 'none' : `0x${BigInt(top as unknown as bigint).toString(16)}`}); pop the contexts pushed after it first`,
      );
    driverOk(cuda.cuCtxPopCurrent(), 'Context.pop (cuCtxPopCurrent)');
    return this;
  }

  /** Whether this is the calling thread's current context. */
  get isCurrent(): boolean {
    this.live('isCurrent');
    const [err, top] = cuda.cuCtxGetCurrent();
    return err === 0 && top === this.handle;
  }

  /** Runs `fn` with this context current, pushing and popping it around the call when it is not current already. */
  run<T>(fn: () => T): T {
    this.live('run');
    if (typeof fn !== 'function') throw new TypeError(`Context.run: parameter 'fn' must be a function, got ${describe(fn)}`);
    if (this.isCurrent) return fn();
    this.push();
    try {
      return fn();
    } finally {
      cuda.cuCtxPopCurrent();
    }
  }

  /** Waits (on this thread) until all work in the context is done (cuCtxSynchronize). */
  synchronize(): void {
    this.live('synchronize');
    this.run(() => driverOk(cuda.cuCtxSynchronize(), 'Context.synchronize (cuCtxSynchronize)'));
  }

  /** The CUDA API version the context was made for, e.g. 13000 (cuCtxGetApiVersion). */
  get apiVersion(): number {
    this.live('apiVersion');
    return driverGet(cuda.cuCtxGetApiVersion(this.handle), 'Context.apiVersion (cuCtxGetApiVersion)');
  }

  /** A limit of the context in bytes or as a count (cuCtxGetLimit). */
  getLimit(limit: ContextLimit): number {
    this.live('getLimit');
    const code = lookupName(LIMITS, limit, 'Context.getLimit', "parameter 'limit'");
    return this.run(() => driverGet(cuda.cuCtxGetLimit(code), `Context.getLimit(${limit}) (cuCtxGetLimit)`));
  }

  /** Sets a limit of the context (cuCtxSetLimit); the driver may round it: read it back with getLimit(). */
  setLimit(limit: ContextLimit, value: number): void {
    this.live('setLimit');
    const code = lookupName(LIMITS, limit, 'Context.setLimit', "parameter 'limit'");
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`Context.setLimit: parameter 'value' must be a non-negative integer, got ${value}`);
    this.run(() => driverOk(cuda.cuCtxSetLimit(code, value), `Context.setLimit(${limit}) (cuCtxSetLimit)`));
  }

  /** The preference between shared memory and L1 for kernels that set none (cuCtxGetCacheConfig / cuCtxSetCacheConfig). */
  get cacheConfig(): CacheConfig {
    this.live('cacheConfig');
    return nameOf(
      CACHE,
      this.run(() => driverGet(cuda.cuCtxGetCacheConfig(), 'Context.cacheConfig (cuCtxGetCacheConfig)')),
    );
  }

  /** Sets the preference (cuCtxSetCacheConfig); throws RangeError for an unknown name. */
  set cacheConfig(config: CacheConfig) {
    this.live('cacheConfig');
    const code = lookupName(CACHE, config, 'Context.cacheConfig', 'the value');
    this.run(() => driverOk(cuda.cuCtxSetCacheConfig(code), 'Context.cacheConfig (cuCtxSetCacheConfig)'));
  }

  /** The shared memory bank size (cuCtxGetSharedMemConfig / cuCtxSetSharedMemConfig; devices since Maxwell ignore a setting). */
  get sharedMemConfig(): SharedMemConfig {
    this.live('sharedMemConfig');
    return nameOf(
      SHARED,
      this.run(() => driverGet(cuda.cuCtxGetSharedMemConfig(), 'Context.sharedMemConfig (cuCtxGetSharedMemConfig)')),
    );
  }

  /** Sets the bank size (cuCtxSetSharedMemConfig); throws RangeError for an unknown name. */
  set sharedMemConfig(config: SharedMemConfig) {
    this.live('sharedMemConfig');
    const code = lookupName(SHARED, config, 'Context.sharedMemConfig', 'the value');
    this.run(() => driverOk(cuda.cuCtxSetSharedMemConfig(code), 'Context.sharedMemConfig (cuCtxSetSharedMemConfig)'));
  }

  /** Whether this object made the context (create), retains the primary one (primary), or only names one owned elsewhere (current). */
  get kind(): ContextKind {
    return this.ownership;
  }
}
