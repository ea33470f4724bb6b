// Memory hooks like CuPy's: objects told of every allocation and free of core's allocators while
// they are installed. `alloc*` brackets memory taken from CUDA itself (cudaMalloc, cudaHostAlloc,
// cuMemCreate, …); `malloc*` brackets a request to an allocator, served from CUDA or from a cache;
// `free*` brackets giving a block back (to CUDA or to the allocator's cache).
import { describe } from '../../ffi/checks';

/** One allocation or free, as a hook sees it. */
export interface MemoryEvent {
  /** Which allocator: 'cudaMalloc', 'cudaMallocManaged', 'MemoryPool', 'CachingAllocator', 'cudaHostAlloc', 'PinnedMemoryPool', 'VirtualMemoryResource', … */
  readonly allocator: string;
  /** The device ordinal, or 'host' for pinned host memory. */
  readonly device: number | 'host';
  /** The bytes asked for. */
  readonly size: number;
  /** The bytes the block really holds (rounded up by the allocator). */
  readonly memSize: number;
  /** The address: null in the `*Pre` calls of an allocation, set from `*Post` on. */
  ptr: bigint | null;
}

/** The phases a hook may implement. */
export type MemoryHookPhase = 'allocPre' | 'allocPost' | 'mallocPre' | 'mallocPost' | 'freePre' | 'freePost';

/** Options of every memory hook's constructor. */
export interface MemoryHookOptions {
  /** Install at once (the default, so that `using hook = new DebugPrintHook()` covers its scope); false: only inside `with()`. */
  install?: boolean;
}

const installed: MemoryHook[] = [];

/**
 * The base of memory hooks (CuPy's `cupy.cuda.MemoryHook`): override the phases you need. A hook is
 * installed from its construction (unless `{ install: false }`) until close() or the end of its
 * `using` scope, or for the run of `hook.with(fn)`. Hooks are called in the order installed. A hook
 * that throws in `mallocPre`/`allocPre` stops the allocation with its error; one that throws after
 * (`*Post`) loses the block it was told of, so a `*Post` hook should not throw.
 */
export abstract class MemoryHook {
  /** A short name for messages. */
  readonly name: string = this.constructor.name;

  // Unknown keys are not refused here: a subclass may pass its own options through (core's hooks check theirs).
  /** Makes the hook and installs it unless `options.install` is false; throws TypeError when `options` is not an object. */
  constructor(options: MemoryHookOptions = {}) {
    if (options === null || typeof options !== 'object')
      throw new TypeError(`${this.constructor.name}: parameter 'options' must be an object, got ${describe(options)}`);
    if (options.install ?? true) this.install();
  }

  /** Before memory is taken from CUDA. */
  allocPre?(event: MemoryEvent): void;
  /** After memory was taken from CUDA (`event.ptr` is set). */
  allocPost?(event: MemoryEvent): void;
  /** Before an allocator serves a request (from CUDA or its cache). */
  mallocPre?(event: MemoryEvent): void;
  /** After an allocator served a request. */
  mallocPost?(event: MemoryEvent): void;
  /** Before a block is given back. */
  freePre?(event: MemoryEvent): void;
  /** After a block was given back. */
  freePost?(event: MemoryEvent): void;

  /** Whether the hook is installed now. */
  get isInstalled(): boolean {
    return installed.includes(this);
  }

  /** Installs the hook (installed already: nothing happens); returns it. */
  install(): this {
    if (!installed.includes(this)) installed.push(this);
    return this;
  }

  /** Uninstalls the hook; later calls do nothing. */
  close(): void {
    const i = installed.indexOf(this);
    if (i >= 0) installed.splice(i, 1);
  }

  /** Calls close(): `using hook = new DebugPrintHook()` uninstalls it when the block ends. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Runs `fn` with the hook installed and returns what it returns; a promise keeps the hook
   * installed until it settles. Installed before the call: it stays so after.
   */
  with<T>(fn: () => T): T {
    if (typeof fn !== 'function')
      throw new TypeError(`${this.constructor.name}.with: parameter 'fn' must be a function, got ${describe(fn)}`);
    const was = this.isInstalled;
    this.install();
    const done = () => {
      if (!was) this.close();
    };
    let r: T;
    try {
      r = fn();
    } catch (e) {
      done();
      throw e;
    }
    if (r instanceof Promise) return r.finally(done) as T;
    done();
    return r;
  }
}

/** @internal Whether any hook is installed (allocators skip building events when none is). */
export function hooksInstalled(): boolean {
  return installed.length > 0;
}

/** @internal Tells every installed hook of `phase`. */
export function notify(phase: MemoryHookPhase, event: MemoryEvent): void {
  for (const h of installed.slice()) h[phase]?.(event);
}

/**
 * @internal A request to an allocator, seen by the hooks as mallocPre/mallocPost: `take()` gets the
 * block, from a cache or (through freshAllocation) from CUDA. Returns the address.
 */
export function hookedAllocation(allocator: string, device: number | 'host', size: number, memSize: number, take: () => bigint): bigint {
  if (installed.length === 0) return take();
  const event: MemoryEvent = { allocator, device, size, memSize, ptr: null };
  notify('mallocPre', event);
  // Whether the block is fresh is known only once taken: a caching allocator says so by calling
  // freshAllocation() inside take(), which brackets the CUDA call with allocPre/allocPost.
  const outer = current;
  current = event;
  let ptr: bigint;
  try {
    ptr = take();
  } finally {
    current = outer;
  }
  event.ptr = ptr;
  notify('mallocPost', event);
  return ptr;
}

let current: MemoryEvent | null = null;

/** @internal Brackets a call that takes memory from CUDA with allocPre/allocPost (inside hookedAllocation's take()). */
export function freshAllocation(allocator: string, device: number | 'host', size: number, alloc: () => bigint): bigint {
  if (installed.length === 0) return alloc();
  const event: MemoryEvent = current ? { ...current, ptr: null } : { allocator, device, size, memSize: size, ptr: null };
  notify('allocPre', event);
  const ptr = alloc();
  event.ptr = ptr;
  notify('allocPost', event);
  return ptr;
}

/** @internal A request served straight from CUDA: mallocPre, allocPre, the call, allocPost, mallocPost. */
export function hookedCudaAllocation(allocator: string, device: number | 'host', size: number, alloc: () => bigint): bigint {
  if (installed.length === 0) return alloc();
  return hookedAllocation(allocator, device, size, size, () => freshAllocation(allocator, device, size, alloc));
}

/** @internal Whether any hook is installed (an allocation's hot path calls CUDA itself when none is). */
export function memoryHooksInstalled(): boolean {
  return installed.length !== 0;
}

/** @internal A free function that tells the hooks installed when it runs (freeWithHooks' parameters). */
export function hookedFree(...free: Parameters<typeof freeWithHooks>): () => void {
  return () => (installed.length === 0 ? free[5]() : freeWithHooks(...free));
}

/** @internal Runs `free` between the installed hooks' freePre and freePost (what hookedFree's function does when hooks are installed). */
export function freeWithHooks(
  allocator: string,
  device: number | 'host',
  size: number,
  memSize: number,
  ptr: bigint,
  free: () => void,
): void {
  const event: MemoryEvent = { allocator, device, size, memSize, ptr };
  try {
    notify('freePre', event);
  } finally {
    free(); // a hook that throws must not keep the memory from being given back
  }
  notify('freePost', event);
}
