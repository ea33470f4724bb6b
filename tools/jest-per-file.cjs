// Runs jest test files one after another, each in a process of its own, and tallies the results:
// what npm run test:gpu and npm run test:soak share. One process per file keeps one copy of the
// library per process, as in an application (see run-gpu-tests.cjs).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');

/**
 * Runs each of `files` (paths relative to the repo root) with jest's project `project`; `nodeArgs`
 * go before jest on node's command line, `env` is the child's environment. `after(file, result,
 * seconds)` runs after each file (result: jest's JSON, or null when the process died or timed out).
 * Returns { passed, failed, skipped, failedFiles }.
 */
function runPerFile({ project, files, nodeArgs = [], env = process.env, timeoutMs = 300_000, after = () => undefined }) {
  const jsonOut = path.join(os.tmpdir(), `jest-${project}-${process.pid}.json`);
  const tally = { passed: 0, failed: 0, skipped: 0, failedFiles: [] };
  for (const f of files) {
    const start = Date.now();
    const r = spawnSync(
      process.execPath,
      [...nodeArgs, require.resolve('jest/bin/jest'), '--selectProjects', project, '--runInBand', '--json', '--outputFile', jsonOut, f],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        cwd: root,
        env,
        timeout: timeoutMs,
      },
    );
    let res = null;
    try {
      res = JSON.parse(fs.readFileSync(jsonOut, 'utf8'));
      fs.rmSync(jsonOut);
    } catch {
      // no result: the process died or timed out
    }
    const name = path.basename(f);
    if (!res || r.status !== 0) tally.failedFiles.push(`${name}${r.signal ? ` (${r.signal})` : r.error ? ` (${r.error.message})` : ''}`);
    if (res) {
      tally.passed += res.numPassedTests;
      tally.failed += res.numFailedTests;
      tally.skipped += res.numPendingTests;
    } else tally.failed += 1;
    after(name, res, (Date.now() - start) / 1000);
  }
  return tally;
}

/** Prints the failed files and the "N passed, M failed, K skipped" line; sets the exit status. */
function summarize(tally) {
  if (tally.failedFiles.length) console.log(`failed: ${tally.failedFiles.join(', ')}`);
  console.log(`${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped`);
  process.exitCode = tally.failedFiles.length ? 1 : 0;
}

module.exports = { runPerFile, summarize };
