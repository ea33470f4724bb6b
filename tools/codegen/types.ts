// How each C type looks from JavaScript: its TypeScript type, its koffi type, how a value is
// checked on the way in and read on the way out.
import { type CType, resolve, isSignedPrim, PRIM_SIZE } from './ctype';
import type { Model, RecordModel } from './model';

export type ValueKind =
  | { k: 'int'; bits: 8 | 16 | 32; signed: boolean }
  | { k: 'size' }
  | { k: 'i64' }
  | { k: 'u64' }
  | { k: 'float' }
  | { k: 'double' }
  | { k: 'bool' }
  | { k: 'enum'; ts: string; signed: boolean }
  | { k: 'handle'; ts: string; integer: boolean }
  | { k: 'addr' }
  | { k: 'fnptr' }
  | { k: 'record'; rec: RecordModel }
  | { k: 'void' };

/** The driver's device address integers (`CUdeviceptr`): typed so that a handle does not pass for one. */
export function isDevicePtrTypedef(t: CType): boolean {
  for (let c: CType = t; c.k === 'typedef'; c = c.to) if (c.name === 'CUdeviceptr' || c.name === 'CUdeviceptr_v2') return true;
  return false;
}

export class TypeMap {
  /** record key -> brand (TS handle type name) of the handles that point to it */
  readonly handleOfRecord = new Map<string, string>();
  /** every handle typedef name -> its brand */
  readonly handleTypedefs = new Map<string, string>();
  /** enum tag -> TS enum name */
  readonly enumTs = new Map<string, string>();

  constructor(
    readonly model: Model,
    readonly integerHandles: ReadonlySet<string>,
  ) {
    for (const [name, td] of model.typedefs) {
      if (integerHandles.has(name)) {
        this.handleTypedefs.set(name, name);
        continue;
      }
      const r = resolve(td.type);
      if (r.k === 'ptr') {
        const to = resolve(r.to);
        if (to.k === 'record' && model.records.get(to.key)?.opaque !== false) {
          const brand = this.handleOfRecord.get(to.key) ?? name;
          if (!r.constTo && !this.handleOfRecord.has(to.key)) this.handleOfRecord.set(to.key, name);
          this.handleTypedefs.set(name, r.constTo ? (this.handleOfRecord.get(to.key) ?? name) : brand);
        }
      }
    }
    // A const handle typedef seen before its non-const twin takes the twin's brand.
    for (const [name, td] of model.typedefs) {
      const r = resolve(td.type);
      if (r.k === 'ptr' && r.constTo) {
        const to = resolve(r.to);
        if (to.k === 'record' && this.handleOfRecord.has(to.key)) this.handleTypedefs.set(name, this.handleOfRecord.get(to.key)!);
      }
    }
    // Signatures name an enum by its typedef where it has one (CUresult, not cudaError_enum).
    for (const e of model.enums.values()) this.enumTs.set(e.name, e.typedefs.find((t) => t !== e.name) ?? e.name);
  }

  /** The brand of a handle type, when `t` is one. */
  handle(t: CType): string | undefined {
    let c: CType = t;
    while (c.k === 'typedef') {
      const h = this.handleTypedefs.get(c.name);
      if (h) return h;
      c = c.to;
    }
    if (c.k === 'ptr') {
      const to = resolve(c.to);
      if (to.k === 'record') return this.handleOfRecord.get(to.key);
    }
    return undefined;
  }

  isSizeT(t: CType): boolean {
    for (let c: CType = t; c.k === 'typedef'; c = c.to) if (c.name === 'size_t') return true;
    return false;
  }

  value(t: CType): ValueKind {
    const h = this.handle(t);
    if (h) return { k: 'handle', ts: h, integer: this.integerHandles.has(h) };
    if (this.isSizeT(t)) return { k: 'size' };
    const r = resolve(t);
    switch (r.k) {
      case 'prim': {
        const p = r.name;
        if (p === 'void') return { k: 'void' };
        if (p === 'bool') return { k: 'bool' };
        if (p === 'float') return { k: 'float' };
        if (p === 'double') return { k: 'double' };
        const size = PRIM_SIZE[p];
        if (size === 8) return isSignedPrim(p) ? { k: 'i64' } : { k: 'u64' };
        return { k: 'int', bits: (size * 8) as 8 | 16 | 32, signed: isSignedPrim(p) };
      }
      case 'enum': {
        const e = this.model.enums.get(r.name);
        const signed = !e || e.values.some((v) => v.value < 0n) || !e.values.some((v) => v.value > 2n ** 31n - 1n);
        return { k: 'enum', ts: this.enumTs.get(r.name) ?? 'number', signed };
      }
      case 'ptr':
        return resolve(r.to).k === 'fn' ? { k: 'fnptr' } : { k: 'addr' };
      case 'record':
        return { k: 'record', rec: this.model.records.get(r.key)! };
      default:
        throw new Error(`codegen: no value kind for ${JSON.stringify(r).slice(0, 80)}`);
    }
  }

  /** TypeScript type of a value of this kind as read. */
  tsOut(v: ValueKind): string {
    switch (v.k) {
      case 'int':
      case 'size':
      case 'float':
      case 'double':
        return 'number';
      case 'i64':
      case 'u64':
      case 'addr':
      case 'fnptr':
        return 'bigint';
      case 'bool':
        return 'boolean';
      case 'enum':
        return v.ts;
      case 'handle':
        return v.ts;
      case 'record':
        return v.rec.name;
      case 'void':
        return 'void';
    }
  }

  /** TypeScript type accepted for a value of this kind as a parameter. */
  tsIn(v: ValueKind): string {
    switch (v.k) {
      case 'i64':
      case 'u64':
        return 'bigint | number';
      case 'size':
        return 'number | bigint';
      case 'handle':
        return `${v.ts} | null`;
      case 'addr':
        return 'Pointer';
      case 'fnptr':
        return 'bigint | null';
      case 'record':
        return `${v.rec.name} | ${v.rec.name}Init`;
      default:
        return this.tsOut(v);
    }
  }

  /** koffi type for a parameter passed by value. */
  koffi(v: ValueKind): string {
    switch (v.k) {
      case 'int':
        return `${v.signed ? '' : 'u'}int${v.bits}_t`;
      case 'size':
        return 'size_t';
      case 'i64':
        return 'int64_t';
      case 'u64':
        return 'uint64_t';
      case 'float':
        return 'float';
      case 'double':
        return 'double';
      case 'bool':
        return 'bool';
      case 'enum':
        return v.signed ? 'int32_t' : 'uint32_t';
      case 'handle':
        return v.integer ? 'uint64_t' : 'void *';
      case 'addr':
      case 'fnptr':
        return 'void *';
      case 'record':
        return `T.${v.rec.name}`;
      case 'void':
        return 'void';
    }
  }

  /** Expression that checks a parameter value `x` and yields what koffi takes. */
  check(v: ValueKind, x: string, fn: string, p: string): string {
    const a = `${x}, '${fn}', '${p}'`;
    // The marshal helpers are reached through the namespace M so no C parameter name can shadow them.
    switch (v.k) {
      case 'int':
        if (v.bits === 32) return `M.${v.signed ? 'i32' : 'u32'}(${a})`;
        return `M.intN(${a}, ${v.bits}, ${v.signed})`;
      case 'size':
        return `M.size(${a})`;
      case 'i64':
        return `M.i64(${a})`;
      case 'u64':
        return `M.u64(${a})`;
      case 'float':
      case 'double':
        return `M.f64(${a})`;
      case 'bool':
        return `M.bool(${a})`;
      case 'enum':
        return v.signed ? `M.i32(${a})` : `M.u32(${a})`;
      case 'handle':
        return v.integer ? `(M.handle(${a}) ?? 0n)` : `M.handle(${a})`;
      case 'addr':
        return `M.pointer(${a})`;
      case 'fnptr':
        return `M.handle(${a})`;
      case 'record':
        return `X.byValue(${x}, S.${v.rec.name}, '${fn}', '${p}')`;
      case 'void':
        throw new Error('void parameter');
    }
  }

  /** Bytes a value of this kind takes in memory (for arrays of them). */
  sizeOf(v: ValueKind): number {
    switch (v.k) {
      case 'int':
        return v.bits / 8;
      case 'bool':
        return 1;
      case 'float':
        return 4;
      case 'enum':
        return 4;
      case 'record':
        return v.rec.size;
      default:
        return 8;
    }
  }
}
