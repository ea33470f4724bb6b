// Every struct's size, alignment and field offsets, every enumerator and every #define constant of
// the bindings, compared with what g++ computes from the same CUDA headers.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CStruct, type StructClass } from '../../../src/ffi/struct-base';
import { runtimeApi } from '../../../tools/codegen/runtime-spec';
import { driverApi } from '../../../tools/codegen/driver-spec';
import * as structs from '../../../src/runtime/structs.gen';
import * as enums from '../../../src/runtime/enums.gen';
import * as constants from '../../../src/runtime/constants.gen';
import * as dStructs from '../../../src/driver/structs.gen';
import * as dEnums from '../../../src/driver/enums.gen';
import * as dConstants from '../../../src/driver/constants.gen';
import { nvmlApi } from '../../../tools/codegen/nvml-spec';
import * as nStructs from '../../../src/nvml/structs.gen';
import * as nEnums from '../../../src/nvml/enums.gen';
import * as nConstants from '../../../src/nvml/constants.gen';

const CUDA_INC = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');
const STUBS = path.join(__dirname, '..', '..', '..', 'tools', 'codegen', 'stubs');
// NVML's committed declarations (the header is not on this machine): g++ reads the same file.
const CODEGEN = path.join(__dirname, '..', '..', '..', 'tools', 'codegen');

interface Api {
  id: string;
  headers: string[];
  structs: Record<string, unknown>;
  enums: Record<string, unknown>;
  constants: Record<string, unknown>;
}
const APIS: Api[] = [
  { id: 'runtime', headers: runtimeApi.headers, structs, enums, constants },
  { id: 'driver', headers: driverApi.headers, structs: dStructs, enums: dEnums, constants: dConstants },
  { id: 'nvml', headers: [path.basename(nvmlApi.reducedHeader!)], structs: nStructs, enums: nEnums, constants: nConstants },
];

const classesOf = (api: Api) =>
  Object.entries(api.structs).filter(
    ([name, v]) => typeof v === 'function' && v.prototype instanceof CStruct && (v as StructClass).name === name,
  ) as [string, StructClass][];
const enumsOf = (api: Api) => Object.entries(api.enums).filter(([, v]) => typeof v === 'object' && v !== null);

function cppProgram(api: Api): string {
  const o: string[] = [
    ...api.headers.map((h) => `#include <${h}>`),
    '#include <cstdio>',
    '#include <cstddef>',
    '#include <cstdint>',
    'int main() {',
  ];
  for (const [name, cls] of classesOf(api)) {
    const l = cls.layout;
    const obj = l.path ? `((${l.cType}*)0)->${l.path}` : `*(${l.cType}*)0`;
    o.push(`  printf("S ${name} %zu %zu\\n", sizeof(${obj}), alignof(decltype(${obj})));`);
    for (const f of Object.keys(l.fields)) {
      const expr = l.path ? `${l.path}.${f}` : f;
      const base = l.path ? ` - offsetof(${l.cType}, ${l.path})` : '';
      o.push(`  printf("F ${name} ${f} %zu %zu\\n", offsetof(${l.cType}, ${expr})${base}, sizeof(((${l.cType}*)0)->${expr}));`);
    }
  }
  const seen = new Set<object>();
  for (const [, e] of enumsOf(api)) {
    if (seen.has(e as object)) continue;
    seen.add(e as object);
    for (const [k, v] of Object.entries(e as object)) if (typeof v === 'number') o.push(`  printf("E ${k} %lld\\n", (long long)${k});`);
  }
  for (const [k, v] of Object.entries(api.constants)) {
    const cast = typeof v === 'bigint' ? '(long long)(uintptr_t)' : '(long long)';
    o.push(`  printf("C ${k} %lld\\n", ${cast}(${k}));`);
  }
  o.push('  return 0;', '}');
  return o.join('\n');
}

describe.each(APIS)('$id API against g++', (api) => {
  let lines: string[] = [];
  const classes = classesOf(api);
  beforeAll(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-layout-'));
    fs.writeFileSync(path.join(dir, 'layout.cpp'), cppProgram(api));
    execFileSync(
      'g++',
      ['-std=c++17', '-w', `-I${STUBS}`, `-I${CODEGEN}`, `-I${CUDA_INC}`, '-o', path.join(dir, 'layout'), path.join(dir, 'layout.cpp')],
      { stdio: 'pipe' },
    );
    lines = execFileSync(path.join(dir, 'layout')).toString().trim().split('\n');
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  test('the bindings have structs, enums and constants to check', () => {
    expect(classes.length).toBeGreaterThan(100);
    expect(enumsOf(api).length).toBeGreaterThan(50);
  });

  test('every struct and union has the size and alignment g++ gives it', () => {
    const got = lines.filter((l) => l.startsWith('S ')).map((l) => l.split(' '));
    expect(got.length).toBe(classes.length);
    const wrong = got.filter(([, name, size, align]) => {
      const l = (api.structs as any)[name].layout;
      return l.size !== Number(size) || l.align !== Number(align);
    });
    expect(wrong).toEqual([]);
  });

  test('every field has the offset and size g++ gives it', () => {
    const got = lines.filter((l) => l.startsWith('F ')).map((l) => l.split(' '));
    expect(got.length).toBe(classes.reduce((n, [, c]) => n + Object.keys(c.layout.fields).length, 0));
    const wrong = got.filter(([, name, field, off, size]) => {
      const f = (api.structs as any)[name].layout.fields[field];
      return f.offset !== Number(off) || f.size !== Number(size);
    });
    expect(wrong).toEqual([]);
  });

  test('every enumerator has the value g++ gives it', () => {
    const got = lines.filter((l) => l.startsWith('E ')).map((l) => l.split(' '));
    const values = new Map<string, number>();
    for (const [, e] of enumsOf(api)) for (const [k, v] of Object.entries(e as object)) if (typeof v === 'number') values.set(k, v);
    expect(got.length).toBe(values.size);
    const wrong = got.filter(([, k, v]) => values.get(k) !== Number(v));
    expect(wrong).toEqual([]);
  });

  test('every #define constant has the value g++ gives it', () => {
    const got = lines.filter((l) => l.startsWith('C ')).map((l) => l.split(' '));
    expect(got.length).toBe(Object.keys(api.constants).length);
    const wrong = got.filter(
      ([, k, v]) => BigInt((api.constants as any)[k]) !== BigInt.asIntN(64, BigInt(v)) && BigInt((api.constants as any)[k]) !== BigInt(v),
    );
    expect(wrong).toEqual([]);
  });
});

test('enums have reverse names', () => {
  expect(enums.cudaError_t[35]).toBe('cudaErrorInsufficientDriver');
  expect(enums.cudaError_t.cudaErrorInvalidDevice).toBe(101);
  expect(enums.cudaMemcpyKind[enums.cudaMemcpyKind.cudaMemcpyDeviceToHost]).toBe('cudaMemcpyDeviceToHost');
});

test('constants callers pass are exported with their C values', () => {
  expect(constants.cudaStreamNonBlocking).toBe(1);
  expect(constants.cudaHostAllocMapped).toBe(2);
  expect(constants.cudaEventDisableTiming).toBe(2);
  expect(constants.cudaStreamLegacy).toBe(1n);
  expect(constants.cudaStreamPerThread).toBe(2n);
  expect(constants.cudaCpuDeviceId).toBe(-1);
});
