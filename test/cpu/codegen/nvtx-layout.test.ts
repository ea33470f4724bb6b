// The NVTX 3 layouts src/ffi/nvtx.ts relies on (it fills the header's structs and tables itself, with
// no native build) against g++ on the header: nvtxEventAttributes_v2, the two export tables, the
// export table and module ids, each module's callback count, and the callback ids it calls.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CORE, CORE2, NVTX_LAYOUT } from '../../../src/ffi/nvtx';

const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
let got: Record<string, number> = {};

beforeAll(() => {
  const L = NVTX_LAYOUT;
  const lines = ['#include <nvtx3/nvToolsExt.h>', '#include <cstdio>', '#include <cstddef>', 'int main() {'];
  const print = (key: string, expr: string) => lines.push(`  printf("${key} %lld\\n", (long long)(${expr}));`);
  print('version', 'NVTX_VERSION');
  for (const [name, s] of [
    ['eventAttributes', 'nvtxEventAttributes_v2'],
    ['callbacks', 'NvtxExportTableCallbacks'],
    ['versionInfo', 'NvtxExportTableVersionInfo'],
  ] as const) {
    print(`${name}.size`, `sizeof(${s})`);
    for (const f of Object.keys(L[name].fields)) print(`${name}.${f}`, `offsetof(${s}, ${f})`);
  }
  print('exportTables.callbacks', 'NVTX_ETID_CALLBACKS');
  print('exportTables.versionInfo', 'NVTX_ETID_VERSIONINFO');
  const upper: Record<string, string> = { core: 'CORE', cuda: 'CUDA', opencl: 'OPENCL', cudart: 'CUDART', core2: 'CORE2', sync: 'SYNC' };
  for (const m of Object.keys(L.modules)) {
    print(`modules.${m}.id`, `NVTX_CB_MODULE_${upper[m]}`);
    print(`modules.${m}.size`, `NVTX_CBID_${upper[m]}_SIZE`);
  }
  for (const k of Object.keys(CORE)) print(`core.${k}`, `NVTX_CBID_CORE_${k}`);
  for (const k of Object.keys(CORE2)) print(`core2.${k}`, `NVTX_CBID_CORE2_${k}`);
  lines.push('  return 0;', '}');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nvtx-layout-'));
  fs.writeFileSync(path.join(dir, 'l.cpp'), lines.join('\n'));
  execFileSync('g++', ['-std=c++17', '-w', `-I${include}`, '-o', path.join(dir, 'l'), path.join(dir, 'l.cpp')], { stdio: 'pipe' });
  got = Object.fromEntries(
    execFileSync(path.join(dir, 'l'))
      .toString()
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([k, v]) => [k, Number(v)]),
  );
  fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

test('the event attributes and the export tables have the size and offsets g++ gives', () => {
  const L = NVTX_LAYOUT;
  const mine: Record<string, number> = { version: L.version };
  for (const name of ['eventAttributes', 'callbacks', 'versionInfo'] as const) {
    mine[`${name}.size`] = L[name].size;
    for (const [f, off] of Object.entries(L[name].fields)) mine[`${name}.${f}`] = off;
  }
  const theirs = Object.fromEntries(Object.keys(mine).map((k) => [k, got[k]]));
  expect(mine).toEqual(theirs);
  expect(L.eventAttributes.size).toBe(48);
});

test('the export table ids, each module id and callback count, and the callback ids called are the header’s', () => {
  const L = NVTX_LAYOUT;
  const mine: Record<string, number> = {
    'exportTables.callbacks': L.exportTables.callbacks,
    'exportTables.versionInfo': L.exportTables.versionInfo,
  };
  for (const [m, [id, size]] of Object.entries(L.modules)) Object.assign(mine, { [`modules.${m}.id`]: id, [`modules.${m}.size`]: size });
  for (const [k, v] of Object.entries(CORE)) mine[`core.${k}`] = v;
  for (const [k, v] of Object.entries(CORE2)) mine[`core2.${k}`] = v;
  expect(Object.keys(mine).length).toBe(2 + 12 + Object.keys(CORE).length + Object.keys(CORE2).length);
  expect(mine).toEqual(Object.fromEntries(Object.keys(mine).map((k) => [k, got[k]])));
});
