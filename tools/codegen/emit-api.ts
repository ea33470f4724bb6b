// Writes an API's enums, constants, handles, koffi declarations and tuple facade.
import { type CType, resolve } from './ctype';
import type { FunctionModel, Model, ParamModel, RecordModel } from './model';
import { TypeMap, isDevicePtrTypedef, type ValueKind } from './types';
import type { ParamSpec } from './apis';
import { SLOTS } from '../../src/ffi/scratch';
import type { ApiConfig } from './apis';
import { banner, doc, docBlock, q, usedImports } from './util';
import { scalarIO, tsQ } from './emit-structs';
import { EXTENT_HELPERS, type ExtentKind } from './extents';

// ---------------------------------------------------------------------------------------------
// enums

export function emitEnums(api: ApiConfig, model: Model, typeAliases: [string, string][], from: string): string {
  const o = [banner(`enums of the ${api.title}`, from)];
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
      if (t !== e.name)
        o.push(`/** Alias of {@link ${e.name}} (C typedef \`${t}\`): its members are types too. */\nexport import ${t} = ${e.name};`);
    }
    o.push('');
  }
  for (const [alias, target] of typeAliases) {
    o.push(
      `/** Alias of {@link ${target}} (\`#define ${alias} ${target}\`). */\nexport const ${alias} = ${target};\nexport type ${alias} = ${target};`,
    );
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

export function collectConstants(
  model: Model,
  tm: TypeMap,
  api?: ApiConfig,
): { constants: ConstantModel[]; enumAliases: [string, string][]; structAliases: [string, string][] } {
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
      if (en)
        constants.push({ name: m.name, expr: `E.${en.enumName}.${m.body}`, value: String(en.value), kind: 'enumerator', file: m.file });
      else if (enumNames.has(m.body)) enumAliases.push([m.name, m.body]);
      else if (model.typedefs.has(m.body) || model.records.has(m.body)) structAliases.push([m.name, m.body]);
    }
  }
  return { constants, enumAliases, structAliases };
}

export function emitConstants(api: ApiConfig, constants: ConstantModel[], from: string): string {
  const body = constants.map((c) => `/** \`#define ${c.name}\` (${c.file}) */\nexport const ${c.name} = ${c.expr};`);
  const imports = usedImports(body.join('\n'), [`import * as E from './enums.gen';`, `import type * as H from './handles.gen';`]);
  // A header without constants still gives a module (the index re-exports it).
  if (!body.length) body.push('export {};');
  return [banner(`#define constants of the ${api.title}`, from), ...imports, '', ...body].join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// handles

export function emitHandles(api: ApiConfig, model: Model, tm: TypeMap, from: string): string {
  const o = [banner(`handle types of the ${api.title}`, from), `import { handleFrom } from '../ffi/marshal';`, ''];
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
    if (name !== b)
      o.push(`/** Alias of {@link ${b}} (C typedef \`${name}\`). */\nexport type ${name} = ${b};\nexport const ${name} = ${b};`);
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
  /** Each C parameter with the index of the first output it gave (for the doc's @returns). */
  outStarts: [param: string, start: number][];
  /** Every pointer C may write through, with the rule that bounds it (extents.ts). */
  extentRules: ExtentRow[];
  /** Writable pointers without a rule: the generator fails on any. */
  missingExtents: string[];
  /**
   * Caller's buffers checked against an extent, for the fuzz test: the bytes as JS over the JS
   * parameter names (or the query that says them) and the bytes of one element.
   */
  checked: Record<string, CheckedExtent>;
}

export interface CheckedExtent {
  bytes?: string;
  query?: { fn: string; args: string[] };
  unit: number;
}

export interface ExtentRow {
  param: string;
  c: string;
  kind: ExtentKind;
  rule: string;
}

/** C parameter names that would shadow a JS keyword or a name the generated code uses. */
const taken = new Set([
  'function',
  'default',
  'new',
  'delete',
  'in',
  'var',
  'arguments',
  'eval',
  'M',
  'K',
  'X',
  'S',
  'E',
  'H',
  'W',
  'err',
  'koffi',
  'L',
  'KA',
  'HC',
]);
const jsName = (p: string) => (taken.has(p) ? `${p}_` : p);

export function planFunction(api: ApiConfig, model: Model, tm: TypeMap, fn: FunctionModel): Plan {
  const { paramSpecs, extents } = api.spec;
  // The 8-byte words of each small struct passed by value, by the local that holds the struct.
  const words = new Map<string, string[]>();
  const plan: Plan = {
    fn,
    jsParams: [],
    pre: [],
    late: [],
    args: [],
    koffiTypes: [],
    splitTypes: null,
    splitArgs: [],
    outs: [],
    post: [],
    after: [],
    notes: [],
    extentRules: [],
    missingExtents: [],
    checked: {},
    outStarts: [],
  };
  const specs = paramSpecs[fn.name] ?? {};
  const ext = extents[fn.name] ?? {};
  let slotN = 0;
  const F = fn.name;
  const local = (p: ParamModel) => `a_${p.name}`;
  const isCountOfOutArray = new Set(
    Object.values(specs)
      .filter((s): s is Extract<ParamSpec, { k: 'outArray' }> => s.k === 'outArray' && s.countMode === 'inout')
      .map((s) => s.count),
  );
  const borrowedCounts = new Set(
    Object.values(specs)
      .filter((s): s is Extract<ParamSpec, { k: 'borrowedArray' }> => s.k === 'borrowedArray')
      .map((s) => s.count),
  );
  const countSlot = new Map<string, number>();
  const countChecked = new Set<string>();
  // A JS host function passes a token as its user data in place of the caller's.
  let hostFnReg: string | undefined;

  for (const [name, s] of Object.entries(specs)) {
    if (!fn.params.some((p) => p.name === name)) throw new Error(`codegen: ${F} has no parameter ${name} (spec)`);
    if ('count' in s && !fn.params.some((p) => p.name === s.count)) throw new Error(`codegen: ${F} has no count ${s.count}`);
  }
  const queried = api.spec.queried?.[F] ?? {};
  const elementExtents = api.spec.elementExtents?.[F] ?? {};
  const notWritten = api.spec.notWritten?.[F] ?? {};
  for (const [table, t] of Object.entries({ extents: ext, queried, elementExtents, notWritten })) {
    for (const name of Object.keys(t))
      if (!fn.params.some((p) => p.name === name)) throw new Error(`codegen: ${F} has no parameter ${name} (${table})`);
  }
  const rules = new Map<string, ExtentRow>();
  /** Rows for the pointers inside arrays of pointers (`void **data`: what C does through data[i]). */
  const elementRows: ExtentRow[] = [];
  /** Records how far C may write through parameter `p` (only writable pointers are reported). */
  const rule = (p: ParamModel, kind: ExtentKind, text: string) => {
    if (isWritablePointer(tm, p)) rules.set(p.name, { param: p.name, c: p.spelled, kind, rule: text });
  };
  /** A value C writes into a scratch slot: the slot must hold the pointed-to type. */
  const slotRule = (p: ParamModel, v: ValueKind | null, what = 'a scratch slot') => {
    const n = v && v.k !== 'void' ? tm.sizeOf(v) : 8;
    if (n > 8) throw new Error(`codegen: ${F}(${p.name}) writes ${n} bytes, more than a scratch slot`);
    rule(p, 'type', `${what} (8 bytes) for the pointed-to ${n}-byte value`);
  };

  // Host or device memory, with the bytes a host buffer must hold where the spec knows them.
  const pointerParam = (p: ParamModel) => {
    const L = local(p);
    addJs(p, pointerTs(p.name));
    plan.pre.push(`const ${L} = M.pointer(${jsName(p.name)}, '${F}', '${p.name}');`);
    const e = ext[p.name];
    const qr = queried[p.name];
    if (e !== undefined) {
      const { bytes, what } = typeof e === 'string' ? { bytes: e, what: e } : e;
      // Only host memory has an extent to check: an address or NULL skips the call (about 2 ns each,
      // two per copy, on the hot path of cudaMemcpyAsync).
      plan.late.push(
        `if (typeof ${L} === 'object' && ${L} !== null) M.checkExtent(${L}, ${extentExpr(bytes, fn, model)}, '${F}', '${p.name}', ${q(what)});`,
      );
      rule(p, /\*|sizeof/.test(bytes) ? 'count' : 'size', `\`${bytes}\` bytes, checked`);
      const unit = /\bsizeof\(/.test(bytes) ? Number(/\* (\d+)/.exec(extentExpr(bytes, fn, model))?.[1] ?? 1) : 1;
      plan.checked[jsName(p.name)] = { bytes: extentExpr(bytes, fn, model, jsName), unit };
    } else if (qr) {
      const args = qr.args.map((a) => `${local({ name: a } as ParamModel)} as any`).join(', ');
      plan.late.push(`X.needBytes(${L}, () => ${qr.query}(${args}), ${qr.unit ?? 1}, '${F}', '${p.name}', '${qr.query}');`);
      rule(p, 'query', `${qr.unit && qr.unit > 1 ? `${qr.unit} × ` : ''}what \`${qr.query}\` reports, checked`);
      plan.checked[jsName(p.name)] = { query: { fn: qr.query, args: qr.args.map(jsName) }, unit: qr.unit ?? 1 };
    } else if (notWritten[p.name]) {
      rule(p, 'not written', notWritten[p.name]);
    }
    plan.args.push(L);
    plan.koffiTypes.push('void *');
  };
  const addJs = (p: ParamModel, ts: string) =>
    plan.jsParams.push({ name: jsName(p.name), ts, doc: fn.paramDocs[p.name] ?? '', c: resolvedSpelling(p.type) });

  for (const p of fn.params) {
    plan.outStarts.push([p.name, plan.outs.length]);
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
      plan.pre.push(
        `const ${L} = M.size(${J}, '${F}', '${p.name}');`,
        `K.U32[${2 * i}] = ${L} % 4294967296; K.U32[${2 * i + 1}] = Math.floor(${L} / 4294967296);`,
      );
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.post.push(`const n_${p.name} = K.readSize(${i});`);
      plan.outs.push({ expr: `n_${p.name}`, ts: 'number', countSlot: i });
      plan.notes.push(`${p.name}: in/out count`);
      slotRule(p, tm.value((r as { to: CType }).to));
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
      plan.late.push(
        `const ${L} = X.packStrings(${J}, ${local({ name: spec.count } as ParamModel)}, '${F}', '${p.name}', ${!!spec.nullable});`,
      );
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.notes.push(`${p.name}: array of ${spec.count} strings`);
      rule(p, 'count', `${spec.count} pointers, packed by the binding`);
      continue;
    }
    if (spec?.k === 'inArray') {
      const elemT = (r as { to: CType }).to;
      const ek = tm.value(elemT);
      const esz = tm.sizeOf(ek);
      const elemTs = ek.k === 'record' ? `S.${ek.rec.name} | S.${ek.rec.name}Init` : ek.k === 'addr' ? 'Pointer' : tsQ(tm, tm.tsIn(ek));
      addJs(p, `(${elemTs})[] | ArrayBufferView${spec.nullable ? ' | null' : ''}`);
      const writer =
        ek.k === 'record'
          ? `(dv, at, x, n) => X.packStruct(dv, at, x, S.${ek.rec.name}, n)`
          : ek.k === 'addr'
            ? `(dv, at, x, n) => dv.setBigUint64(at, M.addressOf(M.pointer(x, '${F}', n)), true)`
            : `(dv, at, x, n) => ${scalarIO(ek).write}(dv, at, x, n)`;
      plan.late.push(
        `const ${L} = X.packArray(${J}, ${local({ name: spec.count } as ParamModel)}, ${esz}, '${F}', '${p.name}', ${!!spec.nullable}, ${writer});`,
      );
      // A typed array the caller packed is checked against count × element size.
      plan.checked[J] = { bytes: `${jsName(spec.count)} * ${esz}`, unit: esz };
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.notes.push(`${p.name}: array of ${spec.count}`);
      const each = elementExtents[p.name];
      if (each) {
        // An array of pointers C writes through: each host buffer in it is checked.
        const expr = extentExpr(each, fn, model, (n) => jsName(n));
        plan.late.push(`X.checkEach(${J}, ${local({ name: spec.count } as ParamModel)}, (i) => ${expr}, '${F}', '${p.name}', ${q(each)});`);
        const text = `${spec.count} × ${esz} bytes packed by the binding; element i holds \`${each}\` bytes, checked`;
        if (isWritablePointer(tm, p)) rule(p, 'elements', text);
        else elementRows.push({ param: `${p.name}[i]`, c: p.spelled, kind: 'elements', rule: text });
      } else {
        rule(p, 'count', `${spec.count} × ${esz} bytes, packed by the binding or checked`);
        const er = resolve(elemT);
        if (er.k === 'ptr' && !er.constTo && ek.k === 'addr') {
          // An array of data pointers: what C does through each needs a rule of its own.
          if (notWritten[p.name]) elementRows.push({ param: `${p.name}[i]`, c: p.spelled, kind: 'not written', rule: notWritten[p.name] });
          else plan.missingExtents.push(`${F}(${p.name}[i]: the elements of ${p.spelled})`);
        }
      }
      continue;
    }
    if (spec?.k === 'inoutArray') {
      // Structs C reads and writes (NVML's field values): packed from the caller's, read back after.
      const rec = (tm.value((r as { to: CType }).to) as { rec: RecordModel }).rec;
      const cnt = local({ name: spec.count } as ParamModel);
      addJs(p, `(S.${rec.name} | S.${rec.name}Init)[]`);
      plan.late.push(
        `const ${L} = X.packArray(${J}, ${cnt}, ${rec.size}, '${F}', '${p.name}', false, (dv, at, x, n) => X.packStruct(dv, at, x, S.${rec.name}, n));`,
      );
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `X.readStructs(${L}, ${cnt}, S.${rec.name})`, ts: `S.${rec.name}[]` });
      plan.notes.push(`${p.name}: in/out array of ${spec.count}`);
      rule(p, 'count', `${spec.count} × ${rec.size} bytes, packed by the binding`);
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
      const read =
        ek.k === 'record'
          ? `X.readStructs(${L}, ${n}, S.${ek.rec.name})`
          : `X.readArray(${L}, ${n}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`;
      plan.outs.push({ expr: read, ts: `${ek.k === 'record' ? 'S.' + ek.rec.name : tsQ(tm, tm.tsOut(ek))}[]` });
      plan.notes.push(`${p.name}: output array of ${spec.count}`);
      rule(p, 'count', `${spec.count} × ${esz} bytes, allocated by the binding`);
      continue;
    }
    if (spec?.k === 'queriedArray') {
      // As long as the query says (nvrtcGetSupportedArchs after nvrtcGetNumSupportedArchs): the
      // binding asks, allocates and returns the values, as cuda-python does.
      const ek = tm.value((r as { to: CType }).to);
      const esz = tm.sizeOf(ek);
      const args = spec.args.map((a) => `${local({ name: a } as ParamModel)} as any`).join(', ');
      plan.late.push(`const [q_${p.name}, n_${p.name}] = ${spec.query}(${args});`);
      plan.late.push(`if (q_${p.name} !== 0) return [q_${p.name}@NULLS];`);
      plan.late.push(`const ${L} = M.bytes(Math.max(1, n_${p.name} * ${esz}));`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({
        expr: `X.readArray(${L}, n_${p.name}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`,
        ts: `${tsQ(tm, tm.tsOut(ek))}[]`,
      });
      plan.notes.push(`${p.name}: array as long as ${spec.query} says, returned`);
      rule(p, 'query', `what \`${spec.query}\` reports × ${esz} bytes, allocated by the binding`);
      continue;
    }
    if (spec?.k === 'borrowedArray') {
      const i = slot();
      const inner = resolve((r as { to: CType }).to) as { to: CType };
      const ek = tm.value(inner.to);
      const esz = tm.sizeOf(ek);
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      const read =
        ek.k === 'record'
          ? `X.readStructs(X.borrowed(K.U64[${i}], n_${spec.count} * ${esz}), n_${spec.count}, S.${ek.rec.name})`
          : `X.readArray(X.borrowed(K.U64[${i}], n_${spec.count} * ${esz}), n_${spec.count}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`;
      plan.outs.push({ expr: read, ts: `${ek.k === 'record' ? 'S.' + ek.rec.name : tsQ(tm, tm.tsOut(ek))}[]` });
      plan.notes.push(`${p.name}: array owned by CUDA, copied out`);
      slotRule(p, null, 'a scratch slot for the address');
      continue;
    }
    if (borrowedCounts.has(p.name)) {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.post.push(`const n_${p.name} = K.readSize(${i});`);
      plan.outs.push({ expr: `n_${p.name}`, ts: 'number' });
      slotRule(p, tm.value((r as { to: CType }).to));
      continue;
    }
    if (spec?.k === 'attr') {
      const i = slot();
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
      rule(p, 'type', `a scratch slot (8 bytes, in a 4 KiB page of the binding's) for the attribute's C type`);
      continue;
    }
    if (spec?.k === 'rangeAttr') {
      plan.late.push(`const ${L} = M.bytes(Math.max(4, ${local({ name: spec.size } as ParamModel)}));`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({
        expr: `X.rangeAttrOut(${L}, ${local({ name: spec.attr } as ParamModel)}, ${local({ name: spec.size } as ParamModel)})`,
        ts: 'number | number[]',
      });
      plan.notes.push(`${p.name}: value typed by ${spec.attr}`);
      rule(p, 'size', `\`${spec.size}\` bytes (at least 4), allocated by the binding`);
      continue;
    }
    if (spec?.k === 'outString' && spec.size !== undefined) {
      // A buffer of a size the header fixes (NVML_GSP_FIRMWARE_VERSION_BUF_SIZE).
      plan.late.push(`const ${L} = M.bytes(${spec.size});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `M.cString(${L})`, ts: 'string' });
      plan.notes.push(`${p.name}: output string of ${spec.size} bytes`);
      rule(p, 'size', `${spec.size} bytes (the header's size), allocated by the binding`);
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
      rule(p, 'size', `\`${spec.len}\` bytes, allocated by the binding`);
      continue;
    }
    if (spec?.k === 'outBytes') {
      plan.late.push(`const ${L} = M.bytes(${spec.size});`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: L, ts: 'Uint8Array' });
      rule(p, 'type', `${spec.size} bytes, allocated by the binding`);
      continue;
    }
    if (spec?.k === 'outAddr') {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `K.U64[${i}]`, ts: 'bigint' });
      slotRule(p, null, 'a scratch slot for the address');
      continue;
    }
    if (spec?.k === 'hostFn') {
      // A JS function (run on the JS thread, see ffi/host-callbacks.ts) or a native pointer.
      const sig = spec.kind === 'hostFn' ? '(userData: bigint) => void' : '(stream: bigint, status: number, userData: bigint) => void';
      addJs(p, `(${sig}) | bigint | null`);
      plan.late.push(
        `const r_${p.name} = HC.registerHostFn(${J}, a_userData, ${local({ name: spec.stream } as ParamModel)}, '${spec.kind}', '${F}', '${p.name}');`,
      );
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
      rule(p, 'not written', 'kernel arguments: C reads one value per kernel parameter, packed by the binding');
      continue;
    }
    if (spec?.k === 'sizedOut') {
      // Host memory checked against the size call, or null: the call sizes and allocates it.
      const size = `(${spec.sizeFn} as (...a: unknown[]) => Res<[number]>)(${spec.args.map((a) => local({ name: a } as ParamModel)).join(', ')})`;
      addJs(p, 'Pointer');
      plan.pre.push(`const ${L} = ${J} === null ? null : M.pointer(${J}, '${F}', '${p.name}');`);
      // C gets at least one byte (koffi passes an empty Buffer as NULL); the caller gets n of them.
      plan.late.push(`let o_${p.name}: Buffer | null = null;`);
      plan.late.push(`let c_${p.name}: Buffer | null = null;`);
      plan.late.push(
        `if (${L} === null) { const [e, n] = ${size}; if (e !== 0) return [e@NULLS]; c_${p.name} = Buffer.alloc(Math.max(n, 1)); o_${p.name} = c_${p.name}.subarray(0, n); }`,
      );
      plan.late.push(`else X.needBytes(${L}, () => ${size}, 1, '${F}', '${p.name}', '${spec.sizeFn}');`);
      plan.args.push(`c_${p.name} ?? ${L}`);
      plan.koffiTypes.push('void *');
      // The caller's own memory comes back as a Buffer over it.
      // null when the caller passed an address rather than host memory.
      plan.outs.push({ expr: `o_${p.name} ?? X.hostBuffer(${J})`, ts: 'Buffer | null' });
      plan.notes.push(`${p.name}: as many bytes as ${spec.sizeFn} reports; null returns a Buffer of them`);
      rule(p, 'query', `what \`${spec.sizeFn}\` reports: the caller's buffer checked, or allocated by the binding`);
      (plan.docSuffix ??= []).push(
        `\`${p.name}\`: a buffer of the size ${spec.sizeFn} reports, or null to get a new Buffer of that size back.`,
      );
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
      slotRule(p, ek);
      continue;
    }
    if (spec?.k === 'inStruct' || (r.k === 'ptr' && !tm.handle(p.type) && isRecordPtr(model, r) && r.constTo)) {
      const rec = model.records.get((resolve((r as { to: CType }).to) as { key: string }).key)!;
      addJs(p, `S.${rec.name} | S.${rec.name}Init | null`);
      plan.pre.push(`const ${L} = X.structArg(${J}, S.${rec.name}, '${F}', '${p.name}');`);
      plan.args.push(L);
      plan.koffiTypes.push('void *');
      rule(p, 'type', `the struct's own ${rec.size} bytes (an instance of S.${rec.name})`);
      continue;
    }

    // Defaults, from the C type alone.
    const v = tm.value(p.type);
    if (r.k !== 'ptr' || v.k === 'handle' || v.k === 'fnptr') {
      if (v.k === 'record') {
        addJs(p, `S.${v.rec.name} | S.${v.rec.name}Init`);
        plan.pre.push(
          v.rec.size > 16
            ? `const ${L} = { bytes: X.byValue(${J}, S.${v.rec.name}, '${F}', '${p.name}')._u8 };`
            : `const ${L} = X.byValue(${J}, S.${v.rec.name}, '${F}', '${p.name}');`,
        );
      } else {
        addJs(p, isDevicePtrTypedef(p.type) ? 'DevicePointer | number' : tsQ(tm, tm.tsIn(v)));
        plan.pre.push(`const ${L} = ${tm.check(v, J, F, p.name)};`);
      }
      plan.args.push(L);
      plan.koffiTypes.push(tm.koffi(v));
      if (v.k === 'record' && v.rec.size <= 16 && integerOnly(tm, v.rec)) {
        // Passed in integer registers, eightbyte by eightbyte: koffi takes plain integers far
        // faster than a struct (about 0.1 µs against 0.9 µs a call).
        const n = Math.ceil(v.rec.size / 8);
        plan.splitTypes ??= []; // filled in below, once every argument is known
        // A whole word, or a last word of 4 bytes, has a reader of its own (no size test per call).
        words.set(
          L,
          Array.from({ length: n }, (_, i) => {
            const bytes = Math.min(8, v.rec.size - 8 * i);
            return bytes === 8 ? `X.word8(${L}, ${8 * i})` : bytes === 4 ? `X.word4(${L}, ${8 * i})` : `X.eightbyte(${L}, ${i})`;
          }),
        );
        plan.notes.push(`${p.name}: passed as ${n} integer register${n > 1 ? 's' : ''} on x86-64 and AArch64`);
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
      plan.outs.push({ expr: `X.readCString(K.U64[${i}])`, ts: 'string | null' });
      slotRule(p, null, 'a scratch slot for the address');
      continue;
    }
    if (to.k === 'ptr' && !tm.handle(r.to)) {
      // void ** and the like: an output address.
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: `K.U64[${i}]`, ts: 'bigint' });
      slotRule(p, null, 'a scratch slot for the address');
      continue;
    }
    if (to.k === 'record' && !r.constTo && toV?.k === 'record' && api.spec.structPointersInOut) {
      // In/out: the caller's struct (or its fields) goes in, and comes back; a new one otherwise.
      const rec = toV.rec;
      plan.jsParams.push({
        name: J,
        ts: `S.${rec.name} | S.${rec.name}Init | null`,
        doc: fn.paramDocs[p.name] ?? '',
        c: resolvedSpelling(p.type),
        optional: true,
      });
      plan.pre.push(`const ${L} = X.inoutStruct(${J}, S.${rec.name}, '${F}', '${p.name}');`);
      plan.args.push(`${L}._u8`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: L, ts: `S.${rec.name}` });
      plan.notes.push(`${p.name}: in/out ${rec.name}`);
      rule(p, 'type', `the struct's own ${rec.size} bytes (an instance of S.${rec.name})`);
      continue;
    }
    if (to.k === 'record' && !r.constTo && toV?.k === 'record') {
      const rec = toV.rec;
      plan.late.push(`const ${L} = new S.${rec.name}();`);
      plan.args.push(`${L}._u8`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: L, ts: `S.${rec.name}` });
      rule(p, 'type', `a new S.${rec.name} (${rec.size} bytes)`);
      continue;
    }
    if (toV && toV.k !== 'record' && toV.k !== 'void' && !r.constTo) {
      const i = slot();
      plan.args.push(`K.slot[${i}]`);
      plan.koffiTypes.push('void *');
      plan.outs.push({ expr: slotRead(toV, i), ts: tsQ(tm, tm.tsOut(toV)) });
      slotRule(p, toV);
      continue;
    }
    // Anything else is passed through as a pointer.
    pointerParam(p);
    plan.notes.push(`${p.name}: raw pointer`);
  }
  for (const p of fn.params) {
    const row = rules.get(p.name);
    if (row) plan.extentRules.push(row);
    else if (isWritablePointer(tm, p)) plan.missingExtents.push(`${F}(${p.name}: ${p.spelled})`);
  }
  plan.extentRules.push(...elementRows);
  if (hostFnReg) plan.args = plan.args.map((a) => (a === 'a_userData' ? `${hostFnReg}.userData` : a));
  for (const c of api.spec.checks?.[fn.name] ?? []) plan.late.push(c);
  if (plan.splitTypes) {
    // Rebuild the split form from the whole list so every other argument keeps its place.
    const types: string[] = [];
    const args: string[] = [];
    plan.args.forEach((a, i) => {
      const split = words.get(a);
      if (split) {
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

/** `void *` parameters that only ever hold device memory, by their C names. */
const DEVICE_POINTER_NAMES = new Set(['devPtr', 'dptr']);
/** `void *` parameters a copy reads or writes: host or device memory, never a handle. */
const MEMORY_NAMES = new Set(['dst', 'src']);

/** The TypeScript type of a `void *` parameter: device memory, memory, or any pointer (a handle too). */
function pointerTs(name: string): string {
  if (DEVICE_POINTER_NAMES.has(name)) return 'DevicePointer | null';
  if (MEMORY_NAMES.has(name)) return 'Memory';
  return 'Pointer';
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

/**
 * An extent expression as JS over the call's checked arguments (`a_<param>`, or `arg(name)`):
 * `sizeof(T)` becomes the size of struct T, helpers get their module.
 */
function extentExpr(e: string, fn: FunctionModel, model: Model, arg: (name: string) => string = (n) => `a_${n}`): string {
  let s = e.replace(/\bsizeof\((\w+)\)/g, (_, t: string) => {
    const rec = [...model.records.values()].find((r) => r.name === t || r.cName === t || r.typedefs.includes(t));
    if (!rec || rec.opaque) throw new Error(`codegen: ${fn.name}: sizeof(${t}) names no struct with a layout`);
    return String(rec.size);
  });
  s = s.replace(/\b(\w+)\(/g, (m, h: string) => (EXTENT_HELPERS[h] ? `${EXTENT_HELPERS[h]}(` : m));
  for (const p of fn.params) s = s.replace(new RegExp(`(?<![.\\w])${p.name}\\b`, 'g'), arg(p.name));
  return s;
}

/** A pointer C may write through: to non-const data, not an opaque handle or a function. */
export function isWritablePointer(tm: TypeMap, p: ParamModel): boolean {
  const r = resolve(p.type);
  if (r.k !== 'ptr' || r.constTo || tm.handle(p.type)) return false;
  const v = tm.value(p.type);
  return v.k !== 'fnptr' && resolve(r.to).k !== 'fn';
}

function slotWrite(v: ValueKind, i: number, value: string): string {
  switch (v.k) {
    case 'int':
    case 'enum':
      if (v.k === 'int' && v.bits !== 32)
        return `K.DV.set${v.signed ? 'Int' : 'Uint'}${v.bits}(${8 * i}, ${value}${v.bits > 8 ? ', true' : ''});`;
      return `K.${v.signed ? 'I32' : 'U32'}[${2 * i}] = ${value};`;
    case 'size':
      return `{ const x = ${value}; K.U32[${2 * i}] = x % 4294967296; K.U32[${2 * i + 1}] = Math.floor(x / 4294967296); }`;
    case 'i64':
      return `K.I64[${i}] = BigInt(${value});`;
    case 'u64':
      return `K.U64[${i}] = BigInt(${value});`;
    case 'float':
      return `K.F32[${2 * i}] = ${value};`;
    case 'double':
      return `K.F64[${i}] = ${value};`;
    case 'bool':
      return `K.DV.setUint8(${8 * i}, ${value} ? 1 : 0);`;
    case 'handle':
    case 'addr':
    case 'fnptr':
      return `K.U64[${i}] = ${value} ?? 0n;`;
    default:
      throw new Error(`codegen: no slot write for ${v.k}`);
  }
}

function slotRead(v: ValueKind, i: number): string {
  switch (v.k) {
    case 'int':
      if (v.bits === 32) return v.signed ? `K.I32[${2 * i}]` : `K.U32[${2 * i}]`;
      return `K.DV.get${v.signed ? 'Int' : 'Uint'}${v.bits}(${8 * i}${v.bits > 8 ? ', true' : ''})`;
    case 'enum':
      return `K.${v.signed ? 'I32' : 'U32'}[${2 * i}] as E.${v.ts}`;
    case 'size':
      return `K.readSize(${i})`;
    case 'i64':
      return `K.I64[${i}]`;
    case 'u64':
      return `K.U64[${i}]`;
    case 'float':
      return `K.F32[${2 * i}]`;
    case 'double':
      return `K.F64[${i}]`;
    case 'bool':
      return `K.DV.getUint8(${8 * i}) !== 0`;
    case 'handle':
      return `K.U64[${i}] as H.${v.ts}`;
    case 'addr':
    case 'fnptr':
      return `K.U64[${i}]`;
    default:
      throw new Error(`codegen: no slot read for ${v.k}`);
  }
}

// ---------------------------------------------------------------------------------------------
// koffi declarations

export function cProto(fn: FunctionModel): string {
  return `${fn.retSpelled} ${fn.symbol}(${fn.params.map((p) => `${p.spelled.replace(/ \*/g, ' *')} ${p.name}`).join(', ') || 'void'})`;
}

export function emitFfi(
  api: ApiConfig,
  model: Model,
  tm: TypeMap,
  plans: Plan[],
  perThread: Map<string, string>,
  byValue: RecordModel[],
  from: string,
): string {
  const o = [banner(`koffi declarations of ${api.libLabel}`, from), `import koffi, { type TypeObject } from 'koffi';`, ''];
  o.push('/** koffi types of the structs passed or returned by value. */');
  o.push('export const T = {');
  // Larger than 16 bytes, a struct goes in memory on x86-64 and aarch64 alike: its bytes are passed
  // as they are. Smaller ones are classified by their fields, so koffi gets the real fields.
  for (const rec of byValue) {
    o.push(
      `  ${rec.name}: ${rec.size > 16 ? `koffi.struct({ bytes: [${rec.align}, koffi.array('uint8_t', ${rec.size}, 'Typed')] })` : koffiRecord(model, tm, rec)},`,
    );
  }
  o.push('};');
  o.push('');
  o.push('type Decl = [symbol: string, result: string | TypeObject, params: (string | TypeObject)[], split?: string[]];');
  o.push('/** Every bound function: its C symbol, koffi result and parameter types, after its C prototype. */');
  o.push('export const declarations = {');
  for (const p of plans) {
    o.push(`  // ${cProto(p.fn)} — ${p.fn.loc.file}:${p.fn.loc.line}`);
    const split = p.splitTypes ? `, [${p.splitTypes.map(q).join(', ')}]` : '';
    o.push(
      `  ${p.fn.name}: [${q(p.fn.symbol)}, ${retKoffi(tm, p.fn)}, [${p.koffiTypes.map((t) => (t.startsWith('T.') ? t : q(t))).join(', ')}]${split}] as Decl,`,
    );
  }
  o.push('};');
  o.push('');
  o.push('/** The symbol each function is bound to when the per-thread default stream is chosen. */');
  o.push(
    `export const perThreadSymbols: Partial<Record<keyof typeof declarations, string>> = ${JSON.stringify(Object.fromEntries(perThread), null, 2).replace(/"/g, "'")};`,
  );

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

export function emitFacade(api: ApiConfig, model: Model, tm: TypeMap, plans: Plan[], from: string): string {
  const { attrTables } = api.spec;
  const o: string[] = [];
  const st = `E.${api.status.enumTs}`;
  const ok = [api.status.success, ...(api.status.withOutputs ?? [])].map((n) => `${st}.${n}`).join(' | ');
  o.push(`/** The statuses with which a call returns its outputs. */`);
  o.push(`export type ${api.status.enumTs}Ok = ${ok};`);
  o.push(`/** What a call with outputs returns: {@link ${api.status.enumTs}Ok} with the outputs, or another status with nulls. */`);
  o.push(`type Res<T extends unknown[]> = Result<${api.status.enumTs}Ok, Exclude<${st}, ${api.status.enumTs}Ok>, T>;`);
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
      o.push(
        `/** {@link ${p.fn.name}} under the name of the symbol it calls (\`#define ${p.fn.name} ${p.fn.symbol}\`). */\nexport const ${p.fn.symbol} = ${p.fn.name};\n`,
      );
    }
  }
  const imports = usedImports(o.join('\n'), [
    `import * as M from '../ffi/marshal';`,
    `import type { Pointer, DevicePointer, Memory } from '../ffi/marshal';`,
    `import * as K from '../ffi/scratch';`,
    `import * as KA from '../ffi/kernel-args';`,
    `import * as HC from '../ffi/host-callbacks';`,
    `import type { KernelArgs, KernelArgInput } from '../ffi/kernel-args';`,
    `import { W } from '../ffi/memory';`,
    `import { ${api.lib.fn} as L } from '${api.lib.module}';`,
    `import type { KoffiFunction } from '../ffi/binding';`,
    `import * as X from '../structs/support';`,
    `import * as S from '../structs/${api.id}.gen';`,
    `import * as E from './enums.gen';`,
    `import type * as H from './handles.gen';`,
    `import type { Result } from '../ffi/result';`,
  ]);
  return [banner(`tuple facade of the ${api.title}`, from), ...imports, '', ...o].join('\n') + '\n';
}

/** The C parameter whose output is the k-th element after the status. */
function outParam(p: Plan, k: number): string {
  let owner = '';
  for (const [name, start] of p.outStarts) if (start <= k) owner = name;
  return owner;
}

/** The first sentence of a header's text. */
const firstSentence = (t: string) => t.split(/(?<=[.;])\s/)[0].replace(/[.;]$/, '');

/**
 * A function's TSDoc: the header's summary, `@param` for each JS parameter and `@returns` naming the
 * tuple's elements, from the header's \param and \return (first sentence of each).
 */
function functionDoc(api: ApiConfig, tm: TypeMap, p: Plan, isErr: boolean): string {
  const fn = p.fn;
  const lines = [[api.spec.docs[fn.name] ?? fn.doc, ...(p.docSuffix ?? [])].join(' ').trim() || '(undocumented in the header)'];
  const spelled = new Map(fn.params.map((x) => [jsName(x.name), x.spelled]));
  for (const j of p.jsParams)
    lines.push(`@param ${j.name} - ${firstSentence(j.doc) || `(undocumented in the header) C type \`${spelled.get(j.name) ?? j.c}\``}`);
  if (isErr) {
    const statusEnum = tm.enumTs.get(api.status.type) ?? api.status.type;
    const statuses = [...new Set(fn.returnDoc.match(/\b\w+\b/g) ?? [])].filter((w) => {
      const e = tm.model.enumerators.get(w);
      return e && (tm.enumTs.get(e.enumName) ?? e.enumName) === statusEnum;
    });
    const names = p.outs.map((_, k) => jsName(outParam(p, k)));
    const parts = [`\`err\`: the status${statuses.length ? ` (${statuses.join(', ')})` : ''}`];
    p.outs.forEach((_, k) => {
      const d = firstSentence(fn.paramDocs[outParam(p, k)] ?? '');
      parts.push(`\`${names[k]}\`${d ? `: ${d}` : ''}`);
    });
    const tail = p.outs.length ? `; the outputs are null unless \`err\` is ${api.status.success}` : '';
    lines.push(`@returns \`[${['err', ...names].join(', ')}]\` — ${parts.join('; ')}${tail}.`);
  } else {
    const d = firstSentence(fn.returnDoc);
    lines.push(`@returns \`[err, value]\` — \`err\`: always ${api.status.success}; \`value\`${d ? `: ${d}` : ''}.`);
  }
  return docBlock(lines);
}

/**
 * The result type of a status-returning function: `[status]` without outputs; otherwise the
 * success statuses with every output, or the others with nulls (and, with the API's countStatus,
 * that status with the counts the call needs).
 */
function resultType(api: ApiConfig, tm: TypeMap, p: Plan): string {
  const st = `E.${api.status.enumTs}`;
  if (!p.outs.length) return `[${st}]`;
  const outs = `[${p.outs.map((x) => x.ts).join(', ')}]`;
  const cs = api.spec.countStatus;
  if (cs === undefined || !p.outs.some((x) => x.countSlot !== undefined)) return `Res<${outs}>`;
  const e = [...tm.model.enums.values()].find((x) => x.name === api.status.enumTs || x.typedefs.includes(api.status.enumTs));
  const name = e?.values.find((v) => Number(v.value) === cs)?.name;
  if (!name) throw new Error(`codegen: ${api.status.enumTs} has no member of value ${cs} (countStatus)`);
  const counted = p.outs.map((x) => (x.countSlot !== undefined ? 'number' : 'null')).join(', ');
  return `Result<${api.status.enumTs}Ok, Exclude<${st}, ${api.status.enumTs}Ok | ${st}.${name}>, ${outs}> | [${st}.${name}, ${counted}]`;
}

function emitFunction(api: ApiConfig, tm: TypeMap, p: Plan): string {
  const st = `E.${api.status.enumTs}`;
  const fn = p.fn;
  const o: string[] = [];
  const isErr = tm.value(fn.ret).k === 'enum' && fn.retSpelled === api.status.type;
  const ret = resultType(api, tm, p);
  o.push(`let f_${fn.name}: KoffiFunction | undefined;`);
  o.push(functionDoc(api, tm, p, isErr));
  o.push(`// ${cProto(fn)} — ${fn.loc.file}:${fn.loc.line}`);
  // Optional only where every parameter after it is too.
  const firstOptional = p.jsParams.findIndex((j, i) => j.optional && p.jsParams.slice(i).every((x) => x.optional));
  const params = p.jsParams
    .map((j, i) => (firstOptional >= 0 && i >= firstOptional ? `${j.name}?: ${j.ts}` : `${j.name}: ${j.ts}`))
    .join(', ');
  if (!isErr) {
    // cudaGetErrorName, cudaGetErrorString, cudaCreateChannelDesc: values, not statuses.
    const r = resolve(fn.ret);
    const rrec = r.k === 'record' ? (tm.value(fn.ret) as { rec: RecordModel }).rec : null;
    const conv = rrec ? (rrec.size > 16 ? `X.fromBytes(S.${rrec.name}, v.bytes)` : `new S.${rrec.name}(v)`) : "(v as string | null) ?? ''";
    const ts = r.k === 'record' ? `S.${(tm.value(fn.ret) as { rec: RecordModel }).rec.name}` : 'string';
    o.push(`export function ${fn.name}(${params}): [${st}, ${ts}] {`);
    for (const s of [...p.pre, ...p.late]) o.push(`  ${s}`);
    o.push(`  const v = (f_${fn.name} ??= L.bind('${fn.name}'))(${p.args.join(', ')});`);
    o.push(`  return [${st}.${api.status.success}, ${conv}];`);
    o.push('}');
    return o.join('\n') + '\n';
  }
  o.push(`export function ${fn.name}(${params}): ${ret} {`);
  for (const s of [...p.pre, ...p.late]) o.push(`  ${s.replaceAll('@NULLS', ', null'.repeat(p.outs.length))}`);
  const call = (args: string[]) => `(f_${fn.name} ??= L.bind('${fn.name}'))(${args.join(', ')})`;
  if (p.splitTypes) o.push(`  const err = (L.splitSmallStructs ? ${call(p.splitArgs)} : ${call(p.args)}) as ${st};`);
  else o.push(`  const err = ${call(p.args)} as ${st};`);
  for (const s of p.after) o.push(`  ${s}`);
  if (p.outs.length) {
    const cs = api.spec.countStatus;
    if (cs !== undefined && p.outs.some((x) => x.countSlot !== undefined)) {
      // The size needed comes back with the status that says the array was too small.
      o.push(
        `  if (err === ${cs}) return [err, ${p.outs.map((x) => (x.countSlot !== undefined ? `K.readSize(${x.countSlot})` : 'null')).join(', ')}];`,
      );
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
