// tools/strip-comments.cjs re-prints the compiled modules without comments after the build: V8 keeps
// each module's source text, and comments were 40% of it (issue #18).
const { stripComments } = require('../../../tools/strip-comments.cjs') as { stripComments(js: string, fileName?: string): string };

test('drops every comment and keeps the code, the "use strict" directive and the shebang', () => {
  const js = [
    '#!/usr/bin/env node',
    '"use strict";',
    '// A line comment.',
    '/** A doc comment. */',
    'function f(a /* inline */) {',
    '    return a + 1; // trailing',
    '}',
    'exports.f = f;',
  ].join('\n');
  expect(stripComments(js).split('\n')).toEqual([
    '#!/usr/bin/env node',
    '"use strict";',
    'function f(a) {',
    '    return a + 1;',
    '}',
    'exports.f = f;',
    '',
  ]);
});

test('writes non-ASCII characters of strings, templates and regular expressions as \\u escapes: the same values, one byte a character', () => {
  const out = stripComments('// an em dash — in a comment\nexports.s = "a…b";\nexports.t = `x${1}—`;\nexports.r = /é/;\n');
  expect(out).not.toMatch(/[\u0080-\uffff]/);
  const exports: { s?: string; t?: string; r?: RegExp } = {};
  new Function('exports', out)(exports);
  expect([exports.s, exports.t, exports.r?.test('é')]).toEqual(['a…b', 'x1—', true]);
});

test('refuses what an escape would change (a tagged template sees its raw text) and output that does not compile', () => {
  expect(() => stripComments('exports.s = String.raw`—`;', 'x.js')).toThrow(/x\.js: a tagged template holds a non-ASCII character/);
  expect(() => stripComments('const = 1;', 'y.js')).toThrow(/y\.js does not compile once printed/);
});
