// Writes an API's enums, constants, handles, koffi declarations and tuple facade.
import { type CType, resolve } from './ctype';
import type { EnumModel, FunctionModel, Model, RecordModel } from './model';
import { TypeMap } from './types';
import type { ApiConfig } from './apis';
import { banner, doc, docBlock, q, usedImports } from './util';
import { jsName, type Plan } from './plan-builder';

// ---------------------------------------------------------------------------------------------
// enums

export function emitEnums(api: ApiConfig, model: Model, typeAliases: [string, string][], from: string): string {
  const o = [banner(`enums of the ${api.title}`, from)];
  for (const e of model.enums.values()) {
    o.push(doc(e.doc || `enum ${e.name}`));
    o.push(`// enum ${e.name} — ${e.loc.file}:${e.loc.line}`);
    o.push(`export enum ${e.name} {`);
    for (const v of e.values) {
      o.push(`  ${doc(v.doc || enumeratorTitle(e, v))}`);
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

/** What an enumerator the header leaves undocumented is, in C words: its name, value and enum. */
function enumeratorTitle(e: EnumModel, v: EnumModel['values'][number]): string {
  const cName = e.typedefs.includes(e.name) ? e.name : `enum ${e.name}`;
  return `\`${v.name}\` = ${v.value} of \`${cName}\` (no description in the header).`;
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
    // TypeDoc reads a member's comment only on a line of its own.
    o.push(
      `export type ${b} = bigint & {\n  /** The handle type's compile-time mark (no such property exists). */\n  readonly __brand: ${q(b)};\n};`,
    );
    o.push(`/** Makes a ${b} from an integer, as cuda-python's \`${b}(value)\`. */`);
    o.push(`export function ${b}(value: bigint | number): ${b} {\n  return handleFrom(value, ${q(b)}) as ${b};\n}`);
  }
  for (const [name, b] of tm.handleTypedefs) {
    if (name !== b)
      o.push(`/** Alias of {@link ${b}} (C typedef \`${name}\`). */\nexport const ${name} = ${b};\nexport type ${name} = ${b};`);
  }
  return o.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// koffi declarations

export function cProto(fn: FunctionModel): string {
  return `${fn.retSpelled} ${fn.symbol}(${fn.params.map((p) => `${p.spelled.replace(/ \*/g, ' *')} ${p.name}`).join(', ') || 'void'})`;
}

export function emitFfi(
  api: ApiConfig,
  label: string,
  model: Model,
  tm: TypeMap,
  plans: Plan[],
  perThread: Map<string, string>,
  byValue: RecordModel[],
  from: string,
): string {
  const o = [banner(`koffi declarations of ${label}`, from), `import koffi, { type TypeObject } from 'koffi';`, ''];
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

export function emitFacade(api: ApiConfig, loader: string, model: Model, tm: TypeMap, plans: Plan[], from: string): string {
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
    loader,
    `import type { KoffiFunction } from '../ffi/binding';`,
    `import * as X from '../ffi/struct-support';`,
    `import * as S from './structs.gen';`,
    `import * as E from './enums.gen';`,
    `import type * as H from './handles.gen';`,
    `import type { Result } from '../ffi/result';`,
    `import * as F from '../ffi/status';`,
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
  // A failed result is marked with the call's name, for checkCudaErrors to name it (src/ffi/status.ts).
  const fail = (tuple: string) => `F.failed('${fn.name}', ${tuple})`;
  for (const s of [...p.pre, ...p.late])
    o.push(`  ${s.replace(/return \[(\w+)@NULLS\];/g, (_, e: string) => `return ${fail(`[${e}${', null'.repeat(p.outs.length)}]`)};`)}`);
  const call = (args: string[]) => `(f_${fn.name} ??= L.bind('${fn.name}'))(${args.join(', ')})`;
  if (p.splitTypes) o.push(`  const err = (L.splitSmallStructs ? ${call(p.splitArgs)} : ${call(p.args)}) as ${st};`);
  else o.push(`  const err = ${call(p.args)} as ${st};`);
  for (const s of p.after) o.push(`  ${s}`);
  if (p.outs.length) {
    const cs = api.spec.countStatus;
    if (cs !== undefined && p.outs.some((x) => x.countSlot !== undefined)) {
      // The size needed comes back with the status that says the array was too small.
      o.push(
        `  if (err === ${cs}) return ${fail(`[err, ${p.outs.map((x) => (x.countSlot !== undefined ? `K.readSize(${x.countSlot})` : 'null')).join(', ')}]`)};`,
      );
    }
    const also = (api.status.withOutputs ?? []).map((n) => ` && err !== ${st}.${n}`).join('');
    o.push(`  if (err !== 0${also}) return ${fail(`[err${', null'.repeat(p.outs.length)}]`)};`);
    for (const s of p.post) o.push(`  ${s}`);
    o.push(`  return [err, ${p.outs.map((x) => x.expr).join(', ')}];`);
  } else {
    o.push(`  if (err !== 0) return ${fail('[err]')};`, '  return [err];');
  }
  o.push('}');
  return o.join('\n') + '\n';
}
