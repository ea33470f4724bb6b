// The probe on any driver, and nvidia-smi's --query-gpu from NVML: a fake libnvidia-ml and a fake
// libcuda of an R550 driver (CUDA 12.4, older than the CUDA 13 runtime needs), built by gcc; the
// CUDA runtime is this machine's (no driver: cudaErrorInsufficientDriver).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildFakeNvml, FAKE_GPUS } from '../helpers/fake-nvml';
import {
  formatCell,
  headerOf,
  parseFields,
  parseFormat,
  queryField,
  queryLines,
  smiTimestamp,
  type QueryRow,
} from '../../../src/cli/query';

const root = path.join(__dirname, '..', '..', '..');
const cli = path.join(root, 'src', 'cli', 'main.ts');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-probe-'));
let nvmlLib = '';
let cudaLib = '';

beforeAll(() => {
  nvmlLib = buildFakeNvml(tmp);
  cudaLib = path.join(tmp, 'libcuda-r550.so');
  execFileSync('gcc', [
    '-shared',
    '-fPIC',
    '-Wall',
    '-Werror',
    '-o',
    cudaLib,
    path.join(root, 'test', 'cpu', 'fixtures', 'fake-libcuda-r550.c'),
  ]);
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the CLI with the fake R550 driver (NVML and libcuda). */
function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, CUDA_BINDINGS_NVML: nvmlLib, CUDA_BINDINGS_CUDA: cudaLib, FAKE_NVML_DRIVER: '550', NO_COLOR: '', ...env },
  });
}

describe('info on a driver older than the runtime needs (R550, CUDA 12.4)', () => {
  test('info --json lists every GPU from the driver API and NVML, and names the driver needed for the rest; exit 0', () => {
    const r = run(['info', '--json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.error).toBeNull();
    expect(j.driverTooOld).toMatchObject({
      driverCudaVersion: '12.4',
      displayDriverVersion: '550.54.15',
      runtimeNeeds: '13.0',
      minimumDriver: 'R580',
      driverApiError: null,
    });
    expect(j.driverTooOld.needsNewerDriver.length).toBeGreaterThan(0);
    expect(j.deviceCount).toBe(2);
    const h100 = j.devices.find((d: { uuid: string }) => d.uuid === FAKE_GPUS[0].uuid);
    expect(h100).toMatchObject({ name: FAKE_GPUS[0].name, computeCapability: '9.0', memoryTotalBytes: 80 * 2 ** 30, multiprocessors: 132 });
    expect(h100.live.temperature.current).toBe(41);
    expect(h100.live.clocks).toMatchObject({ sm: 1755, memory: 2619 });
    expect(h100.live.memory.total).toBe(80 * 2 ** 30);
    expect(h100.live.processes).toEqual([{ pid: 4242, name: 'python3', usedMemory: 2 ** 30, type: 'compute' }]);
    expect(h100.live.driverVersion).toBe('550.54.15');
  });

  test('info says in one line which driver the rest needs', () => {
    const r = run(['info']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /CUDA driver 12\.4 \(display driver 550\.54\.15\): older than the CUDA 13\.0 runtime needs; install driver R580 or newer/,
    );
    expect(r.stdout).toMatch(/Device 1: Fake H100 80GB HBM3/);
  });

  test('without libcuda, NVML alone still lists the GPUs', () => {
    const r = run(['info', '--json'], { CUDA_BINDINGS_CUDA: path.join(tmp, 'missing.so') });
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.driverTooOld.driverCudaVersion).toBe('12.4');
    expect(j.driverTooOld.driverApiError).toMatch(/libcuda/);
    expect(j.devices.map((d: { name: string }) => d.name)).toEqual([FAKE_GPUS[0].name, FAKE_GPUS[1].name]);
  });

  test('topo: NUMA affinity from the memory affinity where the GPU has no NUMA node of its own', () => {
    const r = run(['topo']);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      '      GPU0  GPU1  CPU Affinity  NUMA Affinity  GPU NUMA ID',
      'GPU0  X     SYS   0-15          0              N/A',
      'GPU1  SYS   X     16-31         1              1',
    ]);
  });
});

describe('query: nvidia-smi --query-gpu from NVML', () => {
  test('query prints nvidia-smi headers with units and one line per GPU in NVML order', () => {
    const r = run([
      'query',
      '--query-gpu=index,gpu_name,memory.total,power.draw,power.draw.instant,pstate,clocks.sm,serial',
      '--format=csv',
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'index, name, memory.total [MiB], power.draw [W], power.draw.instant [W], pstate, clocks.current.sm [MHz], serial',
      '0, Fake H100 80GB HBM3, 81920 MiB, 123.46 W, 69.52 W, P0, 1755 MHz, 1654922012345',
      '1, Fake L4, 24576 MiB, 16.00 W, [N/A], P8, 1200 MHz, [N/A]',
      '',
    ]);
  });

  test("noheader and nounits; a deprecated value prints NVML's reason", () => {
    const r = run([
      'query',
      '--query-gpu=temperature.memory,display_mode,ecc.mode.current,clocks_event_reasons_counters.sw_power_cap',
      '--format=csv,noheader,nounits',
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      '38, [Requested functionality has been deprecated], Enabled, 91403239',
      '[N/A], [Requested functionality has been deprecated], [N/A], [N/A]',
      '',
    ]);
  });

  test('an unknown field or format fails with one line naming it', () => {
    const r = run(['query', '--query-gpu=name,nonsense', '--format=csv']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/field 'nonsense' is not a valid field to query/);
    const f = run(['query', '--query-gpu=name', '--format=json']);
    expect(f.status).toBe(1);
    expect(f.stderr).toMatch(/--format: unknown option 'json'/);
  });
});

describe('query formatting, one value kind at a time', () => {
  const row = {
    memory: { total: 85520809984, used: 0, free: 84935999488, reserved: 584810496 },
    power: { draw: 69.524, limit: 700 },
    utilization: { gpu: 0, memory: 3 },
    clocks: { sm: 1980 },
    temperature: { current: 33 },
    persistenceMode: true,
    migMode: { current: false, pending: false },
    performanceState: 'P0',
    pci: { domain: 0, bus: 0x18, device: 0, baseClass: 3, subClass: 2, deviceId: 0x233010de, subsystemId: 0x16c110de },
    clocksEventReasons: { supported: 0x1ff, active: 0x5 },
    retiredPages: { pending: false },
    fanSpeed: null,
    display: { mode: null },
    errors: { 'display.mode': 'Requested functionality has been deprecated', eccMode: 'Insufficient Permissions' },
    eccMode: null,
  } as unknown as Record<string, unknown>;
  const cell = (name: string, units = true) => formatCell(queryField(name)!, row, units);

  test('units: MiB (whole), W (two decimals), %, MHz, and none for temperatures', () => {
    expect([
      cell('memory.total'),
      cell('memory.reserved'),
      cell('power.draw'),
      cell('utilization.memory'),
      cell('clocks.sm'),
      cell('temperature.gpu'),
    ]).toEqual(['81559 MiB', '558 MiB', '69.52 W', '3 %', '1980 MHz', '33']);
  });

  test('nounits drops the unit from the value, not from the header', () => {
    expect([cell('memory.total', false), cell('power.draw', false), headerOf(queryField('memory.total')!)]).toEqual([
      '81559',
      '69.52',
      'memory.total [MiB]',
    ]);
  });

  test('words: Enabled/Disabled, Yes/No, Active/Not Active, P-states', () => {
    expect([cell('persistence_mode'), cell('mig.mode.current'), cell('retired_pages.pending'), cell('pstate')]).toEqual([
      'Enabled',
      'Disabled',
      'No',
      'P0',
    ]);
    expect([
      cell('clocks_event_reasons.gpu_idle'),
      cell('clocks_throttle_reasons.applications_clocks_setting'),
      cell('clocks_event_reasons.sw_power_cap'),
    ]).toEqual(['Active', 'Not Active', 'Active']);
  });

  test('hex as nvidia-smi pads it', () => {
    expect(
      ['pci.domain', 'pci.bus', 'pci.baseClass', 'pci.device_id', 'pci.sub_device_id', 'clocks_event_reasons.supported'].map((n) =>
        cell(n),
      ),
    ).toEqual(['0x0000', '0x18', '0x3', '0x233010DE', '0x16C110DE', '0x00000000000001FF']);
  });

  test("[N/A] where the GPU lacks a value or this package does not read it; NVML's reason in brackets otherwise", () => {
    expect([cell('fan.speed'), cell('module.power.draw.average'), cell('display_mode'), cell('ecc.mode.pending')]).toEqual([
      '[N/A]',
      '[N/A]',
      '[Requested functionality has been deprecated]',
      '[Insufficient Permissions]',
    ]);
  });

  test("aliases print under the field's own name; noheader leaves the header out", () => {
    const fields = parseFields('gpu_name, clocks.gr,gpu.power.current_limit');
    expect(fields.map(headerOf)).toEqual(['name', 'clocks.current.graphics [MHz]', 'enforced.power.limit [W]']);
    const rows = [{ ...row, name: 'X' } as unknown as QueryRow];
    expect(queryLines(fields, rows, parseFormat('csv,noheader'))).toEqual(['X, [N/A], 700.00 W']);
  });

  test('memory.reserved rounds up to whole MiB as nvidia-smi does (615.06 MiB prints 616); used and free round down', () => {
    const r = { memory: { total: 150_754_820_096, used: 4_194_304 + 1, free: 149_557_477_376 + 5, reserved: 644_939_776 } };
    const c = (n: string) => formatCell(queryField(n)!, r);
    expect([c('memory.reserved'), c('memory.used'), c('memory.free')]).toEqual(['616 MiB', '4 MiB', '142629 MiB']);
  });

  test('display: from R580 display_mode is deprecated and display_attached prints the display mode; before, display_mode does', () => {
    const at = (driverVersion: string, mode: boolean) => {
      const r = { driverVersion, display: { mode, active: false } };
      return ['display_mode', 'display_attached', 'display_active'].map((n) => formatCell(queryField(n)!, r));
    };
    expect(at('580.95.05', true)).toEqual(['[Requested functionality has been deprecated]', 'Yes', 'Disabled']);
    expect(at('580.95.05', false)).toEqual(['[Requested functionality has been deprecated]', 'No', 'Disabled']);
    expect(at('550.54.15', true)).toEqual(['Enabled', 'Yes', 'Disabled']);
  });

  test('fabric: every fabric field is N/A where the GPU has no fabric (state Not Supported, or not read); its values otherwise', () => {
    const names = ['fabric.state', 'fabric.status', 'fabric.cliqueId', 'fabric.health.summary', 'fabric.health.partition_assigned'];
    const health = { summary: 'Healthy', bandwidth: 'False' };
    const none = { fabric: { state: 'Not Supported', status: 'Success', cliqueId: 0, health } };
    expect(names.map((n) => formatCell(queryField(n)!, none))).toEqual(['N/A', 'N/A', 'N/A', 'N/A', 'N/A']);
    expect(names.map((n) => formatCell(queryField(n)!, { fabric: null }))).toEqual(['N/A', 'N/A', 'N/A', 'N/A', 'N/A']);
    const done = { fabric: { state: 'Completed', status: 'Success', cliqueId: 7, health } };
    expect(names.map((n) => formatCell(queryField(n)!, done))).toEqual(['Completed', 'Success', '7', 'Healthy', '[N/A]']);
  });

  test("nvidia-smi's timestamp", () => {
    expect(smiTimestamp(new Date(2026, 8, 1, 20, 41, 56, 941))).toBe('2026/09/01 20:41:56.941');
  });
});
