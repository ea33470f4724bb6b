// tools/flatten-exports.cjs turns the getters tsc makes of re-exports into plain values after the
// build (a getter cost about 6 ns on every `M.handle(…)` of the facade and every `cudart.i32(…)`).
import * as path from 'node:path';

const { flattenExports, mutableExports } = require('../../../tools/flatten-exports.cjs') as {
  flattenExports(js: string): { js: string; count: number };
  mutableExports(dir: string): string[];
};

test("rewrites tsc's getter re-exports into assignments, and leaves everything else alone", () => {
  const js = [
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    'exports.local = local;',
    'var checks_1 = require("./checks");',
    'Object.defineProperty(exports, "handle", { enumerable: true, get: function () { return checks_1.checkHandle; } });',
    'Object.defineProperty(exports, "$x", { enumerable: true, get: function () { return m_2.$y; } });',
    '    Object.defineProperty(o, k2, desc);',
    'function local() { return 1; }',
  ].join('\n');
  const { js: out, count } = flattenExports(js);
  expect(count).toBe(2);
  expect(out.split('\n')).toEqual([
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    'exports.local = local;',
    'var checks_1 = require("./checks");',
    'exports.handle = checks_1.checkHandle;',
    'exports.$x = m_2.$y;',
    '    Object.defineProperty(o, k2, desc);',
    'function local() { return 1; }',
  ]);
});

test('no source module exports a mutable binding (a copied re-export would not follow it)', () => {
  expect(mutableExports(path.join(__dirname, '..', '..', '..', 'src'))).toEqual([]);
});
