// The built package works for CommonJS and ES module consumers, with types.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { cudart } from '../../../src';
import { LIBRARIES } from '../../../tools/codegen/libraries';

const root = path.join(__dirname, '..', '..', '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
let tarball = '';

// A module that an older build left behind (a source file since renamed): the build starts from an empty dist.
const stale = path.join(root, 'dist', 'stale-from-an-older-build.js');

beforeAll(() => {
  fs.mkdirSync(path.dirname(stale), { recursive: true });
  fs.writeFileSync(stale, '');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'pipe' });
  // What `npm publish` would upload (prepack builds; the build is fresh, so skip running it twice).
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-pack-'));
  const name = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dest], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  tarball = path.join(dest, name);
}, 180_000);

test('packing builds first, and the tarball holds every exports and bin target', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  expect(pkg.scripts.prepack).toBe('npm run build');
  const files = new Set(
    execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, '')),
  );
  const targets: string[] = [...Object.values(pkg.bin as Record<string, string>)];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') targets.push(v.replace(/^\.\//, ''));
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(pkg.exports);
  walk(pkg.typesVersions);
  expect(targets.length).toBeGreaterThan(20);
  expect(targets.filter((t) => !files.has(t))).toEqual([]);
});

test('the tarball carries the MIT LICENSE and the metadata npm shows: repository, homepage, bugs, keywords', () => {
  const list = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n');
  expect(list).toEqual(expect.arrayContaining(['package/LICENSE', 'package/README.md']));
  const license = execFileSync('tar', ['xzf', tarball, '-O', 'package/LICENSE'], { encoding: 'utf8' });
  expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 cuda-bindings contributors\n/);
  const pkg = JSON.parse(execFileSync('tar', ['xzf', tarball, '-O', 'package/package.json'], { encoding: 'utf8' }));
  expect(pkg).toMatchObject({
    license: 'MIT',
    repository: { type: 'git', url: 'git+https://github.com/cuda-bindings/cuda-bindings.git' },
    homepage: 'https://github.com/cuda-bindings/cuda-bindings#readme',
    bugs: { url: 'https://github.com/cuda-bindings/cuda-bindings/issues' },
  });
  expect(pkg.keywords).toEqual(expect.arrayContaining(['cuda', 'gpu', 'nvidia']));
});

test("the README starts with the user quick start (npm install) and keeps the contributors' one further down", () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const firstCode = readme.match(/```sh\n([^`]*)```/)![1];
  expect(firstCode.split('\n')[0]).toBe('npm install cuda-bindings');
  expect(readme.indexOf('npm install cuda-bindings')).toBeLessThan(readme.indexOf('npx cuda-bindings info'));
  expect(readme.indexOf('npx cuda-bindings info')).toBeLessThan(readme.indexOf('git clone'));
  expect(readme).toMatch(/^npm install && npm test\b/m);
});

test('the types are right for every consumer: arethetypeswrong finds no problem in the tarball', () => {
  const r = spawnSync(bin('attw'), [tarball, '--format', 'json'], { encoding: 'utf8' });
  const report = JSON.parse(r.stdout);
  expect(report.analysis.problems).toEqual([]);
  // Every entry point resolves under node10, node16 from CJS and ESM, and bundlers.
  const entries = Object.keys(report.analysis.entrypoints);
  expect(entries).toEqual(expect.arrayContaining(['.', './runtime', './driver', './nvrtc', './core']));
  expect(r.status).toBe(0);
}, 120_000);

test('publint --strict finds nothing in the tarball', () => {
  // (With CI set, publint colours its output.)
  const r = spawnSync(bin('publint'), ['run', tarball, '--strict'], { encoding: 'utf8' });
  const out = stripVTControlCharacters(r.stdout + r.stderr)
    .trim()
    .split('\n')
    .pop();
  expect({ status: r.status, out }).toEqual({ status: 0, out: 'All good!' });
}, 120_000);

test('require("cuda-bindings") gives the cudart namespace', () => {
  const out = execFileSync(
    process.execPath,
    ['-e', "const { cudart } = require('cuda-bindings'); console.log(cudart.cudaGetErrorName(35)[1])"],
    { cwd: root },
  )
    .toString()
    .trim();
  expect(out).toBe('cudaErrorInsufficientDriver');
});

test('import from "cuda-bindings" and "cuda-bindings/runtime" work as ES modules', () => {
  const src =
    "import { cudart } from 'cuda-bindings'; import { cudaRuntimeGetVersion, cudaStreamLegacy } from 'cuda-bindings/runtime'; console.log(JSON.stringify([cudart.cudaRuntimeGetVersion()[1], cudaRuntimeGetVersion()[1], String(cudaStreamLegacy)]));";
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', src], { cwd: root }).toString().trim();
  expect(JSON.parse(out)).toEqual([cudart.CUDART_VERSION, cudart.CUDART_VERSION, '1']);
});

test('cuda-bindings/nvjitlink, /nvfatbin and /nvvm load as CommonJS and ES modules, and their namespaces are on cuda-bindings', () => {
  const cjs =
    "const j = require('cuda-bindings/nvjitlink'), f = require('cuda-bindings/nvfatbin'), v = require('cuda-bindings/nvvm'), m = require('cuda-bindings'); console.log(JSON.stringify([j.nvJitLinkInputType.NVJITLINK_INPUT_LTOIR, f.nvFatbinResult.NVFATBIN_SUCCESS, v.nvvmResult[9], m.nvvm === v]))";
  expect(JSON.parse(execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString())).toEqual([3, 0, 'NVVM_ERROR_COMPILATION', true]);
  const esm =
    "import { nvJitLinkCreate } from 'cuda-bindings/nvjitlink'; import { nvFatbinGet } from 'cuda-bindings/nvfatbin'; import { nvvmCompileProgram } from 'cuda-bindings/nvvm'; import { nvvm } from 'cuda-bindings'; console.log([typeof nvJitLinkCreate, typeof nvFatbinGet, typeof nvvmCompileProgram, typeof nvvm.nvvmVersion].join(' '));";
  expect(execFileSync(process.execPath, ['--input-type=module', '-e', esm], { cwd: root }).toString().trim()).toBe(
    'function function function function',
  );
});

test('cuda-bindings/nccl works from CommonJS and as an ES module, without opening libnccl', () => {
  const cjs = execFileSync(
    process.execPath,
    [
      '-e',
      "const n = require('cuda-bindings/nccl'); const { nccl } = require('cuda-bindings'); console.log(n.NCCL_UNIQUE_ID_BYTES, nccl.ncclDataType_t.ncclBfloat16, typeof n.ncclAllReduce)",
    ],
    { cwd: root },
  )
    .toString()
    .trim();
  expect(cjs).toBe('128 9 function');
  const esm = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import { nccl } from 'cuda-bindings'; import { ncclRedOp_t, uniqueIdToBase64 } from 'cuda-bindings/nccl'; console.log(nccl.ncclRedOp_t.ncclMax, ncclRedOp_t.ncclAvg, typeof uniqueIdToBase64)",
    ],
    { cwd: root },
  )
    .toString()
    .trim();
  expect(esm).toBe('2 4 function');
});

test('"cuda-bindings/nvml" works from both module systems, and the nvml namespace loads on first use', () => {
  const esm =
    "import { nvmlReturn_t, nvmlMemory_v2 } from 'cuda-bindings/nvml'; import { nvml } from 'cuda-bindings'; console.log(JSON.stringify([nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE, nvml.nvmlMemory_v2 === nvmlMemory_v2]));";
  expect(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', esm], { cwd: root }).toString())).toEqual([7, true]);
  const cjs =
    "const m = require('cuda-bindings'); const before = Object.keys(require.cache).some((k) => k.includes('/dist/nvml/')); console.log(JSON.stringify([before, typeof m.nvml.nvmlInit, Object.keys(require.cache).some((k) => k.includes('/dist/ffi/nvml.gen.js'))]));";
  expect(JSON.parse(execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString())).toEqual([false, 'function', false]);
});

test('require("cuda-bindings") loads the runtime facade only; each other namespace loads on first use and is then a plain value', () => {
  const others = [...LIBRARIES.filter((l) => !l.eager).map((l) => l.api.id), 'core'];
  const cjs = `const m = require('cuda-bindings'); const loaded = (d) => Object.keys(require.cache).some((k) => k.includes('/dist/' + d + '/'));
    const before = ${JSON.stringify(others)}.filter(loaded);
    m.cudart.cudaGetErrorName(35); const afterRuntime = ['driver', 'ffi/cuda.js'].filter((d) => Object.keys(require.cache).some((k) => k.includes(d)));
    const t = typeof m.cuda.cuInit; const d = Object.getOwnPropertyDescriptor(m, 'cuda');
    console.log(JSON.stringify([before, afterRuntime, t, loaded('driver'), 'value' in d, loaded('core')]));`;
  expect(JSON.parse(execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString())).toEqual([
    [],
    [],
    'function',
    true,
    true,
    false,
  ]);
});

test('require("cuda-bindings") and a first call leave node:worker_threads unloaded (1.5 MiB of RSS); the first struct loads it', () => {
  const cjs = `const loaded = () => process.moduleLoadList.includes('NativeModule worker_threads');
    const { cudart } = require('cuda-bindings'); cudart.cudaRuntimeGetVersion(); const before = loaded();
    new cudart.dim3({ x: 1 }); console.log(JSON.stringify([before, loaded()]));`;
  expect(JSON.parse(execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString())).toEqual([false, true]);
});

test('every module of the build exports plain values: no getter but the root namespaces that load on first use', () => {
  // tools/flatten-exports.cjs rewrites tsc's re-export getters; each left would cost every call through it.
  const script = `const fs = require('fs'), path = require('path'); const found = [];
    (function walk(d) { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p); else if (p.endsWith('.js') && !p.endsWith(path.join('cli', 'main.js'))) { const m = require(p);
        for (const [k, d] of Object.entries(Object.getOwnPropertyDescriptors(m))) if (d.get) found.push(path.relative('dist', p) + ':' + k); } } })(path.resolve('dist'));
    console.log(JSON.stringify(found));`;
  const found = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root }).toString()) as string[];
  // The runtime's struct classes load on first use too (tools/lazy-structs.cjs; the next test).
  const structs = found.filter((f) => f.startsWith(path.join('runtime', 'index.js') + ':'));
  expect(structs.length).toBeGreaterThan(150);
  expect(structs).toContain(path.join('runtime', 'index.js') + ':cudaDeviceProp');
  // Core's exports but Device, the errors and the typed scalars load on first use too (tools/lazy-core.cjs; the next test but one).
  const core = found.filter((f) => f.startsWith(path.join('core', 'index.js') + ':'));
  expect(core).toContain(path.join('core', 'index.js') + ':Stream');
  expect(core).not.toContain(path.join('core', 'index.js') + ':Device');
  expect(found.filter((f) => !f.startsWith('index.js:') && !structs.includes(f) && !core.includes(f))).toEqual([]);
  // The namespaces of the root that load on first use: every library's but the eager ones, and core.
  expect(found.length - structs.length - core.length).toBe(LIBRARIES.filter((l) => !l.eager).length + 1);
});

test("require('cuda-bindings/core') + Device.get loads no room of core and no other library; a first read of another export or a room's Device member loads them", () => {
  const cjs = `const path = require('path'); const dist = path.resolve('dist');
    const loaded = () => Object.keys(require.cache).filter((k) => k.startsWith(dist)).map((k) => path.relative(dist, k)).sort();
    const core = require('cuda-bindings/core');
    try { core.Device.get(0); } catch (e) { if (e.code !== 35) throw e; }
    const first = loaded().filter((k) => k.startsWith('core') || /^(driver|nvml|nvrtc|nccl|nvvm|nvjitlink|nvfatbin)/.test(k));
    const standIn = String(Object.getOwnPropertyDescriptor(core.Device.prototype, 'allocate').value).includes('loadRooms');
    const Stream = core.Stream; const rooms = loaded().includes(path.join('core', 'memory', 'extensions.js'));
    for (const k of Object.keys(core)) core[k];
    const getters = Object.values(Object.getOwnPropertyDescriptors(core)).filter((d) => d.get).length;
    const stillStandIn = String(Object.getOwnPropertyDescriptor(core.Device.prototype, 'allocate').value).includes('loadRooms');
    console.log(JSON.stringify([first, standIn, typeof Stream, rooms, getters, stillStandIn]));`;
  const [first, standIn, stream, rooms, getters, stillStandIn] = JSON.parse(
    execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString(),
  );
  expect(first).toEqual(
    ['base/direct.js', 'base/errors.js', 'base/lifetime.js', 'base/options.js', 'device/Device.js', 'index.js'].map((f) =>
      path.join('core', f),
    ),
  );
  expect([standIn, stream, rooms, getters, stillStandIn]).toEqual([true, 'function', true, 0, false]);
});

test("require('cuda-bindings') and a first call leave the runtime's struct classes unloaded; the first one read loads them all as plain values", () => {
  const cjs = `const loaded = () => Object.keys(require.cache).some((k) => k.endsWith('structs.gen.js') && k.includes('runtime'));
    const { cudart } = require('cuda-bindings'); cudart.cudaRuntimeGetVersion(); const before = loaded();
    const d = new cudart.dim3({ x: 2 }); const after = loaded();
    const getters = Object.entries(Object.getOwnPropertyDescriptors(cudart)).filter(([, p]) => p.get).length;
    const dim3 = require('./dist/runtime/structs.gen').dim3;
    console.log(JSON.stringify([before, after, d.x, getters, cudart.dim3 === dim3, cudart.cudaDeviceProp.name]));`;
  expect(JSON.parse(execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString())).toEqual([
    false,
    true,
    2,
    0,
    true,
    'cudaDeviceProp',
  ]);
});

test('the facade and helpers reach the struct classes before anything else has loaded them', () => {
  // Each compiled module that uses them holds a stand-in until the first read (tools/lazy-structs.cjs).
  const cjs = `const { cudart } = require('cuda-bindings');
    const [err, p] = cudart.cudaGetDeviceProperties(0); const e = cudart.make_cudaExtent(1, 2, 3);
    console.log(JSON.stringify([err, p, e.constructor.name, e.depth, require('./dist/runtime/structs.gen').cudaExtent === e.constructor]));`;
  expect(JSON.parse(execFileSync(process.execPath, ['-e', cjs], { cwd: root }).toString())).toEqual([35, null, 'cudaExtent', 3, true]);
});

test('the build starts from an empty dist: nothing of an older build is left to be packed', () => {
  expect(fs.existsSync(stale)).toBe(false);
});

test('the compiled modules carry no comments and only ASCII (V8 keeps their text), the declarations keep the docs', () => {
  const api = fs.readFileSync(path.join(root, 'dist', 'runtime', 'api.gen.js'), 'utf8');
  expect(api).not.toMatch(/\/\*\*|^\s*\/\/ /m);
  expect(api).not.toMatch(/[\u0080-\uffff]/);
  expect(fs.readFileSync(path.join(root, 'dist', 'runtime', 'api.gen.d.ts'), 'utf8')).toContain(
    '/**\n * Create an asynchronous stream\n * @returns',
  );
});

test('type declarations ship beside the code', () => {
  expect(fs.existsSync(path.join(root, 'dist', 'index.d.ts'))).toBe(true);
  expect(fs.readFileSync(path.join(root, 'dist', 'runtime', 'api.gen.d.ts'), 'utf8')).toContain(
    'export declare function cudaStreamCreate(): Res<[H.cudaStream_t]>;',
  );
});

test('the bin runs from the build: `cuda-bindings --help` exits 0, `info` exits 0 with a GPU and 1 without a driver or device', () => {
  const [countErr, count] = cudart.cudaGetDeviceCount();
  const hasGpu = countErr === cudart.cudaError_t.cudaSuccess && (count ?? 0) > 0;
  const bin = path.join(root, 'dist', 'cli', 'main.js');
  expect(fs.readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
  expect([help.status, help.stdout.split('\n')[0]]).toEqual([
    0,
    'usage: cuda-bindings [command] [--json] [--device N] [--help] [--version]',
  ]);
  const info = spawnSync(process.execPath, [bin, 'info'], { encoding: 'utf8' });
  expect(info.status).toBe(hasGpu ? 0 : 1);
  expect(info.stdout).toMatch(/^CUDA runtime 13\.0/);
});
