// Three suites: `cpu` runs anywhere (CI has no GPU); `gpu` needs a CUDA device and skips elsewhere;
// `soak` (npm run test:soak, tools/run-soak.cjs) is the GPU reliability soak, minutes long.
const common = { preset: 'ts-jest', testEnvironment: 'node', transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: { warnOnly: false } }] } };
module.exports = {
  projects: [
    { ...common, displayName: 'cpu', testMatch: ['<rootDir>/test/cpu/**/*.test.ts'] },
    { ...common, displayName: 'gpu', testMatch: ['<rootDir>/test/gpu/**/*.test.ts'] },
    { ...common, displayName: 'soak', testMatch: ['<rootDir>/test/soak/**/*.soak.test.ts'] },
  ],
};
