// The generator: reads the CUDA 13.0 headers through clang and writes the bindings.
//   npm run generate            writes the files
//   npm run generate -- --check exits 1 with a diff when the committed files are stale
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runClang } from './clang';
import { buildModel, type Model } from './model';
import { TypeMap } from './types';
import { emitStructs } from './emit-structs';
import { emitEnums, collectConstants, emitConstants, emitHandles, planFunction, emitFfi, emitFacade, type ConstantModel, type Plan } from './emit-api';
import { resolve } from './ctype';
import type { ApiConfig } from './apis';
import { runtimeApi } from './runtime-spec';
import { driverApi } from './driver-spec';
import { nvrtcApi } from './nvrtc-spec';
import { emitReducedHeader } from './emit-reduced';
import { cudaInclude } from './clang';

export const APIS: ApiConfig[] = [runtimeApi, driverApi, nvrtcApi];
export const root = path.resolve(__dirname, '..', '..');

export interface Generated {
  files: Map<string, string>;
  models: Map<string, Model>;
  constants: Map<string, ConstantModel[]>;
}

/** Everything the generator writes, in memory: relative path -> contents. */
export function generate(apis: ApiConfig[] = APIS): Generated {
  const gen: Generated = { files: new Map(), models: new Map(), constants: new Map() };
  for (const api of apis) generateApi(api, gen);
  return gen;
}

/** Where the real header of an API with a reduced header is, if this machine has it. */
function realHeader(api: ApiConfig): string | undefined {
  const env = process.env[`${api.id.toUpperCase()}_HEADER`];
  const cands = [env, path.join(cudaInclude(), api.headers[0])].filter(Boolean) as string[];
  return cands.find((c) => fs.existsSync(c));
}

function generateApi(api: ApiConfig, gen: Generated): void {
  const real = api.reducedHeader ? realHeader(api) : undefined;
  // Without the real header, parse the reduced one the generator wrote from it.
  const headers = api.reducedHeader && !real ? [path.basename(api.reducedHeader)] : api.headers;
  const extra = api.reducedHeader ? [real ? path.dirname(real) : path.join(root, path.dirname(api.reducedHeader))] : [];
  const cr = runClang(headers, [], extra);
  const bind = new Set(api.bindHeaders);
  const model = buildModel(cr, bind);
  if (api.reducedHeader) gen.files.set(api.reducedHeader, emitReducedHeader(model, api.headers[0]));
  if (api.versionedSymbols) followRenames(model);
  // The same headers with the per-thread default stream: which symbol each name maps to.
  const perThread = new Map<string, string>();
  if (api.perThreadDefine) {
    const pt = buildModel(runClang(headers, [api.perThreadDefine], extra), bind);
    const bySymbol = new Map([...model.functions.values()].map((f) => [f.symbol, f.name]));
    for (const sym of pt.functions.keys()) {
      const m = /^(\w+)_(ptsz|ptds)$/.exec(sym);
      const name = m && bySymbol.get(m[1]);
      if (name) perThread.set(name, sym);
    }
  }
  const tm = new TypeMap(model, api.spec.integerHandles);
  const records = [...model.records.values()].filter((r) => !r.opaque && !r.flattened);
  const { constants, enumAliases, structAliases } = collectConstants(model, tm);
  const fns = [...model.functions.values()];
  const plans = fns.map((f) => planFunction(api, model, tm, f));
  const missing = plans.flatMap((p) => p.missingExtents);
  if (missing.length) {
    throw new Error(`codegen: ${api.id}: C may write through these pointers and no rule says how far (add each to extents, queried, elementExtents or notWritten in its spec; see tools/codegen/extents.ts):\n  ${missing.join('\n  ')}`);
  }
  const byValue = new Map<string, (typeof records)[number]>();
  for (const f of fns) {
    for (const t of [f.ret, ...f.params.map((p) => p.type)]) {
      const r = resolve(t);
      if (r.k === 'record') byValue.set(r.key, model.records.get(r.key)!);
    }
  }
  const dir = `src/${api.id}`;
  gen.files.set(`${dir}/enums.ts`, emitEnums(api, model, enumAliases));
  gen.files.set(`${dir}/constants.ts`, emitConstants(api, constants));
  gen.files.set(`${dir}/handles.ts`, emitHandles(api, model, tm));
  let structs = emitStructs(api, model, tm, records);
  for (const [alias, target] of structAliases) {
    const t = model.records.get(target)?.name ?? target;
    structs += `/** Alias of {@link ${t}} (\`#define ${alias} ${target}\`). */\nexport const ${alias} = ${t};\nexport type ${alias} = ${t};\n`;
  }
  gen.files.set(`src/structs/${api.id}.ts`, structs);
  gen.files.set(api.ffi, emitFfi(api, model, tm, plans, perThread, [...byValue.values()]));
  gen.files.set(`${dir}/api.ts`, emitFacade(api, model, tm, plans));
  gen.files.set(`test/cpu/fixtures/${api.id}-signatures.json`, JSON.stringify(plans.map((p) => ({ name: p.fn.name, params: p.jsParams.map((j) => ({ name: j.name, ts: j.ts, c: j.c, ...(p.checked[j.name] ? { extent: p.checked[j.name] } : {}) })) })), null, 1) + '\n');
  gen.files.set(`tools/codegen/report-${api.id}.md`, report(api, model, plans, records.length, constants.length, perThread, cr.version));
  gen.models.set(api.id, model);
  gen.constants.set(api.id, constants);
}

/** `#define cuMemAlloc cuMemAlloc_v2`: the function is bound as cuMemAlloc to the symbol cuMemAlloc_v2. */
function followRenames(model: Model): void {
  const renamed = new Map<string, string>();
  for (const m of model.macros) {
    // `#define cuMemAlloc cuMemAlloc_v2`, or through the per-thread macro: `__CUDA_API_PTDS(cuMemcpyHtoD_v2)`.
    const target = /^(?:__CUDA_API_PT(?:DS|SZ)\(\s*)?(\w+)\s*\)?$/.exec(m.body)?.[1];
    if (target && model.functions.has(target) && m.name !== target && !m.name.startsWith('__')) renamed.set(target, m.name);
  }
  const fns = [...model.functions.values()];
  model.functions.clear();
  for (const f of fns) {
    const name = renamed.get(f.name) ?? f.name;
    model.functions.set(name, { ...f, name, symbol: f.name });
  }
}

function report(api: ApiConfig, model: Model, plans: Plan[], nRecords: number, nConst: number, perThread: Map<string, string>, clang: string): string {
  const o: string[] = [`# ${api.title}: coverage report`, '', 'Generated by `npm run generate` from the CUDA 13.0 headers — do not edit.', ''];
  const byFile = new Map<string, number>();
  for (const p of plans) byFile.set(p.fn.loc.file, (byFile.get(p.fn.loc.file) ?? 0) + 1);
  const status = plans.filter((p) => p.fn.retSpelled === api.status.type).length;
  o.push(`Parsed with ${clang.replace(/\s*\(.*$/, '')}.`, '');
  o.push('| what | count |', '|---|---|');
  o.push(`| functions bound | ${plans.length} |`);
  for (const [f, n] of byFile) o.push(`| … declared in \`${f}\` | ${n} |`);
  o.push(`| … returning \`${api.status.type}\` | ${status} |`);
  if (api.versionedSymbols) o.push(`| … bound to a versioned symbol (\`_v2\`, …) | ${plans.filter((p) => p.fn.symbol !== p.fn.name).length} |`);
  if (api.perThreadDefine) o.push(`| … with a per-thread default stream variant | ${perThread.size} |`);
  o.push(`| enums | ${model.enums.size} (${[...model.enums.values()].reduce((a, e) => a + e.values.length, 0)} enumerators) |`);
  o.push(`| structs and unions (nested unnamed ones included) | ${nRecords} |`);
  o.push(`| #define constants | ${nConst} |`);
  o.push('', '## Skipped', '', '| name | why |', '|---|---|');
  for (const [n, why] of api.skipped) o.push(`| ${n} | ${why} |`);
  const rows = plans.flatMap((p) => p.extentRules.map((r) => ({ fn: p.fn.name, ...r })));
  const kinds = new Map<string, number>();
  for (const r of rows) kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
  o.push('', '## Pointers C writes through', '');
  o.push(`Every parameter that is a pointer to non-const data (not an opaque handle), and every array of data pointers (\`name[i]\`), with the rule that bounds what C writes through it (\`tools/codegen/extents.ts\`): ${rows.length} in all, ${[...kinds].map(([k, n]) => `${n} by \`${k}\``).join(', ')}. The generator fails on one without a rule.`);
  o.push('', '| function | parameter | C type | rule | extent |', '|---|---|---|---|---|');
  for (const r of rows) o.push(`| \`${r.fn}\` | \`${r.param}\` | \`${r.c}\` | ${r.kind} | ${r.rule.replace(/\|/g, '\\|')} |`);
  const fe = Object.entries(api.spec.fieldExtents ?? {}).flatMap(([cls, fields]) => Object.entries(fields).map(([f, e]) => [cls, f, e]));
  if (fe.length) {
    o.push('', '### Pointer fields of structs', '', 'A pointer field set to host memory keeps it; every call given the struct checks that it is still attached and as long as when it was set, and, for these fields, as long as the struct describes:', '');
    o.push('| struct | field | bytes |', '|---|---|---|');
    for (const [cls, f, e] of fe) o.push(`| \`${cls}\` | \`${f}\` | \`${e.replace(/\|/g, '\\|')}\` |`);
  }
  o.push('', '## Bound functions', '', '| function | symbol | header | notes |', '|---|---|---|---|');
  for (const p of plans) {
    const notes = [perThread.has(p.fn.name) ? `per-thread: \`${perThread.get(p.fn.name)}\`` : '', ...p.notes].filter(Boolean).join('; ');
    o.push(`| \`${p.fn.name}\` | \`${p.fn.symbol}\` | ${p.fn.loc.file}:${p.fn.loc.line} | ${notes} |`);
  }
  return o.join('\n') + '\n';
}

/** Files whose committed contents differ from what the generator writes now, with a diff. */
export function stale(gen: Generated): { file: string; diff: string }[] {
  const out: { file: string; diff: string }[] = [];
  for (const [rel, text] of gen.files) {
    const abs = path.join(root, rel);
    const have = fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : '';
    if (have !== text) out.push({ file: rel, diff: lineDiff(have, text) });
  }
  return out;
}

function lineDiff(a: string, b: string): string {
  const A = a.split('\n');
  const B = b.split('\n');
  let i = 0;
  while (i < A.length && i < B.length && A[i] === B[i]) i++;
  let ja = A.length - 1;
  let jb = B.length - 1;
  while (ja >= i && jb >= i && A[ja] === B[jb]) {
    ja--;
    jb--;
  }
  const out = [`@@ line ${i + 1} @@`];
  for (const l of A.slice(i, Math.min(ja + 1, i + 20))) out.push(`- ${l}`);
  for (const l of B.slice(i, Math.min(jb + 1, i + 20))) out.push(`+ ${l}`);
  return out.join('\n');
}

if (require.main === module) {
  const gen = generate();
  if (process.argv.includes('--check')) {
    const s = stale(gen);
    for (const d of s) console.error(`stale: ${d.file}\n${d.diff}\n`);
    process.exit(s.length ? 1 : 0);
  }
  for (const [rel, text] of gen.files) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  console.log(`wrote ${gen.files.size} files`);
}
