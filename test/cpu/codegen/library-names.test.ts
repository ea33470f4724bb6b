// The lazily loaded libraries of src/ffi/*-lib.gen.ts are named after their records' names (libcudart,
// libcuda, …), never like the public namespaces of the package root (cudart, cuda, nvrtc, …).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as root from '../../../src';
import { LIBRARIES } from '../../../tools/codegen/libraries';

const ffi = path.join(__dirname, '..', '..', '..', 'src', 'ffi');
const libModules = fs.readdirSync(ffi).filter((f) => f.endsWith('-lib.gen.ts'));

test('src/ffi has one loader per library record, and no other', () => {
  expect(libModules.sort()).toEqual(LIBRARIES.map((l) => `${l.name}-lib.gen.ts`).sort());
});

test('every library module exports its functions as lib<name>, and no export shares a name with a public namespace', () => {
  const namespaces = new Set(Object.keys(root));
  const clashes: string[] = [];
  const missing: string[] = [];
  for (const f of libModules) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- every *-lib module of src/ffi, by file name
    const mod = require(path.join(ffi, f)) as Record<string, unknown>;
    const lib = `lib${f.replace(/-lib\.gen\.ts$/, '')}`;
    if (typeof (mod[lib] as { bind?: unknown } | undefined)?.bind !== 'function') missing.push(`${f}: ${lib}`);
    for (const name of Object.keys(mod)) if (namespaces.has(name)) clashes.push(`${f}: ${name}`);
  }
  expect(missing).toEqual([]);
  expect(clashes).toEqual([]);
});
