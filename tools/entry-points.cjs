// The build's last step: every file package.json names as an entry point works from where it is named.
// - Each declaration file that `types`, `typesVersions` or a `types` condition of `exports` names starts
//   with `/// <reference types="node" />`. The declarations use Node's types (Buffer, NodeJS.ProcessEnv,
//   EventEmitter, Symbol.dispose), and since TypeScript 5.5 tsc no longer writes that reference itself;
//   with it, and @types/node a dependency of the package, a consumer with `"types": []` (or none of
//   its own @types/node) compiles. One reference in an entry point serves every file it reaches.
// - Each `bin` file is executable: npm sets the bit when it installs a package, but in a clone
//   `npx cuda-bindings` runs dist/cli/main.js as the build wrote it.
// Progress goes to stderr: `npm pack --json` runs the build and its stdout must stay JSON.
const fs = require('node:fs');
const path = require('node:path');

const REFERENCE = '/// <reference types="node" />\n';

/** Every declaration file (relative to the package root, without `./`) that package.json names. */
function entryDeclarations(pkg) {
  const found = new Set();
  const add = (p) => found.add(p.replace(/^\.\//, ''));
  if (pkg.types) add(pkg.types);
  const walkExports = (v, key) => {
    if (typeof v === 'string') {
      if (key === 'types') add(v);
    } else if (v && typeof v === 'object') for (const [k, sub] of Object.entries(v)) walkExports(sub, k);
  };
  walkExports(pkg.exports, '');
  for (const paths of Object.values(pkg.typesVersions ?? {})) for (const list of Object.values(paths)) list.forEach(add);
  return [...found].sort();
}

/** Every file (relative to the package root) that package.json's `bin` names. */
function binFiles(pkg) {
  const bin = typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {});
  return bin.map((p) => p.replace(/^\.\//, ''));
}

/** The declaration text with the reference to Node's types first (once, however often it runs). */
function withNodeReference(text) {
  return text.startsWith(REFERENCE) ? text : REFERENCE + text;
}

module.exports = { entryDeclarations, binFiles, withNodeReference, REFERENCE };

if (require.main === module) {
  const root = path.join(__dirname, '..');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const declarations = entryDeclarations(pkg);
  for (const rel of declarations) {
    const file = path.join(root, rel);
    if (!fs.existsSync(file)) throw new Error(`entry-points: package.json names ${rel}, which the build did not write`);
    fs.writeFileSync(file, withNodeReference(fs.readFileSync(file, 'utf8')));
  }
  const bins = binFiles(pkg);
  for (const rel of bins) {
    const file = path.join(root, rel);
    if (!fs.readFileSync(file, 'utf8').startsWith('#!')) throw new Error(`entry-points: the bin ${rel} has no #! line`);
    fs.chmodSync(file, fs.statSync(file).mode | 0o111);
  }
  console.error(`entry points: ${declarations.length} declaration files reference Node's types; executable: ${bins.join(', ')}`);
}
