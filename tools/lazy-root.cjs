// After tsc: makes the root entry's namespaces other than `cudart` load on first use. TypeScript
// compiles `export * as cuda from './driver'` to an eager `exports.cuda = __importStar(require("./driver"))`;
// this rewrites each such line of dist/index.js into a getter that requires the module on the first
// read and then replaces itself with a plain value (no Proxy, no getter left on the hot path).
// The types are tsc's own (dist/index.d.ts keeps `export * as cuda from './driver'`).
const fs = require('node:fs');
const path = require('node:path');

const LAZY = ['cuda', 'nvrtc', 'nvjitlink', 'nvfatbin', 'nvvm', 'core', 'nccl', 'nvml'];

/** Rewrites the compiled root module's text; throws when a namespace's line is not where it should be. */
function lazyRoot(js) {
  let out = js;
  for (const name of LAZY) {
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

module.exports = { lazyRoot, LAZY };

if (require.main === module) {
  const file = path.join(__dirname, '..', 'dist', 'index.js');
  const js = fs.readFileSync(file, 'utf8');
  if (!js.includes('function lazy(name, load)')) fs.writeFileSync(file, lazyRoot(js));
  console.log(`lazy root: ${LAZY.join(', ')}`);
}
