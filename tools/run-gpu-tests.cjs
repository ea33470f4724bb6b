// npm run test:gpu: each GPU test file in a process of its own, one after another. One process per
// file keeps one copy of the library per process, as in an application: under a single jest process
// the files' module registries each get a copy, and a finalizer of one copy can then block (a
// cudaFreeHost waits for the device) while a JS host function of another copy is pending.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..', 'test', 'gpu');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.gpu.test.ts')).sort();
let passed = 0;
let failed = 0;
let skipped = 0;
let failedFiles = [];
for (const f of files) {
  const r = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--selectProjects', 'gpu', '--runInBand', '--json', '--outputFile', '/tmp/jest-gpu.json', path.join('test', 'gpu', f)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd: path.join(__dirname, '..'),
    timeout: 300_000,
  });
  let res = null;
  try {
    res = JSON.parse(fs.readFileSync('/tmp/jest-gpu.json', 'utf8'));
    fs.rmSync('/tmp/jest-gpu.json');
  } catch {
    // no result: the process died or timed out
  }
  if (!res || r.status !== 0) failedFiles.push(`${f}${r.signal ? ` (${r.signal})` : r.error ? ` (${r.error.message})` : ''}`);
  if (res) {
    passed += res.numPassedTests;
    failed += res.numFailedTests;
    skipped += res.numPendingTests;
  } else failed += 1;
}
if (failedFiles.length) console.log(`failed: ${failedFiles.join(', ')}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failedFiles.length ? 1 : 0;
