// Adding a library is its model (or header), its spec and its record: the generator writes everything
// else the package needs. This adds a made-up library, cuFake (test/cpu/fixtures/new-library), to a
// copy of the tree, runs the generator there, and checks that what it wrote type-checks and loads:
// the loader, the declarations, the facade, the index and the package root's namespace.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generate, type Generated } from '../../../tools/codegen/main';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import { missingEntries } from '../../../tools/codegen/package-entries';
import { cufake } from '../fixtures/new-library/cufake';

const repo = path.join(__dirname, '..', '..', '..');
const fixtures = path.join(__dirname, '..', 'fixtures', 'new-library');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-new-library-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * The copy: src/ffi as a folder of links to the files (the generator writes into it), every other
 * folder of src/ a link, node_modules a link, and the committed models cuFake's needs. Nothing is
 * written into the repository.
 */
function copyTree(): void {
  fs.mkdirSync(path.join(tmp, 'src'));
  for (const e of fs.readdirSync(path.join(repo, 'src'), { withFileTypes: true })) {
    const from = path.join(repo, 'src', e.name);
    if (!e.isDirectory()) continue;
    if (e.name !== 'ffi') fs.symlinkSync(from, path.join(tmp, 'src', e.name));
    else {
      fs.mkdirSync(path.join(tmp, 'src', e.name));
      for (const f of fs.readdirSync(from)) fs.symlinkSync(path.join(from, f), path.join(tmp, 'src', e.name, f));
    }
  }
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(tmp, 'node_modules'));
  const models = path.join(tmp, 'tools', 'codegen', 'model');
  fs.mkdirSync(models, { recursive: true });
  fs.symlinkSync(path.join(repo, 'tools', 'codegen', 'model', 'runtime.json'), path.join(models, 'runtime.json'));
  fs.copyFileSync(path.join(fixtures, 'cufake.json'), path.join(models, 'cufake.json'));
}

let gen: Generated;
let lib = '';
beforeAll(() => {
  copyTree();
  gen = generate([cufake], 'model', { base: tmp, all: [...LIBRARIES, cufake] });
  for (const [rel, text] of gen.files) {
    fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
    fs.writeFileSync(path.join(tmp, rel), text);
  }
  lib = path.join(tmp, 'libcufake.so.1');
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, path.join(fixtures, 'libcufake.c')]);
}, 120_000);

test('the generator writes every file of the library from its record and model', () => {
  expect([...gen.files.keys()].sort()).toEqual(
    [
      'src/cufake/api.gen.ts',
      'src/cufake/check.gen.ts',
      'src/cufake/constants.gen.ts',
      'src/cufake/enums.gen.ts',
      'src/cufake/handles.gen.ts',
      'src/cufake/index.ts',
      'src/ffi/cufake-lib.gen.ts',
      'src/ffi/cufake.gen.ts',
      'src/index.ts',
      'test/cpu/fixtures/cufake-signatures.json',
      'tools/codegen/cufake-decls.h',
      'tools/codegen/model/cufake.json',
      'tools/codegen/report-cufake.md',
    ].sort(),
  );
  // The committed model goes through unchanged; the reduced header is written from it.
  expect(gen.files.get('tools/codegen/model/cufake.json')).toBe(fs.readFileSync(path.join(fixtures, 'cufake.json'), 'utf8'));
  expect(gen.files.get('tools/codegen/cufake-decls.h')).toMatch(
    /^cufakeResult cufakeHalve\(int value, cufakeRounding rounding, int \*half\);/m,
  );
  expect(gen.files.get('src/ffi/cufake-lib.gen.ts')).toContain("envVar: 'CUDA_BINDINGS_CUFAKE',");
  // The package root gets its namespace beside the others'.
  expect(gen.files.get('src/index.ts')).toContain("export * as cufake from './cufake';");
  expect(gen.files.get('src/index.ts')).toContain("export * as nvml from './nvml';");
});

test('what package.json and typedoc.json lack for it is named', () => {
  const json = (f: string) => JSON.parse(fs.readFileSync(path.join(repo, f), 'utf8'));
  expect(missingEntries(json('package.json'), json('typedoc.json'), [cufake]).map((l) => l.split(' ')[1])).toEqual([
    'exports["./cufake"]',
    'typesVersions["*"]["cufake"]',
    'entryPoints',
  ]);
});

test('the written files type-check, with the types of the header', () => {
  fs.writeFileSync(
    path.join(tmp, 'consumer.ts'),
    [
      "import { cufakeHalve, cufakeRounding, cufakeResult, cufakeGetErrorString, libraryInfo, CUFAKE_MAX_VALUE, LibraryLoadError } from './src/cufake';",
      'const [err, half] = cufakeHalve(CUFAKE_MAX_VALUE, cufakeRounding.CUFAKE_ROUND_UP);',
      'if (err === cufakeResult.CUFAKE_SUCCESS) {',
      '  const n: number = half;',
      '  void n;',
      '}',
      'const s: [cufakeResult, string] = cufakeGetErrorString(cufakeResult.CUFAKE_ERROR_OVERFLOW);',
      'const v: number = libraryInfo().version;',
      '// @ts-expect-error a rounding mode is a cufakeRounding, not a string',
      "cufakeHalve(1, 'up');",
      'void [s, v, LibraryLoadError];',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(tmp, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(repo, 'tsconfig.json'),
      compilerOptions: { noEmit: true, types: ['node'] },
      files: ['consumer.ts'],
      include: [],
    }),
  );
  const r = spawnSync(process.execPath, [path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tmp], { encoding: 'utf8' });
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
}, 120_000);

/** Runs a script in a fresh Node process in the copy, with `env`, and returns its stdout. */
function node(script: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: tmp, encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

test('the package root loads it on first use, and its calls reach the library', () => {
  const out = node(
    `const m = require('./src'); const loaded = () => Object.keys(require.cache).some((k) => k.endsWith('cufake.gen.ts'));
     const before = loaded();
     console.log(JSON.stringify([before, m.cufake.cufakeHalve(7, m.cufake.cufakeRounding.CUFAKE_ROUND_UP), m.cufake.cufakeHalve(7, 0),
       m.cufake.cufakeHalve(1001, 0), m.cufake.cufakeGetErrorString(2), m.cufake.libraryInfo().version, loaded()]));`,
    { CUDA_BINDINGS_CUFAKE: lib },
  );
  expect(JSON.parse(out)).toEqual([false, [0, 4], [0, 3], [2, null], [0, 'value above CUFAKE_MAX_VALUE'], 1020, true]);
});

test("its checkCudaErrors returns the outputs and names a failure by the library's status and text", () => {
  const out = node(
    `const { checkCudaErrors, cufakeHalve } = require('./src/cufake');
     try { console.log(checkCudaErrors(cufakeHalve(7, 0)), checkCudaErrors(cufakeHalve(1001, 0))); } catch (e) { console.log(e.name, e.message); }`,
    { CUDA_BINDINGS_CUFAKE: lib },
  );
  expect(out).toBe('StatusError CUFAKE_ERROR_OVERFLOW: value above CUFAKE_MAX_VALUE (in cufakeHalve)');
});

test('bad input is refused before C, naming the function and the parameter', () => {
  const out = node(`try { require('./src/cufake').cufakeHalve(1.5, 0); } catch (e) { console.log(e.name + ': ' + e.message); }`, {
    CUDA_BINDINGS_CUFAKE: lib,
  });
  expect(out).toBe("RangeError: cufakeHalve: parameter 'value' must be an integer within [-2147483648, 2147483647], got 1.5");
});

test('its loader refuses another library, and without one says what it tried and what to install', () => {
  const libc = node(`try { require('./src/cufake').cufakeHalve(1, 0); } catch (e) { console.log(e.message.split('\\n')[1]); }`, {
    CUDA_BINDINGS_CUFAKE: 'libc.so.6',
  });
  expect(libc).toBe('- variable: libc.so.6: not a cuFake library (no cufakeVersion)');
  const none = node(`try { require('./src/cufake').cufakeHalve(1, 0); } catch (e) { console.log(e.name + '\\n' + e.message); }`, {
    CUDA_BINDINGS_CUFAKE: path.join(tmp, 'absent.so'),
  });
  expect(none).toMatch(/^LibraryLoadError\nlibcufake: could not load the library\. Tried:\n {2}- variable: \S+absent\.so: no such file\n/);
  const unset = node(`try { require('./src/cufake').cufakeHalve(1, 0); } catch (e) { console.log(e.message); }`, {
    CUDA_BINDINGS_CUFAKE: '',
  });
  expect(unset).toMatch(
    /Install cuFake 1 for CUDA 13 \(a library made up for a test\), or set CUDA_BINDINGS_CUFAKE to the library's path\.$/,
  );
});
