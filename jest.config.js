// Four suites: `cpu` runs anywhere (CI has no GPU); `gpu` needs a CUDA device and skips elsewhere;
// `soak` (npm run test:soak, tools/run-soak.cjs) is the GPU reliability soak, minutes long;
// `package` (npm run test:package) packs the tarball and compiles consumers of it, a few minutes.
// The timeout is a guard against hangs, not a measure: on a loaded 2-core machine a test that starts
// processes can take many times its usual time, past jest's default of 5 s.
const common = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: { warnOnly: false } }] },
};
module.exports = {
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'cpu', testMatch: ['<rootDir>/test/cpu/**/*.test.ts'] },
    { ...common, displayName: 'gpu', testMatch: ['<rootDir>/test/gpu/**/*.test.ts'] },
    { ...common, displayName: 'soak', testMatch: ['<rootDir>/test/soak/**/*.soak.test.ts'] },
    { ...common, displayName: 'package', testMatch: ['<rootDir>/test/package/**/*.test.ts'] },
  ],
};
