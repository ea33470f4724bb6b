// Every struct's size, alignment and field offsets, every enumerator and every #define constant of
// the bindings, compared with what g++ computes from the same CUDA headers.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as structs from '../../src/structs/runtime';
import * as enums from '../../src/runtime/enums';
import * as constants from '../../src/runtime/constants';
import { CStruct, type StructClass } from '../../src/structs/base';

const CUDA_INC = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');
const STUBS = path.join(__dirname, '..', '..', 'tools', 'codegen', 'stubs');
const HEADERS = ['cuda_runtime_api.h', 'cuda_profiler_api.h', 'cuda_gl_interop.h', 'cuda_egl_interop.h', 'cuda_vdpau_interop.h'];

const classes = Object.entries(structs).filter(
  ([name, v]) => typeof v === 'function' && v.prototype instanceof CStruct && (v as StructClass).name === name,
) as [string, StructClass][];
const enumList = Object.entries(enums).filter(([, v]) => typeof v === 'object' && v !== null);
const constList = Object.entries(constants);

/** The expression g++ needs for a member of a class (a nested unnamed member uses its path). */
function member(cls: StructClass, field: string): { type: string; expr: string } {
  const l = cls.layout;
  return { type: l.cType, expr: l.path ? `${l.path}.${field}` : field };
}

function cppProgram(): string {
  const o: string[] = [...HEADERS.map((h) => `#include <${h}>`), '#include <cstdio>', '#include <cstddef>', '#include <cstdint>', 'int main() {'];
  for (const [name, cls] of classes) {
    const l = cls.layout;
    const obj = l.path ? `((${l.cType}*)0)->${l.path}` : `*(${l.cType}*)0`;
    o.push(`  printf("S ${name} %zu %zu\\n", sizeof(${obj}), alignof(decltype(${obj})));`);
    for (const f of Object.keys(l.fields)) {
      const m = member(cls, f);
      const base = l.path ? ` - offsetof(${m.type}, ${l.path})` : '';
      o.push(`  printf("F ${name} ${f} %zu %zu\\n", offsetof(${m.type}, ${m.expr})${base}, sizeof(((${m.type}*)0)->${m.expr}));`);
    }
  }
  const seen = new Set<object>();
  for (const [, e] of enumList) {
    if (seen.has(e as object)) continue;
    seen.add(e as object);
    for (const [k, v] of Object.entries(e as object)) if (typeof v === 'number') o.push(`  printf("E ${k} %lld\\n", (long long)${k});`);
  }
  for (const [k, v] of constList) {
    const cast = typeof v === 'bigint' ? '(long long)(uintptr_t)' : '(long long)';
    o.push(`  printf("C ${k} %lld\\n", ${cast}(${k}));`);
  }
  o.push('  return 0;', '}');
  return o.join('\n');
}

let lines: string[] = [];

beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-layout-'));
  fs.writeFileSync(path.join(dir, 'layout.cpp'), cppProgram());
  execFileSync('g++', ['-std=c++17', '-w', `-I${STUBS}`, `-I${CUDA_INC}`, '-o', path.join(dir, 'layout'), path.join(dir, 'layout.cpp')], { stdio: 'pipe' });
  lines = execFileSync(path.join(dir, 'layout')).toString().trim().split('\n');
  fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);

test('the bindings have structs, enums and constants to check', () => {
  expect(classes.length).toBeGreaterThan(150);
  expect(constList.length).toBeGreaterThan(90);
});

test('every struct and union has the size and alignment g++ gives it', () => {
  const got = lines.filter((l) => l.startsWith('S ')).map((l) => l.split(' '));
  expect(got.length).toBe(classes.length);
  const wrong = got.filter(([, name, size, align]) => {
    const l = (structs as any)[name].layout;
    return l.size !== Number(size) || l.align !== Number(align);
  });
  expect(wrong).toEqual([]);
});

test('every field has the offset and size g++ gives it', () => {
  const got = lines.filter((l) => l.startsWith('F ')).map((l) => l.split(' '));
  expect(got.length).toBe(classes.reduce((n, [, c]) => n + Object.keys(c.layout.fields).length, 0));
  const wrong = got.filter(([, name, field, off, size]) => {
    const f = (structs as any)[name].layout.fields[field];
    return f.offset !== Number(off) || f.size !== Number(size);
  });
  expect(wrong).toEqual([]);
});

test('every enumerator has the value g++ gives it', () => {
  const got = lines.filter((l) => l.startsWith('E ')).map((l) => l.split(' '));
  const values = new Map<string, number>();
  for (const [, e] of enumList) for (const [k, v] of Object.entries(e as object)) if (typeof v === 'number') values.set(k, v);
  expect(got.length).toBe(values.size);
  const wrong = got.filter(([, k, v]) => values.get(k) !== Number(v));
  expect(wrong).toEqual([]);
});

test('every #define constant has the value g++ gives it', () => {
  const got = lines.filter((l) => l.startsWith('C ')).map((l) => l.split(' '));
  expect(got.length).toBe(constList.length);
  const wrong = got.filter(([, k, v]) => BigInt((constants as any)[k]) !== BigInt.asIntN(64, BigInt(v)) && BigInt((constants as any)[k]) !== BigInt(v));
  expect(wrong).toEqual([]);
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
