// The generated files are what the generator writes today, checked in two steps so that every
// machine checks what it can: model -> code here, everywhere (no clang needed), and headers -> model
// in clang-model.proof.test.ts (`npm run test:proofs`, where clang is installed; CI installs clang-14
// and must run it). The model records a hash of every header it came from, so a machine without
// clang still notices headers that differ from the model's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { APIS, ROOT_INDEX, generate, headersVersion, orphans, root, stale, type Generated } from '../../../tools/codegen/main';
import { libraryFiles } from '../../../tools/codegen/emit-library';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import type { Model } from '../../../tools/codegen/model';
import { changedInputs, readParsed } from '../../../tools/codegen/parsed';
import { cudaInclude } from '../../../tools/codegen/clang';
import * as runtime from '../../../src/runtime';
import { declarations } from '../../../src/ffi/cudart.gen';

test('the CUDA headers here are the ones the committed model was made from (sha256 of each file)', () => {
  const changed = APIS.flatMap((api) => changedInputs(readParsed(root, api.id), cudaInclude(), root).map((c) => `${api.id}: ${c}`));
  expect(changed).toEqual([]);
});

test('the generated files are current with the committed model (run `npm run generate -- --from-model` when this fails)', () => {
  const s = stale(generate(LIBRARIES, 'model'));
  expect(s.map((d) => `${d.file}\n${d.diff}`)).toEqual([]);
}, 120_000);

test('the generator binds every function the runtime headers declare: each is a facade function with a koffi declaration', () => {
  const gen = generate(LIBRARIES, 'model');
  const fns = gen.models.get('runtime')!.functions;
  const status = [...fns.values()].filter((f) => f.retSpelled === 'cudaError_t' && f.loc.file === 'cuda_runtime_api.h').map((f) => f.name);
  expect(status.length).toBe(307);
  const extra = [
    'cudaGetErrorName',
    'cudaGetErrorString',
    'cudaCreateChannelDesc',
    'cudaProfilerStart',
    'cudaGraphicsGLRegisterBuffer',
    'cudaEGLStreamConsumerConnect',
    'cudaVDPAUGetDevice',
  ];
  for (const name of extra) expect(fns.has(name)).toBe(true);
  const facade = runtime as unknown as Record<string, unknown>;
  expect([...status, ...extra].filter((n) => typeof facade[n] !== 'function' || !(n in declarations))).toEqual([]);
}, 120_000);

test('a #define of one plain name to another keeps both names, and the report lists the alias', () => {
  const gen = generate(LIBRARIES, 'model');
  const fns = gen.models.get('driver')!.functions;
  expect(fns.get('cuGraphInstantiate')!.symbol).toBe('cuGraphInstantiateWithFlags');
  expect(fns.get('cuGraphInstantiateWithFlags')!.symbol).toBe('cuGraphInstantiateWithFlags');
  // A versioned rename keeps only the header's name, as cuda-python does.
  expect(fns.get('cuMemAlloc')!.symbol).toBe('cuMemAlloc_v2');
  expect(fns.has('cuMemAlloc_v2')).toBe(false);
  const report = gen.files.get('tools/codegen/report-driver.md')!;
  expect(report).toContain(
    '| `cuGraphInstantiate` | `cuGraphInstantiateWithFlags` | cuda.h:20415 | alias of `cuGraphInstantiateWithFlags`',
  );
  expect(report).toMatch(/names that alias another bound name .* \| 1 \|/);
}, 120_000);

test('the generator binds every nvmlReturn_t function of nvml.h from the committed declarations, following its renames', () => {
  const gen = generate();
  const model = gen.models.get('nvml')!;
  const fns = [...model.functions.values()];
  // 374 nvmlReturn_t functions (the header repeats some declarations) and nvmlErrorString.
  expect([fns.length, fns.filter((f) => f.retSpelled === 'nvmlReturn_t').length]).toEqual([375, 374]);
  expect(model.functions.get('nvmlInit')?.symbol).toBe('nvmlInit_v2');
  expect(model.functions.get('nvmlDeviceGetComputeRunningProcesses')?.symbol).toBe('nvmlDeviceGetComputeRunningProcesses_v3');
  // An old name of a current function is not a rename: nvmlGetExcludedDeviceCount keeps its name.
  expect(model.functions.get('nvmlGetExcludedDeviceCount')?.symbol).toBe('nvmlGetExcludedDeviceCount');
  expect(model.records.size).toBeGreaterThan(150);
}, 120_000);

test('every function the NVML spec describes exists (a rename would silently drop its entry)', () => {
  const { nvmlApi } = require('../../../tools/codegen/nvml-spec') as typeof import('../../../tools/codegen/nvml-spec');
  const model = generate().models.get('nvml')!;
  const named = [...Object.keys(nvmlApi.spec.paramSpecs), ...Object.keys(nvmlApi.spec.extents), ...Object.keys(nvmlApi.spec.checks ?? {})];
  expect(named.filter((n) => !model.functions.has(n))).toEqual([]);
}, 120_000);

test('the generator fails on a pointer C writes through that has no extent rule, naming it', () => {
  const { nvrtc } = require('../../../tools/codegen/libraries');
  const { nvrtcGetPTX: _dropped, ...queried } = nvrtc.api.spec.queried;
  const api = { ...nvrtc.api, spec: { ...nvrtc.api.spec, queried } };
  expect(() => generate([{ ...nvrtc, api }])).toThrow(
    /codegen: nvrtc: C may write through these pointers and no rule says how far[^]*\n {2}nvrtcGetPTX\(ptx: char \*\)$/,
  );
}, 120_000);

test('the coverage reports list every pointer C writes through with its rule', () => {
  const gen = generate();
  for (const api of ['runtime', 'driver', 'nvrtc']) {
    const report = gen.files.get(`tools/codegen/report-${api}.md`)!;
    const rows = report
      .split('## Pointers C writes through')[1]
      .split(/## Bound functions|### Pointer fields/)[0]
      .split('\n')
      .filter((l) => l.startsWith('| `'));
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(r).toMatch(/^\| `\w+` \| `[\w[\]]+` \| `[^`]+` \| (type|count|size|query|elements|not written) \| .+ \|$/);
  }
  expect(gen.files.get('tools/codegen/report-driver.md')).toContain(
    '| `cuCoredumpGetAttribute` | `value` | `void *` | size | `size` bytes, checked |',
  );
  expect(gen.files.get('tools/codegen/report-nvrtc.md')).toContain('| `nvrtcGetSupportedArchs` | `supportedArchs` | `int *` | query |');
}, 120_000);

let fromModel: Generated | undefined;
/** The generator's output from the committed model, made once for the tests below. */
const generated = (): Generated => (fromModel ??= generate(LIBRARIES, 'model'));

test('no file looks generated (a .gen.ts name or a generator banner) unless the generator writes it', () => {
  expect(orphans(generated())).toEqual([]);
}, 120_000);

test('a leftover generated file is an orphan: by its .gen.ts name, or by its banner', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-orphans-'));
  try {
    fs.mkdirSync(path.join(tmp, 'src', 'runtime'), { recursive: true });
    fs.mkdirSync(path.join(tmp, 'tools', 'codegen'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'src', 'runtime', 'api.gen.ts'), 'export {};\n');
    fs.writeFileSync(path.join(tmp, 'src', 'runtime', 'old.gen.ts'), 'export {};\n');
    fs.writeFileSync(
      path.join(tmp, 'src', 'runtime', 'enums.ts'),
      '// Generated by tools/codegen from the CUDA 13.0 headers — do not edit. (enums)\n',
    );
    fs.writeFileSync(path.join(tmp, 'src', 'runtime', 'index.ts'), '// hand-written\n');
    fs.writeFileSync(
      path.join(tmp, 'tools', 'codegen', 'report-gone.md'),
      '# Gone: coverage report\n\nGenerated by tools/codegen (`npm run generate`) from the CUDA 13.0 headers — do not edit.\n',
    );
    const owned: Generated = { files: new Map([['src/runtime/api.gen.ts', '']]), models: new Map(), constants: new Map() };
    expect(orphans(owned, tmp)).toEqual([
      path.join('src', 'runtime', 'enums.ts'),
      path.join('src', 'runtime', 'old.gen.ts'),
      path.join('tools', 'codegen', 'report-gone.md'),
    ]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test("every generated TypeScript file is named .gen.ts and opens with the banner naming the headers' version read from the model", () => {
  const gen = generated();
  const ts = [...gen.files.keys()].filter((f) => f.endsWith('.ts'));
  // Per library: enums, constants, handles, declarations, facade, loader, index and check helper; its structs where
  // its headers declare any (NVRTC's, nvJitLink's, nvFatbin's and NVVM's declare none: no empty module
  // is written); async where its record says; and src/ffi/constants.gen.ts and the package root.
  const structs = ts.filter((f) => f.endsWith('/structs.gen.ts'));
  expect(structs.sort()).toEqual(['driver', 'nccl', 'nvml', 'runtime'].map((id) => `src/${id}/structs.gen.ts`));
  const asyncs = LIBRARIES.filter((l) => l.index.async?.compile).length;
  expect(ts.length).toBe(LIBRARIES.length * 8 + structs.length + asyncs + 2);
  // The entry points keep the names package.json gives them.
  const entryPoints = new Set([ROOT_INDEX, ...LIBRARIES.map((l) => libraryFiles(l).index)]);
  expect(ts.filter((f) => !f.endsWith('.gen.ts') && !entryPoints.has(f))).toEqual([]);
  const wrong = ts.filter(
    (f) =>
      !gen.files
        .get(f)!
        .startsWith(`// Generated by tools/codegen from the ${f.includes('nccl') ? 'NCCL 2.28.9' : 'CUDA 13.0'} headers — do not edit.`),
  );
  expect(wrong).toEqual([]);
  expect(gen.files.get('tools/codegen/report-driver.md')).toContain('from the CUDA 13.0 headers — do not edit.');
}, 120_000);

test("the headers' version comes from CUDART_VERSION, CUDA_VERSION or NCCL_MAJOR/MINOR/PATCH, else from the toolkit (the runtime model)", () => {
  const model = (macros: Record<string, string>) =>
    ({ macros: Object.entries(macros).map(([name, body]) => ({ name, body, file: 'x.h' })) }) as unknown as Model;
  expect(headersVersion(model({ CUDART_VERSION: '13010' }))).toBe('CUDA 13.1');
  expect(headersVersion(model({ CUDA_VERSION: '12090' }))).toBe('CUDA 12.9');
  expect(headersVersion(model({ NCCL_MAJOR: '2', NCCL_MINOR: '30', NCCL_PATCH: '1' }))).toBe('NCCL 2.30.1');
  expect(headersVersion(model({}), model({ CUDART_VERSION: '14000' }))).toBe('CUDA 14.0');
  expect(() => headersVersion(model({ CUDART_VERSION: 'X' }))).toThrow(/headersVersion: the CUDA version macro reads 'X'/);
});

test('generated code carries no eslint-disable, no `void X;` to silence an unused import, and only the imports it uses', () => {
  const gen = generated();
  const bad: string[] = [];
  for (const [f, text] of gen.files) {
    if (!f.endsWith('.ts')) continue;
    if (text.includes('eslint-disable')) bad.push(`${f}: eslint-disable`);
    if (/^void \w+;$/m.test(text)) bad.push(`${f}: void`);
    const body = text
      .split('\n')
      .filter((l) => !l.startsWith('import '))
      .join('\n');
    for (const m of text.matchAll(/^import (?:type )?\* as (\w+) from/gm))
      if (!new RegExp(`\\b${m[1]}\\.`).test(body)) bad.push(`${f}: unused ${m[1]}`);
  }
  expect(bad).toEqual([]);
  // nvrtc's facade passes no kernel arguments, host functions or memory: those imports are absent.
  expect(gen.files.get('src/nvrtc/api.gen.ts')).not.toMatch(/import .* (HC|KA|W) /);
}, 120_000);

test('an undocumented struct\'s doc line names it once in C words ("struct char1", "union res in struct cudaResourceDesc")', () => {
  const gen = generated();
  const structs = [...gen.files]
    .filter(([f]) => f.endsWith('/structs.gen.ts'))
    .map(([, t]) => t)
    .join('\n');
  expect(structs).not.toMatch(/(struct|union) (struct|union) /);
  expect(gen.files.get('src/runtime/structs.gen.ts')).toContain('/** struct char1 */');
  expect(gen.files.get('src/runtime/structs.gen.ts')).toContain('/** union res in struct cudaResourceDesc */');
}, 120_000);

test("every enumerator, struct field (getter, setter, Init property) and handle brand has a doc comment: the header's text, else what it is in C terms", () => {
  const gen = generated();
  const enums = gen.files.get('src/runtime/enums.gen.ts')!;
  // Doxygen's `::name` reads as the name; \deprecated as a sentence.
  expect(enums).toContain('complete (see cudaEventQuery() and cudaStreamQuery()). */');
  expect(enums).toContain('  /** Deprecated: This error return is deprecated as of CUDA 5.0.');
  expect(enums).toContain(
    '  /** `cudaRoundNearest` = 0 of `enum cudaRoundMode` (no description in the header). */\n  cudaRoundNearest = 0,',
  );
  const structs = gen.files.get('src/runtime/structs.gen.ts')!;
  expect(structs).toContain('  /** `signed char x`, of `struct char1` (no description in the header). */\n  get x(): number {');
  expect(structs).toContain('  /** Height in elements */\n  height?: number | bigint;');
  // A trailing `//!<` comment of nvml.h, through the reduced header.
  expect(gen.files.get('src/nvml/enums.gen.ts')).toContain('  /** Feature disabled */\n  NVML_FEATURE_DISABLED = 0,');
  const bare: string[] = [];
  const joined: string[] = [];
  for (const [f, text] of gen.files) {
    if (!/\/(enums|structs|handles)\.gen\.ts$/.test(f)) continue;
    const lines = text.split('\n');
    lines.forEach((l, i) => {
      if (/^ {2}(\w+ = -?\d+,|get \w+\(|set \w+\(|\w+\?: |readonly __brand)/.test(l) && !lines[i - 1].endsWith('*/'))
        bare.push(`${f}:${i + 1}: ${l}`);
      if (/\/\*\*.*(\w::\w|\s::\w|\*\*\*)/.test(l)) joined.push(`${f}:${i + 1}: ${l.slice(0, 100)}`);
    });
  }
  expect(bare).toEqual([]);
  expect(joined.filter((l) => !l.includes('_union::'))).toEqual([]);
}, 120_000);

test('the spec files import ParamSpec from apis.ts, not from another spec', () => {
  const dir = path.join(root, 'tools', 'codegen');
  const specs = fs.readdirSync(dir).filter((f) => f.endsWith('-spec.ts'));
  expect(specs.length).toBe(APIS.length);
  const crossed = specs.filter((f) => /from '\.\/\w+-spec'/.test(fs.readFileSync(path.join(dir, f), 'utf8')));
  expect(crossed).toEqual([]);
});

/** The parameter names of a TypeScript parameter list (commas inside types aside). */
function topLevelNames(list: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= list.length; i++) {
    const ch = list[i];
    if (ch === '(' || ch === '[' || ch === '{' || ch === '<') depth++;
    else if (ch === ')' || ch === ']' || ch === '}' || (ch === '>' && list[i - 1] !== '=')) depth--;
    else if ((ch === ',' && depth === 0) || i === list.length) {
      const part = list.slice(start, i).trim();
      if (part) names.push(part.split(/\??:/)[0]);
      start = i + 1;
    }
  }
  return names;
}

test("each generated function documents its parameters and the tuple it returns, from the header's \\param and \\return", () => {
  const gen = generated();
  const runtimeApi = gen.files.get('src/runtime/api.gen.ts')!;
  // One JS parameter (count is an output): @returns names both elements and the statuses of \return.
  expect(runtimeApi).toContain(
    [
      '/**',
      ' * Returns which device is currently being used',
      ' * @returns `[err, device]` — `err`: the status (cudaSuccess, cudaErrorInvalidValue); `device`: Returns the device on which the active host thread executes the device code; the outputs are null unless `err` is cudaSuccess.',
      ' */',
    ].join('\n'),
  );
  expect(gen.files.get('src/driver/api.gen.ts')).toContain(' * @param dev - Device to get identifier string for\n');
  // From a reduced header, which carries the original's \param and \return lines.
  expect(gen.files.get('src/nvml/api.gen.ts')).toContain(' * @param length - The maximum allowed length of the string returned in name\n');
  expect(gen.files.get('src/nvjitlink/api.gen.ts')).toMatch(
    /@returns `\[err, handle\]` — `err`: the status \(NVJITLINK_SUCCESS, NVJITLINK_ERROR_UNRECOGNIZED_OPTION/,
  );
  // Every exported function has a @returns, and a @param for each of its parameters.
  const missing: string[] = [];
  for (const [f, text] of gen.files) {
    if (!f.endsWith('/api.gen.ts')) continue;
    for (const m of text.matchAll(/\/\*\*\n((?: \*.*\n)+) \*\/\n\/\/ .*\nexport function (\w+)\((.*)\): \[/g)) {
      const params = topLevelNames(m[3]);
      const documented = [...m[1].matchAll(/@param (\w+) - \S/g)].map((x) => x[1]);
      if (!/@returns `\[err/.test(m[1]) || documented.join() !== params.join()) missing.push(`${f}: ${m[2]}`);
    }
  }
  expect(missing).toEqual([]);
  // Inline commands read as their words: `\p handle` is `handle`.
  expect(gen.files.get('src/nvjitlink/api.gen.ts')).toContain('sets the output parameter handle.');
  expect([...gen.files].filter(([f, t]) => f.endsWith('.gen.ts') && /^ \* .*\\[pc] /m.test(t)).map(([f]) => f)).toEqual([]);
  expect(
    [...gen.files]
      .filter(([f]) => f.endsWith('/api.gen.ts'))
      .map(([, t]) => (t.match(/^export function /gm) ?? []).length)
      .reduce((a, b) => a + b),
  ).toBeGreaterThan(1200);
}, 120_000);
