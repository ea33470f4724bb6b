// Prepared launches (PyCUDA's prepare / prepared_call / prepared_timed_call / prepared_async_call):
// the parameter types are declared once, so a call takes plain numbers and writes them straight
// into argument memory packed at prepare time. No allocation per call: this is the layer's fastest
// launch path. Vectors and structs by value are copied into the same memory (write()'s slow branch:
// the number cases are compiled in line and never look at them).
import * as cudart from '../../runtime';
import { runtimeError, check } from '../base/errors';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import type { HostBuffer } from '../memory/HostBuffer';
import type { TextureObject } from '../texture/TextureObject';
import type { SurfaceObject } from '../texture/SurfaceObject';
import type { TensorMapDescriptor } from '../texture/TensorMapDescriptor';
import { Stream } from '../device/Stream';
import { checkParamTypes, paramLayout, paramName, parseSignature, type ParamType, type StructLayoutLike } from './signature';
import { COMPONENTS, VECTOR_TYPES, type VectorLayout } from './vector-types';
import { libcudart as library } from '../../ffi/cudart-lib.gen';
import type { KoffiFunction } from '../../ffi/binding';
import koffi from 'koffi';
import { launchKernelByAddress } from '../base/direct';
import type { Kernel } from './Kernel';
import { checkOptions } from '../base/options';
import { LAUNCH_CONFIG_KEYS, hasExtendedKeys, readDim, setDim, withCurrentStream, type Dim, type LaunchConfig } from './launch-config';
import { ExtendedLauncher } from './extended-launch';
import { coreArgument, type KernelArgumentObject } from './kernel-argument';
import { describe, isOwnName } from '../../ffi/checks';
import { halfBits } from '../../ffi/kernel-args';
import { completion } from '../base/completion';

/**
 * A vector type's value: its components as an array (`[x, y, z]`, as many as the type has) or as an
 * object (`{ x, y, z }`); each is range-checked as a scalar of the component type is (a bigint
 * also goes for 64-bit integer components).
 */
export type VectorValue = readonly (number | bigint)[] | VectorComponents;

/** A vector's components by name: as many as its type has (`x`, `y`, `z` for a `float3`), no more. */
export interface VectorComponents {
  /** The first component. */
  x: number | bigint;
  /** The second. */
  y?: number | bigint;
  /** The third. */
  z?: number | bigint;
  /** The fourth. */
  w?: number | bigint;
}

/**
 * What a prepared parameter takes: a number (range-checked against its declared type), a bigint
 * for 64-bit types and pointers, a DeviceBuffer or mapped HostBuffer for a pointer, a TextureObject,
 * SurfaceObject or ConditionalHandle for a `u64`, a TensorMapDescriptor (or any 128-byte struct) for
 * a `tensormap`, a typed scalar (`i32(n)`, …) of the declared type; for a vector type (`'float3'`)
 * a {@link VectorValue} or a struct of its size (`new cudart.float3({ … })`); for a struct type a
 * struct of exactly its size, or its bytes (an ArrayBuffer, or a view of one: Uint8Array, …).
 * Core objects are converted as Kernel.launch converts them (kernel-argument.ts).
 */
export type PreparedArgument =
  | number
  | bigint
  | DeviceBuffer
  | HostBuffer
  | TextureObject
  | SurfaceObject
  | KernelArgumentObject
  | TensorMapDescriptor
  | VectorValue
  | ArrayBuffer
  | ArrayBufferView
  | cudart.KernelArgInput;

/**
 * A kernel with its parameter types fixed: call it with a launch config and plain values. A config
 * object's keys are checked the first time it is passed (a launch loop passes the same one); its
 * values are read and checked on every launch. Vectors (`float3`, …) and structs are passed by
 * value, each at its C alignment as the kernel's parameter list has it; a launch of numbers,
 * pointers and buffers only allocates nothing.
 */
export interface PreparedLaunch {
  /** Queues the kernel on `config.stream` (absent: the current stream of a {@link Stream.use}, else the legacy default stream). */
  (config: LaunchConfig, ...args: PreparedArgument[]): void;
  /** The kernel it launches. */
  readonly kernel: Kernel;
  /** The declared parameter types, in C order. */
  readonly types: readonly ParamType[];
  /** Launches between two events and resolves with the kernel's time in milliseconds (waits off the JS thread). */
  timed(config: LaunchConfig, ...args: PreparedArgument[]): Promise<number>;
  /** Launches and resolves once the kernel has finished (waits off the JS thread). */
  async(config: LaunchConfig, ...args: PreparedArgument[]): Promise<void>;
}

const TWO32 = 4294967296;
const I64_MIN = -(2n ** 63n);
const I64_LIMIT = 2n ** 63n;
const U64_LIMIT = 2n ** 64n;
// Each parameter's type as a small integer: write() switches on it once per argument (a jump table,
// where string cases are a chain of compares).
const enum Code {
  f32,
  f64,
  i32,
  u32,
  i8,
  u8,
  i16,
  u16,
  i64,
  u64,
  ptr,
  tensormap,
  f16,
  // A CUDA vector type (its components checked as scalars) and any other struct (its bytes copied).
  vector,
  struct,
}
const CODE: Readonly<Record<ScalarCodeName, Code>> = {
  f32: Code.f32,
  f64: Code.f64,
  i32: Code.i32,
  u32: Code.u32,
  i8: Code.i8,
  u8: Code.u8,
  i16: Code.i16,
  u16: Code.u16,
  f16: Code.f16, // a number, converted to a half's 16 bits
  i64: Code.i64,
  u64: Code.u64,
  ptr: Code.ptr,
  tensormap: Code.tensormap,
};

/** The types that have a code of their own. */
type ScalarCodeName = cudart.ScalarType | 'tensormap';

/** A checked parameter type's code. */
function codeOf(t: ParamType): Code {
  if (typeof t !== 'string') return Code.struct;
  return isOwnName(VECTOR_TYPES, t) ? Code.vector : CODE[t];
}

/** The ranges of the integer types, as a RangeError states them. */
const RANGE: Readonly<Partial<Record<ScalarCodeName, string>>> = {
  i8: '[-128, 127]',
  u8: '[0, 255]',
  i16: '[-32768, 32767]',
  u16: '[0, 65535]',
  i32: '[-2147483648, 2147483647]',
  u32: '[0, 4294967295]',
  i64: '[-2^63, 2^63 - 1] (a number up to 2^53 - 1, or a bigint)',
  u64: '[0, 2^64 - 1] (a number up to 2^53 - 1, or a bigint)',
  ptr: '[0, 2^64 - 1] (a number up to 2^53 - 1, or a bigint)',
};

/** What each named type takes, as a TypeError states it. */
const WANT: Readonly<Record<ScalarCodeName, string>> = {
  i8: 'a number',
  u8: 'a number',
  i16: 'a number',
  u16: 'a number',
  f16: 'a number',
  i32: 'a number',
  u32: 'a number',
  i64: 'a number or a bigint',
  u64: 'a number, a bigint, a TextureObject, SurfaceObject or ConditionalHandle, or u64(n)',
  f32: 'a number',
  f64: 'a number',
  ptr: 'a DeviceBuffer, a mapped HostBuffer, or an address (bigint or number)',
  tensormap: 'a TensorMapDescriptor (128 bytes)',
};

/** What the last grid or block seen was when it was not a plain number (never equal to a config's value). */
const NOT_SEEN = Symbol('not seen');

/** Stands for a struct (a tensor map, a vector) of `layout` while the argument memory is laid out (KernelArgs reads the layout from its class). */
function structSlot(layout: StructLayoutLike): cudart.StructValue {
  const Slot = class {
    static readonly layout = { size: layout.size, align: layout.align };
    readonly _u8 = new Uint8Array(layout.size);
    getBytes(): Uint8Array {
      return this._u8;
    }
  };
  return new Slot();
}

/** What a value is, in an error: as describe() says, with an array's length and a struct's size. */
function describeValue(v: unknown): string {
  if (Array.isArray(v)) return `an array of ${v.length}`;
  const u8 = v !== null && typeof v === 'object' ? (v as { _u8?: unknown })._u8 : undefined;
  if (u8 instanceof Uint8Array) return `a struct of ${u8.length} bytes (${(v as object).constructor?.name ?? 'Object'})`;
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return `${describe(v)} of ${v.byteLength} bytes`;
  return describe(v);
}

class Prepared {
  private readonly args: cudart.KernelArgs | null;
  /** The address of the `void **` array of `args` (0: no parameters), which stays put while `args` lives. */
  readonly pointers: number;
  /**
   * cudaLaunchKernel itself, where dim3 goes as two 8-byte words (x86-64, AArch64): a prepared
   * launch passes the words it computed, with no struct, and its pre-packed argument array, with
   * nothing for the facade to check (the checks here cover the same ground); the kernel, the array
   * and the stream as numbers (launchKernelByAddress). Null elsewhere.
   */
  readonly raw: KoffiFunction | null;
  private readonly dv: DataView;
  private readonly bytes: Uint8Array;
  /** How many parameters the kernel takes. */
  private readonly count: number;
  // Per slot: the parameters, 0 to count - 1, then each vector parameter's components (a slot each,
  // written by write() as the scalars they are): its byte offset, its type as errors name it ('f32',
  // 'float3', 'struct(16 bytes, align 8)'), its type code.
  private readonly offsets: number[];
  private readonly names: string[];
  private readonly nums: Int32Array;
  // Per parameter: its size, its vector layout and the slot of its first component (null and -1 for
  // any other type). Per component slot (from `count` on): its parameter * 4 + its index.
  private readonly sizes: number[];
  private readonly vectors: (VectorLayout | null)[];
  private readonly firstComponent: number[];
  private readonly componentOf: number[] = [];
  private readonly grid = new cudart.dim3();
  private readonly block = new cudart.dim3();
  private readonly what: string;
  // The last plain config object whose keys were checked (a config with an extended key is never
  // kept here: it goes through begin() and cudaLaunchKernelExC every time).
  checked: object | null = null;
  private extended?: ExtendedLauncher;

  constructor(
    readonly kernel: Kernel,
    readonly types: readonly ParamType[],
  ) {
    this.what = `PreparedLaunch(${kernel.name})`;
    const layouts = types.map(paramLayout);
    this.count = types.length;
    this.names = types.map(paramName);
    this.sizes = layouts.map((l) => l.size);
    this.vectors = types.map((t) => (typeof t === 'string' && isOwnName(VECTOR_TYPES, t) ? VECTOR_TYPES[t] : null));
    const codes = types.map(codeOf);
    const placeholders = types.map((t, i) =>
      typeof t !== 'string' || t === 'tensormap' || this.vectors[i] !== null
        ? structSlot(layouts[i])
        : new cudart.KernelArg(t as cudart.ScalarType, t === 'i64' || t === 'u64' || t === 'ptr' ? 0n : 0),
    );
    this.args = types.length ? new cudart.KernelArgs(placeholders, 'Kernel.prepare', 'types') : null;
    this.pointers = this.args ? Number(koffi.address(this.args.pointers) as bigint) : 0;
    this.raw = library.splitSmallStructs ? launchKernelByAddress.get() : null;
    let at = 0;
    // As KernelArgs lays them out: each at its alignment, in C order.
    this.offsets = layouts.map(({ size, align }) => {
      at = Math.ceil(at / align) * align;
      const o = at;
      at += size;
      return o;
    });
    this.firstComponent = this.vectors.map((vec, i) => {
      if (vec === null) return -1;
      const first = this.offsets.length;
      for (let k = 0; k < vec.count; k++) {
        this.offsets.push(this.offsets[i] + k * vec.componentSize);
        this.names.push(vec.component);
        codes.push(CODE[vec.component]);
        this.componentOf.push(i * 4 + k);
      }
      return first;
    });
    this.nums = Int32Array.from(codes);
    const b = this.args?.buffer ?? new Uint8Array(8);
    this.bytes = b;
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  /** The byte offset of parameter i in the argument memory. */
  offset(i: number): number {
    return this.offsets[i];
  }

  /** Parameter i's type code (what the specialised launcher stores in line). */
  code(i: number): Code {
    return this.nums[i];
  }

  /** A DataView over the argument memory (the specialised launcher stores through it). */
  get view(): DataView {
    return this.dv;
  }

  launch(config: LaunchConfig, args: ArrayLike<unknown>, offset: number): void {
    const n = args.length - offset;
    const extended = this.begin(config, n);
    for (let i = 0; i < n; i++) this.write(i, args[i + offset]);
    if (extended) this.fireExtended(config);
    else this.fire(config);
  }

  /**
   * Checks the kernel, the config and the count of arguments before they are written; returns
   * whether the config has extended options (clusters, cooperative, programmatic: fireExtended).
   */
  begin(config: LaunchConfig, n: number): boolean {
    if (this.kernel.module.isClosed) throw new Error(`${this.what}: the Module the kernel belongs to was closed`);
    if (config === null || typeof config !== 'object')
      throw new TypeError(
        `${this.what}: the first parameter must be a launch config { grid, block, sharedMem?, stream? }, got ${describe(config)}`,
      );
    // Its keys once per config object: a launch loop passes the same one every time. (Its values,
    // which a loop may change in place, are read and checked on every launch.)
    let extended = false;
    if (config !== this.checked) {
      checkOptions(this.what, config, LAUNCH_CONFIG_KEYS, 'config');
      extended = hasExtendedKeys(config);
      if (!extended) this.checked = config;
    }
    if (n !== this.count)
      throw new TypeError(
        `${this.what}: takes ${this.count} argument${this.count === 1 ? '' : 's'} (${this.names.slice(0, this.count).join(', ')}), got ${n}`,
      );
    return extended;
  }

  /** Launches with the arguments written, through cudaLaunchKernelExC with the config's launch attributes. */
  fireExtended(config: LaunchConfig): void {
    const k = this.kernel;
    (this.extended ??= new ExtendedLauncher()).launch(k, k.limits, withCurrentStream(config, this.what), this.args, this.what);
  }

  /** Launches with the arguments written. */
  fire(config: LaunchConfig): void {
    const k = this.kernel;
    const stream = config.stream;
    if (this.raw !== null) {
      const h = stream === undefined ? this.currentNumber() : stream === null ? 0 : this.openStream(stream).handleNumber;
      const sharedMem = this.sharedMem(config.sharedMem);
      if (config.grid !== this.gridSeen || config.block !== this.blockSeen) this.dims(config.grid, config.block);
      const err = this.raw(
        k.handleNumber,
        this.gridWords[0],
        this.gridWords[1],
        this.blockWords[0],
        this.blockWords[1],
        this.pointers,
        sharedMem,
        h,
      );
      if (err !== 0) this.failed(err as number);
      return;
    }
    const h = stream === undefined ? this.currentHandle() : stream === null ? null : this.openStream(stream).handle;
    setDim(this.grid, config.grid, 'config.grid', this.what);
    setDim(this.block, config.block, 'config.block', this.what);
    const err = cudart.cudaLaunchKernel(k.handle, this.grid, this.block, this.args ?? null, config.sharedMem ?? 0, h);
    if (err[0] !== 0) this.failed(err[0]);
  }

  /** The handle of the current stream (a `stream.use(fn)` in effect), or null: a config without a stream. */
  currentHandle(): cudart.cudaStream_t | null {
    return Stream.inScope(this.what)?.handle ?? null;
  }

  /** currentHandle() as a number (0: NULL), as `raw` takes it. */
  currentNumber(): number {
    return Stream.inScope(this.what)?.handleNumber ?? 0;
  }

  /** `config.stream` when it is an open Stream (anything else would reach C as a wrong handle, or as NULL); throws otherwise. */
  openStream(s: unknown): Stream {
    if (!(s instanceof Stream)) throw new TypeError(`${this.what}: parameter 'config.stream' must be a Stream, got ${describe(s)}`);
    if (s.isClosed) throw new Error(`${this.what}: parameter 'config.stream' is a Stream that was closed`);
    return s;
  }

  /** `config.sharedMem` as a byte count (absent: 0). */
  sharedMem(v: unknown): number {
    if (v === undefined) return 0;
    if (typeof v === 'number' && v >= 0 && v <= 0xffffffff && Math.floor(v) === v) return v;
    throw new RangeError(`${this.what}: 'config.sharedMem' must be a byte count, got ${describe(v)}`);
  }

  /** Throws the CudaError of a refused launch. */
  failed(err: number): never {
    throw runtimeError(err, `cudaLaunchKernel(${this.kernel.name})`);
  }

  // The grid and block of the last launch when they were plain numbers (NOT_SEEN otherwise: an array
  // or object may have changed in place), and their dim3 words as cudaLaunchKernel takes them split:
  // x | y << 32 (a number while it is below 2^53, as the facade passes it: koffi converts a number
  // faster than a bigint), then z.
  gridSeen: unknown = NOT_SEEN;
  blockSeen: unknown = NOT_SEEN;
  // Made with bigints so that V8 keeps them as arrays of any values: an array of doubles would hold
  // 2^32 + 1 unboxed and box it again, a new heap number, on every read (32 bytes a launch).
  readonly gridWords: (number | bigint)[] = [0n, 0n];
  readonly blockWords: (number | bigint)[] = [0n, 0n];
  private readonly xyz = [1, 1, 1];

  /** Checks the grid and block and computes their words. */
  dims(grid: Dim, block: Dim): void {
    this.gridSeen = this.blockSeen = NOT_SEEN;
    this.words(grid, 'grid', this.gridWords);
    this.words(block, 'block', this.blockWords);
    if (typeof grid === 'number') this.gridSeen = grid;
    if (typeof block === 'number') this.blockSeen = block;
  }

  private words(v: Dim, what: 'grid' | 'block', w: (number | bigint)[]): void {
    const d = this.xyz;
    if (!readDim(v, d))
      throw new RangeError(`${this.what}: 'config.${what}' must be a positive integer or [x, y, z] of them, got ${JSON.stringify(v)}`);
    w[0] = d[1] < 0x200000 ? d[0] + d[1] * 4294967296 : BigInt(d[0]) | (BigInt(d[1]) << 32n);
    w[1] = d[2];
  }

  /**
   * Writes slot i (argument i, or a vector's component) into the argument memory, or throws naming
   * the argument and what was wrong.
   */
  write(i: number, v: unknown): void {
    const dv = this.dv;
    const at = this.offsets[i];
    const c = this.nums[i];
    if (typeof v === 'number') {
      switch (c) {
        case Code.f32:
          return dv.setFloat32(at, v, true);
        case Code.f64:
          return dv.setFloat64(at, v, true);
        case Code.i32:
          if ((v | 0) === v) return dv.setInt32(at, v, true);
          break;
        case Code.u32:
          if (v >>> 0 === v) return dv.setUint32(at, v, true);
          break;
        case Code.i8:
          if ((v << 24) >> 24 === v) return dv.setInt8(at, v);
          break;
        case Code.u8:
          if ((v & 0xff) === v) return dv.setUint8(at, v);
          break;
        case Code.i16:
          if ((v << 16) >> 16 === v) return dv.setInt16(at, v, true);
          break;
        case Code.u16:
          if ((v & 0xffff) === v) return dv.setUint16(at, v, true);
          break;
        case Code.f16:
          return dv.setUint16(at, halfBits(v), true);
        case Code.i64:
        case Code.u64:
        case Code.ptr:
          if (Number.isSafeInteger(v) && (c === Code.i64 || v >= 0)) {
            // Two 32-bit halves: no BigInt made per call.
            const hi = Math.floor(v / TWO32);
            dv.setUint32(at, v - hi * TWO32, true);
            return dv.setInt32(at + 4, hi, true);
          }
          break;
      }
      return this.refuse(i, v);
    }
    if (typeof v === 'bigint') {
      if (c === Code.i64 && v >= I64_MIN && v < I64_LIMIT) return dv.setBigInt64(at, v, true);
      if ((c === Code.u64 || c === Code.ptr) && v >= 0n && v < U64_LIMIT) return dv.setBigUint64(at, v, true);
      return this.refuse(i, v);
    }
    if (v === null || typeof v !== 'object') return this.refuse(i, v);
    if (c === Code.vector) return this.writeVector(i, v);
    if (c === Code.struct) return this.writeStruct(i, v);
    // A core object as every launch converts it (a closed, unmapped or In/Out one is refused here,
    // in the same words); then whether what it gives fits the declared type.
    const a = coreArgument(v, i, this.what) ?? v;
    const t = this.names[i];
    if (typeof a === 'bigint') {
      // A DeviceBuffer's or mapped HostBuffer's device address.
      if (t === 'ptr') return dv.setBigUint64(at, a, true);
    } else if (a instanceof cudart.KernelArg) {
      // A typed scalar (i32(n), …) of the declared type, or a texture, surface or conditional handle (a u64).
      if (a.type === t) return t === 'f16' ? dv.setUint16(at, a.value as number, true) : this.write(i, a.value);
    } else if (t === 'tensormap' && (a as { _u8?: unknown })._u8 instanceof Uint8Array && (a as { _u8: Uint8Array })._u8.length === 128) {
      this.bytes.set((a as { _u8: Uint8Array })._u8, at);
      return;
    }
    return this.refuse(i, v);
  }

  /** A vector argument: its components from an array or an object { x, y, … }, or a struct of its size copied. */
  private writeVector(i: number, v: object): void {
    const vec = this.vectors[i]!;
    const first = this.firstComponent[i];
    const n = vec.count;
    if (Array.isArray(v)) {
      if (v.length !== n) return this.refuse(i, v);
      for (let k = 0; k < n; k++) this.component(first + k, v[k]);
      return;
    }
    const u8 = (v as { _u8?: unknown })._u8;
    if (u8 instanceof Uint8Array) {
      if (u8.length !== vec.size) return this.refuse(i, v);
      return this.bytes.set(u8, this.offsets[i]);
    }
    // Bytes are a struct's; a vector's components are values, never bytes.
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return this.refuse(i, v);
    for (let k = n; k < 4; k++)
      if (COMPONENTS[k] in v)
        throw new TypeError(
          `${this.what}: argument ${i} (${this.names[i]}) has no component ${COMPONENTS[k]}, only ${COMPONENTS.slice(0, n).join(', ')}; got an object with ${COMPONENTS[k]}`,
        );
    for (let k = 0; k < n; k++) this.component(first + k, (v as Record<string, unknown>)[COMPONENTS[k]]);
  }

  /** A component's value (a number, or a bigint for a 64-bit integer) written to its slot j as write() writes a scalar. */
  private component(j: number, x: unknown): void {
    if (typeof x === 'number' || typeof x === 'bigint') this.write(j, x);
    else this.refuse(j, x);
  }

  /** A struct argument: a struct of exactly its size, or that many bytes (an ArrayBuffer or a view of one), copied. */
  private writeStruct(i: number, v: object): void {
    const size = this.sizes[i];
    const at = this.offsets[i];
    const a = coreArgument(v, i, this.what) ?? v;
    const u8 = (a as { _u8?: unknown })._u8;
    if (u8 instanceof Uint8Array && u8.length === size) return this.bytes.set(u8, at);
    if (a instanceof Uint8Array && a.byteLength === size) return this.bytes.set(a, at);
    if (ArrayBuffer.isView(a) && a.byteLength === size) return this.bytes.set(new Uint8Array(a.buffer, a.byteOffset, size), at);
    if (a instanceof ArrayBuffer && a.byteLength === size) return this.bytes.set(new Uint8Array(a), at);
    return this.refuse(i, v);
  }

  private refuse(i: number, v: unknown): never {
    const t = this.names[i];
    let p = `argument ${i} (${t})`;
    if (i >= this.count) {
      // A vector's component: named by its argument, its letter and its scalar type's range.
      const part = this.componentOf[i - this.count];
      p = `argument ${part >> 2} (${this.names[part >> 2]}) component ${COMPONENTS[part & 3]}`;
      if (!RANGE[t as ScalarCodeName] || (typeof v !== 'number' && typeof v !== 'bigint'))
        throw new TypeError(
          `${this.what}: ${p} must be ${t === 'i64' || t === 'u64' ? 'a number or a bigint' : 'a number'}, got ${describe(v)}`,
        );
    }
    const c = this.nums[i];
    const size = this.sizes[i];
    if (c === Code.vector) {
      const xyz = COMPONENTS.slice(0, this.vectors[i]!.count).join(', ');
      throw new TypeError(`${this.what}: ${p} must be [${xyz}], { ${xyz} } or a struct of ${size} bytes, got ${describeValue(v)}`);
    }
    if (c === Code.struct)
      throw new TypeError(
        `${this.what}: ${p} must be a struct of ${size} bytes, or ${size} bytes in an ArrayBuffer or a view of one, got ${describeValue(v)}`,
      );
    const s = t as ScalarCodeName;
    if ((typeof v === 'number' || typeof v === 'bigint') && RANGE[s])
      throw new RangeError(`${this.what}: ${p} must be an integer within ${RANGE[s]}, got ${describe(v)}`);
    throw new TypeError(`${this.what}: ${p} must be ${WANT[s]}, got ${describe(v)}`);
  }

  async timed(config: LaunchConfig, args: ArrayLike<unknown>): Promise<number> {
    config = withCurrentStream(config, this.what);
    // The config and its stream are checked before the start event is recorded on that stream (the
    // launch's own checks come after the record).
    this.begin(config, args.length - 1);
    const s = config.stream === undefined || config.stream === null ? null : this.openStream(config.stream).handle;
    const start = check(cudart.cudaEventCreate(), 'cudaEventCreate');
    let end: cudart.cudaEvent_t | null = null;
    try {
      end = check(cudart.cudaEventCreate(), 'cudaEventCreate');
      check(cudart.cudaEventRecord(start, s), 'cudaEventRecord');
      this.launch(config, args, 1);
      check(cudart.cudaEventRecord(end, s), 'cudaEventRecord');
      check(await cudart.async.cudaEventSynchronize(end), 'cudaEventSynchronize');
      return check(cudart.cudaEventElapsedTime(start, end), 'cudaEventElapsedTime');
    } finally {
      cudart.cudaEventDestroy(start);
      if (end !== null) cudart.cudaEventDestroy(end);
    }
  }

  async whenDone(config: LaunchConfig, args: ArrayLike<unknown>): Promise<void> {
    config = withCurrentStream(config, this.what);
    this.launch(config, args, 1);
    await completion(config.stream?.handle ?? null);
  }
}

// How an argument `v` of each type is stored at byte `at` in the usual cases, as straight-line code
// (the same tests and stores as Prepared.write): a list of [test, store] pairs tried in order; what
// none of them takes goes to Prepared.write, which checks again and explains. A tensor map always
// goes through write().
type Case = [test: (v: string) => string, store: (at: number, v: string) => string];
const num = (store: (at: number, v: string) => string, cond?: (v: string) => string): Case => [
  (v) => `typeof ${v} === 'number'${cond ? ` && ${cond(v)}` : ''}`,
  store,
];
// A safe integer as two 32-bit halves (no bigint made): the low half unsigned, the high half signed.
const halves = (at: number, v: string) =>
  `const hi = Math.floor(${v} / 4294967296); dv.setUint32(${at}, ${v} - hi * 4294967296, true); dv.setInt32(${at + 4}, hi, true);`;
// A DataView store of `v` at `at` (little-endian where the width has an order).
const set =
  (method: string, le = true) =>
  (at: number, v: string) =>
    `dv.${method}(${at}, ${v}${le ? ', true' : ''});`;
const u64Cases: Case[] = [
  num(halves, (v) => `Number.isSafeInteger(${v}) && ${v} >= 0`),
  [(v) => `typeof ${v} === 'bigint' && BigInt.asUintN(64, ${v}) === ${v}`, set('setBigUint64')],
];
const INLINE: Record<Code, Case[]> = {
  [Code.f32]: [num(set('setFloat32'))],
  [Code.f64]: [num(set('setFloat64'))],
  [Code.i32]: [num(set('setInt32'), (v) => `(${v} | 0) === ${v}`)],
  [Code.u32]: [num(set('setUint32'), (v) => `${v} >>> 0 === ${v}`)],
  [Code.i8]: [num(set('setInt8', false), (v) => `(${v} << 24) >> 24 === ${v}`)],
  [Code.u8]: [num(set('setUint8', false), (v) => `(${v} & 0xff) === ${v}`)],
  [Code.i16]: [num(set('setInt16'), (v) => `(${v} << 16) >> 16 === ${v}`)],
  [Code.u16]: [num(set('setUint16'), (v) => `(${v} & 0xffff) === ${v}`)],
  [Code.i64]: [
    num(halves, (v) => `Number.isSafeInteger(${v})`),
    [(v) => `typeof ${v} === 'bigint' && BigInt.asIntN(64, ${v}) === ${v}`, set('setBigInt64')],
  ],
  [Code.u64]: u64Cases,
  // An open DeviceBuffer first: the usual pointer argument.
  [Code.ptr]: [
    [(v) => `${v} instanceof DeviceBuffer && (x = ${v}.openAddress()) !== null`, (at) => set('setBigUint64')(at, 'x')],
    ...u64Cases,
  ],
  [Code.tensormap]: [],
  // A half goes through write(), which converts the number.
  [Code.f16]: [],
  // Vectors and structs go through write(): an array or object is read component by component.
  [Code.vector]: [],
  [Code.struct]: [],
};

/**
 * The launch function for one parameter list, compiled once: each argument's usual cases stored in
 * line at its offset, anything else through Prepared.write, which checks and explains. About 8 ns
 * an argument less than a call to write() per argument (bench/prepared-cpu.ts). The source holds
 * only the offsets (numbers) and the fixed code above, never a user's string. Null where code
 * cannot be made from a string (node --disallow-code-generation-from-strings): the generic
 * launcher does the same work.
 */
function specialised(p: Prepared): ((config: LaunchConfig, ...args: unknown[]) => void) | null {
  const n = p.types.length;
  if (n > 12 || p.raw === null) return null;
  const params = Array.from({ length: n }, (_, i) => `a${i}`);
  const lines = [
    `return function prepared(config${params.map((a) => `, ${a}`).join('')}) {`,
    // The config object last checked, the right count, an open module: nothing more to check first.
    // A config with extended options is never p.checked: begin() says so, and it goes to fireExtended.
    `  const ext = (arguments.length !== ${n + 1} || config !== p.checked || mod.isClosed) && p.begin(config, arguments.length - 1);`,
    '  let x;',
  ];
  for (let i = 0; i < n; i++) {
    const v = `a${i}`;
    INLINE[p.code(i)].forEach(([test, store], k) => lines.push(`  ${k ? 'else ' : ''}if (${test(v)}) { ${store(p.offset(i), v)} }`));
    lines.push(`  ${INLINE[p.code(i)].length ? 'else ' : ''}p.write(${i}, ${v});`);
  }
  // What fire() does, with each check's usual case in line and its failure in a method that explains.
  lines.push(
    '  if (ext) return p.fireExtended(config);',
    '  const st = config.stream;',
    '  const h = st === undefined ? p.currentNumber() : st === null ? 0 : st instanceof Stream && !st.isClosed ? st.handleNumber : p.openStream(st).handleNumber;',
    '  const sm = config.sharedMem;',
    '  const shared = sm === undefined ? 0 : typeof sm === "number" && sm >= 0 && sm <= 0xffffffff && Math.floor(sm) === sm ? sm : p.sharedMem(sm);',
    '  if (config.grid !== p.gridSeen || config.block !== p.blockSeen) p.dims(config.grid, config.block);',
    '  const g = p.gridWords, b = p.blockWords;',
    '  const err = raw(k, g[0], g[1], b[0], b[1], pointers, shared, h);',
    '  if (err !== 0) p.failed(err);',
    '};',
  );
  try {
    return new Function('p', 'dv', 'DeviceBuffer', 'Stream', 'mod', 'raw', 'k', 'pointers', lines.join('\n'))(
      p,
      p.view,
      DeviceBuffer,
      Stream,
      p.kernel.module,
      p.raw,
      p.kernel.handleNumber,
      p.pointers,
    ) as (config: LaunchConfig, ...args: unknown[]) => void;
  } catch {
    return null;
  }
}

/**
 * @internal Use kernel.prepare(): the kernel with its parameter types, as an array (`['ptr',
 * 'f32', 'i32', 'float3', { size: 24, align: 8 }]`) or its C signature (`'void k(float *x, float a,
 * int n, float3 p)'` or the parameter list).
 */
export function prepareLaunch(kernel: Kernel, signature: string | readonly ParamType[]): PreparedLaunch {
  const types =
    typeof signature === 'string'
      ? parseSignature(signature, `Kernel.prepare(${kernel.name})`)
      : Array.isArray(signature)
        ? checkParamTypes(signature, `Kernel.prepare(${kernel.name})`)
        : null;
  if (types === null)
    throw new TypeError(
      `Kernel.prepare(${kernel.name}): parameter 'signature' must be an array of types ('ptr', 'i32', 'f32', …) or a C signature string, got ${describe(signature)}`,
    );
  const p = new Prepared(kernel, types);
  // Named parameters rather than a rest parameter or `arguments` (either makes an object per call;
  // only `arguments.length` is read, which V8 does without one). Kernels of more than 12 parameters
  // (rare) take a rest parameter.
  const many = function prepared(config: LaunchConfig, ...args: unknown[]): void {
    p.launch(config, args, 0);
  };
  const few = function prepared(
    config: LaunchConfig,
    a0?: unknown,
    a1?: unknown,
    a2?: unknown,
    a3?: unknown,
    a4?: unknown,
    a5?: unknown,
    a6?: unknown,
    a7?: unknown,
    a8?: unknown,
    a9?: unknown,
    a10?: unknown,
    a11?: unknown,
  ): void {
    const n = arguments.length - 1;
    const extended = p.begin(config, n);
    if (n > 0) p.write(0, a0);
    if (n > 1) p.write(1, a1);
    if (n > 2) p.write(2, a2);
    if (n > 3) p.write(3, a3);
    if (n > 4) p.write(4, a4);
    if (n > 5) p.write(5, a5);
    if (n > 6) p.write(6, a6);
    if (n > 7) p.write(7, a7);
    if (n > 8) p.write(8, a8);
    if (n > 9) p.write(9, a9);
    if (n > 10) p.write(10, a10);
    if (n > 11) p.write(11, a11);
    if (extended) p.fireExtended(config);
    else p.fire(config);
  };
  const f = (specialised(p) ?? (types.length > 12 ? many : few)) as unknown as PreparedLaunch;
  Object.defineProperties(f, {
    kernel: { value: kernel, enumerable: true },
    types: { value: Object.freeze(types.slice()), enumerable: true },
    timed: { value: (...a: unknown[]) => p.timed(a[0] as LaunchConfig, a) },
    async: { value: (...a: unknown[]) => p.whenDone(a[0] as LaunchConfig, a) },
  });
  return f;
}
