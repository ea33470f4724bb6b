// After tsc: makes the root entry's namespaces other than `cudart` load on first use. TypeScript
// compiles `export * as cuda from './driver'` to an eager `exports.cuda = __importStar(require("./driver"))`;
// this rewrites each such line of dist/index.js into a getter that requires the module on the first
// read and then replaces itself with a plain value (no Proxy, no getter left on the hot path).
// The types are tsc's own (dist/index.d.ts keeps `export * as cuda from './driver'`).
const fs = require('node:fs');
const path = require('node:path');

// The namespaces loaded with the root (the records of tools/codegen/libraries.ts marked `eager`; a test
// checks the two agree). Every other namespace of the root loads on first use.
const EAGER = ['cudart'];

/** The namespaces of the compiled root that load on first use, read from its declarations (`export * as cuda from './driver'`). */
function lazyNamespaces(dts) {
  const names = [...dts.matchAll(/^export \* as (\w+) from ["']\.\/[\w-]+["'];$/gm)].map((m) => m[1]);
  for (const name of EAGER)
    if (!names.includes(name)) throw new Error(`lazy-root: dist/index.d.ts has no namespace ${name} (did tsc's output change?)`);
  return names.filter((n) => !EAGER.includes(n));
}

/** Rewrites the compiled root module's text; throws when a namespace's line is not where it should be. */
function lazyRoot(js, lazy) {
  let out = js;
  for (const name of lazy) {
    const re = new RegExp(`^exports\\.${name} = __importStar\\(require\\("(\\./[\\w-]+)"\\)\\);$`, 'm');
    const m = re.exec(out);
    if (!m)
      throw new Error(`lazy-root: dist/index.js has no line 'exports.${name} = __importStar(require("./…"))' (did tsc's output change?)`);
    out = out.replace(re, `lazy(${JSON.stringify(name)}, () => __importStar(require(${JSON.stringify(m[1])})));`);
  }
  const helper = [
    '// Written by tools/lazy-root.cjs: a namespace that loads its module on first use, then holds it as a plain value.',
    'function lazy(name, load) {',
    '    Object.defineProperty(exports, name, { enumerable: true, configurable: true, get() {',
    '        const value = load();',
    '        Object.defineProperty(exports, name, { enumerable: true, configurable: false, writable: false, value });',
    '        return value;',
    '    } });',
    '}',
  ].join('\n');
  return out.replace(/^(Object\.defineProperty\(exports, "__esModule", \{ value: true \}\);)$/m, `$1\n${helper}`);
}

module.exports = { lazyRoot, lazyNamespaces, EAGER };

if (require.main === module) {
  const file = path.join(__dirname, '..', 'dist', 'index.js');
  const lazy = lazyNamespaces(fs.readFileSync(path.join(__dirname, '..', 'dist', 'index.d.ts'), 'utf8'));
  const js = fs.readFileSync(file, 'utf8');
  if (!js.includes('function lazy(name, load)')) fs.writeFileSync(file, lazyRoot(js, lazy));
  console.error(`lazy root: ${lazy.join(', ')}`);
}
