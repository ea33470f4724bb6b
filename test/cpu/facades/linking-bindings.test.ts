// The nvJitLink, nvFatbin and libNVVM bindings as generated: enumerators against g++ reading the
// committed declarations (and nvvm.h where the toolkit has it), the symbols each function binds,
// where the libraries are looked for, and that importing the package reads none of it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as jitEnums from '../../../src/nvjitlink/enums.gen';
import * as fatEnums from '../../../src/nvfatbin/enums.gen';
import * as nvvmEnums from '../../../src/nvvm/enums.gen';
import { declarations as jitDecls } from '../../../src/ffi/nvjitlink.gen';
import { declarations as fatDecls } from '../../../src/ffi/nvfatbin.gen';
import { declarations as nvvmDecls } from '../../../src/ffi/nvvm.gen';
import { candidates } from '../../../src/ffi/loader';
import { nvvmSpec } from '../../../src/ffi/nvvm-lib.gen';
import { nvjitlinkSpec } from '../../../src/ffi/nvjitlink-lib.gen';
import * as nvjitlink from '../../../src/nvjitlink';
import * as nvfatbin from '../../../src/nvfatbin';

const root = path.join(__dirname, '..', '..', '..');
const CUDA_INC = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');
const decls = (name: string) => path.join(root, 'tools', 'codegen', name);

const APIS = [
  { id: 'nvjitlink', header: decls('nvjitlink-decls.h'), enums: jitEnums, count: 14 },
  { id: 'nvfatbin', header: decls('nvfatbin-decls.h'), enums: fatEnums, count: 11 },
  { id: 'nvvm (committed declarations)', header: decls('nvvm-decls.h'), enums: nvvmEnums, count: 13 },
  ...(fs.existsSync(path.join(CUDA_INC, 'nvvm.h'))
    ? [{ id: "nvvm (the toolkit's nvvm.h)", header: path.join(CUDA_INC, 'nvvm.h'), enums: nvvmEnums, count: 13 }]
    : []),
];

describe.each(APIS)('$id against g++', ({ header, enums }) => {
  test('every enumerator has the value g++ gives it, and handles are pointers', () => {
    const values = Object.values(enums)
      .filter((e) => typeof e === 'object')
      .flatMap((e) => Object.entries(e as object).filter(([, v]) => typeof v === 'number')) as [string, number][];
    const handles = [...fs.readFileSync(header, 'utf8').matchAll(/typedef struct \w+ \*(\w+);/g)].map((m) => m[1]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-linking-layout-'));
    const src = [
      `#include "${header}"`,
      '#include <cstdio>',
      'int main() {',
      ...values.map(([k]) => `  printf("${k} %lld\\n", (long long)${k});`),
      ...handles.map((h) => `  printf("${h} %zu\\n", sizeof(${h}));`),
      '}',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'e.cpp'), src);
    execFileSync('g++', ['-std=c++17', '-w', '-o', path.join(dir, 'e'), path.join(dir, 'e.cpp')]);
    const got = execFileSync(path.join(dir, 'e')).toString().trim().split('\n');
    fs.rmSync(dir, { recursive: true, force: true });
    expect(values.length).toBeGreaterThan(10);
    expect(handles.length).toBe(1);
    expect(got).toEqual([...values.map(([k, v]) => `${k} ${v}`), ...handles.map((h) => `${h} 8`)]);
  }, 60_000);
});

test('each API binds every function of its header: nvJitLink 14, nvFatbin 10 and libNVVM 12, plus their error-string functions', () => {
  expect(Object.keys(jitDecls)).toHaveLength(14);
  expect(Object.keys(fatDecls)).toHaveLength(11);
  expect(Object.keys(nvvmDecls)).toHaveLength(13);
});

test("nvJitLink's functions call the versioned exports its header's inline wrappers call", () => {
  const symbols = Object.fromEntries(Object.entries(jitDecls).map(([name, [symbol]]) => [name, symbol]));
  expect(symbols.nvJitLinkCreate).toBe('__nvJitLinkCreate_13_0');
  expect(symbols.nvJitLinkVersion).toBe('nvJitLinkVersion');
  expect(Object.entries(symbols).filter(([n, s]) => n !== 'nvJitLinkVersion' && s !== `__${n}_13_0`)).toEqual([]);
});

const libnvvm = [
  '/usr/local/cuda/nvvm/lib64/libnvvm.so.4',
  '/usr/local/cuda/lib64/libnvvm.so.4',
  `${process.env.CUDA_HOME}/nvvm/lib64/libnvvm.so.4`,
].find((p) => fs.existsSync(p));
(libnvvm ? test : test.skip)(`every libNVVM function is exported by ${libnvvm ?? 'libnvvm.so.4 (skipped: not installed here)'}`, () => {
  const exported = new Set(
    execFileSync('nm', ['-D', '--defined-only', libnvvm!])
      .toString()
      .split('\n')
      .map((l) => l.split(' ').pop()!),
  );
  expect(
    Object.values(nvvmDecls)
      .map(([s]) => s)
      .filter((s) => !exported.has(s)),
  ).toEqual([]);
});

test("libnvvm is also looked for in the toolkit's nvvm/lib64, after the usual places", () => {
  const c = candidates(nvvmSpec, { CUDA_HOME: '/opt/cuda', VIRTUAL_ENV: '/nonexistent' }, 'linux');
  expect(c.slice(0, 4)).toEqual([
    'libnvvm.so.4',
    '/opt/cuda/lib64/libnvvm.so.4',
    '/opt/cuda/lib/libnvvm.so.4',
    '/opt/cuda/nvvm/lib64/libnvvm.so.4',
  ]);
  if (fs.existsSync('/usr/local/cuda')) expect(c).toContain('/usr/local/cuda/nvvm/lib64/libnvvm.so.4');
  expect(candidates(nvjitlinkSpec, { CUDA_BINDINGS_NVJITLINK: '/x/libnvJitLink.so.13' }, 'linux')).toEqual(['/x/libnvJitLink.so.13']);
});

test.each([
  ['libnvJitLink', 'nvJitLink', 'nvidia-nvjitlink', 'libnvjitlink', 'CUDA_BINDINGS_NVJITLINK', () => nvjitlink.nvJitLinkVersion()],
  ['libnvfatbin', 'nvFatbin', 'nvidia-nvfatbin', 'libnvfatbin', 'CUDA_BINDINGS_NVFATBIN', () => nvfatbin.nvFatbinVersion()],
] as const)(
  'without %s, a call throws the loader error that lists every path tried and names the variable',
  (label, what, pip, pkg, envVar, call) => {
    // (This machine has neither library; where one is installed the call succeeds instead.)
    let r: unknown;
    try {
      r = call();
    } catch (e) {
      r = e;
    }
    if (Array.isArray(r)) expect(r[0]).toBe(0);
    else
      expect((r as Error).message).toMatch(
        new RegExp(
          `^${label}: could not load the library\\. Tried:\\n {2}- already loaded: ${label}\\.so\\.13: .+\\n[\\s\\S]*Install ${what} from the CUDA 13 toolkit, pip install "${pip}==13\\.\\*" or conda install ${pkg}, or set ${envVar} to the library's path\\.$`,
        ),
      );
  },
);

test("importing cuda-bindings reads none of the three libraries' declarations and opens none of them", () => {
  const script = `
    const m = require(${JSON.stringify(path.join(root, 'src'))});
    const read = () => Object.keys(require.cache).filter((k) => /ffi[\\\\/](nvjitlink|nvfatbin|nvvm)\\.gen\\.ts$/.test(k)).map((k) => require('path').basename(k));
    const maps = () => require('fs').readFileSync('/proc/self/maps', 'utf8').includes('libnvvm');
    const before = [read(), maps(), typeof m.nvvm.nvvmVersion, typeof m.nvjitlink.nvJitLinkCreate, typeof m.nvfatbin.nvFatbinCreate];
    m.nvvm.nvvmIRVersion();
    console.log(JSON.stringify([before, read()]));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, encoding: 'utf8' });
  expect(r.stderr.replace(/npm warn.*\n/g, '')).toBe('');
  const [before, after] = JSON.parse(r.stdout);
  expect(before).toEqual([[], false, 'function', 'function', 'function']);
  if (libnvvm) expect(after).toEqual(['nvvm.gen.ts']);
}, 60_000);
