// The package's types as a user's strict project sees them: the README's ```ts blocks compile,
// checking a status narrows the outputs, and the type holes stay closed (test/cpu/fixtures/types:
// every `@ts-expect-error` there must still be needed).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import * as ts from 'typescript';
import { cudart } from '../../../src';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import { namespaceOf } from '../../../tools/codegen/emit-library';

const root = path.join(__dirname, '..', '..', '..');
const fixtures = path.join(__dirname, '..', 'fixtures', 'types');

/** The README's ```ts blocks, in order. */
function readmeBlocks(): string[] {
  const md = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  return [...md.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/**
 * What the README's fragments use without defining: the variables of the surrounding program,
 * typed as the API takes them.
 */
const PRELUDE = `
declare const kernel: Parameters<typeof cudart.cudaLaunchKernel>[0];
declare const blocks: number, n: number, rank: number, nranks: number, localRank: number, peer: number;
declare const dX: bigint, dY: bigint;
declare const grid: cudart.dim3Init, block: cudart.dim3Init;
declare const source: string;
declare const ltoir: Buffer;
declare const xs: Float32Array, ys: Float32Array;
declare const send: core.DeviceBuffer, recv: core.DeviceBuffer, a: core.DeviceBuffer, b: core.DeviceBuffer;
`;

/**
 * A README block as a module: its imports at the top (from src), everything else in an async
 * function so that `await` and names reused across blocks compile.
 */
function blockModule(block: string, srcPath: string): string {
  const lines = block.split('\n');
  // The package root and its subpaths (cuda-bindings/runtime is src/runtime), and the package's dependencies.
  const imports = lines
    .filter((l) => /^import /.test(l))
    .map((l) => l.replace(/'cuda-bindings(\/[\w-]+)?'/, (_, sub: string | undefined) => `'${srcPath}${sub ?? ''}'`))
    .map((l) => l.replace(/'prom-client'/, `'${path.join(root, 'node_modules', 'prom-client')}'`));
  const body = lines.filter((l) => !/^import /.test(l));
  const all = `import { cudart, cuda, nvrtc, nvjitlink, nvml, nccl, core } from '${srcPath}';`;
  // A block's own import of a namespace replaces the one the prelude makes.
  const own = new Set(
    imports.flatMap(
      (l) =>
        /\{([^}]*)\}/
          .exec(l)?.[1]
          .split(',')
          .map((s) => s.trim()) ?? [],
    ),
  );
  const pre = all.replace(
    /\{([^}]*)\}/,
    (_, names: string) =>
      `{ ${names
        .split(',')
        .map((s) => s.trim())
        .filter((s) => !own.has(s))
        .join(', ')} }`,
  );
  // A block on core passes core's Stream; the others the runtime's handle.
  const stream = own.has('core') ? 'declare const stream: core.Stream;' : 'declare const stream: cudart.cudaStream_t;';
  return [...imports, pre, PRELUDE, stream, 'export async function readmeBlock(): Promise<void> {', ...body, '}', ''].join('\n');
}

/**
 * A module that passes the result of every status-returning function of every facade (their return
 * types, read from src/<id>/api.gen.ts) to cuda-python's check helper as a user writes it, and to
 * the facade's own checkCudaErrors.
 */
function idiomModule(srcPath: string): string {
  const o = [`import * as P from '${srcPath}';`, ''];
  for (const lib of LIBRARIES) {
    const [ns, status] = [namespaceOf(lib), lib.api.status.enumTs];
    const file = path.join(root, 'src', lib.api.id, 'api.gen.ts');
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const names = sf.statements
      .filter(ts.isFunctionDeclaration)
      .filter((f) => f.type && new RegExp(`^(Res<|Result<|\\[E\\.${status}\\b)`).test(f.type.getText(sf)))
      .map((f) => f.name!.text);
    o.push(
      `function check_${ns}<T extends unknown[]>(r: readonly [P.${ns}.${status}, ...T]): T {`,
      `  if (r[0] !== 0) throw new Error(P.${ns}.${status}[r[0]]);`,
      '  return r.slice(1) as T;',
      '}',
      `export function every_${ns}(): number {`,
      `  let n = 0;`,
      ...names.flatMap((f) => [
        `  { const r = null as unknown as ReturnType<typeof P.${ns}.${f}>; check_${ns}(r); P.${ns}.checkCudaErrors(r); n++; }`,
      ]),
      '  return n;',
      '}',
      '',
    );
  }
  return o.join('\n');
}

/** The package's strict compiler options, as a user's project has them. */
function strictOptions(): ts.CompilerOptions {
  return {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
    esModuleInterop: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
  };
}

/** Diagnostics of compiling `files` under the package's strict options, as `file(line): message`. */
function compile(files: string[]): string[] {
  return diagnosticsOf(ts.createProgram(files, strictOptions()));
}

function diagnosticsOf(program: ts.Program): string[] {
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${path.basename(d.file.fileName)}(${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1})` : '';
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('types under strict', () => {
  let dir: string;
  let diagnostics: string[];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-bindings-types-'));
    const blocks = readmeBlocks().map((b, i) => {
      const f = path.join(dir, `readme-${i + 1}.ts`);
      fs.writeFileSync(f, blockModule(b, path.join(root, 'src')));
      return f;
    });
    const own = fs
      .readdirSync(fixtures)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(fixtures, f));
    const idiom = path.join(dir, 'idiom-every-function.ts');
    fs.writeFileSync(idiom, idiomModule(path.join(root, 'src')));
    diagnostics = compile([...blocks, ...own, idiom]);
  }, 240_000);

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the README has ts blocks to compile', () => {
    expect(readmeBlocks().length).toBeGreaterThanOrEqual(9);
  });

  test("the README's ts blocks compile", () => {
    expect(diagnostics.filter((d) => d.startsWith('readme-'))).toEqual([]);
  });

  test('checking the status narrows the outputs, in every API', () => {
    expect(diagnostics.filter((d) => d.startsWith('narrowing.ts'))).toEqual([]);
  });

  test("cuda-python's check helper, as a user writes it, takes every facade function's result", () => {
    expect(diagnostics.filter((d) => d.startsWith('idiom'))).toEqual([]);
  });

  test('the idiom reaches the functions of every library', () => {
    const text = fs.readFileSync(path.join(dir, 'idiom-every-function.ts'), 'utf8');
    const counts = LIBRARIES.map((lib) => text.split(`check_${namespaceOf(lib)}(r)`).length - 1);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(8);
  });

  test('device pointers, attribute names and struct classes reject what is wrong', () => {
    expect(diagnostics.filter((d) => d.startsWith('holes.ts'))).toEqual([]);
  });

  test('nothing else fails to compile', () => {
    expect(diagnostics).toEqual([]);
  });
});

/** The published typings: the declarations tsconfig.build.json writes (with stripInternal). */
describe('published typings', () => {
  let dir: string;
  let dts: Map<string, string>;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-bindings-dts-'));
    const cfg = ts.getParsedCommandLineOfConfigFile(
      path.join(root, 'tsconfig.build.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
    )!;
    const program = ts.createProgram(cfg.fileNames, {
      ...cfg.options,
      outDir: dir,
      declaration: true,
      emitDeclarationOnly: true,
      noEmit: false,
      noEmitOnError: false,
    });
    dts = new Map();
    program.emit(undefined, (f, text) => {
      if (f.endsWith('.d.ts')) dts.set(path.relative(dir, f), text);
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, text);
    });
  }, 240_000);

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the build strips what is marked @internal', () => {
    const cfg = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
    expect(cfg.compilerOptions.stripInternal).toBe(true);
  });

  test("no struct's internals are in the declarations (nor in autocompletion)", () => {
    const leaks: string[] = [];
    for (const [f, text] of dts) {
      for (const m of text.matchAll(
        /^\s*(?:readonly |protected |private )?(_u8|_dv|_o|_keep|_owner|_field|_host|_hold|_holdHost|_copyFrom|_releaseHost|_releaseAllHost)\b/gm,
      ))
        leaks.push(`${f}: ${m[1]}`);
    }
    expect(leaks).toEqual([]);
    expect(dts.get(path.join('runtime', 'structs.gen.d.ts'))).toBeDefined();
  });

  test("struct constructors take only the initializer (not the view's mem and dv)", () => {
    const ctors = [...dts.get(path.join('runtime', 'structs.gen.d.ts'))!.matchAll(/constructor\(([^)]*)\)/g)].map((m) => m[1]);
    expect(ctors.length).toBeGreaterThan(100);
    expect(ctors.filter((c) => /\bmem\b|\bdv\b/.test(c))).toEqual([]);
  });

  test('a user compiling against them cannot reach the internals', () => {
    const user = path.join(dir, 'user.ts');
    fs.writeFileSync(
      user,
      [
        `import { cudart } from './index';`,
        `const d = new cudart.dim3({ x: 1 });`,
        `d.getBytes();`,
        `cudart.cudaLaunchKernel(null, d, d, [d], 0, null);`,
        `// @ts-expect-error: the bytes are getBytes(), not _u8`,
        `d._u8;`,
        `// @ts-expect-error: nor _keep`,
        `d._keep;`,
        `// @ts-expect-error: a view is made with dim3.view(), not the constructor`,
        `new cudart.dim3({}, new Uint8Array(12));`,
        '',
      ].join('\n'),
    );
    expect(diagnosticsOf(ts.createProgram([user], strictOptions()))).toEqual([]);
  }, 120_000);
});

describe('util.inspect', () => {
  test('a struct shows its fields, not its bytes and bookkeeping', () => {
    const s = util.inspect(new cudart.cudaPitchedPtr({ ptr: Buffer.alloc(8), pitch: 8 }));
    expect(s).toMatch(/^cudaPitchedPtr \{"ptr":"0x[0-9a-f]+","pitch":8,"xsize":0,"ysize":0\}$/);
  });

  test('KernelArgs shows the argument types, not its packing', () => {
    const s = util.inspect(new cudart.KernelArgs([cudart.i32(1), cudart.f32(2), 5n]));
    expect(s).toBe('KernelArgs(3) [i32, f32, ptr]');
  });
});
