// Five suites: `cpu` (npm test) runs anywhere (CI has no GPU) in a few minutes; `proofs`
// (npm run test:proofs) are the slow checks that need no GPU either: clang re-reading the headers,
// the README's TypeScript and the package's types compiled, the build's ES module wrappers and
// tarball (files named *.proof.test.ts beside the tests of their layer); `gpu` needs a CUDA device and
// skips elsewhere; `soak` (npm run test:soak, tools/run-soak.cjs) is the GPU reliability soak, minutes
// long; `package` (npm run test:package) packs the tarball and compiles consumers of it.
// ts-jest only transpiles (tsconfig.jest.json: isolatedModules): `npm run typecheck` checks the
// types of src and test, and a type check per test file doubled the time of `npm test`.
// The timeout is a guard against hangs, not a measure: on a loaded 2-core machine a test that starts
// processes can take many times its usual time, past jest's default of 5 s.
const common = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup-disposable.cjs'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
};
const PROOF = '\\.proof\\.test\\.ts$';
module.exports = {
  // Two workers even on two cores (jest's default there is one): most files wait on processes they start.
  maxWorkers: Math.max(2, require('node:os').availableParallelism() - 1),
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'cpu', testMatch: ['<rootDir>/test/cpu/**/*.test.ts'], testPathIgnorePatterns: ['/node_modules/', PROOF] },
    { ...common, displayName: 'proofs', testMatch: ['<rootDir>/test/cpu/**/*.proof.test.ts'] },
    { ...common, displayName: 'gpu', testMatch: ['<rootDir>/test/gpu/**/*.test.ts'] },
    { ...common, displayName: 'soak', testMatch: ['<rootDir>/test/soak/**/*.soak.test.ts'] },
    { ...common, displayName: 'package', testMatch: ['<rootDir>/test/package/**/*.test.ts'] },
  ],
};
