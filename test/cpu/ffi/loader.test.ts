// The loader: search order, the error that lists every path tried, the version check, lazy loading.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { candidates, openLibrary, searchPlan, LibraryLoadError } from '../../../src/ffi/loader';
import { cudartSpec } from '../../../src/ffi/cudart-lib.gen';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-loader-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A shared library that says it is CUDA runtime `version`. */
function fakeCudart(version: number): string {
  const src = path.join(tmp, `fake${version}.c`);
  const lib = path.join(tmp, `libcudart-fake${version}.so`);
  fs.writeFileSync(src, `int cudaRuntimeGetVersion(int *v) { *v = ${version}; return 0; }\n`);
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, src]);
  return lib;
}

test('the search order: already loaded, Python wheels, the system search, CUDA_HOME, CUDA_PATH, the toolkit folders', () => {
  const plan = searchPlan(cudartSpec, { VIRTUAL_ENV: '/nonexistent-venv', CUDA_HOME: '/h', CUDA_PATH: '/p' }, 'linux');
  expect(plan.slice(0, 7)).toEqual([
    { file: 'libcudart.so.13', via: 'loaded' },
    { file: 'nvidia/cu13/lib, nvidia/cuda_runtime/lib', via: 'site-packages', skipped: 'no site-packages under /nonexistent-venv' },
    { file: 'libcudart.so.13', via: 'system' },
    { file: '/h/lib64/libcudart.so.13', via: 'cuda-home' },
    { file: '/h/lib/libcudart.so.13', via: 'cuda-home' },
    { file: '/p/lib64/libcudart.so.13', via: 'cuda-home' },
    { file: '/p/lib/libcudart.so.13', via: 'cuda-home' },
  ]);
  expect(plan.slice(7).every((c) => c.via === 'toolkit')).toBe(true);
});

test('the override variable, when set, is the only candidate', () => {
  expect(searchPlan(cudartSpec, { CUDA_BINDINGS_CUDART: '/x/libcudart.so', CUDA_HOME: '/h' }, 'linux')).toEqual([
    { file: '/x/libcudart.so', via: 'env' },
  ]);
});

test('on Windows the DLL names are searched', () => {
  expect(candidates(cudartSpec, {}, 'win32')).toEqual(['cudart64_13.dll', 'cudart64_130.dll']);
});

test('when nothing loads, the error lists every path tried and why each failed', () => {
  const spec = { ...cudartSpec, linuxNames: ['libcudart-does-not-exist.so.13'] };
  let err: unknown;
  try {
    openLibrary(spec, { VIRTUAL_ENV: '/nonexistent-venv', CUDA_HOME: '/nonexistent-home' });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(LibraryLoadError);
  const msg = (err as Error).message;
  expect(msg).toMatch(/^libcudart: could not load the library. Tried:/);
  expect(msg).toContain('  - already loaded: libcudart-does-not-exist.so.13: not loaded in this process');
  expect(msg).toContain('  - CUDA_HOME/CUDA_PATH: /nonexistent-home/lib64/libcudart-does-not-exist.so.13: no such file');
  expect(msg).toMatch(/ {2}- system search: libcudart-does-not-exist\.so\.13: .+/);
  expect((err as LibraryLoadError).attempts.slice(0, 5).map((a) => a.via)).toEqual([
    'loaded',
    'site-packages',
    'system',
    'cuda-home',
    'cuda-home',
  ]);
});

test('a library of another CUDA major is refused with a clear reason', () => {
  const fake = fakeCudart(12080);
  const spec = { ...cudartSpec, linuxNames: ['libcudart-does-not-exist.so.13'] };
  expect(() => openLibrary(spec, { CUDA_BINDINGS_CUDART: fake })).toThrow(
    `${fake}: CUDA runtime 12.8 found, but these bindings need CUDA 13.x`,
  );
});

test('a library that is not the CUDA runtime is refused', () => {
  const spec = { ...cudartSpec, linuxNames: ['libcudart-does-not-exist.so.13'] };
  expect(() => openLibrary(spec, { CUDA_BINDINGS_CUDART: 'libc.so.6' })).toThrow(
    'libc.so.6: not a CUDA runtime library (no cudaRuntimeGetVersion)',
  );
});

test('the override variable picks the file', () => {
  const fake = fakeCudart(13020);
  const lib = openLibrary(cudartSpec, { CUDA_BINDINGS_CUDART: fake });
  expect([lib.file, lib.version]).toEqual([fake, 13020]);
});

test('an accepted library stays mapped after koffi closes it (its threads may still run while the process exits)', () => {
  // koffi closes its libraries as the process exits; a CUDA library's own thread (the host-function
  // thread) then ran in unmapped code and crashed about one exit in five. A refused library is closed.
  const accepted = fakeCudart(13030);
  const refused = fakeCudart(12030);
  const mapped = (f: string) => fs.readFileSync('/proc/self/maps', 'utf8').includes(f);
  const lib = openLibrary(cudartSpec, { CUDA_BINDINGS_CUDART: accepted });
  lib.lib.unload();
  expect(mapped(accepted)).toBe(true);
  expect(() => openLibrary({ ...cudartSpec, linuxNames: [] }, { CUDA_BINDINGS_CUDART: refused })).toThrow(/CUDA runtime 12\.3 found/);
  expect(mapped(refused)).toBe(false);
});

/** Runs a script in a fresh Node process (so nothing is loaded yet) and returns its stdout. */
function node(script: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

test('importing the package opens no library; the first call does', () => {
  const out = node(`
    const fs = require('fs');
    const { cudart } = require('./src');
    const before = fs.readFileSync('/proc/self/maps', 'utf8').includes('libcudart');
    cudart.cudaGetDeviceCount();
    const after = fs.readFileSync('/proc/self/maps', 'utf8').includes('libcudart');
    console.log(JSON.stringify([before, after]));`);
  expect(JSON.parse(out)).toEqual([false, true]);
});

test('CUDA_BINDINGS_PER_THREAD_DEFAULT_STREAM=1 binds the _ptsz/_ptds symbols', () => {
  const script = `
    const { cudart } = require('./src');
    const { libcudart: L } = require('./src/ffi/cudart-lib.gen');
    console.log(JSON.stringify([cudart.libraryInfo().perThreadDefaultStream, L.bind('cudaMemcpy').info.name, L.bind('cudaStreamQuery').info.name, L.bind('cudaMalloc').info.name]));`;
  expect(JSON.parse(node(script, { CUDA_BINDINGS_PER_THREAD_DEFAULT_STREAM: '1' }))).toEqual([
    true,
    'cudaMemcpy_ptds',
    'cudaStreamQuery_ptsz',
    'cudaMalloc',
  ]);
  expect(JSON.parse(node(script, { CUDA_BINDINGS_PER_THREAD_DEFAULT_STREAM: '' }))).toEqual([
    false,
    'cudaMemcpy',
    'cudaStreamQuery',
    'cudaMalloc',
  ]);
});

test('a function the library lacks throws when called; the others still work', () => {
  const fake = fakeCudart(13000);
  const out = node(
    `
    const { cudart } = require('./src');
    let msg = '';
    try { cudart.cudaGetDeviceCount(); } catch (e) { msg = e.message; }
    console.log(JSON.stringify([cudart.cudaRuntimeGetVersion(), msg]));`,
    { CUDA_BINDINGS_CUDART: fake },
  );
  const [ver, msg] = JSON.parse(out);
  expect(ver).toEqual([0, 13000]);
  expect(msg).toMatch(
    new RegExp(`^cudaGetDeviceCount: libcudart at ${fake.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} does not export cudaGetDeviceCount`),
  );
});

test('small structs passed by value reach C intact (dim3 in cudaLaunchKernel, as 8-byte words on x86-64)', () => {
  const src = path.join(tmp, 'abi.c');
  const lib = path.join(tmp, 'libcudart-abi.so');
  fs.writeFileSync(
    src,
    `
    typedef struct { unsigned x, y, z; } dim3;
    static unsigned long long seen[10];
    int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
    int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, unsigned long sm, void *s) {
      unsigned long long v[10] = { (unsigned long long)f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned long long)args, sm, (unsigned long long)s };
      for (int i = 0; i < 10; i++) seen[i] = v[i];
      return 0;
    }
    void last(unsigned long long *out) { for (int i = 0; i < 10; i++) out[i] = seen[i]; }`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, src]);
  const out = node(
    `
    const koffi = require('koffi');
    const { cudart } = require('./src');
    const r = cudart.cudaLaunchKernel(0x1234n, { x: 4000000000, y: 3000000, z: 7 }, new cudart.dim3({ x: 256, y: 2, z: 1 }), 0x5678n, 4096, cudart.cudaStream_t(0x9abc));
    const seen = new BigUint64Array(10);
    koffi.load(${JSON.stringify(lib)}).func('void last(void *)')(seen);
    console.log(JSON.stringify([r, Array.from(seen, String)]));`,
    { CUDA_BINDINGS_CUDART: lib },
  );
  expect(JSON.parse(out)).toEqual([[0], ['4660', '4000000000', '3000000', '7', '256', '2', '1', '22136', '4096', '39612']]);
});
