// What package.json and typedoc.json must say for each library record: its subpath in `exports` and
// `typesVersions`, and its index among typedoc's entry points. These files are written by hand (they
// hold much else); test/cpu/codegen/libraries.test.ts and `npm run generate` name every entry they lack.
import type { LibraryRecord } from './apis';

/** package.json's `exports` entry of the subpath cuda-bindings/<id> (ES module wrappers by tools/esm-wrappers.cjs). */
export function exportsEntry(id: string): object {
  return {
    import: { types: `./dist/esm/${id}.d.mts`, default: `./dist/esm/${id}.mjs` },
    require: { types: `./dist/${id}/index.d.ts`, default: `./dist/${id}/index.js` },
  };
}

interface PackageJson {
  exports?: Record<string, unknown>;
  typesVersions?: Record<string, Record<string, string[]>>;
}
interface TypedocJson {
  entryPoints?: string[];
}

/** Each entry that package.json or typedoc.json lacks (or has wrong) for these libraries, as a line naming it. */
export function missingEntries(pkg: PackageJson, typedoc: TypedocJson, libs: LibraryRecord[]): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const { api } of libs) {
    const id = api.id;
    const want = exportsEntry(id);
    const have = pkg.exports?.[`./${id}`];
    if (!same(have, want))
      out.push(`package.json: exports["./${id}"] ${have === undefined ? 'is missing' : 'differs'}; it should be ${JSON.stringify(want)}`);
    const types = [`dist/${id}/index.d.ts`];
    const haveTypes = pkg.typesVersions?.['*']?.[id];
    if (!same(haveTypes, types))
      out.push(
        `package.json: typesVersions["*"]["${id}"] ${haveTypes === undefined ? 'is missing' : 'differs'}; it should be ${JSON.stringify(types)}`,
      );
    if (!typedoc.entryPoints?.includes(`src/${id}/index.ts`)) out.push(`typedoc.json: entryPoints lacks "src/${id}/index.ts"`);
  }
  return out;
}

/** The subpaths of package.json's `exports` that are neither a library's, nor the root, core or package.json. */
export function unknownSubpaths(pkg: PackageJson, libs: LibraryRecord[]): string[] {
  const known = new Set(['.', './core', './package.json', ...libs.map((l) => `./${l.api.id}`)]);
  return Object.keys(pkg.exports ?? {}).filter((k) => !known.has(k));
}
