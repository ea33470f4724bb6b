// tools/flatten-exports.cjs turns the getters tsc makes of re-exports into plain values after the
// build (a getter cost about 6 ns on every `M.handle(…)` of the facade and every `cudart.i32(…)`),
// and drops tsc's predeclaration of the exports, so that each is written once.
import * as path from 'node:path';
import * as ts from 'typescript';

const { flattenExports, writeExportsOnce, mutableExports } = require('../../../tools/flatten-exports.cjs') as {
  flattenExports(js: string): { js: string; count: number };
  writeExportsOnce(js: string): { js: string; count: number };
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

test("drops tsc's predeclaration of the exports (each then written once, which V8 takes for a constant), and nothing else", () => {
  const js = [
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    'exports.U64 = exports.$b = exports.SLOTS = void 0;',
    'exports.more = void 0;',
    'exports.readSize = readSize;',
    'exports.SLOTS = 8;',
    'let x = void 0;',
    '    exports.inner = exports.y = void 0;',
    'exports.U64 = new BigUint64Array(8);',
  ].join('\n');
  const { js: out, count } = writeExportsOnce(js);
  expect(count).toBe(2);
  expect(out.split('\n')).toEqual([
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    'exports.readSize = readSize;',
    'exports.SLOTS = 8;',
    'let x = void 0;',
    '    exports.inner = exports.y = void 0;',
    'exports.U64 = new BigUint64Array(8);',
  ]);
});

test('a module as tsc compiles it keeps every export, each written once (V8 then takes it for a constant)', () => {
  const source = [
    'export const SLOTS = 8;',
    'export class Buffer8 { static of(): Buffer8 { return new Buffer8(); } }',
    'export function twice(x: number): number { return 2 * x; }',
    'export enum Kind { a, b }',
    'export const U64 = new BigUint64Array(SLOTS);',
  ].join('\n');
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  expect(js).toMatch(/^exports\.\S+ = .*void 0;$/m);
  const { js: out, count } = writeExportsOnce(js);
  expect(count).toBe(1);
  // Run it as a CommonJS module, counting the writes of each export.
  const writes: Record<string, number> = {};
  const values: Record<string, unknown> = {};
  const exports = new Proxy(values, {
    set: (t, k, v) => ((writes[String(k)] = (writes[String(k)] ?? 0) + 1), Reflect.set(t, k, v)),
    defineProperty: (t, k, d) => Reflect.defineProperty(t, k, d),
  });
  new Function('exports', 'require', out)(exports, require);
  expect(Object.keys(writes).sort()).toEqual(['Buffer8', 'Kind', 'SLOTS', 'U64', 'twice']);
  expect(Object.values(writes).every((n) => n === 1)).toBe(true);
  const m = values as {
    SLOTS: number;
    Buffer8: { of(): object };
    twice(x: number): number;
    Kind: Record<string, number>;
    U64: BigUint64Array;
  };
  expect([m.SLOTS, m.twice(4), m.Kind.b, m.U64.length, m.Buffer8.of() instanceof (m.Buffer8 as unknown as typeof Object)]).toEqual([
    8,
    8,
    1,
    8,
    true,
  ]);
});

test('no source module exports a mutable binding (a copied re-export would not follow it)', () => {
  expect(mutableExports(path.join(__dirname, '..', '..', '..', 'src'))).toEqual([]);
});
