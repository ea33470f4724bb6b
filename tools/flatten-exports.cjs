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

/** Source files that export a mutable binding (`export let` / `export var`), which a copy would freeze. */
function mutableExports(srcDir) {
  return filesUnder(srcDir, '.ts').filter((p) => /^\s*export\s+(let|var)\s/m.test(fs.readFileSync(p, 'utf8')));
}

module.exports = { flattenExports, mutableExports };

if (require.main === module) {
  const root = path.join(__dirname, '..');
  const mutable = mutableExports(path.join(root, 'src'));
  if (mutable.length)
    throw new Error(`flatten-exports: these export a mutable binding, which a copy would not follow: ${mutable.join(', ')}`);
  let files = 0;
  let total = 0;
  for (const p of filesUnder(path.join(root, 'dist'), '.js')) {
    const { js, count } = flattenExports(fs.readFileSync(p, 'utf8'));
    if (count) {
      fs.writeFileSync(p, js);
      files++;
      total += count;
    }
  }
  console.error(`flatten-exports: ${total} re-exports in ${files} modules are plain values`);
}
