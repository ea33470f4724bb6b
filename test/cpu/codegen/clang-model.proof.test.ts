// The slow half of the generator's check (`npm run test:proofs`, run by .ci/run): clang re-reads
// every header and must find the committed model. codegen.test.ts checks the fast half (model ->
// code, and the headers' hashes) in `npm test`.
import { APIS, hasClang, parseApi, root } from '../../../tools/codegen/main';
import { readParsed, serialize } from '../../../tools/codegen/parsed';

// Where clang is missing this cannot run, and jest lists it as skipped; in CI a missing clang fails it.
const withClang = hasClang() || process.env.CI ? test : test.skip;
withClang(
  'the committed model is what clang reads from the headers today (run `npm run generate` when this fails)',
  () => {
    const drift = APIS.filter((api) => serialize(parseApi(api)) !== serialize(readParsed(root, api.id))).map((a) => a.id);
    expect(drift).toEqual([]);
  },
  120_000,
);
