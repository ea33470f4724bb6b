// `cuda-bindings doctor` on a real GPU: every check ok and exit status 0. Two kinds of item may warn
// there without anything being wrong with the machine for CUDA: persistence mode off and MIG on (each
// an administrator's choice that CUDA works with), and libnccl (NCCL is not part of the toolkit or
// the driver; a machine may have CUDA without it). Nothing may fail or be skipped but what
// --no-launch skips.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import type { DoctorReport } from '../../src/core';
import { describeGpu, gpu } from './helpers';

const MAY_WARN = /^(persistence:\d+|mig:\d+|library:libnccl)$/;
const root = path.join(__dirname, '..', '..');

async function doctor(...argv: string[]): Promise<{ code: number; report: DoctorReport; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['doctor', '--json', ...argv], { log: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, report: JSON.parse(out.join('\n')), err };
}

describeGpu('doctor on a GPU', () => {
  let run: Awaited<ReturnType<typeof doctor>>;
  beforeAll(async () => {
    run = await doctor();
    // The report goes to the log of the run, for the closing note.
    console.log(JSON.stringify(run.report, null, 2));
  }, 120_000);

  test('CUDA works: exit status 0, nothing on stderr', () => {
    expect([run.code, run.report.works, run.err]).toEqual([0, true, []]);
    expect(run.report.reason).toMatch(new RegExp(`^CUDA 13 works: ${gpu.count} GPUs?.*, a kernel ran on each`));
  });

  test('every check is ok, but for persistence mode, MIG mode and NCCL, which may warn', () => {
    const notOk = run.report.checks.filter((c) => c.status !== 'ok' && !(c.status === 'warn' && MAY_WARN.test(c.id)));
    expect(notOk).toEqual([]);
  });

  test('the driver runs CUDA 13 or newer, on R580 or newer; each GPU has its checks and ran the kernel', () => {
    expect(run.report.driver.cudaVersion).toBeGreaterThanOrEqual(13000);
    expect(Number(run.report.driver.version?.split('.')[0])).toBeGreaterThanOrEqual(580);
    expect(run.report.gpus).toHaveLength(gpu.count);
    for (const g of run.report.gpus) {
      expect(g).toMatchObject({ nvrtcTargets: true, launched: true });
      for (const id of ['gpu', 'mig', 'persistence', 'launch']) expect(run.report.checks.map((c) => c.id)).toContain(`${id}:${g.index}`);
    }
    const found = Object.fromEntries(run.report.libraries.map((l) => [l.library, l.found]));
    expect(found).toMatchObject({
      libcudart: true,
      libcuda: true,
      libnvrtc: true,
      libnvJitLink: true,
      libnvvm: true,
      libnvfatbin: true,
      'libnvidia-ml': true,
    });
  });

  test('--no-launch skips the kernel and nothing else', async () => {
    const r = await doctor('--no-launch');
    expect(r.code).toBe(0);
    expect(r.report.checks.filter((c) => c.status === 'skip').map((c) => c.id)).toEqual(['launch']);
    expect(r.report.gpus.every((g) => g.launched === null)).toBe(true);
  });

  test('without NVRTC the kernel is loaded from PTX by the driver, and CUDA still works', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'src', 'cli', 'main.ts'), 'doctor', '--json'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CUDA_BINDINGS_NVRTC: path.join(root, 'no-such-libnvrtc.so') },
      timeout: 120_000,
    });
    const report = JSON.parse(r.stdout) as DoctorReport;
    expect([r.status, report.works]).toEqual([0, true]);
    expect(report.checks.find((c) => c.id === 'library:libnvrtc')?.status).toBe('warn');
    expect(report.checks.filter((c) => c.id.startsWith('launch:')).map((c) => [c.status, c.why])).toEqual(
      report.gpus.map(() => ['ok', expect.stringContaining('loaded from PTX (no NVRTC)')]),
    );
  });
});
