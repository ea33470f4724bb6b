// The facade's namespaces hold their functions, enums and struct classes as plain values: a getter per
// name (what TypeScript's `export *` makes of a writable module) cost about 40 ns on every
// `cudart.f()` call (issue #18). Generated modules end with Object.freeze(exports) for this.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as root from '../../../src';
import * as runtime from '../../../src/runtime';
import * as driver from '../../../src/driver';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import { namespaceOf } from '../../../tools/codegen/emit-library';

const cases: [string, () => object, string][] = [];
for (const lib of LIBRARIES) {
  const [api, ns] = [lib.api.id, namespaceOf(lib)];
  for (const part of ['api.gen', 'enums.gen', 'check.gen', 'helpers'])
    cases.push([`root.${ns} (${part})`, () => (root as any)[ns], `../../../src/${api}/${part}`]);
  // A library whose headers declare no struct has no struct module.
  if (fs.existsSync(path.join(__dirname, '..', '..', '..', 'src', api, 'structs.gen.ts')))
    cases.push([`root.${ns} (structs)`, () => (root as any)[ns], `../../../src/${api}/structs.gen`]);
}
cases.push(
  ['cuda-bindings/runtime (api)', () => runtime, '../../../src/runtime/api.gen'],
  ['cuda-bindings/driver (api)', () => driver, '../../../src/driver/api.gen'],
);

test.each(cases)('%s: every name is a data property, not a getter', (_name, ns, modulePath) => {
  let mod: object;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- each case names its module
    mod = require(modulePath);
  } catch {
    return expect(modulePath).toMatch(/helpers$/); // not every API has hand-written helpers
  }
  const names = Object.keys(mod);
  const getters = names.filter((k) => typeof Object.getOwnPropertyDescriptor(ns(), k)?.get === 'function');
  expect(getters).toEqual([]);
  expect(names.every((k) => Object.getOwnPropertyDescriptor(ns(), k) !== undefined)).toBe(true);
});
