// The base of every generated struct class: a class over its own bytes (or a window on a parent's),
// with typed accessors written by the generator.
import koffi from 'koffi';
import { alloc, bytes, cStringAt, describe, nonEmpty, type HostMemory } from './marshal';
import { checkAddress, isOwnName, outOfRange, rangeError, typeError } from './checks';
import { keptKernelArgs } from './kernel-args';
import {
  graphHostFn,
  graphHostFnPassed,
  graphHostFnUserData,
  keepGraphHostFn,
  rebindGraphHostFn,
  setGraphHostFnUserData,
} from './host-callbacks';

/** Where each field sits, as the generator computed it (checked against g++ by the tests). */
export interface StructLayout {
  /** The C type, `struct cudaExtent`, or for an unnamed member the named struct that holds it. */
  cType: string;
  /** For an unnamed member: its path inside `cType` (`res.array`); '' otherwise. */
  path: string;
  /** `sizeof`, in bytes. */
  size: number;
  /** `_Alignof`, in bytes. */
  align: number;
  /** Whether it is a union (every field at offset 0). */
  union: boolean;
  /** Each field by name: where it starts and how many bytes it takes. */
  fields: Record<
    string,
    {
      /** `offsetof`, in bytes. */
      offset: number;
      /** `sizeof` the field, in bytes. */
      size: number;
    }
  >;
}

/** A struct class (`cudaExtent`, …): what code that takes any struct class relies on. */
export interface StructClass<T extends CStruct = CStruct> {
  /** A new struct from a plain object of its fields (checked by name at run time) or another struct. */
  new (init?: object): T;
  /** Where each field sits. */
  readonly layout: StructLayout;
  /** Makes a view on existing bytes (a nested field, an element of an array); `dv` spans mem's buffer. */
  view(mem: Uint8Array, dv?: DataView): T;
}

/**
 * @internal A struct class's `layout` on its first read: the generated classes read it through a
 * getter that builds the object then, and this puts it on the class as a plain value for later reads.
 * (Built at import, the layouts of every struct class cost 0.3 MiB of RSS and about 1 ms at
 * `require('cuda-bindings')`, issue #18; few programs read any.)
 */
export function keepLayout(cls: object, layout: StructLayout): StructLayout {
  Object.defineProperty(cls, 'layout', { value: layout, writable: true, enumerable: true, configurable: true });
  return layout;
}

/**
 * The base of every generated struct class: a C struct over its own bytes (or a window on the struct
 * that holds it), its fields read and written through accessors.
 */
export abstract class CStruct {
  /** @internal The struct's bytes: its own, or a window on the struct that holds it (getBytes() for users). */
  readonly _u8: Uint8Array;
  /** @internal A DataView over the whole buffer that holds the bytes (shared with other structs). */
  readonly _dv: DataView;
  /** @internal Where the struct's bytes start in `_dv`. */
  readonly _o: number;
  /** @internal Host memory and arrays that pointer fields point into, kept alive with the struct. */
  _keep: Record<string, unknown> | undefined;
  /** @internal The struct whose bytes this view shares, kept alive with it. */
  _owner: CStruct | undefined;
  // (Declared only: most structs never get these two, and a struct is made without defining them.)
  /** @internal The field of `_owner` this view is, for error messages. */
  declare _field: string | undefined;
  /**
   * @internal Host memory that pointer fields (here or nested) point into, with its byteLength when
   * it was set: every call that passes the struct checks it is still there (see checkHeld).
   */
  declare _host: HeldHost[] | undefined;

  /** @internal A struct of `size` bytes: new ones, or a view of `mem` (`dv` spans mem's buffer). */
  constructor(size: number, mem?: Uint8Array, dv?: DataView) {
    if (mem) {
      this._u8 = mem;
      this._dv = dv ?? new DataView(mem.buffer);
    } else {
      const a = alloc(size);
      this._u8 = a.u8;
      this._dv = a.dv;
    }
    this._o = this._u8.byteOffset;
  }

  /** The address of the struct's bytes, for C fields that take a pointer to it. */
  getPtr(): bigint {
    return koffi.address(this._u8) as bigint;
  }

  /** The struct's bytes (a live view, not a copy). */
  getBytes(): Uint8Array {
    return this._u8;
  }

  /** Sets fields from a plain object; unknown names are an error. */
  protected _init(init: object | undefined, keys: ReadonlySet<string>): void {
    if (init === undefined || init === null) return;
    if (typeof init !== 'object') throw new TypeError(`${this.constructor.name}: the initializer must be an object, got ${describe(init)}`);
    if (init instanceof CStruct) {
      this._copyFrom(init);
      return;
    }
    for (const k of Object.keys(init)) {
      if (!keys.has(k)) throw new TypeError(`${this.constructor.name}: no field named '${k}' (fields: ${[...keys].join(', ')})`);
      Reflect.set(this, k, (init as Record<string, unknown>)[k]);
    }
  }

  /** @internal Copies another struct of the same class into this one (assignment semantics). */
  _copyFrom(src: CStruct): void {
    if (src.constructor !== this.constructor) {
      throw new TypeError(`${this.constructor.name}: cannot copy from ${src.constructor.name}`);
    }
    if (src === this) return;
    this._u8.set(src._u8);
    if (src._keep) for (const k of Object.keys(src._keep)) this._hold(k, src._keep[k]);
    this._releaseAllHost();
    if (src._host) for (const h of src._host) this._holdHost(h.path, h.at, h.mem, h.bytes);
  }

  /** @internal Keeps `v` alive with this struct and every struct that holds it. */
  _hold(field: string, v: unknown): void {
    (this._keep ??= {})[field] = v;
    let o = this._owner;
    let key = field;
    for (let s: CStruct = this; o; s = o, o = o._owner) {
      // Keyed by where the field sits: srcPtr.ptr and dstPtr.ptr of one struct are both kept.
      key = `${s._field ?? s.constructor.name}.${key}`;
      (o._keep ??= {})[key] = v;
    }
  }

  /** @internal Records that the pointer field at `at` points into `mem` (`bytes` long), here and in every owner. */
  _holdHost(path: string, at: number, mem: HostMemory, bytes: number): void {
    for (let s: CStruct | undefined = this; s;) {
      const list: HeldHost[] = (s._host ??= []);
      const i = list.findIndex((h) => h.at === at);
      const need = (s.constructor as { hostExtents?: Record<string, (s: CStruct) => number> }).hostExtents?.[path];
      const h: HeldHost = { at, path, mem, bytes, need };
      if (i >= 0) list[i] = h;
      else list.push(h);
      const o: CStruct | undefined = s._owner;
      if (o) {
        at += s._o - o._o;
        path = `${s._field ?? '?'}.${path}`;
      }
      s = o;
    }
  }

  /** @internal The pointer field at `at` no longer points into host memory of the caller's. */
  _releaseHost(at: number): void {
    for (let s: CStruct | undefined = this; s; s = s._owner) {
      if (s._host) {
        const i = s._host.findIndex((h) => h.at === at);
        if (i >= 0) s._host.splice(i, 1);
        if (s._host.length === 0) s._host = undefined;
      }
      if (s._owner) at += s._o - s._owner._o;
    }
  }

  /** @internal Every pointer field of this struct is overwritten. */
  _releaseAllHost(): void {
    if (!this._host) return;
    for (const h of this._host.slice()) this._releaseHost(h.at);
  }

  /** A plain object with every field, for printing and JSON. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys((this.constructor as unknown as StructClass).layout.fields)) {
      const v: unknown = Reflect.get(this, k);
      out[k] = v instanceof CStruct ? v.toJSON() : typeof v === 'bigint' ? `0x${v.toString(16)}` : v;
    }
    return out;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `${this.constructor.name} ${JSON.stringify(this.toJSON(), (_k, v) => (v instanceof Uint8Array ? Array.from(v) : v))}`;
  }
}

// Field accessors. Each setter names the struct and field in its error.

/** A pointer field: a bigint address, host memory (kept alive with the struct), a struct, or null. */
export function setPointer(s: CStruct, off: number, v: unknown, name: string, field: string): void {
  let addr: bigint;
  if (v === null || v === undefined) addr = 0n;
  else if (typeof v === 'bigint') {
    addr = checkAddress(v, name)!;
  } else if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
    addr = koffi.address(nonEmpty(v as HostMemory)) as bigint;
  } else if (v instanceof CStruct) {
    addr = v.getPtr();
  } else {
    typeError(name, undefined, 'an address (bigint), host memory, a struct or null', v);
  }
  if (typeof v === 'object' && v !== null) s._hold(field, v);
  else if (s._keep) delete s._keep[field];
  // Host memory is checked at every call that passes the struct: still attached, still this long.
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) s._holdHost(field, off, v, v.byteLength);
  else if (s._host) s._releaseHost(off);
  s._dv.setBigUint64(s._o + off, addr, true);
}

/** Host memory a pointer field points into: where the field is, its name, and its length when set. */
export interface HeldHost {
  /** The field's offset in the struct that holds this record. */
  at: number;
  /** The field's path from that struct: `srcPtr.ptr`. */
  path: string;
  mem: HostMemory;
  bytes: number;
  /** The bytes the holding struct's other fields say C touches through it (its class's hostExtents). */
  need: ((s: CStruct) => number) | undefined;
}

/**
 * Throws unless every host buffer the struct's pointer fields point into is still attached and as
 * long as when it was set (a transferred ArrayBuffer's memory may already be freed).
 */
export function checkHeld(s: CStruct, fn: string, p: string): void {
  const list = s._host!;
  for (let i = 0; i < list.length; i++) {
    const h = list[i];
    if (h.mem.byteLength !== h.bytes) {
      throw new TypeError(
        `${fn}: parameter '${p}': field ${s.constructor.name}.${h.path} points into host memory of ${h.bytes} bytes that has since been ${h.mem.byteLength === 0 ? 'detached (transferred away)' : `resized to ${h.mem.byteLength}`}; set the field again`,
      );
    }
    const need = h.need === undefined ? 0 : h.need(s);
    if (h.bytes < need) {
      throw new RangeError(
        `${fn}: parameter '${p}': field ${s.constructor.name}.${h.path} holds ${h.bytes} bytes but the struct's extent needs ${need}`,
      );
    }
  }
}

/**
 * Bytes of host memory a pitched 3D copy touches from (x, y, z): the rows, slices and the start
 * offset, `x` and `width` in bytes. 0 when the copy is empty.
 */
export function hostBytes3D(
  x: number,
  y: number,
  z: number,
  pitch: number,
  height: number,
  width: number,
  rows: number,
  depth: number,
): number {
  if (width === 0 || rows === 0 || depth === 0) return 0;
  return (z + depth - 1) * pitch * height + (y + rows - 1) * pitch + x + width;
}

/** Packs the first `count` of `items` into fresh C memory, each through `write` at i * elemSize. */
export function packValues(
  items: ArrayLike<unknown>,
  count: number,
  elemSize: number,
  write: (dv: DataView, at: number, x: unknown, name: string) => void,
  nameOf: (i: number) => string,
): Uint8Array {
  const mem = bytes(Math.max(1, count * elemSize));
  const dv = new DataView(mem.buffer, mem.byteOffset, mem.byteLength);
  for (let i = 0; i < count; i++) write(dv, i * elemSize, items[i], nameOf(i));
  return mem;
}

/** Writes one struct (an instance or a plain initializer) into packed memory. */
export function packStruct<T extends CStruct>(dv: DataView, at: number, x: unknown, cls: StructClass<T>, name: string): void {
  if (x instanceof CStruct && x._host !== undefined)
    checkHeld(x, name.replace(/: parameter '(.*)'$/, ''), /'(.*)'$/.exec(name)?.[1] ?? name);
  setNested(cls.view(new Uint8Array(dv.buffer, dv.byteOffset + at, cls.layout.size)), x, cls, name);
}

/** A pointer field set from a JS array: the elements are packed into memory the struct keeps alive. */
export function setPointerArray(
  s: CStruct,
  off: number,
  v: unknown,
  name: string,
  field: string,
  elemSize: number,
  write: (dv: DataView, at: number, x: unknown, name: string) => void,
): void {
  if (!Array.isArray(v)) return setPointer(s, off, v, name, field);
  const mem = packValues(v, v.length, elemSize, write, (i) => `${name}[${i}]`);
  s._hold(field, { mem, items: v });
  if (s._host) s._releaseHost(off);
  s._dv.setBigUint64(s._o + off, koffi.address(mem) as bigint, true);
}

export function getString(s: CStruct, off: number, n: number): string {
  return cStringAt(s._u8, off, n);
}

/** A `char[n]` field takes up to n bytes: shorter text is NUL-terminated, n bytes fill it with no NUL (as cuda-python allows). */
export function setString(s: CStruct, off: number, n: number, v: unknown, name: string): void {
  if (typeof v !== 'string') typeError(name, undefined, 'a string', v);
  const b = Buffer.from(v, 'utf8');
  if (b.length > n) rangeError(name, undefined, `must fit in char[${n}], got ${b.length} bytes`);
  s._u8.fill(0, off, off + n);
  s._u8.set(b, off);
}

export function setBytes(s: CStruct, off: number, n: number, v: unknown, name: string): void {
  if (!(v instanceof Uint8Array) && !Array.isArray(v)) typeError(name, undefined, 'a Uint8Array or an array of bytes', v);
  if (v.length > n) rangeError(name, undefined, `must fit in ${n} bytes, got ${v.length}`);
  const src =
    v instanceof Uint8Array
      ? v
      : Uint8Array.from(v as number[], (x, i) => {
          if (!Number.isInteger(x) || x < -128 || x > 255)
            outOfRange(`${name}[${i}]`, undefined, 'a byte: an integer within [-128, 255]', x);
          return x & 0xff;
        });
  s._u8.fill(0, off, off + n);
  s._u8.set(src, off);
}

/** A fixed array field written from a JS array of at most `n` elements. */
export function setArray(s: CStruct, n: number, v: unknown, name: string, write: (i: number, x: unknown, name: string) => void): void {
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) typeError(name, undefined, 'an array', v);
  const a = v as ArrayLike<unknown>;
  if (a.length > n) rangeError(name, undefined, `must fit in [${n}], got ${a.length} elements`);
  for (let i = 0; i < n; i++) write(i, i < a.length ? a[i] : 0, `${name}[${i}]`);
}

/** Copies a struct (or a plain initializer) into a nested struct field. */
export function setNested<T extends CStruct>(target: T, v: unknown, cls: StructClass<T>, name: string): void {
  if (v instanceof cls) {
    target._copyFrom(v);
    return;
  }
  if (v instanceof CStruct) typeError(name, undefined, `a ${cls.name}`, v);
  if (typeof v !== 'object' || v === null) typeError(name, undefined, `a ${cls.name} or a plain object`, v);
  target._u8.fill(0);
  target._releaseAllHost();
  for (const k of Object.keys(v)) {
    if (!isOwnName(cls.layout.fields, k))
      typeError(name, undefined, `a ${cls.name} or a plain object of its fields (it has no field '${k}')`, v);
    Reflect.set(target, k, (v as Record<string, unknown>)[k]);
  }
}

/** Makes a view of a nested struct that keeps its parent alive. */
export function nestedView<T extends CStruct>(parent: CStruct, cls: StructClass<T>, off: number, size: number, field?: string): T {
  const v = cls.view(parent._u8.subarray(off, off + size), parent._dv);
  v._owner = parent;
  v._field = field;
  return v;
}

/** A kernelParams field: typed kernel arguments (packed and kept alive with the struct) or an address. */
export function setKernelParamsField(s: CStruct, off: number, v: unknown, name: string, field: string): void {
  const dot = name.lastIndexOf('.');
  const packed = keptKernelArgs(v, name.slice(0, dot), name.slice(dot + 1));
  setPointer(s, off, packed, name, field);
}

/** What a struct with a JS host function holds: the token's holder (the token lives as long as it) and the holders before it. */
interface HostFnHolder {
  token: bigint;
  previous?: HostFnHolder;
  /** The struct that made the token; a copy of it shares the token until it sets its own userData. */
  owner?: CStruct;
}

function boundHostFn(s: CStruct, field: string): HostFnHolder | undefined {
  // A nested view of a copy finds it in its parent's keep, under the name _hold gives it there.
  const h = (s._keep?.[field] ?? s._owner?._keep?.[`${s.constructor.name}.${field}`]) as HostFnHolder | undefined;
  return h && typeof h === 'object' && typeof h.token === 'bigint' ? h : undefined;
}

/**
 * A graph host node's function field: a JS function or a native pointer. A JS function goes through
 * the one host-function trampoline: C's `fn` is the trampoline and C's `userData` a token that finds
 * the function and the user data (read and written through the userData property as usual). The
 * token lives as long as the struct (and its copies) holds it, and the tokens of functions it held
 * before too, since a graph may have copied them.
 */
export function setHostFnField(s: CStruct, off: number, v: unknown, name: string, field: string): void {
  const udOff = (s.constructor as unknown as StructClass).layout.fields.userData.offset;
  const bound = boundHostFn(s, field);
  const userData = bound ? (graphHostFnUserData(bound.token) ?? 0n) : s._dv.getBigUint64(s._o + udOff, true);
  if (typeof v === 'function') {
    const g = graphHostFn(v as (userData: bigint) => void, userData, name);
    s._dv.setBigUint64(s._o + off, g.ptr, true);
    s._dv.setBigUint64(s._o + udOff, g.token, true);
    s._hold(field, Object.assign(g.holder, { previous: bound, owner: s }));
    if (s._host) s._releaseHost(off);
    return;
  }
  setPointer(s, off, v, name, field);
  if (bound) {
    s._dv.setBigUint64(s._o + udOff, userData, true);
    s._hold(`${field}.previous`, bound);
  }
}

/**
 * Called when a struct is passed to CUDA: the graph host node functions it holds (its own, a nested
 * struct's, earlier ones) may now be called by a graph at any later launch, so they are kept for good.
 */
export function passHostFns(s: CStruct): void {
  const keep = s._keep;
  if (!keep) return;
  for (const k in keep) {
    for (let h = keep[k] as HostFnHolder | undefined; h && typeof h === 'object' && typeof h.token === 'bigint'; h = h.previous)
      keepGraphHostFn(h.token);
  }
}

/** The userData field of a struct with a host function field: the user's value, also when C's field holds a token. */
export function getHostFnUserData(s: CStruct, off: number): bigint {
  const raw = s._dv.getBigUint64(s._o + off, true);
  const bound = boundHostFn(s, 'fn');
  return bound && bound.token === raw ? (graphHostFnUserData(raw) ?? raw) : raw;
}

/** Sets the userData field of a struct with a host function field (see setHostFnField). */
export function setHostFnUserData(s: CStruct, off: number, v: unknown, name: string, field: string): void {
  const bound = boundHostFn(s, 'fn');
  setPointer(s, off, v, name, field);
  if (!bound) return;
  const userData = s._dv.getBigUint64(s._o + off, true);
  // The token is this struct's alone until a copy or a graph took it: then the change gets a new one.
  if (bound.owner === s && !graphHostFnPassed(bound.token)) {
    setGraphHostFnUserData(bound.token, userData);
    s._dv.setBigUint64(s._o + off, bound.token, true);
    return;
  }
  const g = rebindGraphHostFn(bound.token, userData, name.replace(/\.userData$/, '.fn'));
  if (!g) return;
  s._dv.setBigUint64(s._o + off, g.token, true);
  s._hold('fn', Object.assign(g.holder, { previous: bound, owner: s }));
}
