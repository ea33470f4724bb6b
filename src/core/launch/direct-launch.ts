// Kernel.launch's fast path (issue #37: `kernel.launch(cfg, buf, i32(n), …)` was 1.45× C, against the
// koffi floor's 1.16×). A launch like the kernel's last one — the same config object, already checked,
// with no extended option; arguments of the same types — calls cudaLaunchKernel itself with the dim3
// words it computed and the argument memory it packed for the last launch, refilled in place. The typed
// scalars (i32(n), …) were checked when they were made and an open DeviceBuffer's address is its own,
// so nothing is checked twice; anything unusual (another type, a closed buffer, a changed config value
// that is not a plain size) returns false before the call, and Kernel.launch's general path checks
// and explains it as it always did.
import { libcudart } from '../../ffi/cudart-lib.gen';
import type { KoffiFunction } from '../../ffi/binding';
import { launchKernelByAddress } from '../base/direct';
import { untransferable } from '../../ffi/marshal';
import * as cudart from '../../runtime';
import koffi from 'koffi';
import { runtimeError } from '../base/errors';
import { DeviceBuffer } from '../memory/DeviceBuffer';
import { Stream, inStreamScope } from '../device/Stream';
import { readDim, usesExtendedOptions, type Dim, type LaunchConfig } from './launch-config';

/** How each argument is stored: a typed scalar's C type, an open DeviceBuffer's address, or a bigint address. */
const enum Kind {
  f32,
  f64,
  i32,
  u32,
  i64,
  u64,
  i8,
  u8,
  i16,
  u16,
  buffer,
  address,
}
const SCALAR: Record<string, Kind> = {
  i8: Kind.i8,
  u8: Kind.u8,
  i16: Kind.i16,
  u16: Kind.u16,
  f16: Kind.u16, // its 16 raw bits
  i32: Kind.i32,
  u32: Kind.u32,
  f32: Kind.f32,
  f64: Kind.f64,
  i64: Kind.i64,
  u64: Kind.u64,
  ptr: Kind.u64,
};
/** A grid or block that was not a plain number last time (never equal to a config's value). */
const NOT_SEEN = Symbol('not seen');

/** cudaLaunchKernel with dim3 split into its two 8-byte words (x86-64, AArch64) and addresses as numbers (launchKernelByAddress), or null where it takes the struct. */
let raw: KoffiFunction | null | undefined;
const rawLaunch = (): KoffiFunction | null =>
  raw === undefined ? (raw = libcudart.splitSmallStructs ? launchKernelByAddress.get() : null) : raw;

/** One kernel's fast path: what its last plain launch was given. */
export class DirectLaunch {
  /** The last config object whose keys Kernel.launch checked (a plain one: no extended option key). */
  private config: object | null = null;
  private gridSeen: unknown = NOT_SEEN;
  private blockSeen: unknown = NOT_SEEN;
  // Arrays of any values (made with bigints): an array of doubles would box 2^32 + 1 again on every read.
  private readonly gridWords: (number | bigint)[] = [0n, 0n];
  private readonly blockWords: (number | bigint)[] = [0n, 0n];
  private readonly xyz = [1, 1, 1];
  /** The last launch's argument types (a KernelArg's type, or 'buffer' / 'address'), and their memory. */
  private types: string[] = [];
  private kinds: Kind[] = [];
  /** The address of the `void **` array at the start of the argument memory (0: no arguments); `views` keep the memory alive, and it stays put. */
  private pointers = 0;
  private views: Views | null = null;
  /** fill() compiled for the last launch's types (see compiledFill), or null where code cannot be made from a string. */
  private compiled: ((args: readonly unknown[]) => boolean) | null = null;

  /** After a plain launch through the general path: keeps its config object and its arguments' types (when all are usual). */
  learn(config: LaunchConfig, args: readonly unknown[]): void {
    if (rawLaunch() === null) return;
    this.config = config;
    const types = args.map((a) =>
      a instanceof cudart.KernelArg ? a.type : a instanceof DeviceBuffer ? 'buffer' : typeof a === 'bigint' ? 'address' : '',
    );
    if (types.some((t) => !Object.hasOwn(SCALAR, t) && t !== 'buffer' && t !== 'address')) {
      this.types = [];
      this.kinds = [];
      this.pointers = 0;
      this.views = this.compiled = null;
      return;
    }
    if (types.length === this.types.length && types.every((t, i) => t === this.types[i])) return;
    const n = types.length;
    // A pointer per argument, then each value in an 8-byte slot of its own.
    const store = untransferable(new ArrayBuffer(16 * Math.max(n, 1)));
    const views = viewsOf(store);
    const base = koffi.address(store) as bigint;
    for (let i = 0; i < n; i++) views.u64[i] = base + BigInt(8 * n + 8 * i);
    this.types = types;
    this.kinds = types.map((t) => (t === 'buffer' ? Kind.buffer : t === 'address' ? Kind.address : SCALAR[t]));
    this.pointers = n ? Number(base) : 0;
    this.views = views;
    this.compiled = compiledFill(this.kinds, types, views);
  }

  /**
   * Launches `handle` as the last plain launch was, when `config` is the same object (with no extended
   * option now either) and `args` have the same types and are usable; returns false, having called
   * nothing, otherwise. `handle` is the kernel's handleNumber. Throws the CudaError of a launch CUDA
   * refuses (named `what`).
   */
  launch(handle: number, config: LaunchConfig, args: readonly unknown[], what: string): boolean {
    // What is rare is in functions apart: this one is then small enough for V8 to inline into the
    // caller's loop with Kernel.launch (and the rest parameter array made for nothing).
    if (config !== this.config || args.length !== this.types.length || usesExtendedOptions(config)) return false;
    const st = config.stream;
    const h = st === undefined ? legacyUnlessInScope() : st instanceof Stream && !st.isClosed ? st.handleNumber : undefined;
    const sm = config.sharedMem;
    const shared = sm === undefined ? 0 : sharedBytes(sm);
    if (h === undefined || shared < 0) return false;
    if ((config.grid !== this.gridSeen || config.block !== this.blockSeen) && !this.dims(config.grid, config.block)) return false;
    if (args.length > 0 && !(this.compiled ?? this.fill).call(this, args)) return false;
    const g = this.gridWords;
    const b = this.blockWords;
    const err = raw!(handle, g[0], g[1], b[0], b[1], this.pointers, shared, h) as number;
    if (err !== 0) throwLaunchError(err, what);
    return true;
  }

  /** Writes `args` into the argument memory; false when one is not of its slot's type or not usable. */
  private fill(args: readonly unknown[]): boolean {
    const views = this.views!;
    const n = args.length;
    for (let i = 0; i < n; i++) {
      const a = args[i];
      const at = 8 * n + 8 * i;
      const k = this.kinds[i];
      if (k === Kind.buffer) {
        const p = a instanceof DeviceBuffer ? a.openAddress() : null;
        if (p === null) return false;
        views.u64[at / 8] = p;
        continue;
      }
      if (k === Kind.address) {
        if (typeof a !== 'bigint' || BigInt.asUintN(64, a) !== a) return false;
        views.u64[at / 8] = a;
        continue;
      }
      if (!(a instanceof cudart.KernelArg) || a.type !== this.types[i]) return false;
      // Only where code cannot be made from a string (compiledFill does this in line).
      const [view, size] = STORE[k];
      // A 64-bit value is a bigint, unless a KernelArg was made with `new` and a number (the general path converts it).
      if ((view === 'i64' || view === 'u64') && typeof a.value !== 'bigint') return false;
      (views[view] as unknown as (number | bigint)[])[at / size] = a.value;
    }
    return true;
  }

  /** Computes the dim3 words of `grid` and `block`; false when one is not a valid size. */
  private dims(grid: Dim, block: Dim): boolean {
    this.gridSeen = this.blockSeen = NOT_SEEN;
    if (!this.words(grid, this.gridWords) || !this.words(block, this.blockWords)) return false;
    if (typeof grid === 'number') this.gridSeen = grid;
    if (typeof block === 'number') this.blockSeen = block;
    return true;
  }

  private words(v: Dim, w: (number | bigint)[]): boolean {
    const d = this.xyz;
    if (!readDim(v, d)) return false;
    // x | y << 32 as a number while it is below 2^53 (koffi converts a number faster than a bigint), then z.
    w[0] = d[1] < 0x200000 ? d[0] + d[1] * 4294967296 : BigInt(d[0]) | (BigInt(d[1]) << 32n);
    w[1] = d[2];
    return true;
  }
}

/**
 * Typed arrays over the argument memory, one per C type, in the host's byte order (the CUDA runtime
 * on this host reads it so): V8 writes through them in line, where a DataView's setBigUint64 and
 * setBigInt64 were calls of ~90–140 instructions each (issue #37).
 */
interface Views {
  i8: Int8Array;
  u8: Uint8Array;
  i16: Int16Array;
  u16: Uint16Array;
  i32: Int32Array;
  u32: Uint32Array;
  f32: Float32Array;
  f64: Float64Array;
  i64: BigInt64Array;
  u64: BigUint64Array;
}

function viewsOf(store: ArrayBuffer): Views {
  return {
    i8: new Int8Array(store),
    u8: new Uint8Array(store),
    i16: new Int16Array(store),
    u16: new Uint16Array(store),
    i32: new Int32Array(store),
    u32: new Uint32Array(store),
    f32: new Float32Array(store),
    f64: new Float64Array(store),
    i64: new BigInt64Array(store),
    u64: new BigUint64Array(store),
  };
}

/**
 * The stream of a config with none: the legacy default stream (0, NULL), unless a stream.use() scope
 * is in effect (undefined: the general path launches on its stream, or says it was closed).
 */
function legacyUnlessInScope(): 0 | undefined {
  return inStreamScope() ? undefined : 0;
}

/** A config's sharedMem as the launch takes it, or -1 when it is not a byte count (the general path explains). */
function sharedBytes(sm: unknown): number {
  return typeof sm === 'number' && sm >= 0 && sm <= 0xffffffff && Math.floor(sm) === sm ? sm : -1;
}

/** The CudaError of a launch CUDA refused. */
function throwLaunchError(err: number, what: string): never {
  throw runtimeError(err, what);
}

/** The view each scalar kind is written through, and its element size. */
const STORE: Record<number, [keyof Views, number]> = {
  [Kind.i8]: ['i8', 1],
  [Kind.u8]: ['u8', 1],
  [Kind.i16]: ['i16', 2],
  [Kind.u16]: ['u16', 2],
  [Kind.i32]: ['i32', 4],
  [Kind.u32]: ['u32', 4],
  [Kind.f32]: ['f32', 4],
  [Kind.f64]: ['f64', 8],
  [Kind.i64]: ['i64', 8],
  [Kind.u64]: ['u64', 8],
};

/**
 * DirectLaunch.fill for one list of argument types as straight-line code: each argument's test and
 * store in line, at its offset (about 8 ns an argument less than the loop, as for prepared launches).
 * The source holds only offsets, view names from STORE and type names that are keys of SCALAR,
 * never a user's string. Null where code cannot be made from a string.
 */
function compiledFill(kinds: Kind[], types: string[], views: Views): ((args: readonly unknown[]) => boolean) | null {
  const n = kinds.length;
  const lines = ['const { i8, u8, i16, u16, i32, u32, f32, f64, i64, u64 } = views;', 'return function fill(args) {', '  let a, p;'];
  kinds.forEach((k, i) => {
    const at = 8 * n + 8 * i;
    lines.push(`  a = args[${i}];`);
    if (k === Kind.buffer)
      lines.push(`  if (!(a instanceof DeviceBuffer) || (p = a.openAddress()) === null) return false;`, `  u64[${at / 8}] = p;`);
    else if (k === Kind.address)
      lines.push(`  if (typeof a !== 'bigint' || BigInt.asUintN(64, a) !== a) return false;`, `  u64[${at / 8}] = a;`);
    else {
      const [view, size] = STORE[k];
      lines.push(`  if (!(a instanceof KernelArg) || a.type !== ${JSON.stringify(types[i])}) return false;`);
      // A 64-bit value is a bigint, unless a KernelArg was made with `new` and a number (the general path converts it).
      if (view === 'i64' || view === 'u64')
        lines.push(`  if (typeof (p = a.value) !== 'bigint') return false;`, `  ${view}[${at / 8}] = p;`);
      else lines.push(`  ${view}[${at / size}] = a.value;`);
    }
  });
  lines.push('  return true;', '};');
  try {
    return new Function('views', 'DeviceBuffer', 'KernelArg', lines.join('\n'))(views, DeviceBuffer, cudart.KernelArg) as (
      args: readonly unknown[],
    ) => boolean;
  } catch {
    return null;
  }
}
