// tools/esm-wrappers.cjs: the ES module entry points name every export of the CommonJS build and read
// none of those that it loads on first use. First on a small CommonJS module written here, then on a
// build of the package made for this file (package.proof.test.ts rebuilds dist/ while other files run).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface StandIn {
  name: string;
  kind: 'class' | 'namespace';
}
const tool = require('../../../tools/esm-wrappers.cjs') as {
  LAZY_MODULE: string;
  exportNames: (mod: object) => { values: string[]; lazy: string[] };
  standIns: (mod: Record<string, unknown>, lazy: string[]) => StandIn[];
  wrapperModule: (cjsRel: string, values: string[], lazy: StandIn[]) => string;
};

const root = path.join(__dirname, '..', '..', '..');
/** Runs an ES module in `dir` (a script file: the longest are too long for a command line) and parses what it prints. */
let scripts = 0;
const esm = (dir: string, src: string) => {
  const file = path.join(dir, `script-${++scripts}.mjs`);
  fs.writeFileSync(file, src);
  return JSON.parse(execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8' }));
};

describe('on a module written here', () => {
  // Two classes that load together on first read (as the runtime's struct classes), a namespace that
  // loads on first read (as the root's), and plain values; `globalThis.loads` counts the loads.
  const lib = `
globalThis.loads = [];
exports.plain = 1;
exports.twice = (x) => 2 * x;
let classes;
const loadClasses = () => (classes ??= (loads.push('classes'), (() => {
  class Base { constructor(o) { this.x = o.x; } static make(x) { return new this({ x }); } }
  class Other extends Base {}
  return { Base, Other };
})()));
for (const n of ['Base', 'Other']) Object.defineProperty(exports, n, { enumerable: true, configurable: true, get: () => loadClasses()[n] });
Object.defineProperty(exports, 'ns', { enumerable: true, configurable: true, get() {
  loads.push('ns');
  const value = Object.freeze({ a: 1, hello: (who) => 'hello ' + who });
  Object.defineProperty(exports, 'ns', { enumerable: true, value });
  return value;
} });`;
  let dir = '';

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-esm-wrapper-'));
    fs.mkdirSync(path.join(dir, 'esm'));
    fs.writeFileSync(path.join(dir, 'lib.js'), lib);
    fs.writeFileSync(path.join(dir, 'esm', 'lazy.mjs'), tool.LAZY_MODULE);
    // What the build does, in a child process: the names first, then the kind of each lazy one.
    const wrapper = execFileSync(
      process.execPath,
      [
        '-e',
        `const t = require(${JSON.stringify(require.resolve('../../../tools/esm-wrappers.cjs'))}); const m = require('./lib.js');
         const { values, lazy } = t.exportNames(m); process.stdout.write(t.wrapperModule('../lib.js', values, t.standIns(m, lazy)));`,
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    fs.writeFileSync(path.join(dir, 'esm', 'lib.mjs'), wrapper);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('exportNames tells the plain exports from the getters without reading them', () => {
    let reads = 0;
    const mod = { plain: 1 };
    Object.defineProperty(mod, 'later', { enumerable: true, get: () => ++reads });
    Object.defineProperty(mod, 'hidden', { enumerable: false, value: 2 });
    expect(tool.exportNames(mod)).toEqual({ values: ['plain'], lazy: ['later'] });
    expect(reads).toBe(0);
  });

  test('importing the wrapper names every export and loads none of the lazy ones', () => {
    const out = esm(
      dir,
      `import * as m from './esm/lib.mjs'; import { plain, twice, Base, Other, ns } from './esm/lib.mjs';
       console.log(JSON.stringify([Object.keys(m).sort(), globalThis.loads, plain, twice(4), typeof Base, typeof Other, typeof ns]));`,
    );
    expect(out).toEqual([['Base', 'Other', 'default', 'ns', 'plain', 'twice'], [], 1, 8, 'function', 'function', 'object']);
  });

  test('a class stand-in can be extended, constructs, answers instanceof and statics, and its first use points every binding at its class', () => {
    const out = esm(
      dir,
      `import * as m from './esm/lib.mjs'; import { Base, Other } from './esm/lib.mjs';
       const Early = Base; const cjs = m.default; const before = [...globalThis.loads];
       class Mine extends Other { get twice() { return 2 * this.x; } }
       const mine = Mine.make(5); const b = new Early({ x: 3 });
       console.log(JSON.stringify([before, mine.twice, mine instanceof Mine, mine instanceof Base, mine instanceof Early, b.x, b instanceof Base,
         b.constructor === cjs.Base, Base === cjs.Base, Other === cjs.Other, m.Base === cjs.Base, Early === cjs.Base, Early.name, globalThis.loads]));`,
    );
    expect(out).toEqual([[], 10, true, true, true, 3, true, true, true, true, true, false, 'Base', ['classes']]);
  });

  test('a namespace stand-in loads on its first read; a copy taken before then holds plain properties; the binding is the namespace', () => {
    const out = esm(
      dir,
      `import * as m from './esm/lib.mjs'; import { ns } from './esm/lib.mjs';
       const early = ns; const before = [...globalThis.loads, Object.keys(early).length];
       const hello = early.hello('gpu');
       const d = Object.getOwnPropertyDescriptor(early, 'hello');
       console.log(JSON.stringify([before, hello, 'a' in early, Object.keys(early), 'value' in d, ns === m.default.ns, m.ns === ns, early === ns, globalThis.loads]));`,
    );
    expect(out).toEqual([[0], 'hello gpu', true, ['a', 'hello'], true, true, true, false, ['ns']]);
  });

  test('for...in and util.inspect see a namespace stand-in whole before its first read', () => {
    const out = esm(
      dir,
      `import { inspect } from 'node:util'; import * as m from './esm/lib.mjs';
       const keys = []; for (const k in m.ns) keys.push(k);
       console.log(JSON.stringify([keys, inspect(m.default.ns) === inspect(m.ns)]));`,
    );
    expect(out).toEqual([['a', 'hello'], true]);
  });
});

describe('on a build of the package', () => {
  let dir = '';
  let entries: string[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-esm-build-'));
    for (const f of ['src', 'tools', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
      fs.cpSync(path.join(root, f), path.join(dir, f), { recursive: true });
    fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'));
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: 'pipe' });
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    entries = Object.keys(pkg.exports)
      .filter((k) => k !== './package.json')
      .map((k) => (k === '.' ? pkg.name : `${pkg.name}/${k.slice(2)}`));
  }, 600_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("every entry point, imported as an ES module, loads the modules that require() loads and no more (none of the build's lazy parts)", () => {
    const loaded = `Object.keys(require.cache).filter((k) => k.startsWith(${JSON.stringify(path.join(dir, 'dist'))})).sort()`;
    const differences = entries.map((entry) => {
      const cjs = JSON.parse(
        execFileSync(process.execPath, ['-e', `require(${JSON.stringify(entry)}); console.log(JSON.stringify(${loaded}))`], {
          cwd: dir,
          encoding: 'utf8',
        }),
      ) as string[];
      const mjs = esm(
        dir,
        `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
         await import(${JSON.stringify(entry)}); console.log(JSON.stringify(${loaded}));`,
      ) as string[];
      return { entry, onlyEsm: mjs.filter((k) => !cjs.includes(k)), onlyCjs: cjs.filter((k) => !mjs.includes(k)) };
    });
    expect(differences.filter((d) => d.onlyEsm.length || d.onlyCjs.length)).toEqual([]);
    expect(entries.length).toBeGreaterThan(5);
  });

  test('the runtime and the root, imported as ES modules, leave the struct classes and the other namespaces unloaded', () => {
    const out = esm(
      dir,
      `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
       import * as rt from 'cuda-bindings/runtime'; import { cuda, nvml, core } from 'cuda-bindings';
       const loaded = () => Object.keys(require.cache).map((k) => k.slice(${JSON.stringify(path.join(dir, 'dist') + path.sep)}.length)).filter((k) => /structs\\.gen|^(driver|nvml|core)\\//.test(k));
       const before = loaded(); rt.cudaGetDeviceCount();
       console.log(JSON.stringify([before, loaded(), typeof rt.dim3, typeof cuda, new rt.dim3({ x: 2 }).x, loaded()]));`,
    );
    expect(out).toEqual([[], [], 'function', 'object', 2, [path.join('runtime', 'structs.gen.js')]]);
  });

  test('every name of every entry point imports by name from an ES module, and a lazy one is the CommonJS value after its first use', () => {
    // The names and the lazy ones, as CommonJS sees them (before reading any getter).
    const names = JSON.parse(
      execFileSync(
        process.execPath,
        [
          '-e',
          `const { exportNames } = require('./tools/esm-wrappers.cjs');
           console.log(JSON.stringify(${JSON.stringify(entries)}.map((e) => exportNames(require(e)))));`,
        ],
        { cwd: dir, encoding: 'utf8' },
      ),
    ) as { values: string[]; lazy: string[] }[];
    // One static import per entry point that names all its exports: a missing one fails the link.
    const imports = entries.map(
      (entry, i) =>
        `import { ${[...names[i].values, ...names[i].lazy].map((n) => `${n} as e${i}_${n}`).join(', ')} } from ${JSON.stringify(entry)};`,
    );
    const namespaces = entries.map((entry, i) => `import * as ns${i} from ${JSON.stringify(entry)};`);
    // Then through the namespace: each plain name is the CommonJS value, and so is each lazy one after a first use.
    const checks = entries.map((entry, i) => {
      const { values, lazy } = names[i];
      return `{ const m = ns${i}, cjs = ns${i}.default; for (const n of ${JSON.stringify(lazy)}) void m[n].name;
        out.push([${JSON.stringify(entry)}, Object.keys(m).length - 1, ${JSON.stringify([...values, ...lazy])}.filter((n) => m[n] !== cjs[n])]); }`;
    });
    const out = esm(dir, [...imports, ...namespaces, 'const out = [];', ...checks, 'console.log(JSON.stringify(out));'].join('\n'));
    expect(out).toEqual(entries.map((entry, i) => [entry, names[i].values.length + names[i].lazy.length, []]));
    expect(names.flatMap((n) => n.lazy).length).toBeGreaterThan(170);
  });
});
