// What a function's plan says (how every C parameter is passed from JS: its TypeScript type, the
// checks and packing before the call, the koffi type, what comes back, and every pointer C may
// write through with the rule that bounds it), and the builder that the parameter handlers of
// plan.ts fill it through.
import { type CType, resolve } from './ctype';
import type { FunctionModel, Model, ParamModel } from './model';
import type { TypeMap, ValueKind } from './types';
import type { ApiConfig, ParamSpec } from './apis';
import { SLOTS } from '../../src/ffi/scratch';
import { q } from './util';
import { EXTENT_HELPERS, type ExtentBytes, type ExtentKind, type QueryRule } from './extents';

export interface Plan {
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
export const jsName = (p: string) => (taken.has(p) ? `${p}_` : p);
/** The local that holds a parameter's checked argument, which extent expressions and checks read. */
export const local = (p: string) => `a_${p}`;

/** The role a parameter takes from another parameter's spec that names it as its count. */
export type CountRole = 'inoutCount' | 'borrowedCount';

/**
 * One function's plan while its parameters are planned, with what the handlers share: the spec
 * tables of the function, the scratch slots taken, the extent rules found so far.
 */
export class PlanBuilder {
  readonly plan: Plan;
  /** The function's name, as the checks it emits quote it. */
  readonly F: string;
  readonly specs: Record<string, ParamSpec>;
  readonly extents: Record<string, ExtentBytes>;
  readonly queried: Record<string, QueryRule>;
  readonly elementExtents: Record<string, string>;
  readonly notWritten: Record<string, string>;
  /** Counts that another parameter's spec names, planned by that role rather than by their type. */
  readonly countRoles = new Map<string, CountRole>();
  /** The 8-byte words of each small struct passed by value, by the local that holds the struct. */
  readonly words = new Map<string, string[]>();
  /** Rows for the pointers inside arrays of pointers (`void **data`: what C does through data[i]). */
  readonly elementRows: ExtentRow[] = [];
  /** A JS host function's registration: its token goes to C as the user data in place of the caller's. */
  hostFnReg: string | undefined;
  private readonly rules = new Map<string, ExtentRow>();
  private readonly countChecked = new Set<string>();
  private slots = 0;

  constructor(
    readonly api: ApiConfig,
    readonly model: Model,
    readonly tm: TypeMap,
    readonly fn: FunctionModel,
  ) {
    const F = fn.name;
    this.F = F;
    this.plan = {
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
    this.specs = api.spec.paramSpecs[F] ?? {};
    this.extents = api.spec.extents[F] ?? {};
    this.queried = api.spec.queried?.[F] ?? {};
    this.elementExtents = api.spec.elementExtents?.[F] ?? {};
    this.notWritten = api.spec.notWritten?.[F] ?? {};
    const has = (name: string) => fn.params.some((p) => p.name === name);
    for (const [name, s] of Object.entries(this.specs)) {
      if (!has(name)) throw new Error(`codegen: ${F} has no parameter ${name} (spec)`);
      if ('count' in s && !has(s.count)) throw new Error(`codegen: ${F} has no count ${s.count}`);
      if (s.k === 'outArray' && s.countMode === 'inout') this.countRoles.set(s.count, 'inoutCount');
      if (s.k === 'borrowedArray') this.countRoles.set(s.count, 'borrowedCount');
    }
    const tables = { extents: this.extents, queried: this.queried, elementExtents: this.elementExtents, notWritten: this.notWritten };
    for (const [table, t] of Object.entries(tables)) {
      for (const name of Object.keys(t)) if (!has(name)) throw new Error(`codegen: ${F} has no parameter ${name} (${table})`);
    }
    // A count is planned by its role, so a spec of its own would be silently ignored.
    for (const name of this.countRoles.keys()) {
      if (this.specs[name]) throw new Error(`codegen: ${F}(${name}) is the count of another parameter and has a spec of its own`);
    }
  }

  /** A scratch slot (src/ffi/scratch.ts) for one value C writes. */
  slot(): number {
    if (this.slots >= SLOTS) throw new Error(`codegen: ${this.F} needs more than ${SLOTS} output slots (src/ffi/scratch.ts)`);
    return this.slots++;
  }

  /** Passes `arg` to C as koffi type `koffi`. */
  pass(arg: string, koffi = 'void *'): void {
    this.plan.args.push(arg);
    this.plan.koffiTypes.push(koffi);
  }

  /** Takes a scratch slot and passes its address to C. */
  passSlot(): number {
    const i = this.slot();
    this.pass(`K.slot[${i}]`);
    return i;
  }

  /** A JS parameter standing for C parameter `p`. */
  addJs(p: ParamModel, ts: string, optional?: boolean): void {
    this.plan.jsParams.push({
      name: jsName(p.name),
      ts,
      doc: this.fn.paramDocs[p.name] ?? '',
      c: resolvedSpelling(p.type),
      ...(optional ? { optional } : {}),
    });
  }

  /** Records how far C may write through parameter `p` (only writable pointers are reported). */
  rule(p: ParamModel, kind: ExtentKind, text: string): void {
    if (isWritablePointer(this.tm, p)) this.rules.set(p.name, { param: p.name, c: p.spelled, kind, rule: text });
  }

  /** A value C writes into a scratch slot: the slot must hold the pointed-to type. */
  slotRule(p: ParamModel, v: ValueKind | null, what = 'a scratch slot'): void {
    const n = v && v.k !== 'void' ? this.tm.sizeOf(v) : 8;
    if (n > 8) throw new Error(`codegen: ${this.F}(${p.name}) writes ${n} bytes, more than a scratch slot`);
    this.rule(p, 'type', `${what} (8 bytes) for the pointed-to ${n}-byte value`);
  }

  /** A negative count names the count, before any array is looked at (once per count). */
  checkCount(count: string): void {
    if (this.countChecked.has(count)) return;
    this.countChecked.add(count);
    const c = local(count);
    this.plan.late.push(`if (${c} < 0) M.rangeError('${this.F}', '${count}', \`must not be negative, got \${${c}}\`);`);
  }

  /** An extent expression of this function as JS (see extentExpr). */
  extentExpr(e: string, arg?: (name: string) => string): string {
    return extentExpr(e, this.fn, this.model, arg);
  }

  /** Host or device memory, with the bytes a host buffer must hold where the spec knows them. */
  pointer(p: ParamModel): void {
    const F = this.F;
    const L = local(p.name);
    this.addJs(p, pointerTs(p.name));
    this.plan.pre.push(`const ${L} = M.pointer(${jsName(p.name)}, '${F}', '${p.name}');`);
    const e = this.extents[p.name];
    const qr = this.queried[p.name];
    if (e !== undefined) {
      const { bytes, what } = typeof e === 'string' ? { bytes: e, what: e } : e;
      // Only host memory has an extent to check: an address or NULL skips the call (about 2 ns each,
      // two per copy, on the hot path of cudaMemcpyAsync).
      this.plan.late.push(
        `if (typeof ${L} === 'object' && ${L} !== null) M.checkExtent(${L}, ${this.extentExpr(bytes)}, '${F}', '${p.name}', ${q(what)});`,
      );
      this.rule(p, /\*|sizeof/.test(bytes) ? 'count' : 'size', `\`${bytes}\` bytes, checked`);
      const unit = /\bsizeof\(/.test(bytes) ? Number(/\* (\d+)/.exec(this.extentExpr(bytes))?.[1] ?? 1) : 1;
      this.plan.checked[jsName(p.name)] = { bytes: this.extentExpr(bytes, jsName), unit };
    } else if (qr) {
      const args = qr.args.map((a) => `${local(a)} as any`).join(', ');
      this.plan.late.push(`X.needBytes(${L}, () => ${qr.query}(${args}), ${qr.unit ?? 1}, '${F}', '${p.name}', '${qr.query}');`);
      this.rule(p, 'query', `${qr.unit && qr.unit > 1 ? `${qr.unit} × ` : ''}what \`${qr.query}\` reports, checked`);
      this.plan.checked[jsName(p.name)] = { query: { fn: qr.query, args: qr.args.map(jsName) }, unit: qr.unit ?? 1 };
    } else if (this.notWritten[p.name]) {
      this.rule(p, 'not written', this.notWritten[p.name]);
    }
    this.pass(L);
  }

  /** The plan, once every parameter has been planned: its extent rules, checks and split form. */
  finish(): Plan {
    const plan = this.plan;
    for (const p of this.fn.params) {
      const row = this.rules.get(p.name);
      if (row) plan.extentRules.push(row);
      else if (isWritablePointer(this.tm, p)) plan.missingExtents.push(`${this.F}(${p.name}: ${p.spelled})`);
    }
    plan.extentRules.push(...this.elementRows);
    const reg = this.hostFnReg;
    if (reg) plan.args = plan.args.map((a) => (a === 'a_userData' ? `${reg}.userData` : a));
    for (const c of this.api.spec.checks?.[this.F] ?? []) plan.late.push(c);
    if (plan.splitTypes) {
      // Rebuild the split form from the whole list so every other argument keeps its place.
      const types: string[] = [];
      const args: string[] = [];
      plan.args.forEach((a, i) => {
        const split = this.words.get(a);
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

/** The C type with typedefs resolved to what the checks go by: `unsigned int`, `size_t`, `void *`, … */
function resolvedSpelling(t: CType): string {
  for (let c: CType = t; c.k === 'typedef'; c = c.to) if (c.name === 'size_t') return 'size_t';
  const r = resolve(t);
  if (r.k === 'prim') return r.name;
  if (r.k === 'enum') return 'enum';
  if (r.k === 'record') return 'struct';
  return r.k === 'ptr' ? 'pointer' : r.k;
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
