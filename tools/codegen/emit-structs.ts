// Writes src/<api>/structs.gen.ts: one class per C struct or union, over its own bytes.
import { type CType, type PrimName, resolve } from './ctype';
import type { Model, RecordModel, FieldModel } from './model';
import { TypeMap, isDevicePtrTypedef, type ValueKind } from './types';
import { banner, doc, q, usedImports } from './util';
import type { ApiConfig } from './apis';

/** Reader and writer code of a scalar value kind at `off` of DataView `dv`. */
export function scalarIO(v: ValueKind): { read: (dv: string, off: string) => string; write: string } {
  switch (v.k) {
    case 'int': {
      const n = `${v.signed ? 'Int' : 'Uint'}${v.bits}`;
      const le = v.bits > 8 ? ', true' : '';
      // 8-bit DataView accessors take no endianness.
      return { read: (dv, o) => `${dv}.get${n}(${o}${le})`, write: `W.${v.signed ? 'i' : 'u'}${v.bits}` };
    }
    case 'enum':
      return { read: (dv, o) => `${dv}.get${v.signed ? 'Int32' : 'Uint32'}(${o}, true) as E.${v.ts}`, write: v.signed ? 'W.i32' : 'W.u32' };
    case 'size':
      return { read: (dv, o) => `readSize(${dv}, ${o})`, write: 'W.size' };
    case 'i64':
      return { read: (dv, o) => `${dv}.getBigInt64(${o}, true)`, write: 'W.i64' };
    case 'u64':
      return { read: (dv, o) => `${dv}.getBigUint64(${o}, true)`, write: 'W.u64' };
    case 'float':
      return { read: (dv, o) => `${dv}.getFloat32(${o}, true)`, write: 'W.f32' };
    case 'double':
      return { read: (dv, o) => `${dv}.getFloat64(${o}, true)`, write: 'W.f64' };
    case 'bool':
      return { read: (dv, o) => `${dv}.getUint8(${o}) !== 0`, write: 'W.bool' };
    case 'handle':
      return { read: (dv, o) => `${dv}.getBigUint64(${o}, true) as H.${v.ts}`, write: 'W.ptr' };
    case 'addr':
    case 'fnptr':
      return { read: (dv, o) => `${dv}.getBigUint64(${o}, true)`, write: 'W.ptr' };
    default:
      throw new Error(`codegen: no scalar IO for ${v.k}`);
  }
}

/** Function pointer types of graph host nodes, whose fields take JS functions. */
const HOST_FN_TYPES = new Set(['cudaHostFn_t', 'CUhostFn']);

/** Which char arrays are text; the rest are bytes (UUIDs, LUIDs, IPC handles, padding). */
const textFields = new Set(['name']);

function isCharArray(t: CType): boolean {
  const r = resolve(t);
  if (r.k !== 'array') return false;
  const e = resolve(r.of);
  return e.k === 'prim' && (e.name === 'char' || e.name === 'schar' || e.name === 'uchar');
}

export function emitStructs(api: ApiConfig, model: Model, tm: TypeMap, records: RecordModel[], from: string): string {
  const out: string[] = [];
  const defaults = api.spec.structDefaults?.(model) ?? new Map<string, Record<string, number>>();
  const isText = api.spec.textField ?? ((field: string) => textFields.has(field));
  const fieldExtents = api.spec.fieldExtents ?? {};
  for (const name of Object.keys(fieldExtents)) {
    if (!records.some((r) => r.name === name))
      throw new Error(`codegen: fieldExtents names ${name}, which is no struct of the ${api.title}`);
  }
  for (const rec of records) out.push(emitRecord(model, tm, rec, defaults.get(rec.name), isText, fieldExtents[rec.name]));
  // Typedef aliases: cudaUUID_t for struct CUuuid_st and the like.
  for (const rec of records) {
    for (const t of rec.typedefs) {
      if (t === rec.name) continue;
      out.push(`/** Alias of {@link ${rec.name}} (C typedef \`${t}\`). */`);
      out.push(`export const ${t} = ${rec.name};\nexport type ${t} = ${rec.name};`);
      out.push(`/** Alias of {@link ${rec.name}Init}. */\nexport type ${t}Init = ${rec.name}Init;`);
    }
  }
  const imports = usedImports(out.join('\n'), [
    `import { CStruct, type StructLayout, keepLayout, setPointer, setPointerArray, getString, setString, setBytes, setArray, setNested, nestedView, setHostFnField, getHostFnUserData, setHostFnUserData, setKernelParamsField, packStruct, hostBytes3D } from '../ffi/struct-base';`,
    `import type { KernelArgs, KernelArgInput } from '../ffi/kernel-args';`,
    `import { W, readSize } from '../ffi/memory';`,
    `import type { Pointer, DevicePointer } from '../ffi/marshal';`,
    `import type * as E from './enums.gen';`,
    `import type * as H from './handles.gen';`,
  ]);
  return [banner(`struct classes of the ${api.title}`, from), ...imports, '', ...out].join('\n') + '\n';
}

function fieldKind(tm: TypeMap, f: FieldModel): ValueKind {
  return tm.value(f.type);
}

/** Qualifies enum and handle type names with their module namespace. */
export function tsQ(tm: TypeMap, ts: string): string {
  const brands = new Set(tm.handleTypedefs.values());
  const enums = new Set(tm.enumTs.values());
  return ts.replace(/\b\w+\b/g, (w) => (brands.has(w) ? `H.${w}` : enums.has(w) ? `E.${w}` : w));
}
const tsEnumsHandles = (ts: string, tm: TypeMap) => tsQ(tm, ts);

/** The read of a scalar field at a path of nested struct fields, from the struct's bytes; null if none. */
function fieldRead(model: Model, tm: TypeMap, rec: RecordModel, path: string[]): string | null {
  let off = 0;
  let r: RecordModel = rec;
  for (let i = 0; i < path.length; i++) {
    const f = r.fields.find((x) => x.name === path[i]);
    if (!f) return null;
    off += f.offset;
    const t = resolve(f.type);
    if (i === path.length - 1) {
      if (t.k === 'record' || t.k === 'array') return null;
      const k = fieldKind(tm, f);
      // 64-bit fields read as numbers (no BigInt to allocate): exact below 2^53, and zero is zero.
      if (f.size === 8 && (k.k === 'handle' || k.k === 'addr' || k.k === 'u64' || k.k === 'fnptr')) return `readSize(s._dv, s._o + ${off})`;
      return scalarIO(k).read('s._dv', `s._o + ${off}`);
    }
    if (t.k !== 'record') return null;
    r = model.records.get(t.key)!;
  }
  return null;
}

/** What a field the header leaves undocumented is, in C words: `int x`, of `struct int2`. */
function fieldTitle(model: Model, rec: RecordModel, f: FieldModel): string {
  const dims = /((?:\[\d+\])+)$/.exec(f.spelled)?.[1] ?? '';
  let elem = resolve(f.type);
  while (elem.k === 'array') elem = resolve(elem.of);
  // clang spells a member of an unnamed record type by its place: name the class instead.
  const nested = elem.k === 'record' ? model.records.get(elem.key)?.name : undefined;
  const type = f.spelled
    .slice(0, f.spelled.length - dims.length)
    .replace(/\((?:unnamed|anonymous) [^)]*\)/, nested ?? '$&')
    .trim();
  const owner = rec.owner ? model.records.get(rec.owner.key)!.cName : rec.cName;
  return `\`${type} ${f.name}${dims}\`, of \`${recordTitle(rec, owner)}\` (no description in the header).`;
}

/** What an undocumented record is, in C words: `struct char1`, `union res in struct cudaResourceDesc`. */
function recordTitle(rec: RecordModel, ownerCName: string): string {
  const kind = `${rec.kind} `;
  if (rec.owner) return `${kind}${rec.owner.path} in ${ownerCName}`;
  return rec.cName.startsWith(kind) ? rec.cName : kind + rec.cName;
}

function emitRecord(
  model: Model,
  tm: TypeMap,
  rec: RecordModel,
  defaults: Record<string, number> | undefined,
  isText: (field: string, elem: PrimName) => boolean,
  hostExtents?: Record<string, string>,
): string {
  const cls = rec.name;
  const o = classHead(model, tm, rec, defaults, hostExtents);
  const init: string[] = [];
  const hasHostFn = rec.fields.some((f) => f.type.k === 'typedef' && HOST_FN_TYPES.has(f.type.name));
  for (const f of rec.fields) {
    const a = fieldAccessor(model, tm, rec, f, isText, hasHostFn);
    const fieldDoc = doc(f.doc || fieldTitle(model, rec, f));
    if (a.member) o.push(a.member);
    o.push(`  ${fieldDoc}`);
    o.push(`  get ${f.name}(): ${a.tsGet} {\n    ${a.get}\n  }`);
    o.push(`  /** Writes \`${f.name}\` into the struct's bytes. */`);
    o.push(`  set ${f.name}(v: ${a.tsSet}) {\n    ${a.set}\n  }`);
    init.push(`  ${fieldDoc}\n  ${f.name}?: ${a.tsSet};`);
  }
  o.push('}');
  o.push(`/** Fields accepted by \`new ${cls}({...})\`. */`);
  o.push(`export interface ${cls}Init {\n${init.join('\n')}\n}`);
  o.push('');
  return o.join('\n');
}

/** A struct class up to its fields: its doc, layout, host extents, view and constructors. */
function classHead(
  model: Model,
  tm: TypeMap,
  rec: RecordModel,
  defaults: Record<string, number> | undefined,
  hostExtents?: Record<string, string>,
): string[] {
  const o: string[] = [];
  const cls = rec.name;
  const cType = rec.owner ? model.records.get(rec.owner.key)!.cName : rec.cName;
  const layout = {
    cType,
    path: rec.owner?.path ?? '',
    size: rec.size,
    align: rec.align,
    union: rec.kind === 'union',
    fields: Object.fromEntries(rec.fields.map((f) => [f.name, { offset: f.offset, size: f.size }])),
  };
  o.push(doc(rec.doc || recordTitle(rec, cType)));
  o.push(`// ${rec.owner ? `member ${rec.owner.path} of ${cType}` : rec.cName} — ${rec.loc.file}:${rec.loc.line}`);
  o.push(`export class ${cls} extends CStruct {`);
  // Built on the first read (see keepLayout in base.ts), not at import.
  o.push(`  /** The C layout: size, alignment and each field's offset and size. */`);
  o.push(`  static get layout(): StructLayout {\n    return keepLayout(this, ${JSON.stringify(layout)});\n  }`);
  o.push(`  private static readonly keys: ReadonlySet<string> = new Set(${JSON.stringify(rec.fields.map((f) => f.name))});`);
  if (hostExtents) o.push(...hostExtentsOf(model, tm, rec, hostExtents));
  o.push(`  /** A view of existing bytes as a ${cls} (no copy). */`);
  o.push(`  static view(mem: Uint8Array, dv?: DataView): ${cls} {\n    return new ${cls}(undefined, mem, dv);\n  }`);
  // The bytes a view wraps are internal: the public constructor takes only the initializer.
  o.push(`  /** A new zeroed ${cls}, with the given fields set. */`);
  o.push(`  constructor(init?: ${cls}Init | ${cls});`);
  o.push(`  /** @internal A view of \`mem\` (see view()); \`dv\` spans mem's buffer. */`);
  o.push(`  constructor(init: ${cls}Init | ${cls} | undefined, mem: Uint8Array, dv?: DataView);`);
  // A new struct (not a view on existing bytes) starts with its defaults, then the initializer.
  const setDefaults = Object.entries(defaults ?? {})
    .map(([f, v]) => {
      const fl = rec.fields.find((x) => x.name === f);
      if (!fl || fl.size !== 4) throw new Error(`codegen: default for ${cls}.${f}, which is not a 4-byte field`);
      return `\n    if (!mem) this._dv.setUint32(this._o + ${fl.offset}, ${v}, true); // ${f}`;
    })
    .join('');
  o.push(
    `  constructor(init?: ${cls}Init | ${cls}, mem?: Uint8Array, dv?: DataView) {\n    super(${rec.size}, mem, dv);${setDefaults}\n    this._init(init, ${cls}.keys);\n  }`,
  );
  return o;
}

/** Checked at every call given the struct (base.ts checkHeld): the bytes each host buffer must hold. */
function hostExtentsOf(model: Model, tm: TypeMap, rec: RecordModel, hostExtents: Record<string, string>): string[] {
  const o: string[] = [];
  o.push(`  /** @internal Bytes C touches through each pointer field that holds host memory. */`);
  o.push(`  static readonly hostExtents: Record<string, (s: ${rec.name}) => number> = {`);
  // Field paths (s.srcPos.x) read straight from the bytes: no nested views on the way.
  const read = (m: string, path: string) => {
    const r = fieldRead(model, tm, rec, path.split('.'));
    return r ? `(${r})` : m;
  };
  for (const [path, e] of Object.entries(hostExtents))
    o.push(`    ${q(path)}: (s) => ${e.replace(/\bs((?:\.\w+)+)/g, (m, p: string) => read(m, p.slice(1)))},`);
  o.push('  };');
  return o;
}

/** A field's getter and setter bodies with their types, and a member of the class the getter uses. */
interface Accessor {
  tsGet: string;
  tsSet: string;
  get: string;
  set: string;
  member?: string;
}

function fieldAccessor(
  model: Model,
  tm: TypeMap,
  rec: RecordModel,
  f: FieldModel,
  isText: (field: string, elem: PrimName) => boolean,
  hasHostFn: boolean,
): Accessor {
  const name = `${rec.name}.${f.name}`;
  const t = resolve(f.type);
  if (t.k === 'array') return arrayField(tm, f, t, name, isText);
  if (t.k === 'record') {
    const r = model.records.get(t.key)!;
    return {
      tsGet: r.name,
      tsSet: `${r.name} | ${r.name}Init`,
      get: `return (this._n_${f.name} ??= nestedView(this, ${r.name}, ${f.offset}, ${r.size}, ${q(f.name)}));`,
      set: `setNested(this.${f.name}, v, ${r.name}, ${q(name)});`,
      member: `  private _n_${f.name}?: ${r.name};`,
    };
  }
  return scalarField(tm, f, t, name, hasHostFn);
}

/** A fixed array: text or bytes (char), copies of structs, bytes (2-D), or values. */
function arrayField(
  tm: TypeMap,
  f: FieldModel,
  t: Extract<CType, { k: 'array' }>,
  name: string,
  isText: (field: string, elem: PrimName) => boolean,
): Accessor {
  const off = f.offset;
  if (isCharArray(f.type) && isText(f.name, (resolve(t.of) as { name: PrimName }).name))
    return {
      tsGet: 'string',
      tsSet: 'string',
      get: `return getString(this, ${off}, ${t.n});`,
      set: `setString(this, ${off}, ${t.n}, v, ${q(name)});`,
    };
  if (isCharArray(f.type))
    return {
      tsGet: 'Uint8Array',
      tsSet: 'Uint8Array | number[]',
      get: `return this._u8.slice(${off}, ${off + t.n});`,
      set: `setBytes(this, ${off}, ${t.n}, v, ${q(name)});`,
    };
  const ek = tm.value(t.of);
  const esz = f.size / t.n;
  if (ek.k === 'record') {
    const view = `${ek.rec.name}.view(this._u8.subarray(${off} + i * ${esz}, ${off} + (i + 1) * ${esz}), this._dv)`;
    return {
      tsGet: `${ek.rec.name}[]`,
      tsSet: `(${ek.rec.name} | ${ek.rec.name}Init)[]`,
      get: `return Array.from({ length: ${t.n} }, (_, i) => new ${ek.rec.name}(${view}));`,
      set: `setArray(this, ${t.n}, v, ${q(name)}, (i, x, n) => setNested(${view}, x === 0 ? {} : x, ${ek.rec.name}, n));`,
    };
  }
  if (resolve(t.of).k === 'array') {
    // Two-dimensional arrays read as their bytes.
    return {
      tsGet: 'Uint8Array',
      tsSet: 'Uint8Array | number[]',
      get: `return this._u8.slice(${off}, ${off + f.size});`,
      set: `setBytes(this, ${off}, ${f.size}, v, ${q(name)});`,
    };
  }
  const io = scalarIO(ek);
  return {
    tsGet: `${tsEnumsHandles(tm.tsOut(ek), tm)}[]`,
    tsSet: `(${tsQ(tm, tm.tsIn(ek))})[]`,
    get: `return Array.from({ length: ${t.n} }, (_, i) => ${io.read('this._dv', `this._o + ${off} + i * ${esz}`)});`,
    set: `setArray(this, ${t.n}, v, ${q(name)}, (i, x, n) => ${io.write}(this._dv, this._o + ${off} + i * ${esz}, x, n));`,
  };
}

/** A value, handle, pointer or function pointer; host functions and kernel arguments take JS forms. */
function scalarField(tm: TypeMap, f: FieldModel, t: CType, name: string, hasHostFn: boolean): Accessor {
  const off = f.offset;
  const k = fieldKind(tm, f);
  const io = scalarIO(k);
  const tsGet = tsEnumsHandles(tm.tsOut(k), tm);
  const a: Accessor = { tsGet, tsSet: plainSetType(k, f, tsGet), get: `return ${io.read('this._dv', `this._o + ${off}`)};`, set: '' };
  const typedefName = f.type.k === 'typedef' ? f.type.name : '';
  if (k.k === 'fnptr' && HOST_FN_TYPES.has(typedefName)) {
    // A graph host node's function: a JS function is run on the JS thread at every launch.
    a.tsSet = '((userData: bigint) => void) | bigint | null';
    a.set = `setHostFnField(this, ${off}, v, ${q(name)}, ${q(f.name)});`;
  } else if (f.name === 'userData' && hasHostFn) {
    // The host function's user data: C's field holds the token when the function is a JS one.
    a.tsGet = 'bigint';
    a.tsSet = 'bigint | ArrayBufferView | ArrayBuffer | CStruct | null';
    a.get = `return getHostFnUserData(this, ${off});`;
    a.set = `setHostFnUserData(this, ${off}, v, ${q(name)}, ${q(f.name)});`;
  } else if (f.name === 'kernelParams' && t.k === 'ptr') {
    // The kernel's arguments: typed values, KernelArgs, or an address.
    a.tsSet = 'KernelArgs | readonly KernelArgInput[] | bigint | ArrayBufferView | null';
    a.set = `setKernelParamsField(this, ${off}, v, ${q(name)}, ${q(f.name)});`;
  } else if (k.k === 'addr' || k.k === 'fnptr') {
    Object.assign(a, pointerSetter(tm, f, t, name));
  } else {
    a.set = `${io.write}(this._dv, this._o + ${off}, v, ${q(name)});`;
  }
  return a;
}

/** What a value field's setter takes besides what its getter returns. */
function plainSetType(k: ValueKind, f: FieldModel, tsGet: string): string {
  if (k.k === 'handle') return `${tsGet} | null`;
  if (isDevicePtrTypedef(f.type)) return 'DevicePointer | number';
  if (k.k === 'i64' || k.k === 'u64') return 'bigint | number';
  if (k.k === 'size') return 'number | bigint';
  return tsGet;
}

/** A pointer field's setter: to values or structs, it also takes a JS array that is packed. */
function pointerSetter(tm: TypeMap, f: FieldModel, t: CType, name: string): Pick<Accessor, 'tsSet' | 'set'> {
  const off = f.offset;
  const pt = t.k === 'ptr' ? resolve(t.to) : null;
  const pointee = pt && pt.k !== 'fn' && !(pt.k === 'prim' && pt.name === 'void') ? tm.value((t as { to: CType }).to) : null;
  if (!pointee || pointee.k === 'void' || pointee.k === 'fnptr')
    return {
      tsSet: 'bigint | ArrayBufferView | ArrayBuffer | CStruct | null',
      set: `setPointer(this, ${off}, v, ${q(name)}, ${q(f.name)});`,
    };
  const esz = tm.sizeOf(pointee);
  const elemTs = pointee.k === 'record' ? `${pointee.rec.name} | ${pointee.rec.name}Init` : tsEnumsHandles(tm.tsIn(pointee), tm);
  const write =
    pointee.k === 'record'
      ? `(dv, at, x, n) => packStruct(dv, at, x, ${pointee.rec.name}, n)`
      : `(dv, at, x, n) => ${scalarIO(pointee).write}(dv, at, x, n)`;
  return {
    tsSet: `bigint | Uint8Array | ArrayBufferView | CStruct | (${elemTs})[] | null`,
    set: `setPointerArray(this, ${off}, v, ${q(name)}, ${q(f.name)}, ${esz}, ${write});`,
  };
}
