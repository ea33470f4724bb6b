// npm run test:gpu: each GPU test file in a process of its own, one after another. One process per
// file keeps one copy of the library per process, as in an application: under a single jest process
// the files' module registries each get a copy, and a finalizer of one copy can then block (a
// cudaFreeHost waits for the device) while a JS host function of another copy is pending.
const fs = require('node:fs');
const path = require('node:path');
const { runPerFile, summarize } = require('./jest-per-file.cjs');

const files = fs
  .readdirSync(path.join(__dirname, '..', 'test', 'gpu'))
  .filter((f) => f.endsWith('.gpu.test.ts'))
  .sort();
summarize(runPerFile({ project: 'gpu', files: files.map((f) => path.join('test', 'gpu', f)) }));
