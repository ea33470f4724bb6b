// The generator: reads the CUDA headers through clang into a model (committed as
// tools/codegen/model/<api>.json) and writes the bindings from the model.
//   npm run generate                    headers -> model -> files (needs clang-14)
//   npm run generate -- --from-model    committed model -> files (no clang needed)
//   npm run generate -- --check         exits 1 with a diff when the committed files are stale
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sealed } from './util';
import { runClang, findClang, cudaInclude } from './clang';
import { buildModel, type Model } from './model';
import { TypeMap } from './types';
import { emitStructs } from './emit-structs';
import { emitEnums, collectConstants, emitConstants, emitHandles, emitFfi, emitFacade, type ConstantModel } from './emit-api';
import { planFunction, type Plan } from './plan';
import { resolve } from './ctype';
import type { ApiConfig, LibraryRecord } from './apis';
import { LIBRARIES } from './libraries';
import { emitLoader, emitIndex, emitAsync, emitCheck, emitRootIndex, libraryFiles, loaderImport } from './emit-library';
import { emitReducedHeader } from './emit-reduced';
import { missingEntries, unknownSubpaths } from './package-entries';
import { banner, hasBanner } from './util';
import { type ParsedApi, inputsOf, serialize, deserialize, readParsed, modelDir } from './parsed';

/** The APIs of the libraries (tools/codegen/libraries.ts): what is parsed and bound. */
export const APIS: ApiConfig[] = LIBRARIES.map((l) => l.api);
export const root = path.resolve(__dirname, '..', '..');

export interface Generated {
  /** Every file the generator owns: relative path -> contents. */
  files: Map<string, string>;
  models: Map<string, Model>;
  constants: Map<string, ConstantModel[]>;
}

/**
 * Where the model comes from: 'headers' parses the CUDA headers with clang (and writes the model file),
 * 'model' reads the committed tools/codegen/model/<id>.json; 'auto' parses where clang is installed.
 */
export type Source = 'headers' | 'model' | 'auto';

export interface GenerateOptions {
  /** The tree whose committed models are read (`source` 'model'): the repository, or a copy of it. */
  base?: string;
  /** Every library of the package, for the files that list them all (src/index.ts): `libraries` where absent. */
  all?: LibraryRecord[];
}

/** Everything the generator writes for these libraries, in memory: relative path -> contents. */
export function generate(libraries: LibraryRecord[] = LIBRARIES, source: Source = 'auto', options: GenerateOptions = {}): Generated {
  const fromHeaders = source === 'headers' || (source === 'auto' && hasClang());
  const base = options.base ?? root;
  const gen: Generated = { files: new Map(), models: new Map(), constants: new Map() };
  let toolkit: Model | undefined;
  for (const lib of libraries) {
    const parsed = fromHeaders ? parseApi(lib.api, toolkit) : readParsed(base, lib.api.id);
    if (lib.api.id === 'runtime') toolkit = parsed.model;
    emitApi(lib, parsed, gen, toolkit);
  }
  const ffi = libraries.map((l) => l.api).filter((a) => a.ffiConstants?.length);
  if (ffi.length) gen.files.set(FFI_CONSTANTS, emitFfiConstants(ffi, gen, headersVersion(gen.models.get(ffi[0].id)!, toolkit)));
  gen.files.set(ROOT_INDEX, emitRootIndex(options.all ?? libraries, headersVersion(toolkit ?? readParsed(base, 'runtime').model)));
  return gen;
}

/** The package root: a namespace per library. */
export const ROOT_INDEX = 'src/index.ts';

/** The values hand-written ffi and struct code takes from the headers (each API's `ffiConstants`). */
export const FFI_CONSTANTS = 'src/ffi/constants.gen.ts';

function emitFfiConstants(apis: ApiConfig[], gen: Generated, from: string): string {
  const o = [banner('values of the headers that the hand-written ffi and struct code uses', from), ''];
  for (const api of apis) {
    const model = gen.models.get(api.id)!;
    const constants = new Map(gen.constants.get(api.id)!.map((c) => [c.name, c]));
    for (const name of api.ffiConstants!) {
      const c = constants.get(name);
      const e = model.enumerators.get(name);
      if (c) o.push(`/** \`#define ${name}\` (${c.file}) */`, `export const ${name} = ${c.expr.replace(/ as [\w.]+$/, '')};`);
      else if (e) o.push(`/** \`${name}\`, of the enum ${e.enumName} */`, `export const ${name} = ${e.value};`);
      else
        throw new Error(
          `codegen: ${api.id}: ffiConstants names ${name}, which is neither a #define constant nor an enumerator of its headers`,
        );
    }
  }
  return o.join('\n') + '\n';
}

/**
 * The headers an API's files come from, as the banners name them: `CUDA 13.0` from CUDART_VERSION or
 * CUDA_VERSION, `NCCL 2.28.9` from NCCL_MAJOR/MINOR/PATCH. Headers that declare no version of their
 * own (nvrtc.h, nvml.h) ship with the toolkit, whose version the runtime's model gives.
 */
export function headersVersion(model: Model, toolkit?: Model): string {
  const macro = (m: Model, name: string) => m.macros.find((x) => x.name === name)?.body;
  const nccl = ['NCCL_MAJOR', 'NCCL_MINOR', 'NCCL_PATCH'].map((n) => macro(model, n));
  if (nccl.every((v) => v !== undefined && /^\d+$/.test(v))) return `NCCL ${nccl.join('.')}`;
  const cuda = macro(model, 'CUDART_VERSION') ?? macro(model, 'CUDA_VERSION');
  if (cuda !== undefined) {
    if (!/^\d+$/.test(cuda)) throw new Error(`codegen: headersVersion: the CUDA version macro reads '${cuda}', not a number such as 13000`);
    return `CUDA ${Math.floor(Number(cuda) / 1000)}.${Math.floor((Number(cuda) % 1000) / 10)}`;
  }
  return headersVersion(toolkit ?? readParsed(root, 'runtime').model);
}

/** Whether clang can be run here (the headers -> model step needs it). */
export function hasClang(): boolean {
  try {
    findClang();
    return true;
  } catch {
    return false;
  }
}

/** Where the real header of an API with a reduced header is, if this machine has it. */
function realHeader(api: ApiConfig): string | undefined {
  const env = process.env[`${api.id.toUpperCase()}_HEADER`];
  const cands = [env, path.join(cudaInclude(), api.headers[0])].filter(Boolean) as string[];
  return cands.find((c) => fs.existsSync(c));
}

/** Headers -> model, through clang. The model goes through its committed form, so code made from a
 * fresh parse and code made from the committed model cannot differ. */
export function parseApi(api: ApiConfig, toolkit?: Model): ParsedApi {
  const real = api.reducedHeader ? realHeader(api) : undefined;
  // Without the real header, parse the reduced one the generator wrote from it.
  const headers = api.reducedHeader && !real ? [path.basename(api.reducedHeader)] : api.headers;
  const extra = api.reducedHeader ? [real ? path.dirname(real) : path.join(root, path.dirname(api.reducedHeader))] : [];
  const cr = runClang(headers, [], extra);
  // A reduced header's #defines are the original header's.
  if (api.reducedHeader) for (const m of cr.macros) if (m.file === path.basename(api.reducedHeader)) m.file = api.headers[0];
  const bind = new Set(api.bindHeaders);
  const model = buildModel(cr, bind);
  if (api.own) keepOwn(api, model);
  // The same headers with the per-thread default stream: which symbol each symbol maps to.
  const perThread: [string, string][] = [];
  const runs = [cr];
  if (api.perThreadDefine) {
    const ptRun = runClang(headers, [api.perThreadDefine], extra);
    runs.push(ptRun);
    const pt = buildModel(ptRun, bind);
    for (const sym of pt.functions.keys()) {
      const m = /^(\w+)_(ptsz|ptds)$/.exec(sym);
      if (m && model.functions.has(m[1])) perThread.push([m[1], sym]);
    }
  }
  // A reduced header stands for the real one: the model depends on the reduced text.
  const substitute = new Map<string, { label: string; text: string }>();
  const parsed: ParsedApi = { model, perThread, clang: cr.version, inputs: {} };
  if (api.reducedHeader && real)
    substitute.set(real, { label: api.reducedHeader, text: reducedHeaderOf(api, deserialize(serialize(parsed)).model, toolkit) });
  parsed.inputs = inputsOf(runs, cudaInclude(), root, substitute);
  return deserialize(serialize(parsed));
}

/** The reduced header of an API, written from its model (after the inline wrappers are followed). */
function reducedHeaderOf(api: ApiConfig, model: Model, toolkit?: Model): string {
  const from = headersVersion(model, toolkit);
  if (api.inlineWrappers) followInlineWrappers(model);
  return emitReducedHeader(model, api.headers[0], from, { own: api.own, prelude: api.reducedPrelude, lines: !!api.reducedPrelude });
}

/** Model -> code: every file of one library. */
function emitApi(lib: LibraryRecord, parsed: ParsedApi, gen: Generated, toolkit?: Model): void {
  const api = lib.api;
  const model = parsed.model;
  const from = headersVersion(model, toolkit);
  gen.files.set(path.join(modelDir, `${api.id}.json`), serialize(parsed));
  if (api.reducedHeader) gen.files.set(api.reducedHeader, reducedHeaderOf(api, model, toolkit));
  else if (api.inlineWrappers) followInlineWrappers(model);
  const aliases = api.versionedSymbols ? followRenames(model, api.renameFilter) : new Map<string, string>();
  const bySymbol = new Map([...model.functions.values()].map((f) => [f.symbol, f.name]));
  const perThread = new Map<string, string>();
  for (const [sym, pt] of parsed.perThread) {
    const name = bySymbol.get(sym);
    if (name) perThread.set(name, pt);
  }
  const tm = new TypeMap(model, api.spec.integerHandles);
  const records = [...model.records.values()].filter((r) => !r.opaque && !r.flattened);
  const { constants, enumAliases, structAliases } = collectConstants(model, tm, api);
  for (const m of model.macros) {
    const v = api.own?.macroValues?.[m.name];
    if (v !== undefined) constants.push({ name: m.name, expr: v, value: v, kind: 'number', file: m.file });
  }
  const fns = [...model.functions.values()];
  const plans = fns.map((f) => planFunction(api, model, tm, f));
  const missing = plans.flatMap((p) => p.missingExtents);
  if (missing.length) {
    throw new Error(
      `codegen: ${api.id}: C may write through these pointers and no rule says how far (add each to extents, queried, elementExtents or notWritten in its spec; see tools/codegen/extents.ts):\n  ${missing.join('\n  ')}`,
    );
  }
  const byValue = new Map<string, (typeof records)[number]>();
  for (const f of fns) {
    for (const t of [f.ret, ...f.params.map((p) => p.type)]) {
      const r = resolve(t);
      if (r.k === 'record') byValue.set(r.key, model.records.get(r.key)!);
    }
  }
  const dir = `src/${api.id}`;
  gen.files.set(`${dir}/enums.gen.ts`, sealed(emitEnums(api, model, enumAliases, from)));
  gen.files.set(`${dir}/constants.gen.ts`, sealed(emitConstants(api, constants, from)));
  gen.files.set(`${dir}/handles.gen.ts`, sealed(emitHandles(api, model, tm, from)));
  let structs = emitStructs(api, model, tm, records, from);
  for (const [alias, target] of structAliases) {
    const t = model.records.get(target)?.name ?? target;
    structs += `/** Alias of {@link ${t}} (\`#define ${alias} ${target}\`). */\nexport const ${alias} = ${t};\nexport type ${alias} = ${t};\n`;
  }
  const files = libraryFiles(lib);
  const hasStructs = records.length + structAliases.length > 0;
  if (hasStructs) gen.files.set(files.structs, sealed(structs));
  gen.files.set(files.declarations, emitFfi(api, lib.label, model, tm, plans, perThread, [...byValue.values()], from));
  gen.files.set(`${dir}/api.gen.ts`, sealed(emitFacade(api, loaderImport(lib), model, tm, plans, from)));
  gen.files.set(files.loader, emitLoader(lib, from));
  gen.files.set(files.index, emitIndex(lib, hasStructs, from));
  gen.files.set(files.check, sealed(emitCheck(lib, from)));
  if (lib.index.async?.compile) gen.files.set(files.async, emitAsync(lib, model, from));
  gen.files.set(
    `test/cpu/fixtures/${api.id}-signatures.json`,
    JSON.stringify(
      plans.map((p) => ({
        name: p.fn.name,
        params: p.jsParams.map((j) => ({ name: j.name, ts: j.ts, c: j.c, ...(p.checked[j.name] ? { extent: p.checked[j.name] } : {}) })),
      })),
      null,
      1,
    ) + '\n',
  );
  gen.files.set(
    `tools/codegen/report-${api.id}.md`,
    report(api, model, plans, records.length, constants.length, perThread, aliases, parsed.clang, from),
  );
  gen.models.set(api.id, model);
  gen.constants.set(api.id, constants);
}

/**
 * `static inline nvJitLinkCreate(...) { return __nvJitLinkCreate_13_0(...); }`: the function is bound
 * as nvJitLinkCreate, with the wrapper's documentation, to the exported symbol it calls.
 */
function followInlineWrappers(model: Model): void {
  const byCallee = new Map([...model.inlineWrappers].map(([name, w]) => [w.callee, { name, ...w }]));
  const fns = [...model.functions.values()];
  model.functions.clear();
  for (const f of fns) {
    const w = byCallee.get(f.name);
    const g = w
      ? {
          ...f,
          name: w.name,
          symbol: f.name,
          loc: w.loc,
          doc: w.doc || f.doc,
          paramDocs: { ...f.paramDocs, ...w.paramDocs },
          returnDoc: w.returnDoc || f.returnDoc,
        }
      : f;
    model.functions.set(g.name, g);
  }
}

/**
 * Leaves in the model only what the API's own headers declare (and the foreign handle typedefs its
 * signatures use): nccl.h includes cuda_runtime.h, whose declarations belong to the runtime API.
 */
function keepOwn(api: ApiConfig, model: Model): void {
  const own = new Set(api.bindHeaders);
  const reduced = api.reducedHeader ? path.basename(api.reducedHeader) : undefined;
  for (const [k, f] of model.functions) if (api.own?.skipFunctions?.test(f.name)) model.functions.delete(k);
  for (const [k, e] of model.enums) if (!own.has(e.loc.file)) model.enums.delete(k);
  for (const [k, v] of model.enumerators) if (!model.enums.has(v.enumName)) model.enumerators.delete(k);
  for (const [k, r] of model.records) if (!own.has(r.loc.file) && !r.opaque) model.records.delete(k);
  const foreign = new Set(Object.keys(api.own?.foreignHandles ?? {}));
  for (const [k, t] of model.typedefs) if (!own.has(t.loc.file) && !foreign.has(k)) model.typedefs.delete(k);
  // Macros of the reduced header are the original header's.
  model.macros = model.macros.map((m) => (m.file === reduced ? { ...m, file: api.headers[0] } : m)).filter((m) => own.has(m.file));
}

/**
 * `#define cuMemAlloc cuMemAlloc_v2`: the function is bound as cuMemAlloc to the symbol cuMemAlloc_v2.
 * A #define of one plain name to another (`#define cuGraphInstantiate cuGraphInstantiateWithFlags`)
 * keeps both names, as cuda-python does; the returned map lists those aliases (alias -> target).
 */
function followRenames(model: Model, filter: (name: string, target: string) => boolean = () => true): Map<string, string> {
  const renamed = new Map<string, string[]>();
  const aliases = new Map<string, string>();
  for (const m of model.macros) {
    // `#define cuMemAlloc cuMemAlloc_v2`, or through the per-thread macro: `__CUDA_API_PTDS(cuMemcpyHtoD_v2)`.
    const target = /^(?:__CUDA_API_PT(?:DS|SZ)\(\s*)?(\w+)\s*\)?$/.exec(m.body)?.[1];
    if (!target || !model.functions.has(target) || m.name === target || m.name.startsWith('__') || !filter(m.name, target)) continue;
    renamed.set(target, [...(renamed.get(target) ?? []), m.name]);
    if (!/_v\d+$/.test(target)) aliases.set(m.name, target);
  }
  const fns = [...model.functions.values()];
  model.functions.clear();
  for (const f of fns) {
    const names = renamed.get(f.name) ?? [f.name];
    // A plain target keeps its own name beside the alias.
    if (names.some((n) => aliases.get(n) === f.name)) names.push(f.name);
    for (const name of names) model.functions.set(name, { ...f, name, symbol: f.name });
  }
  return aliases;
}

function report(
  api: ApiConfig,
  model: Model,
  plans: Plan[],
  nRecords: number,
  nConst: number,
  perThread: Map<string, string>,
  aliases: Map<string, string>,
  clang: string,
  from: string,
): string {
  const o: string[] = [
    `# ${api.title}: coverage report`,
    '',
    `Generated by tools/codegen (\`npm run generate\`) from the ${from} headers — do not edit.`,
    '',
  ];
  const byFile = new Map<string, number>();
  for (const p of plans) byFile.set(p.fn.loc.file, (byFile.get(p.fn.loc.file) ?? 0) + 1);
  const status = plans.filter((p) => p.fn.retSpelled === api.status.type).length;
  o.push(`Parsed with ${clang.replace(/\s*\(.*$/, '')}.`, '');
  o.push('| what | count |', '|---|---|');
  o.push(`| functions bound | ${plans.length} |`);
  for (const [f, n] of byFile) o.push(`| … declared in \`${f}\` | ${n} |`);
  o.push(`| … returning \`${api.status.type}\` | ${status} |`);
  if (api.versionedSymbols)
    o.push(`| … bound to a versioned symbol (\`_v2\`, …) | ${plans.filter((p) => p.fn.symbol !== p.fn.name).length} |`);
  if (api.perThreadDefine) o.push(`| … with a per-thread default stream variant | ${perThread.size} |`);
  if (api.versionedSymbols) o.push(`| … names that alias another bound name (\`#define\` of a plain name) | ${aliases.size} |`);
  o.push(`| enums | ${model.enums.size} (${[...model.enums.values()].reduce((a, e) => a + e.values.length, 0)} enumerators) |`);
  o.push(`| structs and unions (nested unnamed ones included) | ${nRecords} |`);
  o.push(`| #define constants | ${nConst} |`);
  o.push('', '## Skipped', '', '| name | why |', '|---|---|');
  for (const [n, why] of api.skipped) o.push(`| ${n} | ${why} |`);
  const rows = plans.flatMap((p) => p.extentRules.map((r) => ({ fn: p.fn.name, ...r })));
  const kinds = new Map<string, number>();
  for (const r of rows) kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
  o.push('', '## Pointers C writes through', '');
  o.push(
    `Every parameter that is a pointer to non-const data (not an opaque handle), and every array of data pointers (\`name[i]\`), with the rule that bounds what C writes through it (\`tools/codegen/extents.ts\`): ${rows.length} in all, ${[...kinds].map(([k, n]) => `${n} by \`${k}\``).join(', ')}. The generator fails on one without a rule.`,
  );
  o.push('', '| function | parameter | C type | rule | extent |', '|---|---|---|---|---|');
  for (const r of rows) o.push(`| \`${r.fn}\` | \`${r.param}\` | \`${r.c}\` | ${r.kind} | ${r.rule.replace(/\|/g, '\\|')} |`);
  const fe = Object.entries(api.spec.fieldExtents ?? {}).flatMap(([cls, fields]) => Object.entries(fields).map(([f, e]) => [cls, f, e]));
  if (fe.length) {
    o.push(
      '',
      '### Pointer fields of structs',
      '',
      'A pointer field set to host memory keeps it; every call given the struct checks that it is still attached and as long as when it was set, and, for these fields, as long as the struct describes:',
      '',
    );
    o.push('| struct | field | bytes |', '|---|---|---|');
    for (const [cls, f, e] of fe) o.push(`| \`${cls}\` | \`${f}\` | \`${e.replace(/\|/g, '\\|')}\` |`);
  }
  o.push('', '## Bound functions', '', '| function | symbol | header | notes |', '|---|---|---|---|');
  for (const p of plans) {
    const alias = aliases.get(p.fn.name);
    const notes = [
      alias ? `alias of \`${alias}\` (\`#define ${p.fn.name} ${alias}\`)` : '',
      perThread.has(p.fn.name) ? `per-thread: \`${perThread.get(p.fn.name)}\`` : '',
      ...p.notes,
    ]
      .filter(Boolean)
      .join('; ');
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

/** Folders that hold generated files beside hand-written ones. */
const GENERATED_HOMES = ['src', 'test', path.join('tools', 'codegen')];

/**
 * Files that look generated (a `.gen.ts` name, or a generator's banner in the first lines) but that
 * the generator no longer writes: a renamed or removed API's leftovers.
 */
export function orphans(gen: Generated, base: string = root): string[] {
  const owned = new Set([...gen.files.keys()].map((f) => path.normalize(f)));
  const out: string[] = [];
  const walk = (rel: string): void => {
    if (!fs.existsSync(path.join(base, rel))) return;
    for (const e of fs.readdirSync(path.join(base, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(r);
        continue;
      }
      if (owned.has(r) || !/\.(ts|md|h|json)$/.test(e.name)) continue;
      if (e.name.endsWith('.gen.ts') || hasBanner(fs.readFileSync(path.join(base, r), 'utf8').slice(0, 400))) out.push(r);
    }
  };
  for (const home of GENERATED_HOMES) walk(home);
  return out.sort();
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
  const gen = generate(LIBRARIES, process.argv.includes('--from-model') ? 'model' : 'headers');
  if (process.argv.includes('--check')) {
    const s = stale(gen);
    for (const d of s) console.error(`stale: ${d.file}\n${d.diff}\n`);
    const o = orphans(gen);
    for (const f of o) console.error(`orphan (looks generated, but the generator does not write it): ${f}`);
    process.exit(s.length || o.length ? 1 : 0);
  }
  for (const [rel, text] of gen.files) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  console.log(`wrote ${gen.files.size} files`);
  const json = (f: string) => JSON.parse(fs.readFileSync(path.join(root, f), 'utf8'));
  const entries = [
    ...missingEntries(json('package.json'), json('typedoc.json'), LIBRARIES),
    ...unknownSubpaths(json('package.json'), LIBRARIES).map((k) => `package.json: exports["${k}"] names no library record`),
  ];
  if (entries.length)
    console.warn(`package.json and typedoc.json do not match the library records (tools/codegen/libraries.ts):\n  ${entries.join('\n  ')}`);
  const o = orphans(gen);
  if (o.length) console.warn(`these files look generated but the generator no longer writes them; delete them:\n  ${o.join('\n  ')}`);
}
