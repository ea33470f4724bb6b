// npm run test:soak: each soak file (test/soak/*.soak.test.ts) in a process of its own, one after
// another, under --expose-gc (the tests collect garbage to see finalizers run). Each test appends its
// figures as a JSON line to $SOAK_REPORT (a temporary file when unset); they are printed per file.
//   node tools/run-soak.cjs [name-part ...]     (only the files whose names contain one of them)
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const dir = path.join(root, 'test', 'soak');
const only = process.argv.slice(2);
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.soak.test.ts') && (!only.length || only.some((o) => f.includes(o)))).sort();
const report = process.env.SOAK_REPORT ? path.resolve(process.env.SOAK_REPORT) : path.join(os.tmpdir(), `soak-report-${process.pid}.jsonl`);
const jsonOut = path.join(os.tmpdir(), `jest-soak-${process.pid}.json`);
const FILE_TIMEOUT_MS = 300_000;

const size = (f) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
const fmt = (x) => (x === undefined || x === null ? '?' : x);

let passed = 0;
let failed = 0;
let skipped = 0;
const failedFiles = [];
const t0 = Date.now();
for (const f of files) {
  const from = size(report);
  const start = Date.now();
  const r = spawnSync(process.execPath, ['--expose-gc', require.resolve('jest/bin/jest'), '--selectProjects', 'soak', '--runInBand', '--json', '--outputFile', jsonOut, path.join('test', 'soak', f)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd: root,
    env: { ...process.env, SOAK_REPORT: report },
    timeout: FILE_TIMEOUT_MS,
  });
  const seconds = ((Date.now() - start) / 1000).toFixed(1);
  let res = null;
  try {
    res = JSON.parse(fs.readFileSync(jsonOut, 'utf8'));
    fs.rmSync(jsonOut);
  } catch {
    // no result: the process died or timed out
  }
  if (!res || r.status !== 0) failedFiles.push(`${f}${r.signal ? ` (${r.signal})` : r.error ? ` (${r.error.message})` : ''}`);
  if (res) {
    passed += res.numPassedTests;
    failed += res.numFailedTests;
    skipped += res.numPendingTests;
  } else failed += 1;

  // This file's figures: the lines its tests appended to the report.
  const lines = size(report) > from ? fs.readFileSync(report).subarray(from).toString('utf8').split('\n').filter(Boolean) : [];
  console.log(`== ${f}: ${res ? `${res.numPassedTests} passed, ${res.numFailedTests} failed, ${res.numPendingTests} skipped` : 'no result'} in ${seconds} s`);
  for (const l of lines) {
    let x;
    try {
      x = JSON.parse(l);
    } catch {
      continue;
    }
    console.log(
      `   ${x.test}: ${fmt(x.cycles)}/${fmt(x.target)} cycles in ${fmt(x.elapsedS)} s; ` +
        `device free ${fmt(x.freeBeforeMiB)} -> ${fmt(x.freeAfterMiB)} MiB (${fmt(x.freeLostBytes)} bytes not back); ` +
        `RSS ${fmt(x.rssBeforeMiB)} / peak ${fmt(x.rssPeakMiB)} / after ${fmt(x.rssAfterMiB)} MiB`,
    );
  }
}
if (!process.env.SOAK_REPORT && fs.existsSync(report)) fs.rmSync(report);
if (failedFiles.length) console.log(`failed: ${failedFiles.join(', ')}`);
console.log(`soak: ${((Date.now() - t0) / 1000).toFixed(1)} s in all`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failedFiles.length ? 1 : 0;
