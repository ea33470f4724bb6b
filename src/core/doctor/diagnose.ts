// diagnose(): why CUDA works here or why not, as a check list a Node service can log at start-up and
// `cuda-bindings doctor` prints. Every check runs whatever failed before it, except those that need
// what failed (no GPU checks without a driver); nothing throws but a bug.
import { CUDA_MAJOR } from '../../ffi/versions';
import { checkContainer, checkDevices, detectContainer, nvidiaDevices } from './host';
import { checkArchitectures, checkLaunches, checkModes, findGpus } from './gpus';
import { DRIVER_NEEDS, checkDriver, checkLibraries } from './libraries';
import type { DiagnoseOptions, DoctorCheck, DoctorReport, GpuFinding } from './report';

export type { CheckStatus, DiagnoseOptions, DoctorCheck, DoctorReport, GpuFinding, LibraryFinding } from './report';

const OPTION_KEYS = ['launch', 'devDir', 'root', 'env'];

/** Checks the options' names and types; a bad one is a TypeError naming it. */
function checkOptions(o: DiagnoseOptions): void {
  if (o === null || typeof o !== 'object') throw new TypeError(`diagnose: parameter 'options' must be an object, got ${String(o)}`);
  for (const k of Object.keys(o))
    if (!OPTION_KEYS.includes(k)) throw new TypeError(`diagnose: unknown option '${k}' (options are ${OPTION_KEYS.join(', ')})`);
  for (const k of ['devDir', 'root'] as const)
    if (o[k] !== undefined && typeof o[k] !== 'string') throw new TypeError(`diagnose: option '${k}' must be a path, got ${typeof o[k]}`);
  if (o.launch !== undefined && typeof o.launch !== 'boolean')
    throw new TypeError(`diagnose: option 'launch' must be a boolean, got ${typeof o.launch}`);
}

/** Runs every check and returns the report: `works` is false when CUDA cannot run here, `reason` says why in one line. */
export function diagnose(options: DiagnoseOptions = {}): DoctorReport {
  checkOptions(options);
  const devDir = options.devDir ?? '/dev';
  const env = options.env ?? process.env;
  const inContainer = detectContainer(options.root ?? '/');
  const visible = env.NVIDIA_VISIBLE_DEVICES ?? null;
  const checks: DoctorCheck[] = [];
  const libs = checkLibraries();
  const driver = checkDriver(libs.refusedDriver);
  checks.push(driver.check, checkDevices(devDir, inContainer));
  checks.push(checkContainer(inContainer, visible, nvidiaDevices(devDir).gpus.length), ...libs.checks);
  let gpus: GpuFinding[] = [];
  const runtime = libs.findings.find((f) => f.library === 'libcudart')!;
  if (driver.check.status !== 'fail' && runtime.found) {
    const found = findGpus();
    gpus = found.gpus;
    if (found.check) checks.push(found.check);
    checks.push(...checkArchitectures(gpus), ...checkModes(gpus));
    if (options.launch === false)
      checks.push({ id: 'launch', title: 'allocation and kernel', status: 'skip', why: 'skipped (--no-launch)', todo: null });
    else checks.push(...checkLaunches(gpus));
  } else {
    const why = `not run: ${driver.check.status === 'fail' ? 'no usable driver' : 'no CUDA runtime'}`;
    checks.push({ id: 'gpus', title: 'CUDA devices', status: 'skip', why, todo: null });
  }
  return {
    schema: 1,
    ...verdict(checks, gpus),
    checks,
    driver: { cudaVersion: driver.cudaVersion, version: driver.version, needs: { ...DRIVER_NEEDS } },
    libraries: libs.findings,
    gpus,
    container: { detected: inContainer, visibleDevices: visible },
    host: { platform: process.platform, arch: process.arch, node: process.version },
  };
}

/** The verdict from the checks: the first failure is the reason CUDA cannot run. */
function verdict(checks: DoctorCheck[], gpus: GpuFinding[]): Pick<DoctorReport, 'verdict' | 'works' | 'reason'> {
  const failed = checks.find((c) => c.status === 'fail');
  if (failed) return { verdict: 'fail', works: false, reason: `CUDA cannot run: ${failed.title}: ${failed.why}` };
  const warned = checks.filter((c) => c.status === 'warn').length;
  const names = [...new Set(gpus.map((g) => g.name))].join(', ');
  const launched = gpus.length > 0 && gpus.every((g) => g.launched) ? ', a kernel ran on each' : '';
  const reason =
    `CUDA ${CUDA_MAJOR} works: ${gpus.length} GPU${gpus.length === 1 ? '' : 's'} (${names})${launched}` +
    (warned ? `; ${warned} warning${warned === 1 ? '' : 's'}` : '');
  return { verdict: warned ? 'warn' : 'ok', works: true, reason };
}
