// The library records of tools/codegen/libraries.ts are the one list of libraries: the generator writes
// each loader, index and the package root from them, and what package.json, typedoc.json and the build
// tools say about libraries is checked against them here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import { namespaceOf } from '../../../tools/codegen/emit-library';
import { missingEntries, unknownSubpaths } from '../../../tools/codegen/package-entries';
import * as root from '../../../src';

const repo = path.join(__dirname, '..', '..', '..');
const json = (f: string) => JSON.parse(fs.readFileSync(path.join(repo, f), 'utf8'));

test('package.json has the subpath of every library in `exports` and `typesVersions`, and typedoc.json its entry point', () => {
  expect(missingEntries(json('package.json'), json('typedoc.json'), LIBRARIES)).toEqual([]);
});

test('package.json exports no subpath of a library that has no record', () => {
  expect(unknownSubpaths(json('package.json'), LIBRARIES)).toEqual([]);
});

test('a missing entry is named: the subpath, the typesVersions key and the entry point', () => {
  const fake = { ...LIBRARIES[2], api: { ...LIBRARIES[2].api, id: 'cufile' } };
  expect(missingEntries(json('package.json'), json('typedoc.json'), [fake])).toEqual([
    expect.stringMatching(
      /^package\.json: exports\["\.\/cufile"\] is missing; it should be \{"import":\{"types":"\.\/dist\/esm\/cufile\.d\.mts"/,
    ),
    'package.json: typesVersions["*"]["cufile"] is missing; it should be ["dist/cufile/index.d.ts"]',
    'typedoc.json: entryPoints lacks "src/cufile/index.ts"',
  ]);
});

test("the package root has each record's namespace, core, and the errors' base class", () => {
  expect(Object.keys(root).sort()).toEqual([...LIBRARIES.map(namespaceOf), 'core', 'CudaBindingsError'].sort());
});

test('tools/lazy-root.cjs loads with the root the namespaces whose records say `eager`, and no other', () => {
  const { EAGER } = require('../../../tools/lazy-root.cjs') as { EAGER: string[] };
  expect(EAGER).toEqual(LIBRARIES.filter((l) => l.eager).map(namespaceOf));
});

test("tools/lazy-root.cjs reads the lazy namespaces from the root's declarations", () => {
  const { lazyNamespaces } = require('../../../tools/lazy-root.cjs') as { lazyNamespaces: (dts: string) => string[] };
  const dts = [
    "export * as cudart from './runtime';",
    '/** The cuFile API. */',
    "export * as cufile from './cufile';",
    "export * as core from './core';",
  ].join('\n');
  expect(lazyNamespaces(dts)).toEqual(['cufile', 'core']);
  expect(() => lazyNamespaces("export * as core from './core';")).toThrow(/no namespace cudart/);
});

test('every record names a library once: its id, name, namespace and variable', () => {
  for (const key of [
    (l: (typeof LIBRARIES)[number]) => l.api.id,
    (l: (typeof LIBRARIES)[number]) => l.name,
    namespaceOf,
    (l: (typeof LIBRARIES)[number]) => l.envVar,
  ]) {
    const values = LIBRARIES.map(key);
    expect(new Set(values).size).toBe(values.length);
  }
});
