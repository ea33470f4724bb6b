// The package's types as a user's strict project sees them: the README's ```ts blocks compile,
// checking a status narrows the outputs, and the type holes stay closed (test/cpu/fixtures/types:
// every `@ts-expect-error` there must still be needed).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const root = path.join(__dirname, '..', '..');
const fixtures = path.join(__dirname, 'fixtures', 'types');

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
  const imports = lines.filter((l) => /^import /.test(l)).map((l) => l.replace(`'cuda-bindings'`, `'${srcPath}'`));
  const body = lines.filter((l) => !/^import /.test(l));
  const all = `import { cudart, cuda, nvrtc, nvjitlink, nvml, nccl, core } from '${srcPath}';`;
  // A block's own import of a namespace replaces the one the prelude makes.
  const own = new Set(imports.flatMap((l) => /\{([^}]*)\}/.exec(l)?.[1].split(',').map((s) => s.trim()) ?? []));
  const pre = all.replace(/\{([^}]*)\}/, (_, names: string) => `{ ${names.split(',').map((s) => s.trim()).filter((s) => !own.has(s)).join(', ')} }`);
  // A block on core passes core's Stream; the others the runtime's handle.
  const stream = own.has('core') ? 'declare const stream: core.Stream;' : 'declare const stream: cudart.cudaStream_t;';
  return [...imports, pre, PRELUDE, stream, 'export async function readmeBlock(): Promise<void> {', ...body, '}', ''].join('\n');
}

/** Diagnostics of compiling `files` under the package's strict options, as `file(line): message`. */
function compile(files: string[]): string[] {
  const options: ts.CompilerOptions = {
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
  const program = ts.createProgram(files, options);
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
    const own = fs.readdirSync(fixtures).filter((f) => f.endsWith('.ts')).map((f) => path.join(fixtures, f));
    diagnostics = compile([...blocks, ...own]);
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

  test('nothing else fails to compile', () => {
    expect(diagnostics).toEqual([]);
  });
});
