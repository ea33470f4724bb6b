// The NCCL bindings' structs, enums and #define constants against g++ on the committed
// declarations (tools/codegen/nccl-decls.h, reduced from NCCL 2.28's nccl.h), and the
// initializers against the header's own NCCL_CONFIG_INITIALIZER and NCCL_SIM_INFO_INITIALIZER.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CStruct, type StructClass } from '../../../src/ffi/struct-base';
import * as structs from '../../../src/nccl/structs.gen';
import * as enums from '../../../src/nccl/enums.gen';
import * as constants from '../../../src/nccl/constants.gen';
import { ncclConfigInitializer, ncclSimInfoInitializer, NCCL_VERSION } from '../../../src/nccl/helpers';

const DECLS = path.join(__dirname, '..', '..', '..', 'tools', 'codegen', 'nccl-decls.h');
const classes = Object.entries(structs).filter(
  ([n, v]) => typeof v === 'function' && v.prototype instanceof CStruct && (v as StructClass).name === n,
) as [string, StructClass][];
const enumObjs = [...new Set(Object.values(enums).filter((v) => typeof v === 'object'))] as Record<string, unknown>[];

let lines: string[] = [];
beforeAll(() => {
  const o: string[] = [
    `#include "${DECLS}"`,
    '#include <cstdio>',
    '#include <cstddef>',
    '#include <cstdint>',
    // nccl.h's function-like macro, which the reduced header leaves out (its initializers use it).
    '#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))',
    'static void dump(const char *tag, const void *p, size_t n) { printf("%s", tag); for (size_t i = 0; i < n; i++) printf(" %u", ((const unsigned char *)p)[i]); printf("\\n"); }',
    'int main() {',
  ];
  for (const [name, cls] of classes) {
    const l = cls.layout;
    o.push(`  printf("S ${name} %zu %zu\\n", sizeof(${l.cType}), alignof(${l.cType}));`);
    for (const f of Object.keys(l.fields))
      o.push(`  printf("F ${name} ${f} %zu %zu\\n", offsetof(${l.cType}, ${f}), sizeof(((${l.cType}*)0)->${f}));`);
  }
  for (const e of enumObjs)
    for (const [k, v] of Object.entries(e)) if (typeof v === 'number') o.push(`  printf("E ${k} %lld\\n", (long long)${k});`);
  for (const k of Object.keys(constants)) o.push(`  printf("C ${k} %lld\\n", (long long)(${k}));`);
  o.push('  { ncclConfig_t c = NCCL_CONFIG_INITIALIZER; dump("I config", &c, sizeof c); }');
  o.push('  { ncclSimInfo_t s = NCCL_SIM_INFO_INITIALIZER; dump("I siminfo", &s, sizeof s); }');
  o.push('  return 0;', '}');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nccl-layout-'));
  fs.writeFileSync(path.join(dir, 'l.cpp'), o.join('\n'));
  execFileSync('g++', ['-std=c++17', '-w', '-o', path.join(dir, 'l'), path.join(dir, 'l.cpp')], { stdio: 'pipe' });
  lines = execFileSync(path.join(dir, 'l')).toString().trim().split('\n');
  fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

const rows = (tag: string) => lines.filter((l) => l.startsWith(`${tag} `)).map((l) => l.split(' '));

test('ncclUniqueId, ncclConfig_t and ncclSimInfo_t have the size, alignment and field offsets g++ gives', () => {
  expect(classes.map(([n]) => n).sort()).toEqual(['ncclConfig_v22800', 'ncclSimInfo_v22200', 'ncclUniqueId']);
  expect(
    rows('S').filter(
      ([, n, size, align]) => (structs as any)[n].layout.size !== Number(size) || (structs as any)[n].layout.align !== Number(align),
    ),
  ).toEqual([]);
  const f = rows('F');
  expect(f.length).toBe(1 + 17 + 4);
  expect(
    f.filter(
      ([, n, k, off, size]) =>
        (structs as any)[n].layout.fields[k].offset !== Number(off) || (structs as any)[n].layout.fields[k].size !== Number(size),
    ),
  ).toEqual([]);
  expect(structs.ncclUniqueId.layout.size).toBe(128);
});

test('every enumerator has the value g++ gives it (ncclMaxRedOp computed from sizeof)', () => {
  const values = new Map<string, number>();
  for (const e of enumObjs) for (const [k, v] of Object.entries(e)) if (typeof v === 'number') values.set(k, v);
  const got = rows('E');
  expect(got.length).toBe(values.size);
  expect(got.filter(([, k, v]) => values.get(k) !== Number(v))).toEqual([]);
  expect([enums.ncclRedOp_t.ncclMaxRedOp, enums.ncclDataType_t.ncclBfloat16, enums.ncclResult_t.ncclInProgress]).toEqual([
    2147483647, 9, 7,
  ]);
});

test('every #define constant has the value g++ gives it', () => {
  const got = rows('C');
  expect(got.length).toBe(Object.keys(constants).length);
  expect(got.filter(([, k, v]) => Number((constants as any)[k]) !== Number(v))).toEqual([]);
  expect([
    constants.NCCL_UNIQUE_ID_BYTES,
    constants.NCCL_SPLIT_NOCOLOR,
    constants.NCCL_CONFIG_UNDEF_INT,
    constants.NCCL_VERSION_CODE,
  ]).toEqual([128, -1, -2147483648, 22809]);
});

test("ncclConfigInitializer and ncclSimInfoInitializer give the bytes of the header's initializers", () => {
  const bytes = (tag: string) =>
    rows('I')
      .find((r) => r[1] === tag)!
      .slice(2)
      .map(Number);
  expect(Array.from(ncclConfigInitializer().getBytes())).toEqual(bytes('config'));
  expect(Array.from(ncclSimInfoInitializer().getBytes())).toEqual(bytes('siminfo'));
  expect(NCCL_VERSION(2, 28, 9)).toBe(constants.NCCL_VERSION_CODE);
  expect(NCCL_VERSION(2, 8, 4)).toBe(2804);
});

test('every raw pointer of the NCCL facade has its extent in the spec, or is one NCCL never dereferences', () => {
  const { ncclApi, notDereferenced } = require('../../../tools/codegen/nccl-spec');
  const sigs: { name: string; params: { name: string; ts: string }[] }[] = require('../fixtures/nccl-signatures.json');
  const raw = sigs.flatMap((f) => f.params.filter((p) => p.ts === 'Pointer').map((p) => `${f.name}.${p.name}`));
  expect(raw.length).toBeGreaterThan(20);
  const known = (k: string) => {
    const [f, p] = k.split('.');
    return ncclApi.spec.extents[f]?.[p] !== undefined || notDereferenced[f]?.includes(p);
  };
  expect(raw.filter((k) => !known(k))).toEqual([]);
});
