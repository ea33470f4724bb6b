// The plan of each function: each C parameter is planned by the handler of its kind, looked up in
// HANDLERS by the role another parameter's spec gives it (a count), by its own spec (`spec.k`), or
// by what its C type says. A new shape of parameter is a new handler and a new entry, not another
// branch in a shared loop; the state handlers share lives in the PlanBuilder (plan-builder.ts).
import { type CType, resolve } from './ctype';
import type { FunctionModel, Model, ParamModel, RecordModel } from './model';
import { TypeMap, isDevicePtrTypedef, type ValueKind } from './types';
import type { ApiConfig, ParamSpec } from './apis';
import { q } from './util';
import { scalarIO, tsQ } from './emit-structs';
import { type CountRole, type Plan, PlanBuilder, isWritablePointer, jsName, local } from './plan-builder';

export type { Plan } from './plan-builder';

/** One C parameter as its handler sees it. */
interface Param<S> {
  p: ParamModel;
  /** Its spec, for a kind that a spec gives. */
  spec: S;
  /** Its C type, typedefs resolved. */
  r: CType;
  /** The local that holds its checked argument (`a_<name>`). */
  L: string;
  /** The name of its JS parameter. */
  J: string;
  /** The function's name, as the checks quote it. */
  F: string;
}

type SpecOf<K extends ParamSpec['k']> = Extract<ParamSpec, { k: K }>;
type Handler<S = undefined> = (b: PlanBuilder, x: Param<S>) => void;

/** Kinds that the C type alone gives, where no spec and no count role applies. */
type TypeCase = 'structByValue' | 'scalar' | 'string' | 'outCString' | 'inoutStruct' | 'outStruct' | 'outValue' | 'rawPointer';

export function planFunction(api: ApiConfig, model: Model, tm: TypeMap, fn: FunctionModel): Plan {
  const b = new PlanBuilder(api, model, tm, fn);
  for (const p of fn.params) {
    b.plan.outStarts.push([p.name, b.plan.outs.length]);
    const x: Param<ParamSpec | undefined> = {
      p,
      spec: b.specs[p.name],
      r: resolve(p.type),
      L: local(p.name),
      J: jsName(p.name),
      F: fn.name,
    };
    const kind = b.countRoles.get(p.name) ?? x.spec?.k ?? typeCase(b, p, x.r);
    (HANDLERS[kind] as Handler<ParamSpec | undefined>)(b, x);
  }
  return b.finish();
}

/** The kind of a parameter without a spec or a count role, from its C type. */
function typeCase(b: PlanBuilder, p: ParamModel, r: CType): TypeCase | 'inStruct' | 'pointer' | 'outAddr' {
  const { tm } = b;
  if (r.k === 'ptr' && !tm.handle(p.type) && isRecordPtr(b.model, r) && r.constTo) return 'inStruct';
  const v = tm.value(p.type);
  if (r.k !== 'ptr' || v.k === 'handle' || v.k === 'fnptr') return v.k === 'record' ? 'structByValue' : 'scalar';
  const to = resolve(r.to);
  const toV = to.k === 'fn' ? null : tm.value(r.to);
  if (to.k === 'prim' && (to.name === 'void' || (to.name === 'char' && !r.constTo))) return 'pointer';
  if (to.k === 'prim' && to.name === 'char' && r.constTo) return 'string';
  if (to.k === 'ptr' && resolve(to.to).k === 'prim' && (resolve(to.to) as { name: string }).name === 'char') return 'outCString';
  // void ** and the like: an output address.
  if (to.k === 'ptr' && !tm.handle(r.to)) return 'outAddr';
  if (to.k === 'record' && !r.constTo && toV?.k === 'record') return b.api.spec.structPointersInOut ? 'inoutStruct' : 'outStruct';
  if (toV && toV.k !== 'record' && toV.k !== 'void' && !r.constTo) return 'outValue';
  return 'rawPointer';
}

// ---------------------------------------------------------------------------------------------
// counts that another parameter's spec names

/** In/out counts of output arrays: passed in and returned. */
function inoutCount(b: PlanBuilder, { p, r, L, J, F }: Param<undefined>): void {
  const { plan } = b;
  const i = b.passSlot();
  b.addJs(p, 'number');
  plan.pre.push(
    `const ${L} = M.size(${J}, '${F}', '${p.name}');`,
    `K.U32[${2 * i}] = ${L} % 4294967296; K.U32[${2 * i + 1}] = Math.floor(${L} / 4294967296);`,
  );
  plan.post.push(`const n_${p.name} = K.readSize(${i});`);
  plan.outs.push({ expr: `n_${p.name}`, ts: 'number', countSlot: i });
  plan.notes.push(`${p.name}: in/out count`);
  b.slotRule(p, b.tm.value((r as { to: CType }).to));
}

/** The count CUDA writes beside an array it owns (borrowedArray). */
function borrowedCount(b: PlanBuilder, { p, r }: Param<undefined>): void {
  const { plan } = b;
  const i = b.passSlot();
  plan.post.push(`const n_${p.name} = K.readSize(${i});`);
  plan.outs.push({ expr: `n_${p.name}`, ts: 'number' });
  b.slotRule(p, b.tm.value((r as { to: CType }).to));
}

// ---------------------------------------------------------------------------------------------
// arrays

function inArray(b: PlanBuilder, x: Param<SpecOf<'inArray'>>): void {
  b.checkCount(x.spec.count);
  if (isCString(elemOf(x.r))) inStringArray(b, x);
  else inValueArray(b, x);
}

/** const char *const *: an array of strings, packed with their bytes in one allocation. */
function inStringArray(b: PlanBuilder, { p, spec, L, J, F }: Param<SpecOf<'inArray'>>): void {
  const { plan } = b;
  b.addJs(p, `string[]${spec.nullable ? ' | null' : ''}`);
  plan.late.push(`const ${L} = X.packStrings(${J}, ${local(spec.count)}, '${F}', '${p.name}', ${!!spec.nullable});`);
  b.pass(L);
  plan.notes.push(`${p.name}: array of ${spec.count} strings`);
  b.rule(p, 'count', `${spec.count} pointers, packed by the binding`);
}

/** Values or structs packed from a JS array, or a typed array the caller packed. */
function inValueArray(b: PlanBuilder, { p, spec, r, L, J, F }: Param<SpecOf<'inArray'>>): void {
  const { plan, tm } = b;
  const elemT = (r as { to: CType }).to;
  const ek = tm.value(elemT);
  const esz = tm.sizeOf(ek);
  const elemTs = ek.k === 'record' ? `S.${ek.rec.name} | S.${ek.rec.name}Init` : ek.k === 'addr' ? 'Pointer' : tsQ(tm, tm.tsIn(ek));
  b.addJs(p, `(${elemTs})[] | ArrayBufferView${spec.nullable ? ' | null' : ''}`);
  const writer =
    ek.k === 'record'
      ? `(dv, at, x, n) => X.packStruct(dv, at, x, S.${ek.rec.name}, n)`
      : ek.k === 'addr'
        ? `(dv, at, x, n) => dv.setBigUint64(at, M.addressOf(M.pointer(x, '${F}', n)), true)`
        : `(dv, at, x, n) => ${scalarIO(ek).write}(dv, at, x, n)`;
  plan.late.push(`const ${L} = X.packArray(${J}, ${local(spec.count)}, ${esz}, '${F}', '${p.name}', ${!!spec.nullable}, ${writer});`);
  // A typed array the caller packed is checked against count × element size.
  plan.checked[J] = { bytes: `${jsName(spec.count)} * ${esz}`, unit: esz };
  b.pass(L);
  plan.notes.push(`${p.name}: array of ${spec.count}`);
  const each = b.elementExtents[p.name];
  if (each) {
    // An array of pointers C writes through: each host buffer in it is checked.
    const expr = b.extentExpr(each, (n) => jsName(n));
    plan.late.push(`X.checkEach(${J}, ${local(spec.count)}, (i) => ${expr}, '${F}', '${p.name}', ${q(each)});`);
    const text = `${spec.count} × ${esz} bytes packed by the binding; element i holds \`${each}\` bytes, checked`;
    if (isWritablePointer(tm, p)) b.rule(p, 'elements', text);
    else b.elementRows.push({ param: `${p.name}[i]`, c: p.spelled, kind: 'elements', rule: text });
  } else {
    b.rule(p, 'count', `${spec.count} × ${esz} bytes, packed by the binding or checked`);
    const er = resolve(elemT);
    if (er.k === 'ptr' && !er.constTo && ek.k === 'addr') {
      // An array of data pointers: what C does through each needs a rule of its own.
      const why = b.notWritten[p.name];
      if (why) b.elementRows.push({ param: `${p.name}[i]`, c: p.spelled, kind: 'not written', rule: why });
      else plan.missingExtents.push(`${F}(${p.name}[i]: the elements of ${p.spelled})`);
    }
  }
}

/** Structs C reads and writes (NVML's field values): packed from the caller's, read back after. */
function inoutArray(b: PlanBuilder, { p, spec, r, L, J, F }: Param<SpecOf<'inoutArray'>>): void {
  const { plan } = b;
  b.checkCount(spec.count);
  const rec = (b.tm.value((r as { to: CType }).to) as { rec: RecordModel }).rec;
  const cnt = local(spec.count);
  b.addJs(p, `(S.${rec.name} | S.${rec.name}Init)[]`);
  plan.late.push(
    `const ${L} = X.packArray(${J}, ${cnt}, ${rec.size}, '${F}', '${p.name}', false, (dv, at, x, n) => X.packStruct(dv, at, x, S.${rec.name}, n));`,
  );
  b.pass(L);
  plan.outs.push({ expr: `X.readStructs(${L}, ${cnt}, S.${rec.name})`, ts: `S.${rec.name}[]` });
  plan.notes.push(`${p.name}: in/out array of ${spec.count}`);
  b.rule(p, 'count', `${spec.count} × ${rec.size} bytes, packed by the binding`);
}

/** An array the binding allocates for C to fill, returned. */
function outArray(b: PlanBuilder, { p, spec, r, L }: Param<SpecOf<'outArray'>>): void {
  const { plan, tm } = b;
  b.checkCount(spec.count);
  const ek = tm.value((r as { to: CType }).to);
  const esz = tm.sizeOf(ek);
  const cnt = local(spec.count);
  plan.late.push(`const ${L} = ${cnt} > 0 ? M.bytes(${cnt} * ${esz}) : null;`);
  b.pass(L);
  const n = spec.countMode === 'inout' ? `Math.min(${cnt}, n_${spec.count})` : cnt;
  const read =
    ek.k === 'record'
      ? `X.readStructs(${L}, ${n}, S.${ek.rec.name})`
      : `X.readArray(${L}, ${n}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`;
  plan.outs.push({ expr: read, ts: `${ek.k === 'record' ? 'S.' + ek.rec.name : tsQ(tm, tm.tsOut(ek))}[]` });
  plan.notes.push(`${p.name}: output array of ${spec.count}`);
  b.rule(p, 'count', `${spec.count} × ${esz} bytes, allocated by the binding`);
}

/**
 * As long as the query says (nvrtcGetSupportedArchs after nvrtcGetNumSupportedArchs): the binding
 * asks, allocates and returns the values, as cuda-python does.
 */
function queriedArray(b: PlanBuilder, { p, spec, r, L }: Param<SpecOf<'queriedArray'>>): void {
  const { plan, tm } = b;
  const ek = tm.value((r as { to: CType }).to);
  const esz = tm.sizeOf(ek);
  const args = spec.args.map((a) => `${local(a)} as any`).join(', ');
  plan.late.push(`const [q_${p.name}, n_${p.name}] = ${spec.query}(${args});`);
  plan.late.push(`if (q_${p.name} !== 0) return [q_${p.name}@NULLS];`);
  plan.late.push(`const ${L} = M.bytes(Math.max(1, n_${p.name} * ${esz}));`);
  b.pass(L);
  plan.outs.push({
    expr: `X.readArray(${L}, n_${p.name}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`,
    ts: `${tsQ(tm, tm.tsOut(ek))}[]`,
  });
  plan.notes.push(`${p.name}: array as long as ${spec.query} says, returned`);
  b.rule(p, 'query', `what \`${spec.query}\` reports × ${esz} bytes, allocated by the binding`);
}

/** An array CUDA owns: its address comes back in a slot, and its elements are copied out. */
function borrowedArray(b: PlanBuilder, { p, spec, r }: Param<SpecOf<'borrowedArray'>>): void {
  const { plan, tm } = b;
  const i = b.passSlot();
  const inner = resolve((r as { to: CType }).to) as { to: CType };
  const ek = tm.value(inner.to);
  const esz = tm.sizeOf(ek);
  const n = `n_${spec.count}`;
  const read =
    ek.k === 'record'
      ? `X.readStructs(X.borrowed(K.U64[${i}], ${n} * ${esz}), ${n}, S.${ek.rec.name})`
      : `X.readArray(X.borrowed(K.U64[${i}], ${n} * ${esz}), ${n}, ${esz}, (dv, at) => ${scalarIO(ek).read('dv', 'at')})`;
  plan.outs.push({ expr: read, ts: `${ek.k === 'record' ? 'S.' + ek.rec.name : tsQ(tm, tm.tsOut(ek))}[]` });
  plan.notes.push(`${p.name}: array owned by CUDA, copied out`);
  b.slotRule(p, null, 'a scratch slot for the address');
}

// ---------------------------------------------------------------------------------------------
// values whose C type another argument gives

function attr(b: PlanBuilder, { p, spec, J, F }: Param<SpecOf<'attr'>>): void {
  const { plan } = b;
  const i = b.passSlot();
  const tsT = 'number | bigint';
  if (spec.dir === 'in') {
    b.addJs(p, tsT);
    plan.late.push(`X.attrIn(${spec.table}, ${local(spec.attr)}, ${J}, ${i}, '${F}', '${p.name}');`);
  } else {
    // Cleared first: some attributes are written narrower than the slot is read.
    plan.late.push(`K.U64[${i}] = 0n;`);
    plan.outs.push({ expr: `X.attrOut(${spec.table}, ${local(spec.attr)}, ${i})`, ts: tsT });
  }
  plan.notes.push(`${p.name}: value typed by ${spec.attr}`);
  b.rule(p, 'type', `a scratch slot (8 bytes, in a 4 KiB page of the binding's) for the attribute's C type`);
}

function rangeAttr(b: PlanBuilder, { p, spec, L }: Param<SpecOf<'rangeAttr'>>): void {
  const { plan } = b;
  plan.late.push(`const ${L} = M.bytes(Math.max(4, ${local(spec.size)}));`);
  b.pass(L);
  plan.outs.push({ expr: `X.rangeAttrOut(${L}, ${local(spec.attr)}, ${local(spec.size)})`, ts: 'number | number[]' });
  plan.notes.push(`${p.name}: value typed by ${spec.attr}`);
  b.rule(p, 'size', `\`${spec.size}\` bytes (at least 4), allocated by the binding`);
}

// ---------------------------------------------------------------------------------------------
// strings and bytes

function outString(b: PlanBuilder, x: Param<SpecOf<'outString'>>): void {
  if (x.spec.size !== undefined) fixedOutString(b, x, x.spec.size);
  else lengthOutString(b, x);
}

/** A buffer of a size the header fixes (NVML_GSP_FIRMWARE_VERSION_BUF_SIZE). */
function fixedOutString(b: PlanBuilder, { p, L }: Param<SpecOf<'outString'>>, size: number): void {
  const { plan } = b;
  plan.late.push(`const ${L} = M.bytes(${size});`);
  b.pass(L);
  plan.outs.push({ expr: `M.cString(${L})`, ts: 'string' });
  plan.notes.push(`${p.name}: output string of ${size} bytes`);
  b.rule(p, 'size', `${size} bytes (the header's size), allocated by the binding`);
}

/** A buffer as long as a length argument says. */
function lengthOutString(b: PlanBuilder, { p, spec, L, F }: Param<SpecOf<'outString'>>): void {
  const { plan } = b;
  const len = local(spec.len);
  plan.late.push(`if (${len} < 1) M.rangeError('${F}', '${spec.len}', \`must be at least 1, got \${${len}}\`);`);
  plan.late.push(`const ${L} = M.bytes(${len});`);
  b.pass(L);
  plan.outs.push({ expr: `M.cString(${L})`, ts: 'string' });
  plan.notes.push(`${p.name}: output string of ${spec.len} bytes`);
  b.rule(p, 'size', `\`${spec.len}\` bytes, allocated by the binding`);
}

function outBytes(b: PlanBuilder, { p, spec, L }: Param<SpecOf<'outBytes'>>): void {
  b.plan.late.push(`const ${L} = M.bytes(${spec.size});`);
  b.pass(L);
  b.plan.outs.push({ expr: L, ts: 'Uint8Array' });
  b.rule(p, 'type', `${spec.size} bytes, allocated by the binding`);
}

/** `const char *`: a JS string. */
function string(b: PlanBuilder, { p, L, J, F }: Param<undefined>): void {
  b.addJs(p, 'string');
  b.plan.pre.push(`const ${L} = M.str(${J}, '${F}', '${p.name}');`);
  b.pass(L, 'const char *');
}

/** `const char **`: C sets a string of its own, read back. */
function outCString(b: PlanBuilder, { p }: Param<undefined>): void {
  const i = b.passSlot();
  b.plan.outs.push({ expr: `X.readCString(K.U64[${i}])`, ts: 'string | null' });
  b.slotRule(p, null, 'a scratch slot for the address');
}

// ---------------------------------------------------------------------------------------------
// pointers, functions and kernel arguments

/** An address C writes (a spec's outAddr, or `void **` and the like). */
function outAddr(b: PlanBuilder, { p }: Param<SpecOf<'outAddr'> | undefined>): void {
  const i = b.passSlot();
  b.plan.outs.push({ expr: `K.U64[${i}]`, ts: 'bigint' });
  b.slotRule(p, null, 'a scratch slot for the address');
}

/** A JS function (run on the JS thread, see ffi/host-callbacks.ts) or a native pointer. */
function hostFn(b: PlanBuilder, { p, spec, J, F }: Param<SpecOf<'hostFn'>>): void {
  const { plan } = b;
  const sig = spec.kind === 'hostFn' ? '(userData: bigint) => void' : '(stream: bigint, status: number, userData: bigint) => void';
  b.addJs(p, `(${sig}) | bigint | null`);
  plan.late.push(`const r_${p.name} = HC.registerHostFn(${J}, a_userData, ${local(spec.stream)}, '${spec.kind}', '${F}', '${p.name}');`);
  b.pass(`r_${p.name}.ptr`);
  b.hostFnReg = `r_${p.name}`;
  plan.after.push(`if (err !== 0) r_${p.name}.cancel();`);
  plan.notes.push(`${p.name}: a JS function, run on the JS thread`);
}

function kernelArgs(b: PlanBuilder, { p, L, J, F }: Param<SpecOf<'kernelArgs'>>): void {
  b.addJs(p, 'KernelArgs | readonly KernelArgInput[] | Pointer');
  b.plan.pre.push(`const ${L} = KA.kernelArgs(${J}, '${F}', '${p.name}');`);
  b.pass(L);
  b.plan.notes.push(`${p.name}: typed kernel arguments`);
  b.rule(p, 'not written', 'kernel arguments: C reads one value per kernel parameter, packed by the binding');
}

/** Host memory checked against the size call, or null: the call sizes and allocates it. */
function sizedOut(b: PlanBuilder, { p, spec, L, J, F }: Param<SpecOf<'sizedOut'>>): void {
  const { plan } = b;
  const size = `(${spec.sizeFn} as (...a: unknown[]) => Res<[number]>)(${spec.args.map((a) => local(a)).join(', ')})`;
  b.addJs(p, 'Pointer');
  plan.pre.push(`const ${L} = ${J} === null ? null : M.pointer(${J}, '${F}', '${p.name}');`);
  // C gets at least one byte (koffi passes an empty Buffer as NULL); the caller gets n of them.
  plan.late.push(`let o_${p.name}: Buffer | null = null;`);
  plan.late.push(`let c_${p.name}: Buffer | null = null;`);
  plan.late.push(
    `if (${L} === null) { const [e, n] = ${size}; if (e !== 0) return [e@NULLS]; c_${p.name} = Buffer.alloc(Math.max(n, 1)); o_${p.name} = c_${p.name}.subarray(0, n); }`,
  );
  plan.late.push(`else X.needBytes(${L}, () => ${size}, 1, '${F}', '${p.name}', '${spec.sizeFn}');`);
  b.pass(`c_${p.name} ?? ${L}`);
  // The caller's own memory comes back as a Buffer over it.
  // null when the caller passed an address rather than host memory.
  plan.outs.push({ expr: `o_${p.name} ?? X.hostBuffer(${J})`, ts: 'Buffer | null' });
  plan.notes.push(`${p.name}: as many bytes as ${spec.sizeFn} reports; null returns a Buffer of them`);
  b.rule(p, 'query', `what \`${spec.sizeFn}\` reports: the caller's buffer checked, or allocated by the binding`);
  (plan.docSuffix ??= []).push(
    `\`${p.name}\`: a buffer of the size ${spec.sizeFn} reports, or null to get a new Buffer of that size back.`,
  );
}

/** Host or device memory (a spec's pointer, or `void *` and `char *`). */
function pointer(b: PlanBuilder, { p }: Param<SpecOf<'pointer'> | undefined>): void {
  b.pointer(p);
}

/** Any other pointer, passed through as one. */
function rawPointer(b: PlanBuilder, { p }: Param<undefined>): void {
  b.pointer(p);
  b.plan.notes.push(`${p.name}: raw pointer`);
}

// ---------------------------------------------------------------------------------------------
// single values

/**
 * A value passed by reference: in/out comes back; inRef (nvrtcDestroyProgram, which clears the
 * handle it is given) does not.
 */
function byRef(b: PlanBuilder, { p, spec, r, L, J, F }: Param<SpecOf<'inRef' | 'inout'>>): void {
  const { plan, tm } = b;
  const ek = tm.value((r as { to: CType }).to);
  const i = b.slot();
  b.addJs(p, tsQ(tm, tm.tsIn(ek)));
  plan.pre.push(`const ${L} = ${tm.check(ek, J, F, p.name)};`, slotWrite(ek, i, L));
  b.pass(`K.slot[${i}]`);
  if (spec.k === 'inout') {
    plan.outs.push({ expr: slotRead(ek, i), ts: tsQ(tm, tm.tsOut(ek)) });
    plan.notes.push(`${p.name}: in/out`);
  }
  b.slotRule(p, ek);
}

/** A struct C reads through a pointer (a spec's inStruct, or a pointer to a const struct). */
function inStruct(b: PlanBuilder, { p, r, L, J, F }: Param<SpecOf<'inStruct'> | undefined>): void {
  const rec = b.model.records.get((resolve((r as { to: CType }).to) as { key: string }).key)!;
  b.addJs(p, `S.${rec.name} | S.${rec.name}Init | null`);
  b.plan.pre.push(`const ${L} = X.structArg(${J}, S.${rec.name}, '${F}', '${p.name}');`);
  b.pass(L);
  b.rule(p, 'type', `the struct's own ${rec.size} bytes (an instance of S.${rec.name})`);
}

/** In/out: the caller's struct (or its fields) goes in, and comes back; a new one otherwise. */
function inoutStruct(b: PlanBuilder, { p, r, L, J, F }: Param<undefined>): void {
  const { plan } = b;
  const rec = (b.tm.value((r as { to: CType }).to) as { rec: RecordModel }).rec;
  b.addJs(p, `S.${rec.name} | S.${rec.name}Init | null`, true);
  plan.pre.push(`const ${L} = X.inoutStruct(${J}, S.${rec.name}, '${F}', '${p.name}');`);
  b.pass(`${L}._u8`);
  plan.outs.push({ expr: L, ts: `S.${rec.name}` });
  plan.notes.push(`${p.name}: in/out ${rec.name}`);
  b.rule(p, 'type', `the struct's own ${rec.size} bytes (an instance of S.${rec.name})`);
}

/** A struct C fills: a new one, returned. */
function outStruct(b: PlanBuilder, { p, r, L }: Param<undefined>): void {
  const rec = (b.tm.value((r as { to: CType }).to) as { rec: RecordModel }).rec;
  b.plan.late.push(`const ${L} = new S.${rec.name}();`);
  b.pass(`${L}._u8`);
  b.plan.outs.push({ expr: L, ts: `S.${rec.name}` });
  b.rule(p, 'type', `a new S.${rec.name} (${rec.size} bytes)`);
}

/** A value C writes through a pointer, into a scratch slot. */
function outValue(b: PlanBuilder, { p, r }: Param<undefined>): void {
  const { tm } = b;
  const v = tm.value((r as { to: CType }).to);
  const i = b.passSlot();
  b.plan.outs.push({ expr: slotRead(v, i), ts: tsQ(tm, tm.tsOut(v)) });
  b.slotRule(p, v);
}

/** A number, enum, handle or function pointer passed by value. */
function scalar(b: PlanBuilder, { p, L, J, F }: Param<undefined>): void {
  const { tm } = b;
  const v = tm.value(p.type);
  b.addJs(p, isDevicePtrTypedef(p.type) ? 'DevicePointer | number' : tsQ(tm, tm.tsIn(v)));
  b.plan.pre.push(`const ${L} = ${tm.check(v, J, F, p.name)};`);
  b.pass(L, tm.koffi(v));
}

/** A struct passed by value; a small one of integers also as its 8-byte words. */
function structByValue(b: PlanBuilder, { p, L, J, F }: Param<undefined>): void {
  const { plan, tm } = b;
  const v = tm.value(p.type) as Extract<ValueKind, { k: 'record' }>;
  b.addJs(p, `S.${v.rec.name} | S.${v.rec.name}Init`);
  plan.pre.push(
    v.rec.size > 16
      ? `const ${L} = { bytes: X.byValue(${J}, S.${v.rec.name}, '${F}', '${p.name}')._u8 };`
      : `const ${L} = X.byValue(${J}, S.${v.rec.name}, '${F}', '${p.name}');`,
  );
  b.pass(L, tm.koffi(v));
  if (v.rec.size <= 16 && integerOnly(tm, v.rec)) {
    // Passed in integer registers, eightbyte by eightbyte: koffi takes plain integers far
    // faster than a struct (about 0.1 µs against 0.9 µs a call).
    const n = Math.ceil(v.rec.size / 8);
    plan.splitTypes ??= []; // filled in by finish(), once every argument is known
    // A whole word, or a last word of 4 bytes, has a reader of its own (no size test per call).
    b.words.set(
      L,
      Array.from({ length: n }, (_, i) => {
        const bytes = Math.min(8, v.rec.size - 8 * i);
        return bytes === 8 ? `X.word8(${L}, ${8 * i})` : bytes === 4 ? `X.word4(${L}, ${8 * i})` : `X.eightbyte(${L}, ${i})`;
      }),
    );
    plan.notes.push(`${p.name}: passed as ${n} integer register${n > 1 ? 's' : ''} on x86-64 and AArch64`);
  }
}

/** The handler of each kind of parameter: every ParamSpec kind, count role and kind from the C type. */
const HANDLERS: { [K in ParamSpec['k']]: Handler<SpecOf<K>> } & Record<CountRole | TypeCase, Handler> = {
  inoutCount,
  borrowedCount,
  inArray,
  inoutArray,
  outArray,
  queriedArray,
  borrowedArray,
  attr,
  rangeAttr,
  outString,
  outBytes,
  string,
  outCString,
  outAddr,
  hostFn,
  kernelArgs,
  sizedOut,
  pointer,
  rawPointer,
  inRef: byRef,
  inout: byRef,
  inStruct,
  inoutStruct,
  outStruct,
  outValue,
  scalar,
  structByValue,
};

// ---------------------------------------------------------------------------------------------
// helpers

function integerOnly(tm: TypeMap, rec: RecordModel): boolean {
  return rec.fields.every((f) => {
    const r = resolve(f.type);
    if (r.k === 'array') return integerOnly(tm, { fields: [{ ...f, type: r.of }] } as RecordModel);
    const v = tm.value(f.type);
    if (v.k === 'record') return integerOnly(tm, v.rec);
    return v.k !== 'float' && v.k !== 'double';
  });
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
