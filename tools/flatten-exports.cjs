// After tsc: turns the getters TypeScript makes of re-exports into plain values. tsc compiles
// `export { checkHandle as handle } from './checks'` to
//   Object.defineProperty(exports, "handle", { enumerable: true, get: function () { return checks_1.checkHandle; } });
// and every `M.handle(…)` in the generated facade then calls that getter: about 6 ns a parameter on
// every call (issue #18; `cudart.i32(…)` and `core.Device` paid it too). This rewrites each such
// line into `exports.handle = checks_1.checkHandle;`.
// A getter keeps a live binding; a copy is only right when the binding never changes and the module
// it comes from has finished loading. Both hold here: src exports no `let` or `var` (checked below,
// and by test/cpu/build/flatten-exports.test.ts), and test/cpu/build/layers.test.ts keeps value imports free of
// cycles, so a module's `require` has returned it whole before the line runs.
//
// It also drops the line by which tsc declares every exported const and class before the module
// body runs, `exports.a = exports.B = void 0;`. With it each such export is written twice, and V8
// then takes the property for one that may change: optimised code that uses `B` from another module
// loads it from the exports object on every call (and its property array: one more memory line each
// that a driver call may have pushed out of the caches; issue #37, bench/README.md, "The exports
// written once"). Written once, V8 takes it for a constant and puts the value in the code. Without
// the line an export is absent, rather than undefined, until its module has run that far: only a
// cycle could see the difference, and there is none (layers.test.ts).
const fs = require('node:fs');
const path = require('node:path');
const { filesUnder } = require('./files-under.cjs');

const GETTER =
  /^Object\.defineProperty\(exports, "([\w$]+)", \{ enumerable: true, get: function \(\) \{ return ([\w$]+\.[\w$]+); \} \}\);$/gm;

/** Rewrites one compiled module's getter re-exports into assignments; returns the text and how many it changed. */
function flattenExports(js) {
  let n = 0;
  const out = js.replace(GETTER, (_, name, value) => {
    n++;
    return `exports.${name} = ${value};`;
  });
  return { js: out, count: n };
}

/** tsc's predeclaration of a module's exports, `exports.a = exports.b = void 0;`, on a line of its own. */
const PREDECLARED = /^exports\.[\w$]+ = (?:exports\.[\w$]+ = )*void 0;\n/gm;

/** Drops tsc's predeclaration line of one compiled module's exports; returns the text and how many lines it dropped. */
function writeExportsOnce(js) {
  let n = 0;
  const out = js.replace(PREDECLARED, () => {
    n++;
    return '';
  });
  return { js: out, count: n };
}

/** Source files that export a mutable binding (`export let` / `export var`), which a copy would freeze. */
function mutableExports(srcDir) {
  return filesUnder(srcDir, '.ts').filter((p) => /^\s*export\s+(let|var)\s/m.test(fs.readFileSync(p, 'utf8')));
}

module.exports = { flattenExports, writeExportsOnce, mutableExports };

if (require.main === module) {
  const root = path.join(__dirname, '..');
  const mutable = mutableExports(path.join(root, 'src'));
  if (mutable.length)
    throw new Error(`flatten-exports: these export a mutable binding, which a copy would not follow: ${mutable.join(', ')}`);
  let files = 0;
  let total = 0;
  let once = 0;
  for (const p of filesUnder(path.join(root, 'dist'), '.js')) {
    const text = fs.readFileSync(p, 'utf8');
    const flat = flattenExports(text);
    const single = writeExportsOnce(flat.js);
    if (flat.count || single.count) fs.writeFileSync(p, single.js);
    if (flat.count) {
      files++;
      total += flat.count;
    }
    once += single.count;
  }
  console.error(`flatten-exports: ${total} re-exports in ${files} modules are plain values; ${once} modules write their exports once`);
}
