// tools/lazy-structs.cjs: the runtime's struct classes load on first use (dist is checked by build/package.proof.test.ts).
const { lazyStructs, helperModule } = require('../../../tools/lazy-structs.cjs') as {
  lazyStructs: (js: string, helper: string) => { js: string; count: number };
  helperModule: (names: string[]) => string;
};

test("rewrites tsc's three forms of requiring the struct classes, and nothing else", () => {
  const js = [
    'const M = __importStar(require("../ffi/marshal"));',
    'const S = __importStar(require("./structs.gen"));',
    'function f() { return new S.dim3(); }',
  ].join('\n');
  const { js: out, count } = lazyStructs(js, './structs.lazy');
  expect(count).toBe(1);
  expect(out).toBe(
    [
      'const M = __importStar(require("../ffi/marshal"));',
      'let S = require("./structs.lazy").stub(() => (S = require("./structs.gen")));',
      'function f() { return new S.dim3(); }',
    ].join('\n'),
  );
  expect(lazyStructs('const structs_gen_1 = require("./structs.gen");', 'h').js).toBe(
    'let structs_gen_1 = require("h").stub(() => (structs_gen_1 = require("./structs.gen")));',
  );
  expect(lazyStructs('__exportStar(require("./structs.gen"), exports);', 'h').js).toBe(
    'require("h").exportOnFirstUse(exports, () => require("./structs.gen"));',
  );
  expect(lazyStructs('const x = 1;', 'h')).toEqual({ js: 'const x = 1;', count: 0 });
});

test('refuses a require of the struct classes in a form it does not know', () => {
  expect(() => lazyStructs('const { dim3 } = require("./structs.gen");', 'h')).toThrow(/1 require\(s\) of runtime\/structs.gen/);
});

test('the stand-in loads the module on the first read and the binding then points at the module', () => {
  const helper = { exports: {} as Record<string, unknown> };
  new Function('module', helperModule(['A', 'B']))(helper);
  const { stub, exportOnFirstUse } = helper.exports as {
    stub: (load: () => Record<string, unknown>) => Record<string, unknown>;
    exportOnFirstUse: (target: object, load: () => Record<string, unknown>) => void;
  };
  let loads = 0;
  const real = { A: 'a', B: 'b' };
  let S = stub(() => {
    loads++;
    return (S = real);
  });
  expect(loads).toBe(0);
  expect(Object.keys(S)).toEqual(['A', 'B']);
  expect(S.B).toBe('b');
  expect(S).toBe(real);
  expect(S.A).toBe('a');
  expect(loads).toBe(1);

  const target: Record<string, unknown> = {};
  exportOnFirstUse(target, () => {
    loads++;
    return real;
  });
  expect(loads).toBe(1);
  expect(target.A).toBe('a');
  expect(loads).toBe(2);
  expect(Object.getOwnPropertyDescriptor(target, 'B')).toEqual({ value: 'b', writable: false, enumerable: true, configurable: false });
});
