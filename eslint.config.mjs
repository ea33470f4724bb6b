// ESLint: typescript-eslint's recommended rules and eslint-plugin-import's no-cycle (the layer test,
// test/cpu/build/layers.test.ts, checks the layers' direction; no-cycle names a value cycle as it is typed).
// (eslint-plugin-import-x was tried: its native resolver's platform packages kept `npm ci` from
// installing from this lock.)
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'docs/**', 'coverage/**', 'node_modules/**', '.gpu/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { import: importPlugin },
    settings: {
      // no-cycle parses each imported module: TypeScript's parser for .ts files.
      'import/parsers': { '@typescript-eslint/parser': ['.ts', '.mts'] },
      'import/extensions': ['.ts', '.mts', '.js'],
      'import/resolver': { node: { extensions: ['.ts', '.js', '.json'] } },
    },
    rules: {
      'import/no-cycle': ['error', { ignoreExternal: true }],
      // The package is CommonJS: a library's module is require()d on first use (src/index.ts, the
      // *-lib.ts loaders, prom-client for the exporter), and tests require() modules inside jest.isolateModules.
      '@typescript-eslint/no-require-imports': ['error', { allow: ['^\\.\\.?/', '^node:', '^prom-client$'] }],
      // `const { dropped, ...rest } = o` is how a key is left out.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // A struct's owner chain is walked from `this` (for (let s = this; s; s = s._owner)).
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['s'] }],
    },
  },
  {
    // Tests pass values of the wrong type on purpose, to see them refused.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Generated code (tools/codegen writes every generated file as *.gen.ts): every file of a kind gets
    // the same imports, and C enums give several names to one value.
    files: ['**/*.gen.ts'],
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      '@typescript-eslint/no-unused-vars': 'off',
      '@typescript-eslint/no-duplicate-enum-values': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // clang's JSON AST is untyped: its nodes are read as they come.
    files: ['tools/codegen/clang.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Node scripts in CommonJS (tools/*.cjs, gpu/, bench).
    files: ['**/*.cjs', '**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['**/*.mjs'], languageOptions: { globals: globals.node } },
);
