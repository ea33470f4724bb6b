// Writes what a library's record (tools/codegen/libraries.ts) says: its loader (src/ffi/<name>-lib.gen.ts),
// its namespace's index (src/<id>/index.ts), the promise form of its compile (src/<id>/async.gen.ts),
// and the package root (src/index.ts), which has a namespace per library.
import type { LibraryRecord } from './apis';
import type { Model } from './model';
import { banner, q } from './util';

/** The placeholders a record's text may hold, and the module of src/ffi that exports each. */
const PLACEHOLDERS: Record<string, string> = { CUDA_MAJOR: './versions' };

/** Where the generator writes a library's files. */
export const libraryFiles = (lib: LibraryRecord) => ({
  /** The koffi declarations. */
  declarations: `src/ffi/${lib.name}.gen.ts`,
  loader: `src/ffi/${lib.name}-lib.gen.ts`,
  index: `src/${lib.api.id}/index.ts`,
  async: `src/${lib.api.id}/async.gen.ts`,
  /** The facade's checkCudaErrors. */
  check: `src/${lib.api.id}/check.gen.ts`,
  /** The struct classes, where the headers have any. */
  structs: `src/${lib.api.id}/structs.gen.ts`,
});

/** A library's namespace on the package root. */
export const namespaceOf = (lib: LibraryRecord): string => lib.namespace ?? lib.api.id;

/** The import of a library's functions, as `L`, from a module of src/<id>/. */
export const loaderImport = (lib: LibraryRecord): string => `import { lib${lib.name} as L } from '../ffi/${lib.name}-lib.gen';`;

/** A record's text as a TypeScript literal: a template literal where it holds `${CUDA_MAJOR}`. */
function literal(lib: LibraryRecord, text: string, used: Set<string>): string {
  const names = [...text.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]);
  if (!names.length) return q(text);
  for (const n of names) {
    if (!PLACEHOLDERS[n])
      throw new Error(
        `codegen: the record of ${lib.name} names \${${n}}; a record's text may name only ${Object.keys(PLACEHOLDERS).join(', ')}`,
      );
    used.add(n);
  }
  if (/[`\\]/.test(text)) throw new Error(`codegen: the record of ${lib.name} has a backquote or backslash in ${JSON.stringify(text)}`);
  return `\`${text}\``;
}

/** The loader: where the library is looked for, how it is checked, and its functions bound on first call. */
export function emitLoader(lib: LibraryRecord, from: string): string {
  const used = new Set<string>();
  const lit = (t: string) => literal(lib, t, used);
  const list = (xs: string[]) => `[${xs.map(lit).join(', ')}]`;
  const spec = [
    `  label: ${lit(lib.label)},`,
    `  envVar: ${lit(lib.envVar)},`,
    `  linuxNames: ${list(lib.linuxNames)},`,
    `  windowsNames: ${list(lib.windowsNames)},`,
    ...(lib.toolkitDirs ? [`  toolkitDirs: ${list(lib.toolkitDirs)},`] : []),
    ...(lib.wheelDirs ? [`  wheelDirs: ${list(lib.wheelDirs)},`] : []),
    `  hint: ${lit(lib.hint)},`,
    `  check: (lib) => checkVersion(lib, ${objectLiteral(lib.check)}),`,
  ];
  const files = libraryFiles(lib);
  const decls = files.declarations.replace(/^src\/ffi\//, './').replace(/\.ts$/, '');
  const options = lib.versionAfterInit ? `, { versionAfterInit: ${q(lib.versionAfterInit)} }` : '';
  const why = lib.loaderNote ? [`// ${lib.loaderNote}.`] : [];
  const fromVersions = ['checkVersion', ...[...used].filter((n) => PLACEHOLDERS[n] === './versions')].sort();
  return [
    banner(`the loader of ${lib.label}, from its record in tools/codegen/libraries.ts`, from),
    `// ${lib.label}, opened on first use. Its declarations (${files.declarations}) are read on the first bind, so`,
    `// that a program that never calls ${lib.label} pays nothing for them.`,
    ...why,
    `import { lazyLibrary, type LibraryInfo } from './binding';`,
    `import type { LibrarySpec } from './loader';`,
    `import { ${fromVersions.join(', ')} } from './versions';`,
    '',
    `/** Where ${lib.label} is looked for (${lib.envVar} first), and how it is recognised. */`,
    `export const ${lib.name}Spec: LibrarySpec = {`,
    ...spec,
    '};',
    '',
    `/** ${lib.label}'s functions, bound on first call (the library opens on the first of them). */`,
    `export const lib${lib.name} = lazyLibrary(${lib.name}Spec, () => require('${decls}') as typeof import('${decls}')${options});`,
    `/** Which file is in use and its version (loads it if needed). */`,
    `export const ${lib.name}LibraryInfo = (): LibraryInfo => lib${lib.name}.info();`,
    '',
  ].join('\n');
}

/** A plain object as a one-line TypeScript literal: `{ kind: 'cudaVersion', fn: 'cudaRuntimeGetVersion' }`. */
function objectLiteral(o: object): string {
  const value = (v: unknown): string => (typeof v === 'string' ? q(v) : Array.isArray(v) ? `[${v.map(value).join(', ')}]` : String(v));
  return `{ ${Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${value(v)}`)
    .join(', ')} }`;
}

/** The namespace's index: the generated modules, what the record adds, and libraryInfo(). */
export function emitIndex(lib: LibraryRecord, hasStructs: boolean, from: string): string {
  const id = lib.api.id;
  const x = lib.index;
  const o = [
    banner(`the entry point cuda-bindings/${id}, from its record in tools/codegen/libraries.ts`, from),
    '/**',
    ...x.doc.map((l) => ` * ${l}`),
    ` * @module cuda-bindings/${id}`,
    ' */',
    `export * from './api.gen';`,
    `export type { Result, OkOutputs } from '../ffi/result';`,
    `export * from './enums.gen';`,
    `export * from './constants.gen';`,
    `export * from './handles.gen';`,
  ];
  o.push(`export * from './check.gen';`);
  if (x.helpers) o.push(`export * from './helpers';`);
  if (x.async) o.push(`/** ${x.async.doc} */`, `export * as async from './${x.async.compile ? 'async.gen' : 'async'}';`);
  if (hasStructs) o.push(`export * from './structs.gen';`);
  o.push(`export type { Pointer, HostMemory, DevicePointer, Memory } from '../ffi/marshal';`);
  for (const r of x.reexports ?? []) {
    const names = r.names.join(', ');
    const line = `export { ${names} } from '${r.from}';`;
    o.push(line.length <= 140 ? line : `export {\n${r.names.map((n) => `  ${n},`).join('\n')}\n} from '${r.from}';`);
  }
  o.push(
    `export { LibraryLoadError, type FoundVia, type LoadAttempt } from '../ffi/loader';`,
    `export { CudaBindingsError, StatusError, type CudaLibrary } from '../ffi/errors';`,
    `import { ${lib.name}LibraryInfo } from '../ffi/${lib.name}-lib.gen';`,
    `import type { LibraryInfo } from '../ffi/binding';`,
    'export type { LibraryInfo };',
    '',
    `/** ${x.libraryInfo} */`,
    'export function libraryInfo(): LibraryInfo {',
    `  return ${lib.name}LibraryInfo();`,
    '}',
    '',
  );
  return o.join('\n');
}

/**
 * src/<id>/check.gen.ts: cuda-python's `checkCudaErrors` for the facade's results, which throws a
 * StatusError named by the facade's status enum and its text call (the record's `statusText`).
 */
export function emitCheck(lib: LibraryRecord, from: string): string {
  const { enumTs, success, withOutputs = [] } = lib.api.status;
  const ok = [success, ...withOutputs];
  const text = lib.statusText;
  const okText = ok.join(' or ');
  return [
    banner(`cuda-python's checkCudaErrors for the ${lib.api.title}, from its record in tools/codegen/libraries.ts`, from),
    `import { checkResult, type Checked, type StatusNames } from '../ffi/status';`,
    `import { ${enumTs} } from './enums.gen';`,
    ...(text ? [`import { ${text} } from './api.gen';`] : []),
    '',
    `/** How checkCudaErrors names the ${lib.api.title}'s statuses. */`,
    'const STATUS: StatusNames = {',
    `  library: ${q(lib.label)},`,
    `  names: ${enumTs},`,
    `  enumName: ${q(enumTs)},`,
    `  ok: [${ok.map((n) => `${enumTs}.${n}`).join(', ')}],`,
    ...(text ? [`  text: (code) => ${text}(code)[1],`] : []),
    `  anyCall: ${q(`a call of the ${lib.api.title}`)},`,
    '};',
    '',
    '/**',
    ` * cuda-python's \`checkCudaErrors\` for the ${lib.api.title}: the outputs of a call's result when its status`,
    ` * is ${okText} (nothing for \`[err]\`, the output for \`[err, value]\`, an array for more); otherwise throws`,
    ` * a StatusError that names the status and the call: \`STATUS_NAME: ${text ? `${text}'s text` : 'failed'} (in call)\`.`,
    ' * @param result - what a function of this facade returned: `[status, ...outputs]`.',
    " * @param fn - the call's name for the error; where absent, the call that returned `result` (a hand-written or `async` function's result is named only by this).",
    ' * @returns nothing, the one output, or the outputs as an array.',
    ' */',
    `export function checkCudaErrors<R extends readonly [${enumTs}, ...unknown[]]>(result: R, fn?: string): Checked<R> {`,
    '  return checkResult(result, STATUS, fn) as Checked<R>;',
    '}',
    '',
  ].join('\n');
}

/**
 * `async.<compile>`: the library's compile (`(prog, numOptions, options)`, nvrtcCompileProgram's and
 * nvvmCompileProgram's shape) on libuv's thread pool, and `compileProgram`, which core's Program uses.
 */
export function emitAsync(lib: LibraryRecord, model: Model, from: string): string {
  const fn = lib.index.async!.compile!;
  const f = model.functions.get(fn);
  const shape = f?.params.map((p) => p.name).join(', ');
  const prog = f?.params[0]?.type;
  if (!f || shape !== 'prog, numOptions, options' || prog?.k !== 'typedef')
    throw new Error(
      `codegen: ${lib.api.id}: async.compile names ${fn}, which must be a function (prog, numOptions, options) of its headers`,
    );
  const status = lib.api.status.enumTs;
  const what = lib.api.title.replace(/ API$/, '');
  return [
    banner(`the promise form of ${fn}, from the record in tools/codegen/libraries.ts`, from),
    `// The ${what} compile off the JS thread: ${fn} runs on libuv's thread pool (it holds a`,
    `// pool thread for the compile's duration; a compile has nothing to poll). Bad arguments reject.`,
    loaderImport(lib),
    `import * as X from '../ffi/struct-support';`,
    `import type { WaitOptions } from '../ffi/waits';`,
    `import type { ${status} } from './enums.gen';`,
    `import type { ${prog.name} } from './handles.gen';`,
    '',
    `export type { WaitOptions } from '../ffi/waits';`,
    '',
    '/**',
    ` * ${fn} on the thread pool; resolves with \`[status]\`. \`waitOptions.signal\`/\`timeout\``,
    ' * reject early with an AbortError/TimeoutError, but the compile runs to its end: destroy `prog`',
    ' * only once the promise settled without giving up, or later.',
    ' */',
    `export async function ${fn}(`,
    `  prog: ${prog.name} | null,`,
    '  numOptions: number,',
    '  options: string[] | null,',
    '  waitOptions?: WaitOptions,',
    `): Promise<[${status}]> {`,
    `  return [(await compileProgram('async.${fn}', prog, numOptions, options, waitOptions, () => {})) as ${status}];`,
    '}',
    '',
    `/** @internal ${fn} on the pool under the name \`fn\`; \`after\` runs once the compile itself returned (given up or not). */`,
    'export function compileProgram(',
    '  fn: string,',
    `  prog: ${prog.name} | null,`,
    '  numOptions: number,',
    '  options: string[] | null,',
    '  waitOptions: WaitOptions | undefined,',
    '  after: () => void,',
    '): Promise<number> {',
    `  return X.compileOnPool(fn, () => L.bind(${q(fn)}), prog, numOptions, options, waitOptions, after);`,
    '}',
    '',
  ].join('\n');
}

/** The package root: a namespace per library (the eager ones loaded with it, the others on first use), and core. */
export function emitRootIndex(libs: LibraryRecord[], from: string): string {
  const eager = libs.filter((l) => l.eager).map((l) => `\`${namespaceOf(l)}\``);
  const o = [
    banner('the package root, a namespace per record of tools/codegen/libraries.ts', from),
    '/**',
    ' * The CUDA APIs for Node.js, loaded at run time through koffi.',
    ' *',
    ` * In the published build every namespace but ${eager.join(' and ')} loads on its first use (tools/lazy-root.cjs`,
    " * rewrites these re-exports after tsc), so `require('cuda-bindings')` costs the runtime facade only.",
    ' * @module cuda-bindings',
    ' */',
    `export type { Result, OkOutputs } from './ffi/result';`,
    '/** The base of every error the package throws for a failure of its own: `catch (e) { if (e instanceof CudaBindingsError) … }`. */',
    `export { CudaBindingsError, type CudaLibrary } from './ffi/errors';`,
  ];
  for (const l of libs) {
    o.push(`/** The ${l.api.title} (\`cuda-bindings/${l.api.id}\`). */`, `export * as ${namespaceOf(l)} from './${l.api.id}';`);
  }
  o.push(
    '/** Objects that throw, free themselves and read like JavaScript (`cuda-bindings/core`). */',
    `export * as core from './core';`,
    '',
  );
  return o.join('\n');
}
