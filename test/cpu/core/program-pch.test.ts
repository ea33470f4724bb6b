// NVRTC precompiled headers in Program without a GPU or NVRTC: the options as NVRTC flags, the heap
// grown and the compile retried when NVRTC says the PCH ran out of heap (as cuda.core does), and the
// disk cache left out of a compile that creates a PCH; through a fake libnvrtc
// (test/cpu/fixtures/fake-nvrtc-pch.c, built with gcc here) that needs 64 MiB of PCH heap.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../../src';

const root = path.join(__dirname, '..', '..', '..');
let dir: string;
let lib: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-pch-'));
  lib = path.join(dir, 'libnvrtc-fake-pch.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, path.join(__dirname, '..', 'fixtures', 'fake-nvrtc-pch.c')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `body` (with `core`, `out(v)`, `log()` and `dir` in scope) with the fake NVRTC. */
function onFake(body: string): unknown {
  const script = `
    const { core } = require('./src');
    const log = () => require('koffi').load(process.env.CUDA_BINDINGS_NVRTC).func('const char *fake_log(void)')().split('\\n');
    const out = (v) => console.log(JSON.stringify(v));
    const dir = ${JSON.stringify(dir)};
    (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_NVRTC: lib, CUDA_BINDINGS_CACHE_DIR: path.join(dir, 'cache') },
    timeout: 60_000,
  });
  if (r.stderr !== '' || r.status !== 0) throw new Error(`the child failed (status ${r.status}):\n${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout);
}

const SRC = '#include "big.h"\nextern "C" __global__ void k(int *x) { x[0] = BIG; }\n';

test('pch: true becomes --pch; out of PCH heap, the heap is grown to what NVRTC needs and the compile runs again', () => {
  const r = onFake(`
    const headers = { 'big.h': '#define BIG 1\\n' };
    const a = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', headers, pch: true, pchDir: dir, pchVerbose: true });
    const b = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', headers, pch: true, pchDir: dir });
    const plain = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', headers });
    out({ created: [a.pchCreated, b.pchCreated, plain.pchCreated], fromCache: [a.fromCache, b.fromCache], log: a.log, compiler: a.compiler, calls: log() });`);
  expect(r).toEqual({
    created: [true, true, null],
    fromCache: [false, false],
    log: 'PCH created',
    compiler: 'nvrtc 13.0',
    calls: [
      `compile heap=32MiB --pch --pch-dir=${dir} --pch-verbose=true`,
      'set heap 64MiB',
      `compile heap=64MiB --pch --pch-dir=${dir} --pch-verbose=true`,
      `compile heap=64MiB --pch --pch-dir=${dir}`,
      'compile heap=64MiB',
      '',
    ],
  });
});

test('createPch writes the PCH file, usePch reads it; the flags of the other options', async () => {
  const r = onFake(`
    const file = require('path').join(dir, 'big.pch');
    const made = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', createPch: file, instantiateTemplatesInPch: false, cache: false });
    const used = await core.Program.compileAsync(${JSON.stringify(SRC)}, { arch: 'sm_90', usePch: file, pchMessages: false, cache: false });
    out({ made: made.pchCreated, file: require('fs').readFileSync(file, 'utf8'), used: used.pchCreated, calls: log() });`);
  const file = path.join(dir, 'big.pch');
  expect(r).toEqual({
    made: true,
    file: 'PCH',
    used: null,
    calls: [
      `compile heap=32MiB --create-pch=${file} --instantiate-templates-in-pch=false`,
      'set heap 64MiB',
      `compile heap=64MiB --create-pch=${file} --instantiate-templates-in-pch=false`,
      `compile heap=64MiB --use-pch=${file} --pch-messages=false`,
      '',
    ],
  });
});

test('bad PCH options are refused before any compile, and nvcc is refused with the reason', () => {
  const { Program } = core;
  expect(() => Program.compile(SRC, { arch: 'sm_90', pch: 'yes' as never })).toThrow(
    'Program.compile: option \'pch\' must be true or false, got the string "yes"',
  );
  expect(() => Program.compile(SRC, { arch: 'sm_90', createPch: '' })).toThrow(
    'Program.compile: option \'createPch\' must be a file path, got the string ""',
  );
  expect(() => Program.compile(SRC, { arch: 'sm_90', createPch: 'a.pch', usePch: 'a.pch' })).toThrow(
    "Program.compile: options 'createPch' and 'usePch' exclude each other: a compile makes a PCH or uses one",
  );
  expect(() => Program.compile(SRC, { arch: 'sm_90', pch: true, usePch: 'a.pch' })).toThrow(
    "Program.compile: option 'pch' (automatic) excludes 'createPch' and 'usePch'",
  );
  expect(() => Program.compile(SRC, { arch: 'sm_90', pch: true, compiler: 'nvcc' })).toThrow(
    'Program.compile: precompiled headers (pch) need NVRTC; this compile would use nvcc',
  );
});
