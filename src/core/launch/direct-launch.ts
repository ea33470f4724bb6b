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

/** cudaLaunchKernel with dim3 split into its two 8-byte words (x86-64, AArch64), or null where it takes the struct. */
let raw: KoffiFunction | null | undefined;
const rawLaunch = (): KoffiFunction | null =>
  raw === undefined ? (raw = libcudart.splitSmallStructs ? libcudart.bind('cudaLaunchKernel') : null) : raw;

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
  private pointers: Uint8Array | null = null;
  private dv: DataView | null = null;
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
      this.pointers = this.dv = this.compiled = null;
      return;
    }
    if (types.length === this.types.length && types.every((t, i) => t === this.types[i])) return;
    const n = types.length;
    // A pointer per argument, then each value in an 8-byte slot of its own.
    const store = untransferable(new ArrayBuffer(16 * Math.max(n, 1)));
    const dv = new DataView(store);
    const base = koffi.address(store) as bigint;
    for (let i = 0; i < n; i++) dv.setBigUint64(8 * i, base + BigInt(8 * n + 8 * i), true);
    this.types = types;
    this.kinds = types.map((t) => (t === 'buffer' ? Kind.buffer : t === 'address' ? Kind.address : SCALAR[t]));
    this.pointers = n ? new Uint8Array(store, 0, 8 * n) : null;
    this.dv = dv;
    this.compiled = compiledFill(this.kinds, types, dv);
  }

  /**
   * Launches `handle` as the last plain launch was, when `config` is the same object (with no extended
   * option now either) and `args` have the same types and are usable; returns false, having called
   * nothing, otherwise. Throws the CudaError of a launch CUDA refuses (named `what`).
   */
  launch(handle: bigint, config: LaunchConfig, args: readonly unknown[], what: string): boolean {
    if (config !== this.config || args.length !== this.types.length || usesExtendedOptions(config)) return false;
    const st = config.stream;
    // No stream in the config: the legacy default stream, unless a stream.use() scope is in effect
    // (then the general path launches on its stream, or says it was closed).
    const h = st === undefined ? (inStreamScope() ? undefined : null) : st instanceof Stream && !st.isClosed ? st.handle : undefined;
    const sm = config.sharedMem;
    const shared = sm === undefined ? 0 : typeof sm === 'number' && sm >= 0 && sm <= 0xffffffff && Math.floor(sm) === sm ? sm : -1;
    if (h === undefined || shared < 0) return false;
    if ((config.grid !== this.gridSeen || config.block !== this.blockSeen) && !this.dims(config.grid, config.block)) return false;
    if (args.length > 0 && !(this.compiled ?? this.fill).call(this, args)) return false;
    const g = this.gridWords;
    const b = this.blockWords;
    const err = raw!(handle, g[0], g[1], b[0], b[1], this.pointers, shared, h) as number;
    if (err !== 0) throw runtimeError(err, what);
    return true;
  }

  /** Writes `args` into the argument memory; false when one is not of its slot's type or not usable. */
  private fill(args: readonly unknown[]): boolean {
    const dv = this.dv!;
    const n = args.length;
    for (let i = 0; i < n; i++) {
      const a = args[i];
      const at = 8 * n + 8 * i;
      const k = this.kinds[i];
      if (k === Kind.buffer) {
        const p = a instanceof DeviceBuffer ? a.openAddress() : null;
        if (p === null) return false;
        dv.setBigUint64(at, p, true);
        continue;
      }
      if (k === Kind.address) {
        if (typeof a !== 'bigint' || BigInt.asUintN(64, a) !== a) return false;
        dv.setBigUint64(at, a, true);
        continue;
      }
      if (!(a instanceof cudart.KernelArg) || a.type !== this.types[i]) return false;
      // Only where code cannot be made from a string (compiledFill does this in line).
      const [method, le] = STORE[k];
      (dv as unknown as Record<string, (at: number, v: unknown, le: boolean) => void>)[method](at, a.value, le);
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

/** The DataView store of each scalar kind, and whether it takes the little-endian flag. */
const STORE: Record<number, [string, boolean]> = {
  [Kind.i8]: ['setInt8', false],
  [Kind.u8]: ['setUint8', false],
  [Kind.i16]: ['setInt16', true],
  [Kind.u16]: ['setUint16', true],
  [Kind.i32]: ['setInt32', true],
  [Kind.u32]: ['setUint32', true],
  [Kind.f32]: ['setFloat32', true],
  [Kind.f64]: ['setFloat64', true],
  [Kind.i64]: ['setBigInt64', true],
  [Kind.u64]: ['setBigUint64', true],
};

/**
 * DirectLaunch.fill for one list of argument types as straight-line code: each argument's test and
 * store in line, at its offset (about 8 ns an argument less than the loop, as for prepared launches).
 * The source holds only offsets, method names from STORE and type names that are keys of SCALAR,
 * never a user's string. Null where code cannot be made from a string.
 */
function compiledFill(kinds: Kind[], types: string[], dv: DataView): ((args: readonly unknown[]) => boolean) | null {
  const n = kinds.length;
  const lines = ['return function fill(args) {', '  let a, p;'];
  kinds.forEach((k, i) => {
    const at = 8 * n + 8 * i;
    lines.push(`  a = args[${i}];`);
    if (k === Kind.buffer)
      lines.push(
        `  if (!(a instanceof DeviceBuffer) || (p = a.openAddress()) === null) return false;`,
        `  dv.setBigUint64(${at}, p, true);`,
      );
    else if (k === Kind.address)
      lines.push(`  if (typeof a !== 'bigint' || BigInt.asUintN(64, a) !== a) return false;`, `  dv.setBigUint64(${at}, a, true);`);
    else {
      const [method, le] = STORE[k];
      lines.push(
        `  if (!(a instanceof KernelArg) || a.type !== ${JSON.stringify(types[i])}) return false;`,
        `  dv.${method}(${at}, a.value${le ? ', true' : ''});`,
      );
    }
  });
  lines.push('  return true;', '};');
  try {
    return new Function('dv', 'DeviceBuffer', 'KernelArg', lines.join('\n'))(dv, DeviceBuffer, cudart.KernelArg) as (
      args: readonly unknown[],
    ) => boolean;
  } catch {
    return null;
  }
}
