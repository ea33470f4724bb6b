// npm run test:soak: each soak file (test/soak/*.soak.test.ts) in a process of its own, one after
// another, under --expose-gc (the tests collect garbage to see finalizers run). Each test appends its
// figures as a JSON line to $SOAK_REPORT (a temporary file when unset); they are printed per file.
//   node tools/run-soak.cjs [name-part ...]     (only the files whose names contain one of them)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runPerFile, summarize } = require('./jest-per-file.cjs');

const dir = path.join(__dirname, '..', 'test', 'soak');
const only = process.argv.slice(2);
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.soak.test.ts') && (!only.length || only.some((o) => f.includes(o))))
  .sort();
const report = process.env.SOAK_REPORT ? path.resolve(process.env.SOAK_REPORT) : path.join(os.tmpdir(), `soak-report-${process.pid}.jsonl`);

const size = (f) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
const fmt = (x) => (x === undefined || x === null ? '?' : x);

let from = size(report);
const t0 = Date.now();
const tally = runPerFile({
  project: 'soak',
  files: files.map((f) => path.join('test', 'soak', f)),
  nodeArgs: ['--expose-gc'],
  env: { ...process.env, SOAK_REPORT: report },
  after(f, res, seconds) {
    // This file's figures: the lines its tests appended to the report.
    const lines = size(report) > from ? fs.readFileSync(report).subarray(from).toString('utf8').split('\n').filter(Boolean) : [];
    from = size(report);
    console.log(
      `== ${f}: ${res ? `${res.numPassedTests} passed, ${res.numFailedTests} failed, ${res.numPendingTests} skipped` : 'no result'} in ${seconds.toFixed(1)} s`,
    );
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
  },
});
if (!process.env.SOAK_REPORT && fs.existsSync(report)) fs.rmSync(report);
console.log(`soak: ${((Date.now() - t0) / 1000).toFixed(1)} s in all`);
summarize(tally);
