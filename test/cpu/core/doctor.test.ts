// `cuda-bindings doctor` and core's diagnose() against fakes on this machine (no driver, no GPU): each
// scenario's verdict, exit status and advice. Each runs in a child with only its own environment.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bareEnv, buildFakeLibrary, copyRealCudart, runBare } from '../helpers/fake-libraries';
import { missingFunctions } from '../../../src/core/doctor/libraries';
import { declarations as ncclDeclarations } from '../../../src/ffi/nccl.gen';
import type { DoctorCheck, DoctorReport } from '../../../src/core';
import { detectContainer } from '../../../src/core/doctor/host';

const inContainer = detectContainer('/');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-doctor-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const home = path.join(tmp, 'home');

/** A folder of device files (plain files standing in for them). */
function devDir(name: string, files: string[]): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(dir, f), '');
  return dir;
}
const goodDev = devDir('dev-good', ['nvidia0', 'nvidiactl', 'nvidia-uvm']);

/** `cuda-bindings doctor --json …` in a child with `env`: the report, the exit status and stderr. */
function doctor(env: NodeJS.ProcessEnv, ...args: string[]): { report: DoctorReport; status: number | null; stderr: string } {
  const r = runBare(
    `require('./src/cli/main').main(${JSON.stringify(['doctor', '--json', ...args])}).then((c) => { process.exitCode = c; });`,
    env,
  );
  return { report: JSON.parse(r.stdout), status: r.status, stderr: r.stderr };
}

const check = (r: DoctorReport, id: string): DoctorCheck => {
  const c = r.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id} in ${r.checks.map((x) => x.id).join(', ')}`);
  return c;
};

describe('no driver (this machine)', () => {
  let run: ReturnType<typeof doctor>;
  beforeAll(() => {
    run = doctor(bareEnv(home), '--dev-dir', path.join(tmp, 'no-such-dev'));
  });

  test('fails with exit status 1, the reason on the last line of stderr', () => {
    expect([run.report.verdict, run.report.works, run.status]).toEqual(['fail', false, 1]);
    expect(run.stderr.trim().split('\n').pop()).toBe(`cuda-bindings doctor: ${run.report.reason}`);
    expect(run.report.reason).toBe(
      'CUDA cannot run: NVIDIA driver: no NVIDIA driver found (libcuda.so.1 did not load); these bindings need CUDA 13 (R580 or newer)',
    );
  });

  test('the driver check says what to install; the device check names the missing /dev/nvidia0', () => {
    expect(check(run.report, 'driver')).toMatchObject({
      status: 'fail',
      todo: expect.stringMatching(/^install NVIDIA driver R580 or newer/),
    });
    expect(check(run.report, 'devices')).toMatchObject({ status: 'fail', why: expect.stringContaining('no nvidia0 in') });
  });

  test('each of the eight libraries is listed: the runtime found (where, how, version), the others not, optional ones as warnings', () => {
    expect(run.report.libraries.map((l) => [l.library, l.found])).toEqual([
      ['libcudart', true],
      ['libcuda', false],
      ['libnvrtc', false],
      ['libnvJitLink', false],
      ['libnvvm', true],
      ['libnvfatbin', false],
      ['libnccl', false],
      ['libnvidia-ml', false],
    ]);
    expect(run.report.libraries[0]).toMatchObject({ foundVia: 'system', version: 13000, generatedFrom: 13000 });
    expect(check(run.report, 'library:libnccl')).toMatchObject({
      status: 'warn',
      why: expect.stringMatching(/^not found \(tried \d+ places: already loaded, /),
      todo: expect.stringContaining('pip install nvidia-nccl-cu13'),
    });
    expect(check(run.report, 'gpus')).toMatchObject({ status: 'skip', why: 'not run: no usable driver' });
  });

  test('the text form: one line per check, a → line of what to do, the reason last', () => {
    const r = runBare(`require('./src/cli/main').main(['doctor', '--no-launch']).then((c) => { process.exitCode = c; });`, bareEnv(home));
    expect(r.status).toBe(1);
    expect(r.stdout.split('\n')[0]).toMatch(/^FAIL {2}NVIDIA driver: no NVIDIA driver found/);
    expect(r.stdout).toContain('      → install NVIDIA driver R580 or newer');
    expect(r.stderr.trim()).toBe(
      'cuda-bindings doctor: CUDA cannot run: NVIDIA driver: no NVIDIA driver found (libcuda.so.1 did not load); these bindings need CUDA 13 (R580 or newer)',
    );
  });
});

test('a CUDA 12.4 driver (R550): refused, naming the driver and the branch to install', () => {
  const dir = path.join(tmp, 'r550');
  const cuda = buildFakeLibrary('cuda', dir, 12040);
  const nvml = buildFakeLibrary(
    'nvml',
    dir,
    12040,
    [
      'int nvmlSystemGetCudaDriverVersion(int *v) { *v = 12040; return 0; }',
      'int nvmlSystemGetDriverVersion(char *s, unsigned n) { const char *v = "550.54.15"; unsigned i = 0; for (; v[i] && i + 1 < n; i++) s[i] = v[i]; s[i] = 0; return 0; }',
    ].join('\n'),
  );
  const run = doctor(bareEnv(home, { CUDA_BINDINGS_CUDA: cuda, CUDA_BINDINGS_NVML: nvml }), '--dev-dir', goodDev);
  expect([run.report.verdict, run.status]).toEqual(['fail', 1]);
  expect(run.report.driver).toEqual({ cudaVersion: 12040, version: '550.54.15', needs: { cudaVersion: 13000, branch: 580 } });
  expect(check(run.report, 'driver')).toEqual({
    id: 'driver',
    title: 'NVIDIA driver',
    status: 'fail',
    why: 'the driver (R550.54.15) runs CUDA 12.4 at most; these bindings need CUDA 13 (R580 or newer)',
    todo: 'upgrade the NVIDIA driver to R580 or newer',
  });
  expect(check(run.report, 'library:libcuda')).toMatchObject({
    status: 'fail',
    why: `${cuda}: CUDA driver 12.4 found, but these bindings need CUDA 13.x or newer`,
  });
  expect(check(run.report, 'library:libnvidia-ml')).toMatchObject({ status: 'ok', why: `${nvml} (found via env)` });
  expect(check(run.report, 'devices')).toMatchObject({ status: 'ok' });
  expect(run.report.reason).toBe(
    'CUDA cannot run: NVIDIA driver: the driver (R550.54.15) runs CUDA 12.4 at most; these bindings need CUDA 13 (R580 or newer)',
  );
});

describe('the device files (--dev-dir)', () => {
  test('present and usable: ok, naming them', () => {
    const run = doctor(bareEnv(home), '--dev-dir', goodDev, '--no-launch');
    expect(check(run.report, 'devices')).toMatchObject({
      status: 'ok',
      why: expect.stringMatching(/^1 GPU \(nvidia0\) and nvidia-uvm, nvidiactl, usable by uid \d+$/),
    });
  });

  test('no /dev/nvidia0: fail, saying the kernel driver is not loaded', () => {
    const dir = devDir('dev-no-gpu', ['nvidiactl']);
    const run = doctor(bareEnv(home), '--dev-dir', dir, '--no-launch');
    expect(check(run.report, 'devices')).toEqual({
      id: 'devices',
      title: `${dir}/nvidia*`,
      status: 'fail',
      // (The CLI reads this machine's own container marks: the CPU machine of the tests is a container.)
      why: `no nvidia0 in ${dir}: the NVIDIA kernel driver is not loaded${inContainer ? ', or the GPUs were not passed into this container' : ''}`,
      todo: inContainer
        ? 'start the container with the GPUs (docker run --gpus all, with the NVIDIA Container Toolkit)'
        : 'install or load the NVIDIA driver (nvidia-smi should list the GPUs; sudo modprobe nvidia)',
    });
  });

  (process.getuid?.() === 0 ? test.skip : test)('a device file this user cannot open: fail, naming it', () => {
    const dir = devDir('dev-closed', ['nvidia0', 'nvidiactl', 'nvidia-uvm']);
    fs.chmodSync(path.join(dir, 'nvidia0'), 0o000);
    const run = doctor(bareEnv(home), '--dev-dir', dir, '--no-launch');
    expect(check(run.report, 'devices')).toMatchObject({
      status: 'fail',
      why: expect.stringMatching(new RegExp(`^${dir}/nvidia0 not readable and writable by this user`)),
      todo: expect.stringContaining('add it to the owning group'),
    });
  });
});

describe('where the runtime is', () => {
  test('only in a virtualenv: found via site-packages, in the wheel folder', () => {
    const venv = path.join(tmp, 'venv');
    const lib = copyRealCudart(path.join(venv, 'lib', 'python3.12', 'site-packages', 'nvidia', 'cu13', 'lib'));
    const run = doctor(bareEnv(home, { VIRTUAL_ENV: venv }), '--dev-dir', goodDev);
    expect(run.report.libraries[0]).toMatchObject({
      library: 'libcudart',
      found: true,
      path: lib,
      foundVia: 'site-packages',
      version: 13000,
    });
    expect(check(run.report, 'library:libcudart')).toMatchObject({ status: 'ok', why: `13.0 at ${lib} (found via site-packages)` });
  });

  test('only in a conda prefix: found via conda', () => {
    const conda = path.join(tmp, 'conda');
    const lib = copyRealCudart(path.join(conda, 'lib'));
    const run = doctor(bareEnv(home, { CONDA_PREFIX: conda }), '--dev-dir', goodDev);
    expect(run.report.libraries[0]).toMatchObject({ path: lib, foundVia: 'conda' });
  });

  test('a runtime of another major version: fail, naming what was found and what to install', () => {
    const old = buildFakeLibrary('cudart', path.join(tmp, 'cudart12'), 12080);
    const run = doctor(bareEnv(home, { CUDA_BINDINGS_CUDART: old }), '--dev-dir', goodDev);
    expect(check(run.report, 'library:libcudart')).toEqual({
      id: 'library:libcudart',
      title: 'libcudart',
      status: 'fail',
      why: `${old}: CUDA runtime 12.8 found, but these bindings need CUDA 13.x`,
      todo: 'CUDA_BINDINGS_CUDART names this file: point it at the library, or unset it to search the usual places.',
    });
    expect(run.report.libraries[0]).toMatchObject({ found: false, version: 12080, generatedFrom: 13000 });
  });

  test('an optional library of another major version (NVRTC 12.4 in the wheels): a warning, CUDA may still work', () => {
    const venv = path.join(tmp, 'venv-old-nvrtc');
    const lib = buildFakeLibrary('nvrtc', path.join(venv, 'lib', 'python3.12', 'site-packages', 'nvidia', 'cu13', 'lib'), 12040);
    const run = doctor(bareEnv(home, { VIRTUAL_ENV: venv }), '--dev-dir', goodDev);
    expect(check(run.report, 'library:libnvrtc')).toEqual({
      id: 'library:libnvrtc',
      title: 'libnvrtc',
      status: 'warn',
      why: `${lib}: NVRTC 12.4 found, but these bindings need CUDA 13.x`,
      todo: 'Install NVRTC from the CUDA 13 toolkit, pip install "nvidia-cuda-nvrtc==13.*" or conda install cuda-nvrtc, or set CUDA_BINDINGS_NVRTC to the library\'s path.',
    });
  });
});

describe('an older library than the bindings were generated from: looked into, function by function', () => {
  /** A fake libnccl of `version` that exports every function the bindings declare but `leaveOut`. */
  function olderNccl(dir: string, version: number, leaveOut: string[]): string {
    const names = Object.values(ncclDeclarations)
      .map((d) => d[0])
      .filter((n) => n !== 'ncclGetVersion' && !leaveOut.includes(n));
    return buildFakeLibrary('nccl', path.join(tmp, dir), version, names.map((n) => `int ${n}(void) { return 0; }`).join('\n'));
  }

  test('an older patch release that has every function (NCCL 2.28.3 under bindings of 2.28.9): ok, saying so', () => {
    const lib = olderNccl('nccl-2.28.3', 22803, []);
    expect(missingFunctions(lib, ncclDeclarations)).toEqual([]);
    const run = doctor(bareEnv(home, { CUDA_BINDINGS_NCCL: lib }), '--dev-dir', goodDev);
    const all = Object.keys(ncclDeclarations).length;
    expect(check(run.report, 'library:libnccl')).toEqual({
      id: 'library:libnccl',
      title: 'libnccl',
      status: 'ok',
      why: `2.28.3 at ${lib} (found via env), older than the 2.28.9 these bindings were generated from; it has all ${all} functions they bind`,
      todo: null,
    });
  });

  test('an older release that lacks functions: a warning naming them, and what to install', () => {
    const lib = olderNccl('nccl-2.27.3', 22703, ['ncclCommShrink', 'ncclCommWindowRegister']);
    expect(missingFunctions(lib, ncclDeclarations)).toEqual(['ncclCommShrink', 'ncclCommWindowRegister']);
    const run = doctor(bareEnv(home, { CUDA_BINDINGS_NCCL: lib }), '--dev-dir', goodDev);
    expect(check(run.report, 'library:libnccl')).toMatchObject({ status: 'warn', todo: 'update libnccl to 2.28.9 or newer' });
    expect(check(run.report, 'library:libnccl').why).toMatch(
      /2\.27\.3 at .*older than the 2\.28\.9 these bindings were generated from: 2 of the \d+ functions they bind are not in it \(ncclComm\w+, ncclComm\w+\) and fail when called$/,
    );
  });
});

describe('containers (diagnose() with another root)', () => {
  /** diagnose() in a child, with `root` holding the container's marks. */
  function diagnoseIn(root: string, env: NodeJS.ProcessEnv, dev: string): DoctorReport {
    const r = runBare(
      `console.log(JSON.stringify(require('./src/core').diagnose({ root: ${JSON.stringify(root)}, devDir: ${JSON.stringify(dev)}, launch: false })));`,
      env,
    );
    return JSON.parse(r.stdout);
  }
  const docker = path.join(tmp, 'docker-root');
  beforeAll(() => {
    fs.mkdirSync(docker, { recursive: true });
    fs.writeFileSync(path.join(docker, '.dockerenv'), '');
  });

  test('started without GPUs (NVIDIA_VISIBLE_DEVICES=void): fail, saying how to pass them in', () => {
    const report = diagnoseIn(docker, bareEnv(home, { NVIDIA_VISIBLE_DEVICES: 'void' }), path.join(tmp, 'no-such-dev'));
    expect(report.container).toEqual({ detected: true, visibleDevices: 'void' });
    expect(check(report, 'container')).toMatchObject({
      status: 'fail',
      why: 'in a container with NVIDIA_VISIBLE_DEVICES=void: no GPU is passed in',
      todo: expect.stringContaining('docker run --gpus all'),
    });
  });

  test('GPUs passed in: ok, counting them', () => {
    const report = diagnoseIn(docker, bareEnv(home, { NVIDIA_VISIBLE_DEVICES: 'all' }), goodDev);
    expect(check(report, 'container')).toMatchObject({ status: 'ok', why: 'in a container (NVIDIA_VISIBLE_DEVICES=all), 1 GPU passed in' });
  });

  test('a cgroup of a container counts too; none of the marks: not in a container', () => {
    const k8s = path.join(tmp, 'k8s-root');
    fs.mkdirSync(path.join(k8s, 'proc', '1'), { recursive: true });
    fs.writeFileSync(path.join(k8s, 'proc', '1', 'cgroup'), '0::/kubepods/besteffort/pod1234/abcd\n');
    expect(diagnoseIn(k8s, bareEnv(home), goodDev).container.detected).toBe(true);
    expect(check(diagnoseIn(path.join(tmp, 'home'), bareEnv(home), goodDev), 'container')).toMatchObject({
      status: 'ok',
      why: 'not in a container',
    });
  });
});

test('diagnose() refuses an unknown option, naming it', () => {
  const r = runBare(
    `try { require('./src/core').diagnose({ lanch: false }); } catch (e) { console.log(e.name + ': ' + e.message); }`,
    bareEnv(home),
  );
  expect(r.stdout.trim()).toBe("TypeError: diagnose: unknown option 'lanch' (options are launch, devDir, root, env)");
});
