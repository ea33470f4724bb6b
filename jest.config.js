// Two suites: `cpu` runs anywhere (CI has no GPU); `gpu` needs a CUDA device and skips elsewhere.
const common = { preset: 'ts-jest', testEnvironment: 'node', transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: { warnOnly: false } }] } };
module.exports = {
  projects: [
    { ...common, displayName: 'cpu', testMatch: ['<rootDir>/test/cpu/**/*.test.ts'] },
    { ...common, displayName: 'gpu', testMatch: ['<rootDir>/test/gpu/**/*.test.ts'] },
  ],
};
