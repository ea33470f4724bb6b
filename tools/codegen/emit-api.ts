// Writes an API's enums, constants, handles, koffi declarations and tuple facade.
import { type CType, resolve } from './ctype';
import type { FunctionModel, Model, ParamModel, RecordModel } from './model';
import { TypeMap, type ValueKind } from './types';
import type { ParamSpec } from './runtime-spec';
import { SLOTS } from '../../src/ffi/scratch';
import type { ApiConfig } from './apis';
import { banner, doc, q } from './util';
import { scalarIO, tsQ } from './emit-structs';

// ---------------------------------------------------------------------------------------------
// enums

export function emitEnums(api: ApiConfig, model: Model, typeAliases: [string, string][]): string {
  const o = [banner(`enums of the ${api.title}`)];
  for (const e of model.enums.values()) {
    o.push(doc(e.doc || `enum ${e.name}`));
    o.push(`// enum ${e.name} — ${e.loc.file}:${e.loc.line}`);
    o.push(`export enum ${e.name} {`);
    for (const v of e.values) {
      if (v.doc) o.push(`  ${doc(v.doc)}`);
      o.push(`  ${v.name} = ${v.value},`);
    }
    o.push('}');
    for (const t of e.typedefs) {
      if (t !== e.name) o.push(`/** Alias of {@link ${e.name}} (C typedef \`${t}\`): its members are types too. */\nexport import ${t} = ${e.name};`);
    }
    o.push('');
  }
  for (const [alias, target] of typeAliases) {
    o.push(`/** Alias of {@link ${target}} (\`#define ${alias} ${target}\`). */\nexport const ${alias} = ${target};\nexport type ${alias} = ${target};`);
  }
  return o.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// #define constants

export interface ConstantModel {
  name: string;
  /** JS expression of the value */
  expr: string;
  /** the value as g++ prints it, for the tests */
  value: string;
  kind: 'number' | 'handle' | 'enumerator';
  file: string;
}

export function collectConstants(model: Model, tm: TypeMap, api?: ApiConfig): { constants: ConstantModel[]; enumAliases: [string, string][]; structAliases: [string, string][] } {
  const constants: ConstantModel[] = [];
  const enumAliases: [string, string][] = [];
  const structAliases: [string, string][] = [];
  const enumNames = new Set<string>([...model.enums.values()].flatMap((e) => [e.name, ...e.typedefs]));
  for (const m of model.macros) {
    if (m.name.startsWith('__') || !m.body) continue;
    const special = api?.spec.macroValue?.(m, model);
    if (special) {
      constants.push({ name: m.name, expr: special.expr, value: special.value, kind: 'number', file: m.file });
      continue;
    }
    const lit = /^\(*\s*(?:\((\w+)\)\s*)?(-?(?:0x[0-9a-fA-F]+|\d+))[uUlL]*\s*\)*$/.exec(m.body);
    if (lit) {
      const cast = lit[1];
      const n = BigInt(lit[2]);
      const brand = cast ? tm.handleTypedefs.get(cast) : undefined;
      if (brand) constants.push({ name: m.name, expr: `${n}n as H.${brand}`, value: String(n), kind: 'handle', file: m.file });
      else constants.push({ name: m.name, expr: String(n), value: String(n), kind: 'number', file: m.file });
      continue;
    }
    const voidCast = /^\(\(void\s*\*\)\s*(\w+)\)$/.exec(m.body);
    const ref = voidCast && constants.find((c) => c.name === voidCast[1] && c.kind === 'number');
    if (ref) {
      // ((void*)CU_LAUNCH_PARAM_END_AS_INT): an address constant.
      constants.push({ name: m.name, expr: `${ref.value}n`, value: ref.value, kind: 'handle', file: m.file });
      continue;
    }
    if (/^\w+$/.test(m.body)) {
      const en = model.enumerators.get(m.body);
      if (en) constants.push({ name: m.name, expr: `E.${en.enumName}.${m.body}`, value: String(en.value), kind: 'enumerator', file: m.file });
      else if (enumNames.has(m.body)) enumAliases.push([m.name, m.body]);
      else if (model.typedefs.has(m.body) || model.records.has(m.body)) structAliases.push([m.name, m.body]);
    }
  }
  return { constants, enumAliases, structAliases };
}

export function emitConstants(api: ApiConfig, constants: ConstantModel[]): string {
  const o = [banner(`#define constants of the ${api.title}`), `import * as E from './enums';`, `import type * as H from './handles';`, ''];
  for (const c of constants) o.push(`/** \`#define ${c.name}\` (${c.file}) */\nexport const ${c.name} = ${c.expr};`);
  return o.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// handles

export function emitHandles(api: ApiConfig, model: Model, tm: TypeMap): string {
  const o = [banner(`handle types of the ${api.title}`), `import { handleFrom } from '../ffi/marshal';`, ''];
  const brands = new Set(tm.handleTypedefs.values());
  const foreign = api.own?.foreignHandles ?? {};
  for (const b of brands) {
    if (foreign[b]) {
      o.push(`/** The handle type of another API, used in this one's signatures. */\nexport { ${b} } from ${q(foreign[b])};`);
      continue;
    }
    const td = model.typedefs.get(b);
    o.push(doc(td?.doc || `The C handle type ${b}`));
    o.push(`export type ${b} = bigint & { readonly __brand: ${q(b)} };`);
    o.push(`/** Makes a ${b} from an integer, as cuda-python's \`${b}(value)\`. */`);
    o.push(`export function ${b}(value: bigint | number): ${b} {\n  return handleFrom(value, ${q(b)}) as ${b};\n}`);
  }
  for (const [name, b] of tm.handleTypedefs) {
    if (name !== b) o.push(`/** Alias of {@link ${b}} (C typedef \`${name}\`). */\nexport type ${name} = ${b};\nexport const ${name} = ${b};`);
  }
  return o.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// functions: the plan of each parameter

interface Plan {
  fn: FunctionModel;
  jsParams: { name: string; ts: string; doc: string; c: string; optional?: boolean }[];
  pre: string[];
  late: string[];
  args: string[];
  koffiTypes: string[];
  /** koffi types with small integer structs passed as their eightbytes (x86-64 SysV, AArch64), or null. */
  splitTypes: string[] | null;
  /** the arguments for that form */
  splitArgs: string[];
  /** `countSlot`: an in/out count, which also comes back with the API's countStatus. */
  outs: { expr: string; ts: string; countSlot?: number }[];
  post: string[];
  /** Statements right after the call, whatever its status. */
  after: string[];
  /** How each parameter was treated, for the report. */
  notes: string[];
  /** Sentences added to the function's doc comment (what the header cannot say about JS's forms). */
  docSuffix?: string[];
}

/** C parameter names that would shadow a JS keyword or a name the generated code uses. */
const taken = new Set(['function', 'default', 'new', 'delete', 'in', 'var', 'arguments', 'eval', 'M', 'K', 'X', 'S', 'E', 'H', 'W', 'err', 'koffi', 'L', 'KA', 'HC']);
const jsName = (p: string) => (taken.has(p) ? `${p}_` : p);

export function planFunction(api: ApiConfig, model: Model, tm: TypeMap, fn: FunctionModel): Plan {
  const { paramSpecs, extents, attrTables } = api.spec;
  const plan: Plan = { fn, jsParams: [], pre: [], late: [], args: [], koffiTypes: [], splitTypes: null, splitArgs: [], outs: [], post: [], after: [], notes: [] };
  const specs = paramSpecs[fn.name] ?? {};
  const ext = extents[fn.name] ?? {};
  let slotN = 0;
  const F = fn.name;
  const local = (p: ParamModel) => `a_${p.name}`;
  const isCountOfOutArray = new Set(Object.values(specs).filter((s): s is Extract<ParamSpec, { k: 'outArray' }> => s.k === 'outArray' && s.countMode === 'inout').map((s) => s.count));
  const borrowedCounts = new Set(Object.values(specs).filter((s): s is Extract<ParamSpec, { k: 'borrowedArray' }> => s.k === 'borrowedArray').map((s) => s.count));
  const countSlot = new Map<string, number>();
  const countChecked = new Set<string>();
  // A JS host function passes a token as its user data in place of the caller's.
  let hostFnReg: string | undefined;

  for (const [name, s] of Object.entries(specs)) {
    if (!fn.params.some((p) => p.name === name)) throw new Error(`codegen: ${F} has no parameter ${name} (spec)`);
    if ('count' in s && !fn.params.some((p) => p.name === s.count)) throw new Error(`codegen: ${F} has no count ${s.count}`);
  }

  // Host or device memory, with the bytes a host buffer must hold where the spec knows them.
  const pointerParam = (p: ParamModel) => {
    const L = local(p);
    addJs(p, 'Pointer');
    plan.pre.push(`const ${L} = M.pointer(${jsName(p.name)}, '${F}', '${p.name}');`);
    if (ext[p.name]) plan.late.push(`M.checkExtent(${L}, ${extentExpr(ext[p.name], fn)}, '${F}', '${p.name}', ${q(ext[p.name])});`);
    plan.args.push(L);
    plan.koffiTypes.push('void *');
  };
  const addJs = (p: ParamModel, ts: string) => plan.jsParams.push({ name: jsName(p.name), ts, doc: fn.paramDocs[p.name] ?? '', c: resolvedSpelling(p.type) });

  for (const p of fn.params) {
    const spec = specs[p.name];
    const L = local(p);
    const J = jsName(p.name);
    const r = resolve(p.type);
    const slot = () => {
      if (slotN >= SLOTS) throw new Error(`codegen: ${F} needs more than ${SLOTS} output slots (src/ffi/scratch.ts)`);
      return slotN++;
    };

    // In/out counts of output arrays: passed in and returned.
    if (isCountOfOutArray.has(p.name)) {
      const i = slot();
      countSlot.set(p.name, i);
      addJs(p, 'number');
      plan.pre.push(`const ${L} = M.size(${J}, '${F}', '${p.name}');`, `K.U32[${2 * i}] = ${L} % 4294967296; K.U32[${2 * i + 1}] = Math.floor(${L} / 4294967296);`);
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.post.push(`const n_${p.name} = K.readSize(${i});`);
      plan.outs.push({ expr: `n_${p.name}`, ts: 'number', countSlot: i });
      plan.notes.push(`${p.name}: in/out count`);
      continue;
    }
    if ((spec?.k === 'inArray' || spec?.k === 'outArray' || spec?.k === 'inoutArray') && !countChecked.has(spec.count)) {
      // A negative count names the count, before any array is looked at.
      countChecked.add(spec.count);
      const c = local({ name: spec.count } as ParamModel);
      plan.late.push(`if (${c} < 0) M.rangeError('${F}', '${spec.count}', \`must not be negative, got \${${c}}\`);`);
    }
    if (spec?.k === 'inArray' && isCString(elemOf(r))) {
      // const char *const *: an array of strings, packed with their bytes in one allocation.
      addJs(p, `string[]${spec.nullable ? ' | null' : ''}`);
      plan.late.push(`const ${L} = X.packStrings(${J}, ${local({ name: spec.count } as ParamModel)}, '${F}', '${p.name}', ${!!spec.nullable});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.notes.push(`${p.name}: array of ${spec.count} strings`);
      continue;
    }
    if (spec?.k === 'inArray') {
      const elemT = (r as { to: CType }).to;
      const ek = tm.value(elemT);
      const esz = tm.sizeOf(ek);
      const elemTs = ek.k === 'record' ? `S.${ek.rec.name} | S.${ek.rec.name}Init` : ek.k === 'addr' ? 'Pointer' : tsQ(tm, tm.tsIn(ek));
      addJs(p, `(${elemTs})[] | ArrayBufferView${spec.nullable ? ' | null' : ''}`);
      const writer = ek.k === 'record'
        ? `(dv, at, x, n) => X.packStruct(dv, at, x, S.${ek.rec.name}, n)`
        : ek.k === 'addr'
          ? `(dv, at, x, n) => dv.setBigUint64(at, M.addressOf(M.pointer(x, '${F}', n)), true)`
          : `(dv, at, x, n) => ${scalarIO(ek).write}(dv, at, x, n)`;
      plan.late.push(`const ${L} = X.packArray(${J}, ${local({ name: spec.count } as ParamModel)}, ${esz}, '${F}', '${p.name}', ${!!spec.nullable}, ${writer});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.notes.push(`${p.name}: array of ${spec.count}`);
      continue;
    }
    if (spec?.k === 'inoutArray') {
      // Structs C reads and writes (NVML's field values): packed from the caller's, read back after.
      const rec = (tm.value((r as { to: CType }).to) as { rec: RecordModel }).rec;
      const cnt = local({ name: spec.count } as ParamModel);
      addJs(p, `(S.${rec.name} | S.${rec.name}Init)[]`);
      plan.late.push(`const ${L} = X.packArray(${J}, ${cnt}, ${rec.size}, '${F}', '${p.name}', false, (dv, at, x, n) => X.packStruct(dv, at, x, S.${rec.name}, n));`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `X.readStructs(${L}, ${cnt}, S.${rec.name})`, ts: `S.${rec.name}[]` });
      plan.notes.push(`${p.name}: in/out array of ${spec.count}`);
      continue;
    }
    if (spec?.k === 'outArray') {
      const elemT = (r as { to: CType }).to;
      const ek = tm.value(elemT);
      const esz = tm.sizeOf(ek);
      const cnt = local({ name: spec.count } as ParamModel);
      plan.late.push(`const ${L} = ${cnt} > 0 ? M.bytes(${cnt} * ${esz}) : null;`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      const n = spec.countMode === 'inout' ? `Math.min(${cnt}, n_${spec.count})` : cnt;
      const read = ek.k === 'record'
        ? `X.readStructs(${L}, ${n}, S.${ek.rec.name})`
        : `X.readArray(${L}, ${n}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`;
      plan.outs.push({ expr: read, ts: `${ek.k === 'record' ? 'S.' + ek.rec.name : tsQ(tm, tm.tsOut(ek))}[]` });
      plan.notes.push(`${p.name}: output array of ${spec.count}`);
      continue;
    }
    if (spec?.k === 'borrowedArray') {
      const i = slot();
      const inner = resolve((r as { to: CType }).to) as { to: CType };
      const ek = tm.value(inner.to);
      const esz = tm.sizeOf(ek);
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      const read = ek.k === 'record'
        ? `X.readStructs(X.borrowed(K.U64[${i}], n_${spec.count} * ${esz}), n_${spec.count}, S.${ek.rec.name})`
        : `X.readArray(X.borrowed(K.U64[${i}], n_${spec.count} * ${esz}), n_${spec.count}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`;
      plan.outs.push({ expr: read, ts: `${ek.k === 'record' ? 'S.' + ek.rec.name : tsQ(tm, tm.tsOut(ek))}[]` });
      plan.notes.push(`${p.name}: array owned by CUDA, copied out`);
      continue;
    }
    if (borrowedCounts.has(p.name)) {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.post.push(`const n_${p.name} = K.readSize(${i});`);
      plan.outs.push({ expr: `n_${p.name}`, ts: 'number' });
      continue;
    }
    if (spec?.k === 'attr') {
      const i = slot();
      const t = attrTables[spec.table];
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      const tsT = 'number | bigint';
      if (spec.dir === 'in') {
        addJs(p, tsT);
        plan.late.push(`X.attrIn(${spec.table}, ${local({ name: spec.attr } as ParamModel)}, ${J}, ${i}, '${F}', '${p.name}');`);
      } else {
        // Cleared first: some attributes are written narrower than the slot is read.
        plan.late.push(`K.U64[${i}] = 0n;`);
        plan.outs.push({ expr: `X.attrOut(${spec.table}, ${local({ name: spec.attr } as ParamModel)}, ${i})`, ts: tsT });
      }
      plan.notes.push(`${p.name}: value typed by ${spec.attr}`);
      continue;
    }
    if (spec?.k === 'rangeAttr') {
      plan.late.push(`const ${L} = M.bytes(Math.max(4, ${local({ name: spec.size } as ParamModel)}));`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `X.rangeAttrOut(${L}, ${local({ name: spec.attr } as ParamModel)}, ${local({ name: spec.size } as ParamModel)})`, ts: 'number | number[]' });
      plan.notes.push(`${p.name}: value typed by ${spec.attr}`);
      continue;
    }
    if (spec?.k === 'outString' && spec.size !== undefined) {
      // A buffer of a size the header fixes (NVML_GSP_FIRMWARE_VERSION_BUF_SIZE).
      plan.late.push(`const ${L} = M.bytes(${spec.size});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `M.cString(${L})`, ts: 'string' });
      plan.notes.push(`${p.name}: output string of ${spec.size} bytes`);
      continue;
    }
    if (spec?.k === 'outString') {
      const len = local({ name: spec.len } as ParamModel);
      plan.late.push(`if (${len} < 1) M.rangeError('${F}', '${spec.len}', \`must be at least 1, got \${${len}}\`);`);
      plan.late.push(`const ${L} = M.bytes(${len});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `M.cString(${L})`, ts: 'string' });
      plan.notes.push(`${p.name}: output string of ${spec.len} bytes`);
      continue;
    }
    if (spec?.k === 'outBytes') {
      plan.late.push(`const ${L} = M.bytes(${spec.size});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: L, ts: 'Uint8Array' });
      continue;
    }
    if (spec?.k === 'outAddr') {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `K.U64[${i}]`, ts: 'bigint' });
      continue;
    }
    if (spec?.k === 'hostFn') {
      // A JS function (run on the JS thread, see ffi/host-callbacks.ts) or a native pointer.
      const sig = spec.kind === 'hostFn' ? '(userData: bigint) => void' : '(stream: bigint, status: number, userData: bigint) => void';
      addJs(p, `(${sig}) | bigint | null`);
      plan.late.push(`const r_${p.name} = HC.registerHostFn(${J}, a_userData, ${local({ name: spec.stream } as ParamModel)}, '${spec.kind}', '${F}', '${p.name}');`);
      plan.args.push(`r_${p.name}.ptr`);
      hostFnReg = `r_${p.name}`;
      plan.koffiTypes.push('void *');
      plan.after.push(`if (err !== 0) r_${p.name}.cancel();`);
      plan.notes.push(`${p.name}: a JS function, run on the JS thread`);
      continue;
    }
    if (spec?.k === 'kernelArgs') {
      addJs(p, 'KernelArgs | readonly KernelArgInput[] | Pointer');
      plan.pre.push(`const ${L} = KA.kernelArgs(${J}, '${F}', '${p.name}');`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.notes.push(`${p.name}: typed kernel arguments`);
      continue;
    }
    if (spec?.k === 'sizedOut') {
      // Host memory checked against the size call, or null: the call sizes and allocates it.
      const size = `(${spec.sizeFn} as (...a: unknown[]) => [number, number | null])(${spec.args.map((a) => local({ name: a } as ParamModel)).join(', ')})`;
      addJs(p, 'Pointer');
      plan.pre.push(`const ${L} = ${J} === null ? null : M.pointer(${J}, '${F}', '${p.name}');`);
      // C gets at least one byte (koffi passes an empty Buffer as NULL); the caller gets n of them.
      plan.late.push(`let o_${p.name}: Buffer | null = null;`);
      plan.late.push(`let c_${p.name}: Buffer | null = null;`);
      plan.late.push(`if (${L} === null) { const [e, n] = ${size}; if (e !== 0 || n === null) return [e as E.${api.status.enumTs}, null]; c_${p.name} = Buffer.alloc(Math.max(n, 1)); o_${p.name} = c_${p.name}.subarray(0, n); }`);
      plan.late.push(`else X.needBytes(${L}, () => ${size}, '${F}', '${p.name}', '${spec.sizeFn}');`);
      plan.args.push(`c_${p.name} ?? ${L}`);
      plan.koffiTypes.push('void *');
      // The caller's own memory comes back as a Buffer over it.
      plan.outs.push({ expr: `o_${p.name} ?? X.hostBuffer(${J})`, ts: 'Buffer' });
      plan.notes.push(`${p.name}: as many bytes as ${spec.sizeFn} reports; null returns a Buffer of them`);
      (plan.docSuffix ??= []).push(`\`${p.name}\`: a buffer of the size ${spec.sizeFn} reports, or null to get a new Buffer of that size back.`);
      continue;
    }
    if (spec?.k === 'pointer') {
      pointerParam(p);
      continue;
    }
    if (spec?.k === 'inRef' || spec?.k === 'inout') {
      // A value passed by reference: in/out comes back; inRef (nvrtcDestroyProgram, which clears
      // the handle it is given) does not.
      const ek = tm.value((r as { to: CType }).to);
      const i = slot();
      addJs(p, tsQ(tm, tm.tsIn(ek)));
      plan.pre.push(`const ${L} = ${tm.check(ek, J, F, p.name)};`, slotWrite(ek, i, L));
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      if (spec.k === 'inout') {
        plan.outs.push({ expr: slotRead(ek, i), ts: tsQ(tm, tm.tsOut(ek)) });
        plan.notes.push(`${p.name}: in/out`);
      }
      continue;
    }
    if (spec?.k === 'inStruct' || (r.k === 'ptr' && !tm.handle(p.type) && isRecordPtr(model, r) && r.constTo)) {
      const rec = model.records.get((resolve((r as { to: CType }).to) as { key: string }).key)!;
      addJs(p, `S.${rec.name} | S.${rec.name}Init | null`);
      plan.pre.push(`const ${L} = X.structArg(${J}, S.${rec.name}, '${F}', '${p.name}');`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      continue;
    }

    // Defaults, from the C type alone.
    const v = tm.value(p.type);
    if (r.k !== 'ptr' || v.k === 'handle' || v.k === 'fnptr') {
      if (v.k === 'record') {
        addJs(p, `S.${v.rec.name} | S.${v.rec.name}Init`);
        plan.pre.push(v.rec.size > 16
          ? `const ${L} = { bytes: X.byValue(${J}, S.${v.rec.name}, '${F}', '${p.name}')._u8 };`
          : `const ${L} = X.byValue(${J}, S.${v.rec.name}, '${F}', '${p.name}');`);
      } else {
        addJs(p, tsQ(tm, tm.tsIn(v)));
        plan.pre.push(`const ${L} = ${tm.check(v, J, F, p.name)};`);
      }
      plan.args.push(L);
      plan.koffiTypes.push(tm.koffi(v));
      if (v.k === 'record' && v.rec.size <= 16 && integerOnly(tm, v.rec)) {
        // Passed in integer registers, eightbyte by eightbyte: koffi takes plain integers far
        // faster than a struct (about 0.1 µs against 0.9 µs a call).
        const n = Math.ceil(v.rec.size / 8);
        plan.splitTypes ??= [];
        for (let i = 0; i < n; i++) plan.splitArgs.push(`X.eightbyte(${L}, ${i})`);
        plan.splitTypes.push(...Array(n).fill('uint64_t'));
        plan.notes.push(`${p.name}: passed as ${n} integer register${n > 1 ? 's' : ''} on x86-64 and AArch64`);
      } else {
        plan.splitArgs.push(L);
        plan.splitTypes?.push(tm.koffi(v));
      }
      continue;
    }
    const to = resolve(r.to);
    const toV = to.k === 'fn' ? null : tm.value(r.to);
    if (to.k === 'prim' && (to.name === 'void' || (to.name === 'char' && !r.constTo))) {
      pointerParam(p);
      continue;
    }
    if (to.k === 'prim' && to.name === 'char' && r.constTo) {
      addJs(p, 'string');
      plan.pre.push(`const ${L} = M.str(${J}, '${F}', '${p.name}');`);
      plan.args.push(L);
      plan.koffiTypes.push('const char *');
      continue;
    }
    if (to.k === 'ptr' && resolve(to.to).k === 'prim' && (resolve(to.to) as { name: string }).name === 'char') {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `X.readCString(K.U64[${i}])`, ts: 'string' });
      continue;
    }
    if (to.k === 'ptr' && !tm.handle(r.to)) {
      // void ** and the like: an output address.
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `K.U64[${i}]`, ts: 'bigint' });
      continue;
    }
    if (to.k === 'record' && !r.constTo && toV?.k === 'record' && api.spec.structPointersInOut) {
      // In/out: the caller's struct (or its fields) goes in, and comes back; a new one otherwise.
      const rec = toV.rec;
      plan.jsParams.push({ name: J, ts: `S.${rec.name} | S.${rec.name}Init | null`, doc: fn.paramDocs[p.name] ?? '', c: resolvedSpelling(p.type), optional: true });
      plan.pre.push(`const ${L} = X.inoutStruct(${J}, S.${rec.name}, '${F}', '${p.name}');`);
      plan.args.push(`${L}._u8`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: L, ts: `S.${rec.name}` });
      plan.notes.push(`${p.name}: in/out ${rec.name}`);
      continue;
    }
    if (to.k === 'record' && !r.constTo && toV?.k === 'record') {
      const rec = toV.rec;
      plan.late.push(`const ${L} = new S.${rec.name}();`);
      plan.args.push(`${L}._u8`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: L, ts: `S.${rec.name}` });
      continue;
    }
    if (toV && toV.k !== 'record' && toV.k !== 'void' && !r.constTo) {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: slotRead(toV, i), ts: tsQ(tm, tm.tsOut(toV)) });
      continue;
    }
    // Anything else is passed through as a pointer.
    addJs(p, 'Pointer');
    plan.pre.push(`const ${L} = M.pointer(${J}, '${F}', '${p.name}');`);
    plan.args.push(L);
    plan.koffiTypes.push('void *');
    plan.notes.push(`${p.name}: raw pointer`);
  }
  if (hostFnReg) plan.args = plan.args.map((a) => (a === 'a_userData' ? `${hostFnReg}.userData` : a));
  for (const c of api.spec.checks?.[fn.name] ?? []) plan.late.push(c);
  if (plan.splitTypes) {
    // Rebuild the split form from the whole list so every other argument keeps its place.
    const types: string[] = [];
    const args: string[] = [];
    plan.args.forEach((a, i) => {
      const split = plan.splitArgs.filter((x) => x.startsWith(`X.eightbyte(${a}, `));
      if (split.length) {
        args.push(...split);
        types.push(...split.map(() => 'uint64_t'));
      } else {
        args.push(a);
        types.push(plan.koffiTypes[i]);
      }
    });
    plan.splitArgs = args;
    plan.splitTypes = types;
  }
  return plan;
}

function integerOnly(tm: TypeMap, rec: RecordModel): boolean {
  return rec.fields.every((f) => {
    const r = resolve(f.type);
    if (r.k === 'array') return integerOnly(tm, { fields: [{ ...f, type: r.of }] } as RecordModel);
    const v = tm.value(f.type);
    if (v.k === 'record') return integerOnly(tm, v.rec);
    return v.k !== 'float' && v.k !== 'double';
  });
}

/** The C type with typedefs resolved to what the checks go by: `unsigned int`, `size_t`, `void *`, … */
function resolvedSpelling(t: CType): string {
  for (let c: CType = t; c.k === 'typedef'; c = c.to) if (c.name === 'size_t') return 'size_t';
  const r = resolve(t);
  if (r.k === 'prim') return r.name;
  if (r.k === 'enum') return 'enum';
  if (r.k === 'record') return 'struct';
  return r.k === 'ptr' ? 'pointer' : r.k;
}

function elemOf(r: CType): CType {
  return resolve(r).k === 'ptr' ? (resolve(r) as { to: CType }).to : r;
}

/** `const char *` (what an array of strings holds). */
function isCString(t: CType): boolean {
  const r = resolve(t);
  if (r.k !== 'ptr') return false;
  const to = resolve(r.to);
  return to.k === 'prim' && to.name === 'char';
}

function isRecordPtr(model: Model, r: Extract<CType, { k: 'ptr' }>): boolean {
  const to = resolve(r.to);
  return to.k === 'record' && model.records.get(to.key)?.opaque === false;
}


function extentExpr(e: string, fn: FunctionModel): string {
  let s = e.replace(/\bspan2D\(/g, 'M.span2D(');
  for (const p of fn.params) s = s.replace(new RegExp(`\\b${p.name}\\b`, 'g'), `a_${p.name}`);
  return s;
}

function slotWrite(v: ValueKind, i: number, value: string): string {
  switch (v.k) {
    case 'int': case 'enum':
      if (v.k === 'int' && v.bits !== 32) return `K.DV.set${v.signed ? 'Int' : 'Uint'}${v.bits}(${8 * i}, ${value}${v.bits > 8 ? ', true' : ''});`;
      return `K.${v.signed ? 'I32' : 'U32'}[${2 * i}] = ${value};`;
    case 'size': return `{ const x = ${value}; K.U32[${2 * i}] = x % 4294967296; K.U32[${2 * i + 1}] = Math.floor(x / 4294967296); }`;
    case 'i64': return `K.I64[${i}] = BigInt(${value});`;
    case 'u64': return `K.U64[${i}] = BigInt(${value});`;
    case 'float': return `K.F32[${2 * i}] = ${value};`;
    case 'double': return `K.F64[${i}] = ${value};`;
    case 'bool': return `K.DV.setUint8(${8 * i}, ${value} ? 1 : 0);`;
    case 'handle': case 'addr': case 'fnptr': return `K.U64[${i}] = ${value} ?? 0n;`;
    default: throw new Error(`codegen: no slot write for ${v.k}`);
  }
}

function slotRead(v: ValueKind, i: number): string {
  switch (v.k) {
    case 'int':
      if (v.bits === 32) return v.signed ? `K.I32[${2 * i}]` : `K.U32[${2 * i}]`;
      return `K.DV.get${v.signed ? 'Int' : 'Uint'}${v.bits}(${8 * i}${v.bits > 8 ? ', true' : ''})`;
    case 'enum': return `K.${v.signed ? 'I32' : 'U32'}[${2 * i}] as E.${v.ts}`;
    case 'size': return `K.readSize(${i})`;
    case 'i64': return `K.I64[${i}]`;
    case 'u64': return `K.U64[${i}]`;
    case 'float': return `K.F32[${2 * i}]`;
    case 'double': return `K.F64[${i}]`;
    case 'bool': return `K.DV.getUint8(${8 * i}) !== 0`;
    case 'handle': return `K.U64[${i}] as H.${v.ts}`;
    case 'addr': case 'fnptr': return `K.U64[${i}]`;
    default: throw new Error(`codegen: no slot read for ${v.k}`);
  }
}

// ---------------------------------------------------------------------------------------------
// koffi declarations

export function cProto(fn: FunctionModel): string {
  return `${fn.retSpelled} ${fn.symbol}(${fn.params.map((p) => `${p.spelled.replace(/ \*/g, ' *')} ${p.name}`).join(', ') || 'void'})`;
}

export function emitFfi(api: ApiConfig, model: Model, tm: TypeMap, plans: Plan[], perThread: Map<string, string>, byValue: RecordModel[]): string {
  const o = [banner(`koffi declarations of ${api.libLabel}`), `import koffi, { type TypeObject } from 'koffi';`, ''];
  o.push('/** koffi types of the structs passed or returned by value. */');
  o.push('export const T = {');
  // Larger than 16 bytes, a struct goes in memory on x86-64 and aarch64 alike: its bytes are passed
  // as they are. Smaller ones are classified by their fields, so koffi gets the real fields.
  for (const rec of byValue) {
    o.push(`  ${rec.name}: ${rec.size > 16 ? `koffi.struct({ bytes: [${rec.align}, koffi.array('uint8_t', ${rec.size}, 'Typed')] })` : koffiRecord(model, tm, rec)},`);
  }
  o.push('};');
  o.push('');
  o.push('type Decl = [symbol: string, result: string | TypeObject, params: (string | TypeObject)[], split?: string[]];');
  o.push('/** Every bound function: its C symbol, koffi result and parameter types, after its C prototype. */');
  o.push('export const declarations = {');
  for (const p of plans) {
    o.push(`  // ${cProto(p.fn)} — ${p.fn.loc.file}:${p.fn.loc.line}`);
    const split = p.splitTypes ? `, [${p.splitTypes.map(q).join(', ')}]` : '';
    o.push(`  ${p.fn.name}: [${q(p.fn.symbol)}, ${retKoffi(tm, p.fn)}, [${p.koffiTypes.map((t) => (t.startsWith('T.') ? t : q(t))).join(', ')}]${split}] as Decl,`);
  }
  o.push('};');
  o.push('');
  o.push('/** The symbol each function is bound to when the per-thread default stream is chosen. */');
  o.push(`export const perThreadSymbols: Partial<Record<keyof typeof declarations, string>> = ${JSON.stringify(Object.fromEntries(perThread), null, 2).replace(/"/g, "'")};`);

  return o.join('\n') + '\n';
}

function retKoffi(tm: TypeMap, fn: FunctionModel): string {
  const r = resolve(fn.ret);
  if (r.k === 'ptr') return q('const char *');
  const v = tm.value(fn.ret);
  return v.k === 'record' ? `T.${v.rec.name}` : q(tm.koffi(v));
}

function koffiRecord(model: Model, tm: TypeMap, rec: RecordModel): string {
  const f = rec.fields.map((fl) => `${fl.name}: ${koffiField(model, tm, fl.type)}`).join(', ');
  return `koffi.${rec.kind === 'union' ? 'union' : 'struct'}({ ${f} })`;
}

function koffiField(model: Model, tm: TypeMap, t: CType): string {
  const r = resolve(t);
  if (r.k === 'array') {
    const e = resolve(r.of);
    return `koffi.array(${koffiField(model, tm, r.of)}, ${r.n}, '${e.k === 'prim' || e.k === 'enum' ? 'Typed' : 'Array'}')`;
  }
  const v = tm.value(t);
  if (v.k === 'record') return koffiRecord(model, tm, v.rec);
  return q(tm.koffi(v));
}

// ---------------------------------------------------------------------------------------------
// the facade

export function emitFacade(api: ApiConfig, model: Model, tm: TypeMap, plans: Plan[]): string {
  const { attrTables } = api.spec;
  const o = [banner(`tuple facade of the ${api.title}`)];
  o.push(`import * as M from '../ffi/marshal';`);
  o.push(`import type { Pointer } from '../ffi/marshal';`);
  o.push(`import * as K from '../ffi/scratch';`);
  o.push(`import * as KA from '../ffi/kernel-args';`);
  o.push(`import * as HC from '../ffi/host-callbacks';`);
  o.push(`import type { KernelArgs, KernelArgInput } from '../ffi/kernel-args';`);
  o.push(`import { W } from '../ffi/memory';`);
  o.push(`import { ${api.lib.fn} as L } from '${api.lib.module}';`);
  o.push(`import type { KoffiFunction } from '../ffi/binding';`);
  o.push(`import * as X from '../structs/support';`);
  o.push(`import * as S from '../structs/${api.id}';`);
  o.push(`import * as E from './enums';`);
  o.push(`import type * as H from './handles';`);
  o.push('');
  o.push('void W;');
  o.push('void HC;');
  o.push('');
  if (api.own?.facadePrelude) o.push(...api.own.facadePrelude, '');
  for (const [name, t] of Object.entries(attrTables)) {
    const e = [...model.enums.values()].find((x) => x.name === t.enumName || x.typedefs.includes(t.enumName));
    if (!e) throw new Error(`codegen: no enum ${t.enumName} for the attribute table ${name}`);
    const u64 = e.values.filter((v) => (t.types[v.name] ?? t.defaultType) === 'u64').map((v) => Number(v.value));
    o.push(`/** Which values of ${t.enumName} are 64-bit (the rest are int). */`);
    o.push(`const ${name}: X.AttrTable = { u64: new Set(${JSON.stringify(u64)}) };`);
  }
  o.push('');
  for (const p of plans) o.push(emitFunction(api, tm, p));
  if (api.symbolAliases) {
    const names = new Set(plans.map((p) => p.fn.name));
    for (const p of plans) {
      if (p.fn.symbol === p.fn.name || names.has(p.fn.symbol)) continue;
      o.push(`/** {@link ${p.fn.name}} under the name of the symbol it calls (\`#define ${p.fn.name} ${p.fn.symbol}\`). */\nexport const ${p.fn.symbol} = ${p.fn.name};\n`);
    }
  }
  return o.join('\n') + '\n';
}

function emitFunction(api: ApiConfig, tm: TypeMap, p: Plan): string {
  const st = `E.${api.status.enumTs}`;
  const fn = p.fn;
  const o: string[] = [];
  const isErr = tm.value(fn.ret).k === 'enum' && fn.retSpelled === api.status.type;
  const outTs = p.outs.map((x) => `${x.ts} | null`);
  const ret = `[${st}${outTs.length ? ', ' + outTs.join(', ') : ''}]`;
  o.push(`let f_${fn.name}: KoffiFunction | undefined;`);
  o.push(doc([api.spec.docs[fn.name] ?? fn.doc, ...(p.docSuffix ?? [])].join(' ')));
  o.push(`// ${cProto(fn)} — ${fn.loc.file}:${fn.loc.line}`);
  // Optional only where every parameter after it is too.
  const firstOptional = p.jsParams.findIndex((j, i) => j.optional && p.jsParams.slice(i).every((x) => x.optional));
  const params = p.jsParams.map((j, i) => (firstOptional >= 0 && i >= firstOptional ? `${j.name}?: ${j.ts}` : `${j.name}: ${j.ts}`)).join(', ');
  if (!isErr) {
    // cudaGetErrorName, cudaGetErrorString, cudaCreateChannelDesc: values, not statuses.
    const r = resolve(fn.ret);
    const rrec = r.k === 'record' ? (tm.value(fn.ret) as { rec: RecordModel }).rec : null;
    const conv = rrec ? (rrec.size > 16 ? `X.fromBytes(S.${rrec.name}, v.bytes)` : `new S.${rrec.name}(v)`) : '(v as string | null) ?? \'\'';
    const ts = r.k === 'record' ? `S.${(tm.value(fn.ret) as { rec: RecordModel }).rec.name}` : 'string';
    o.push(`export function ${fn.name}(${params}): [${st}, ${ts}] {`);
    for (const s of [...p.pre, ...p.late]) o.push(`  ${s}`);
    o.push(`  const v = (f_${fn.name} ??= L.bind('${fn.name}'))(${p.args.join(', ')});`);
    o.push(`  return [${st}.${api.status.success}, ${conv}];`);
    o.push('}');
    return o.join('\n') + '\n';
  }
  o.push(`export function ${fn.name}(${params}): ${ret} {`);
  for (const s of [...p.pre, ...p.late]) o.push(`  ${s}`);
  const call = (args: string[]) => `(f_${fn.name} ??= L.bind('${fn.name}'))(${args.join(', ')})`;
  if (p.splitTypes) o.push(`  const err = (L.splitSmallStructs ? ${call(p.splitArgs)} : ${call(p.args)}) as ${st};`);
  else o.push(`  const err = ${call(p.args)} as ${st};`);
  for (const s of p.after) o.push(`  ${s}`);
  if (p.outs.length) {
    const cs = api.spec.countStatus;
    if (cs !== undefined && p.outs.some((x) => x.countSlot !== undefined)) {
      // The size needed comes back with the status that says the array was too small.
      o.push(`  if (err === ${cs}) return [err, ${p.outs.map((x) => (x.countSlot !== undefined ? `K.readSize(${x.countSlot})` : 'null')).join(', ')}];`);
    }
    const also = (api.status.withOutputs ?? []).map((n) => ` && err !== ${st}.${n}`).join('');
    o.push(`  if (err !== 0${also}) return [err${', null'.repeat(p.outs.length)}];`);
    for (const s of p.post) o.push(`  ${s}`);
    o.push(`  return [err, ${p.outs.map((x) => x.expr).join(', ')}];`);
  } else {
    o.push('  return [err];');
  }
  o.push('}');
  return o.join('\n') + '\n';
}

export type { Plan };
