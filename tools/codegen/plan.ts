// The plan of each function: how every C parameter is passed from JS (its TypeScript type, the
// checks and packing before the call, the koffi type, what comes back), and every pointer C may
// write through with the rule that bounds it.
import { type CType, resolve } from './ctype';
import type { FunctionModel, Model, ParamModel, RecordModel } from './model';
import { TypeMap, isDevicePtrTypedef, type ValueKind } from './types';
import type { ApiConfig, ParamSpec } from './apis';
import { SLOTS } from '../../src/ffi/scratch';
import { q } from './util';
import { scalarIO, tsQ } from './emit-structs';
import { EXTENT_HELPERS, type ExtentKind } from './extents';

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
