// After the build: re-prints every compiled module of dist/ without its comments, with TypeScript's
// own printer. V8 keeps a module's source text for as long as the module lives (a function is
// compiled from it on its first call), and comments were 40% of the text: the doc comment of every
// generated function, struct field and enum member. One character outside Latin-1 (an em dash in a
// comment) also made V8 hold the whole file as two bytes a character; the few left in strings are
// written as \u escapes. The declarations (.d.ts) keep every comment: editors show them.
// (issue #18: this took `require('cuda-bindings')` + a first call from 16.5 to 15.0 MiB of RSS.)
const fs = require('node:fs');
const path = require('node:path');
const { filesUnder } = require('./files-under.cjs');
const vm = require('node:vm');
const ts = require('typescript');

const printer = ts.createPrinter({ removeComments: true });

/** A CommonJS module's code without comments and in ASCII only, checked to compile as Node would compile it. */
function stripComments(js, fileName = 'module.js') {
  const sf = ts.createSourceFile(fileName, js, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  // A tagged template sees its raw text, which an escape would change.
  (function visit(node) {
    if (ts.isTaggedTemplateExpression(node) && /[\u0080-\uffff]/.test(node.template.getText(sf)))
      throw new Error(`strip-comments: ${fileName}: a tagged template holds a non-ASCII character`);
    ts.forEachChild(node, visit);
  })(sf);
  // Outside comments a non-ASCII character sits in a string, a template, a regular expression or
  // an identifier, where \uXXXX stands for the same UTF-16 unit.
  const out = printer.printFile(sf).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  try {
    vm.compileFunction(out.replace(/^#!.*/, ''), ['exports', 'require', 'module', '__filename', '__dirname'], { filename: fileName });
  } catch (e) {
    throw new Error(`strip-comments: ${fileName} does not compile once printed: ${e.message}`);
  }
  return out;
}

module.exports = { stripComments };

if (require.main === module) {
  const dist = path.join(__dirname, '..', 'dist');
  let files = 0;
  let before = 0;
  let after = 0;
  for (const p of filesUnder(dist, '.js')) {
    const js = fs.readFileSync(p, 'utf8');
    const out = stripComments(js, path.relative(dist, p));
    fs.writeFileSync(p, out);
    files++;
    before += Buffer.byteLength(js);
    after += out.length;
  }
  console.error(`strip-comments: ${files} modules, ${Math.round(before / 1024)} kB -> ${Math.round(after / 1024)} kB`);
}
