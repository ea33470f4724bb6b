// NVTX ranges and markers (CuPy's cupy.cuda.nvtx, NVTX 3's C API) for Nsight Systems and other
// profilers, with no native build: src/ffi/nvtx.ts attaches the tool named by NVTX_INJECTION64_PATH
// the way the header does. Without a tool, nothing is loaded and every call returns at once.
import { describe } from '../../ffi/checks';
import { attachNvtxTool, cString, NVTX_LAYOUT, type NvtxTool } from '../../ffi/nvtx';
import { Resource } from '../base/lifetime';

/** A colour: a name (CuPy's palette and a few more), `0xRRGGBB` (opaque) or `0xAARRGGBB`. */
export type NvtxColor = 'green' | 'blue' | 'yellow' | 'purple' | 'cyan' | 'red' | 'white' | 'orange' | 'gray' | number;

/** Colours by name, as ARGB. */
const COLORS: Record<Exclude<NvtxColor, number>, number> = {
  green: 0xff76b900,
  blue: 0xff0000ff,
  yellow: 0xffffff00,
  purple: 0xff800080,
  cyan: 0xff00ffff,
  red: 0xffff0000,
  white: 0xffffffff,
  orange: 0xffffa500,
  gray: 0xff808080,
};

/** What an event carries besides its message: colour, category and a payload. */
export interface NvtxEvent {
  /** The text shown for the range or marker: a string, or one registered with `registerString` (cheaper for a tool to record). */
  message?: string | RegisteredString;
  /** Its colour in the profiler's timeline. */
  color?: NvtxColor;
  /** A category number (name it with `nameCategory`). */
  category?: number;
  /** A value recorded with the event: a number (as a double) or a bigint (a 64-bit integer). */
  payload?: number | bigint;
}

/** A message, or a message with its attributes. */
export type NvtxMessage = string | RegisteredString | NvtxEvent;

/** The value NVTX's push and pop return when no tool tracks ranges (NVTX_NO_PUSH_POP_TRACKING). */
export const NO_PUSH_POP_TRACKING = -2;

let tool: NvtxTool | null | undefined;

/** The attached tool, attaching it on first use as the header's nvtxInitOnce does; null when none is named (or it failed to attach: a warning says why). */
function attached(): NvtxTool | null {
  if (tool !== undefined) return tool;
  const path = process.env.NVTX_INJECTION64_PATH;
  tool = null;
  if (path) {
    try {
      tool = attachNvtxTool(path);
    } catch (e) {
      process.emitWarning(`${(e as Error).message}; NVTX calls do nothing`, 'NvtxWarning');
    }
  }
  return tool;
}

const A = NVTX_LAYOUT.eventAttributes;
const F = A.fields;
// One event's attributes, reused by every call (NVTX copies what it needs during the call).
const attrBytes = new Uint8Array(new ArrayBuffer(A.size));
const attr = new DataView(attrBytes.buffer);

function colorOf(c: unknown, where: string): number {
  if (typeof c === 'string' && Object.prototype.hasOwnProperty.call(COLORS, c)) return COLORS[c as keyof typeof COLORS];
  if (typeof c === 'number' && Number.isInteger(c) && c >= 0 && c <= 0xffffffff) return c <= 0xffffff ? (0xff000000 | c) >>> 0 : c;
  throw new TypeError(
    `${where}: 'color' must be a colour name (${Object.keys(COLORS).join(', ')}), 0xRRGGBB or 0xAARRGGBB, got ${describe(c)}`,
  );
}

function u32(v: unknown, what: string, where: string): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return v;
  throw new RangeError(`${where}: '${what}' must be an integer within [0, 2^32 - 1], got ${describe(v)}`);
}

/**
 * Fills the reused attributes for `m` in `domain` (0n: the default one); returns the C string the
 * message points to, which the caller keeps referenced until the call returns.
 */
function fill(m: NvtxMessage, domain: bigint, where: string): Buffer | null {
  attrBytes.fill(0);
  attr.setUint16(F.version, NVTX_LAYOUT.version, true);
  attr.setUint16(F.size, A.size, true);
  const e: NvtxEvent = typeof m === 'string' || m instanceof RegisteredString ? { message: m } : m;
  if (e === null || typeof e !== 'object')
    throw new TypeError(
      `${where}: the message must be a string, a RegisteredString or { message, color, category, payload }, got ${describe(m)}`,
    );
  if (e.category !== undefined) attr.setUint32(F.category, u32(e.category, 'category', where), true);
  if (e.color !== undefined) {
    attr.setInt32(F.colorType, 1, true); // NVTX_COLOR_ARGB
    attr.setUint32(F.color, colorOf(e.color, where), true);
  }
  const p = e.payload;
  if (typeof p === 'number') {
    attr.setInt32(F.payloadType, 3, true); // NVTX_PAYLOAD_TYPE_DOUBLE
    attr.setFloat64(F.payload, p, true);
  } else if (typeof p === 'bigint') {
    if (p < -(2n ** 63n) || p >= 2n ** 64n) throw new RangeError(`${where}: 'payload' must fit in 64 bits, got ${p}n`);
    attr.setInt32(F.payloadType, p < 0n ? 2 : 1, true); // NVTX_PAYLOAD_TYPE_INT64 : UNSIGNED_INT64
    if (p < 0n) attr.setBigInt64(F.payload, p, true);
    else attr.setBigUint64(F.payload, p, true);
  } else if (p !== undefined) throw new TypeError(`${where}: 'payload' must be a number or a bigint, got ${describe(p)}`);
  const msg = e.message;
  if (msg instanceof RegisteredString) {
    if (msg.domain !== domain)
      throw new Error(`${where}: the RegisteredString '${msg.text}' belongs to another domain; register it in the one it is used in`);
    attr.setInt32(F.messageType, 3, true); // NVTX_MESSAGE_TYPE_REGISTERED
    attr.setBigUint64(F.message, msg.handle, true);
    return null;
  }
  if (msg === undefined) return null;
  if (typeof msg !== 'string') throw new TypeError(`${where}: 'message' must be a string or a RegisteredString, got ${describe(msg)}`);
  const text = cString(msg);
  attr.setInt32(F.messageType, 1, true); // NVTX_MESSAGE_TYPE_ASCII
  attr.setBigUint64(F.message, text.address, true);
  return text.bytes;
}

/** Checks a message when no tool is attached: the same refusals as fill(), with nothing built or allocated. */
function checkOnly(m: unknown, where: string): void {
  if (typeof m === 'string' || m instanceof RegisteredString) return;
  if (m === null || typeof m !== 'object')
    throw new TypeError(
      `${where}: the message must be a string, a RegisteredString or { message, color, category, payload }, got ${describe(m)}`,
    );
  const e = m as NvtxEvent;
  if (e.category !== undefined) u32(e.category, 'category', where);
  if (e.color !== undefined) colorOf(e.color, where);
  const p = e.payload;
  if (p !== undefined && typeof p !== 'number' && typeof p !== 'bigint')
    throw new TypeError(`${where}: 'payload' must be a number or a bigint, got ${describe(p)}`);
  if (typeof p === 'bigint' && (p < -(2n ** 63n) || p >= 2n ** 64n))
    throw new RangeError(`${where}: 'payload' must fit in 64 bits, got ${p}n`);
  const msg = e.message;
  if (msg !== undefined && typeof msg !== 'string' && !(msg instanceof RegisteredString))
    throw new TypeError(`${where}: 'message' must be a string or a RegisteredString, got ${describe(msg)}`);
}

/** A string registered with a domain (nvtxDomainRegisterStringA): events pass its handle instead of copying the text. */
export class RegisteredString {
  /** @internal Use nvtx.registerString(text) or domain.registerString(text). */
  constructor(
    /** The text. */
    readonly text: string,
    /** The tool's handle for it (0n when no tool is attached). */
    readonly handle: bigint,
    /** @internal The handle of the domain it was registered in (0n: the default domain). */
    readonly domain: bigint,
  ) {}
}

/** The operations of one domain (`h`: its handle, 0n for the default one); NvtxDomain and the `nvtx` object share them. */
function ops(h: () => bigint, name: string) {
  // Each method's name for messages, made once (a template string per call would be an allocation on the no-tool path).
  const W = {
    mark: `${name}.mark`,
    rangePush: `${name}.rangePush`,
    rangeStart: `${name}.rangeStart`,
    rangeEnd: `${name}.rangeEnd`,
    nameCategory: `${name}.nameCategory`,
    registerString: `${name}.registerString`,
  };
  return {
    mark(m: NvtxMessage): void {
      const t = attached();
      if (t === null) return checkOnly(m, W.mark);
      if (typeof m === 'string' && h() === 0n) return void t.core.MarkA?.(m);
      const keep = fill(m, h(), W.mark);
      t.core2.DomainMarkEx?.(h() || null, attrBytes);
      void keep;
    },
    rangePush(m: NvtxMessage): number {
      const t = attached();
      if (t === null) return (checkOnly(m, W.rangePush), NO_PUSH_POP_TRACKING);
      if (typeof m === 'string' && h() === 0n) return t.core.RangePushA ? (t.core.RangePushA(m) as number) : NO_PUSH_POP_TRACKING;
      const keep = fill(m, h(), W.rangePush);
      const r = t.core2.DomainRangePushEx ? (t.core2.DomainRangePushEx(h() || null, attrBytes) as number) : NO_PUSH_POP_TRACKING;
      void keep;
      return r;
    },
    rangePop(): number {
      const t = attached();
      if (t === null) return NO_PUSH_POP_TRACKING;
      if (h() === 0n) return t.core.RangePop ? (t.core.RangePop() as number) : NO_PUSH_POP_TRACKING;
      return t.core2.DomainRangePop ? (t.core2.DomainRangePop(h()) as number) : NO_PUSH_POP_TRACKING;
    },
    rangeStart(m: NvtxMessage): bigint {
      const t = attached();
      if (t === null) return (checkOnly(m, W.rangeStart), 0n);
      if (typeof m === 'string' && h() === 0n) return t.core.RangeStartA ? BigInt(t.core.RangeStartA(m) as number | bigint) : 0n;
      const keep = fill(m, h(), W.rangeStart);
      const r = t.core2.DomainRangeStartEx ? BigInt(t.core2.DomainRangeStartEx(h() || null, attrBytes) as number | bigint) : 0n;
      void keep;
      return r;
    },
    rangeEnd(id: bigint): void {
      if (typeof id !== 'bigint')
        throw new TypeError(`${name}.rangeEnd: parameter 'id' must be the bigint rangeStart returned, got ${describe(id)}`);
      const t = attached();
      if (t === null) return;
      if (h() === 0n) t.core.RangeEnd?.(id);
      else t.core2.DomainRangeEnd?.(h(), id);
    },
    nameCategory(category: number, label: string): void {
      const c = u32(category, 'category', W.nameCategory);
      if (typeof label !== 'string') throw new TypeError(`${name}.nameCategory: parameter 'name' must be a string, got ${describe(label)}`);
      const t = attached();
      if (t === null) return;
      if (h() === 0n) t.core.NameCategoryA?.(c, label);
      else t.core2.DomainNameCategoryA?.(h(), c, label);
    },
    registerString(text: string): RegisteredString {
      if (typeof text !== 'string') throw new TypeError(`${name}.registerString: parameter 'text' must be a string, got ${describe(text)}`);
      const t = attached();
      const handle = t?.core2.DomainRegisterStringA ? BigInt(t.core2.DomainRegisterStringA(h() || null, text) as number | bigint) : 0n;
      return new RegisteredString(text, handle, h());
    },
  };
}

const defaultOps = ops(() => 0n, 'nvtx');

/**
 * An NVTX domain (nvtxDomainCreateA): a named group of ranges and markers that a profiler shows
 * apart, with its own categories and registered strings. `NvtxDomain.create('my-app')`; close()
 * destroys it. Without a tool attached it is a stand-in whose calls do nothing.
 */
export class NvtxDomain extends Resource {
  private readonly o: ReturnType<typeof ops>;

  private constructor(
    /** The domain's name. */
    readonly name: string,
    /** The tool's handle for it (0n when no tool is attached). */
    readonly handle: bigint,
  ) {
    const t = tool;
    super(() => void (handle !== 0n && t?.core2.DomainDestroy?.(handle)));
    this.o = ops(() => this.handle, `NvtxDomain(${name})`);
  }

  /** A domain called `name` (nvtxDomainCreateA). */
  static create(name: string): NvtxDomain {
    if (typeof name !== 'string' || name === '')
      throw new TypeError(`NvtxDomain.create: parameter 'name' must be a non-empty string, got ${describe(name)}`);
    const t = attached();
    const h = t?.core2.DomainCreateA ? BigInt((t.core2.DomainCreateA(name) as number | bigint | null) ?? 0) : 0n;
    return new NvtxDomain(name, h);
  }

  /** Marks an instant (nvtxDomainMarkEx). */
  mark(m: NvtxMessage): void {
    this.live('mark');
    this.o.mark(m);
  }
  /** Opens a nested range on this thread (nvtxDomainRangePushEx); returns its depth, or -2 when no tool tracks it. */
  rangePush(m: NvtxMessage): number {
    this.live('rangePush');
    return this.o.rangePush(m);
  }
  /** Closes the innermost range this thread opened in the domain (nvtxDomainRangePop). */
  rangePop(): number {
    this.live('rangePop');
    return this.o.rangePop();
  }
  /** Starts a range that may end on another thread or after other ranges (nvtxDomainRangeStartEx); returns its id. */
  rangeStart(m: NvtxMessage): bigint {
    this.live('rangeStart');
    return this.o.rangeStart(m);
  }
  /** Ends the range `id` that rangeStart returned (nvtxDomainRangeEnd). */
  rangeEnd(id: bigint): void {
    this.live('rangeEnd');
    this.o.rangeEnd(id);
  }
  /** Names a category of this domain (nvtxDomainNameCategoryA). */
  nameCategory(category: number, name: string): void {
    this.live('nameCategory');
    this.o.nameCategory(category, name);
  }
  /** Registers `text` with the domain (nvtxDomainRegisterStringA): pass the result as a message. */
  registerString(text: string): RegisteredString {
    this.live('registerString');
    return this.o.registerString(text);
  }
}

/**
 * NVTX in the default domain (CuPy's `cupy.cuda.nvtx`): ranges and markers that Nsight Systems
 * shows on this thread's timeline when it profiles the process (`nsys profile node app.js`). A
 * message is a string, a RegisteredString, or `{ message, color, category, payload }`.
 *
 * @example
 * ```ts
 * nvtx.rangePush({ message: 'step', color: 'green', payload: step });
 * kernel.launch(cfg, buf);
 * nvtx.rangePop();
 * ```
 */
export const nvtx = {
  /** Marks an instant (nvtxMarkA, or nvtxDomainMarkEx with attributes). */
  mark: defaultOps.mark,
  /** Opens a nested range on this thread (nvtxRangePushA or …Ex); returns its depth, or -2 when no tool tracks it. */
  rangePush: defaultOps.rangePush,
  /** Closes the innermost range this thread opened (nvtxRangePop). */
  rangePop: defaultOps.rangePop,
  /** Starts a range that may end elsewhere or overlap others (nvtxRangeStartA or …Ex); returns its id for rangeEnd. */
  rangeStart: defaultOps.rangeStart,
  /** Ends the range `id` (nvtxRangeEnd). */
  rangeEnd: defaultOps.rangeEnd,
  /** Names a category of the default domain (nvtxNameCategoryA). */
  nameCategory: defaultOps.nameCategory,
  /** Registers `text` with the default domain (nvtxDomainRegisterStringA with no domain). */
  registerString: defaultOps.registerString,
  /** Runs `fn` inside a pushed range, popped however `fn` ends; returns what `fn` returns. */
  range<T>(m: NvtxMessage, fn: () => T): T {
    defaultOps.rangePush(m);
    try {
      return fn();
    } finally {
      defaultOps.rangePop();
    }
  },
  /** Awaits `fn` inside a start/end range (which, unlike push/pop, may overlap other async work); resolves with its result. */
  async rangeAsync<T>(m: NvtxMessage, fn: () => Promise<T>): Promise<T> {
    const id = defaultOps.rangeStart(m);
    try {
      return await fn();
    } finally {
      defaultOps.rangeEnd(id);
    }
  },
  /** The path of the attached tool (NVTX_INJECTION64_PATH), or null when none is attached; attaches on first use. */
  get tool(): string | null {
    return attached()?.path ?? null;
  },
  /** The domain class: `nvtx.Domain.create(name)`. */
  Domain: NvtxDomain,
};
