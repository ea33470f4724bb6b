// NVTX under the real profiler: examples/nvtxRanges.ts run by Nsight Systems (`nsys profile -t
// nvtx`), and nsys's own NVTX summary of the report lists its ranges. Skipped, saying so, where nsys
// is not installed (the CPU suite tests the same calls through a fake injection library).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeGpu } from './helpers';

const root = path.join(__dirname, '..', '..');
const nsys = spawnSync('nsys', ['--version'], { encoding: 'utf8' });
const hasNsys = nsys.status === 0;

describeGpu('NVTX under Nsight Systems', () => {
  (hasNsys ? test : test.skip)(
    `nsys records the example's ranges${hasNsys ? '' : ' (skipped: nsys is not on PATH)'}`,
    () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nvtx-nsys-'));
      try {
        const out = path.join(dir, 'ranges');
        const run = spawnSync(
          'nsys',
          [
            'profile',
            '-t',
            'nvtx',
            '--force-overwrite',
            'true',
            '-o',
            out,
            process.execPath,
            '--import',
            'tsx',
            path.join('examples', 'nvtxRanges.ts'),
          ],
          { cwd: root, encoding: 'utf8', timeout: 240_000 },
        );
        expect({ status: run.status, pass: run.stdout.includes('Result = PASS'), tool: /NVTX tool: \//.test(run.stdout) }).toEqual({
          status: 0,
          pass: true,
          tool: true,
        });
        // The NVTX summary report ('nvtx_sum'; 'nvtxsum' in older nsys), as CSV.
        let stats = spawnSync('nsys', ['stats', '--report', 'nvtx_sum', '--format', 'csv', `${out}.nsys-rep`], {
          encoding: 'utf8',
          timeout: 120_000,
        });
        if (!/iteration/.test(stats.stdout))
          stats = spawnSync('nsys', ['stats', '--report', 'nvtxsum', '--format', 'csv', `${out}.nsys-rep`], {
            encoding: 'utf8',
            timeout: 120_000,
          });
        const text = stats.stdout;
        expect(['setup', 'iteration 0', 'iteration 4', 'verify', 'scale'].filter((r) => !text.includes(r))).toEqual([]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
