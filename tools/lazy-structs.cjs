// After tsc: loads the runtime's struct classes (dist/runtime/structs.gen.js) when one is first used,
// not when `cuda-bindings` is required. That module is the largest the runtime loads: V8 takes about
// 8 ms to parse its 171 classes, a fifth of `require` + the first call (issue #18 asks for under 50 ms),
// and most programs use a few structs or none. Three compiled modules beside it require it; each line is
// rewritten:
//   const S = __importStar(require("./structs.gen"));      (runtime/api.gen.js)
//   const structs_gen_1 = require("./structs.gen");        (runtime/helpers.js)
// become `let S = require("./structs.lazy").stub(() => (S = require("./structs.gen")));`:
// a stand-in with a getter per class, whose first read loads the module and points the binding at
// it, so every later `S.dim3` reads the module itself (no getter on the hot path). And in runtime/index.js
//   __exportStar(require("./structs.gen"), exports);
// becomes getters on the runtime's exports, which the first read of any class replaces with plain
// values. The names come from the compiled module itself, written to dist/runtime/structs.lazy.js.
const fs = require('node:fs');
const path = require('node:path');

const MODULE = 'runtime/structs.gen';
const BINDING = /^const ([\w$]+) = (?:__importStar\()?require\("(\.\/structs\.gen)"\)\)?;$/m;
const STAR = /^__exportStar\(require\("(\.\/structs\.gen)"\), exports\);$/m;

/** The helper module: the class names, a stand-in for a module binding, and exports that load on first read. */
function helperModule(names) {
  return `"use strict";
// Written by tools/lazy-structs.cjs: the runtime's struct classes, loaded on first use.
const names = ${JSON.stringify(names)};
function stub(load) {
    const s = {};
    for (const n of names) Object.defineProperty(s, n, { enumerable: true, configurable: true, get: () => load()[n] });
    return s;
}
function exportOnFirstUse(target, load) {
    const settle = () => {
        const m = load();
        for (const n of names) Object.defineProperty(target, n, { enumerable: true, configurable: false, writable: false, value: m[n] });
        return m;
    };
    for (const n of names) Object.defineProperty(target, n, { enumerable: true, configurable: true, get: () => settle()[n] });
}
module.exports = { names, stub, exportOnFirstUse };
`;
}

/** Rewrites one compiled module of dist/runtime that requires the struct classes; `helper` is the path to structs.lazy from it. */
function lazyStructs(js, helper) {
  let out = js;
  let n = 0;
  const binding = BINDING.exec(out);
  if (binding) {
    const [line, name, from] = binding;
    out = out.replace(
      line,
      () => `let ${name} = require(${JSON.stringify(helper)}).stub(() => (${name} = require(${JSON.stringify(from)})));`,
    );
    n++;
  }
  const star = STAR.exec(out);
  if (star) {
    out = out.replace(
      star[0],
      () => `require(${JSON.stringify(helper)}).exportOnFirstUse(exports, () => require(${JSON.stringify(star[1])}));`,
    );
    n++;
  }
  const all = js.match(/require\("\.\/structs\.gen"\)/g) ?? [];
  if (all.length !== n)
    throw new Error(
      `lazy-structs: ${all.length - n} require(s) of ${MODULE} in a form this tool does not rewrite (did tsc change its output?)`,
    );
  return { js: out, count: n };
}

module.exports = { lazyStructs, helperModule };

if (require.main === module) {
  const dist = path.join(__dirname, '..', 'dist');
  const names = Object.keys(require(path.join(dist, MODULE))).filter((k) => k !== '__esModule');
  fs.writeFileSync(path.join(dist, 'runtime', 'structs.lazy.js'), helperModule(names));
  const files = ['runtime/api.gen.js', 'runtime/helpers.js', 'runtime/index.js'];
  for (const f of files) {
    const p = path.join(dist, f);
    const { js, count } = lazyStructs(fs.readFileSync(p, 'utf8'), './structs.lazy');
    if (count === 0) throw new Error(`lazy-structs: ${f} no longer requires ${MODULE} in a form this tool knows`);
    fs.writeFileSync(p, js);
  }
  console.error(`lazy structs: ${names.length} classes of ${MODULE} load on first use (${files.join(', ')})`);
}
