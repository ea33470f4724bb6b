// The lifetime every core resource shares: close() (safe twice), isClosed, `using`, a finalizer.
import { hostFunctionsPending, whenNoHostFunctionsPending } from '../../ffi/host-callbacks';

/** Calls `free(arg)`, which must not throw out of a finalizer (the process may be exiting and CUDA gone). */
function freeQuietly(free: (arg: unknown) => void, arg: unknown): void {
  try {
    free(arg);
  } catch {
    // See above.
  }
}

/** Frees now, or (when a JS host function is pending and the free could wait for the device) later. */
export function release(free: () => void): void {
  releaseWith(free, undefined);
}

/** release() of `free(arg)`. */
function releaseWith(free: (arg: unknown) => void, arg: unknown): void {
  if (!hostFunctionsPending()) freeQuietly(free, arg);
  else releaseLater(free, arg);
}

/** The rare path of releaseWith, apart (its closure would cost the common path a context; the hot paths inline what is small). */
function releaseLater(free: (arg: unknown) => void, arg: unknown): void {
  whenNoHostFunctionsPending(() => freeQuietly(free, arg));
}

const finalizer = new FinalizationRegistry<() => void>(release);

/**
 * Resources made since the last flush and not yet registered with the finalizer. Registering costs
 * about 0.2 µs and unregistering as much (issue #37: `pool.allocate(n, s).close()` was 1.65× the koffi
 * floor), so a resource is registered only if it is still open at the next flush: after the current
 * macrotask, or once this many are waiting. Until then it is held here; a finalizer could not have
 * run before the current task ends anyway.
 */
const UNREGISTERED_MAX = 256;
/** The current batch (a fresh array each flush: a young array takes young resources without the write barrier's slow path). */
let unregistered: (Resource | null | undefined)[] = new Array(UNREGISTERED_MAX);
/** How many of `unregistered`'s slots are taken. */
let waitingCount = 0;
/** How many of them were closed since (their slots emptied): when all were, a flush has nothing to look at. */
let closedWaiting = 0;
/** Whether a flush after the current task is scheduled (a flush because the batch was full leaves it scheduled). */
let flushScheduled = false;

let warnLeaks = false;
/** Print a line to stderr when a resource is freed by the garbage collector rather than close(). */
export function warnOnLeaks(on: boolean): void {
  warnLeaks = on;
}

/**
 * @internal The method by which work that C runs later (an executable graph's nodes) holds an
 * object open: while it is held, close() marks the object closed (nothing new can use it) but its
 * memory is freed only when the last hold is let go. It returns the function that lets go (once).
 */
export const holdOpen = Symbol('holdOpen');

/** @internal An object that can be held open (a Resource, a HostBuffer; a TensorMapDescriptor, which holds its buffer). */
export interface Holdable {
  [holdOpen](): () => void;
}

/**
 * @internal The holds on one object (see holdOpen), made at its first hold: while any is taken,
 * what its close() would free waits here for the last one to be let go.
 */
export class Holds {
  private count = 0;
  private deferred: (() => void) | null = null;

  /** Whether a hold is taken. */
  get held(): boolean {
    return this.count > 0;
  }

  /** Takes a hold; the function returned lets go of it (once). */
  take(): () => void {
    this.count++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.count > 0 || this.deferred === null) return;
      const f = this.deferred;
      this.deferred = null;
      f();
    };
  }

  /** Leaves `free` to the last hold let go (call it while held). */
  defer(free: () => void): void {
    this.deferred = free;
  }
}

/** Resource.waiting of a resource the finalizer knows. */
const REGISTERED = -1;
/** Resource.waiting of one whose subclass has not called track() yet. */
const NOT_WAITING = -2;

/** A resource's keep list (module-private: set in Resource's static block). */
let keepOf: (r: Resource) => readonly unknown[];

/**
 * What every core object that owns a C resource (a stream, a buffer, a module, …) shares: close()
 * frees it now and may be called twice, `using` closes it at the end of a block, and a finalizer
 * frees it when the object is garbage-collected unclosed (see warnOnLeaks). Methods of a closed
 * resource throw Error.
 *
 * Work that C runs later can hold a resource open (an executable graph holds what its nodes use):
 * close() then marks it closed at once, but frees it only when the last such user lets go.
 */
export abstract class Resource {
  // The fields are declared and assigned in the constructor, not initialised where they are declared:
  // a base class's ES2022 field initialisers made each construction ~20 ns slower in Node 20
  // (issue #37: `pool.allocate(n, s).close()`, 230 of its 850 instructions over the koffi floor).
  declare private closed: boolean;
  /**
   * Its place in `unregistered` while it waits there (a closed one is let go of at once, to die
   * young), or REGISTERED once the finalizer knows it.
   */
  declare private waiting: number;
  /** The holds on it (see holdOpen), once one was taken; while any is, close() leaves the freeing to the last. */
  declare private holds: Holds | null;
  /** Releases the C resource, called with freeArg (see the constructor). */
  declare private readonly free: (arg: unknown) => void;
  /** What free is called with. */
  declare private readonly freeArg: unknown;
  /** The objects this resource needs alive (its device, its parent allocation, …), held as long as it lives. */
  declare protected readonly keep: unknown[];

  static {
    keepOf = (r) => r.keep;
  }

  /** Registers the resources made since the last flush that are still open with the finalizer. */
  private static flush(): void {
    const list = unregistered;
    const n = waitingCount;
    const open = n - closedWaiting;
    unregistered = new Array(UNREGISTERED_MAX);
    waitingCount = closedWaiting = 0;
    if (open === 0) return;
    // The registration is a function of its own: a closure made in the loop's body would cost a context per slot, open or not.
    for (let i = 0; i < n; i++) {
      const r = list[i];
      if (r != null && !r.closed) Resource.register(r);
    }
  }

  /** The flush scheduled after a task. */
  private static flushAfterTask(): void {
    flushScheduled = false;
    Resource.flush();
  }

  /** Tells the finalizer of `r`, to free it (and say so when warnOnLeaks is on) if it is collected unclosed. */
  private static register(r: Resource): void {
    const what = r.constructor.name;
    const free = r.free;
    const arg = r.freeArg;
    r.waiting = REGISTERED;
    finalizer.register(
      r,
      () => {
        if (warnLeaks) process.stderr.write(`cuda-bindings: a ${what} was not closed; the garbage collector freed it\n`);
        free(arg);
      },
      r,
    );
  }

  /**
   * `free(freeArg)` releases the C resource; it is also registered with the garbage collector, so a
   * resource nobody closes is freed when it is collected. `keep` are the resources this one needs
   * (a buffer keeps its device's context), held as long as it lives. A `free` that is a closure over
   * what it frees takes no `freeArg`; one function shared by many resources (a pool's buffers) takes
   * each one's as `freeArg`, which spares a closure per resource. Neither may refer to the resource.
   * `track` false leaves the call of track() to the end of the subclass's constructor (see there).
   */
  protected constructor(free: (arg: unknown) => void, keep: unknown[] = [], freeArg?: unknown, track = true) {
    this.closed = false;
    this.holds = null;
    this.free = free;
    this.freeArg = freeArg;
    this.keep = keep;
    this.waiting = NOT_WAITING;
    if (track) this.track();
  }

  /**
   * Puts the resource in the batch that waits for the finalizer (see `unregistered`): done by the
   * constructor, or by a subclass that made many (DeviceBuffer) at the end of its own, once its
   * fields are set: an object stored before its fields are added costs V8 a map transition and a
   * write barrier per field (~50 instructions a pool buffer).
   */
  protected track(): void {
    // The rare work apart: this is then small enough for V8 to inline into an allocation's hot path
    // (not inlined, a pool buffer's constructor cost ~300 instructions more).
    if (waitingCount === UNREGISTERED_MAX || flushScheduled === false) Resource.prepareBatch();
    this.waiting = waitingCount;
    unregistered[waitingCount++] = this;
  }

  /** Makes room in the waiting batch for one more: a full one is flushed first (so that the newcomer waits in the next), and a flush is scheduled after the task. */
  private static prepareBatch(): void {
    if (waitingCount === UNREGISTERED_MAX) Resource.flush();
    if (!flushScheduled) Resource.scheduleFlush();
  }

  /** Flushes after the current task (apart from the constructor, which is then small enough to be inlined). */
  private static scheduleFlush(): void {
    flushScheduled = true;
    setImmediate(Resource.flushAfterTask).unref();
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Frees the resource now (or, while work C runs later holds it, when that work lets go); later calls do nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const w = this.waiting;
    if (w === REGISTERED) finalizer.unregister(this);
    else if (w >= 0 && unregistered[w] === this) {
      unregistered[w] = null;
      closedWaiting++;
    }
    if (this.holds === null) releaseWith(this.free, this.freeArg);
    else this.releaseWhenLetGo(this.holds);
  }

  /** close() of a resource that was held once (apart: its closure would cost every close() a context): frees now, or once the last hold is let go. */
  private releaseWhenLetGo(holds: Holds): void {
    const free = this.free;
    const arg = this.freeArg;
    if (!holds.held) releaseWith(free, arg);
    else holds.defer(() => releaseWith(free, arg));
  }

  /** @internal See holdOpen. */
  [holdOpen](): () => void {
    return (this.holds ??= new Holds()).take();
  }

  /** Calls close(): `using x = …` closes the resource when the block ends. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** Calls close(): `await using x = …` closes the resource when the block ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
  }

  /** Throws when the resource was closed: using it then would reach freed C memory. */
  protected live(what: string): void {
    assertOpen(this, what);
  }
}

/** @internal Throws Error `<Class>.<what>: the <Class> was closed` when `r` was closed (Resource's live(), for the methods a room adds to a class). */
export function assertOpen(r: { readonly isClosed: boolean }, what: string): void {
  if (r.isClosed) throwClosed(r, what);
}

/** assertOpen's error (a function apart keeps assertOpen small enough to be inlined into hot paths). */
function throwClosed(r: object, what: string): never {
  throw new Error(`${r.constructor.name}.${what}: the ${r.constructor.name} was closed`);
}

/** Whether `v`'s class, or one it extends, is called `kind`. */
function isKind(v: object, kind: string): boolean {
  for (let p = Object.getPrototypeOf(v); p && p !== Resource.prototype; p = Object.getPrototypeOf(p))
    if (p.constructor.name === kind) return true;
  return false;
}

/** @internal 'a' or 'an', for a class name in an error message. */
export function article(kind: string): string {
  return /^[aeiou]/i.test(kind) ? 'an' : 'a';
}

/**
 * Throws unless `v` is an open core resource of class `kind` (a Stream, an Event, …): a closed one's
 * handle would reach C after it was freed. `where` names the method and `param` the argument.
 */
export function openArg(v: unknown, kind: string, where: string, param: string): void {
  if (!(v instanceof Resource) || !isKind(v, kind)) {
    const got = v === null || typeof v !== 'object' ? String(v) : `a ${v.constructor?.name ?? 'object'}`;
    throw new TypeError(`${where}: parameter '${param}' must be ${article(kind)} ${kind}, got ${got}`);
  }
  if (v.isClosed) throw new Error(`${where}: parameter '${param}' is ${article(kind)} ${kind} that was closed`);
}

/** openArg for an optional argument: absent (undefined) is fine. */
export function openOptionalArg(v: unknown, kind: string, where: string, param: string): void {
  if (v !== undefined) openArg(v, kind, where, param);
}

/**
 * @internal Holds open (see holdOpen) every Resource or other Holdable among `items` and, through
 * each Resource's keep list, what it needs in turn (a view's allocation, a texture's array, a pool
 * buffer's pool): returns the function that lets go of them all, once.
 */
export function holdAll(items: Iterable<unknown>): () => void {
  const seen = new Set<unknown>();
  const letGo: (() => void)[] = [];
  const visit = (x: unknown): void => {
    if (x === null || typeof x !== 'object' || seen.has(x)) return;
    seen.add(x);
    if (holdOpen in x) letGo.push((x as Holdable)[holdOpen]());
    if (x instanceof Resource) for (const k of keepOf(x)) visit(k);
  };
  for (const x of items) visit(x);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    for (const f of letGo) f();
  };
}

/**
 * @internal Runs `work` (awaited work that C does with `items`) with `items` held open (holdAll)
 * until it settles, failed or not: a close() meanwhile marks them closed at once and frees them after it.
 */
export async function whileHeld<T>(items: Iterable<unknown>, work: () => Promise<T>): Promise<T> {
  const letGo = holdAll(items);
  try {
    return await work();
  } finally {
    letGo();
  }
}
