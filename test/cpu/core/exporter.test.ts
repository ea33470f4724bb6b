// core.gpuCollectors on a prom-client registry, with the fake libnvidia-ml (test/cpu/fixtures/fake-nvml.c)
// of eight GPUs: GPU 3 lost (NVML_ERROR_GPU_IS_LOST), processes that come and go, XID events queued.
// The names, types, help and labels are checked against dcgm-exporter's default counters
// (test/cpu/fixtures/dcgm-exporter-counters.json, with the source they come from).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { gpuCollectors, type GpuCollectors } from '../../../src/core/exporter/collectors';
import { GpuSampler } from '../../../src/core/exporter/GpuSampler';
import { DCGM_DEFAULT_COUNTERS, DCGM_ECC_COUNTERS } from '../../../src/core/exporter/counters';
import { hostProcess, COMMAND_MAX } from '../../../src/core/exporter/proc';
import { buildFakeNvml, setFakeNvmlKnob, queueFakeNvmlEvent, FAKE_EVENT, FAKE_GPUS8, fakeReadings } from '../helpers/fake-nvml';
import { parseExposition, samplesOf, dcgmFixture, type Page } from '../helpers/exposition';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-exporter-'));
const fixture = dcgmFixture();
const saved = process.env.CUDA_BINDINGS_NVML;
const INTERVAL = 100;
const HOST = 'gpu-host-1';
const pid = String(process.pid);
let lib = '';
let text: Registry;
let open: Registry<'application/openmetrics-text; version=1.0.0; charset=utf-8'>;
let gpus: GpuCollectors;
let gpusOpen: GpuCollectors;

/** Waits until `check` holds (polled), or fails naming what it waited for. */
async function until(what: string, check: () => Promise<boolean> | boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
/** The text page, parsed. */
const page = async (): Promise<Page> => parseExposition(await text.metrics());
/** The one value of `name` with `labels`, or undefined. */
const valueOf = (p: Page, name: string, labels: Record<string, string>) => {
  const s = samplesOf(p, name, labels);
  if (s.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${s.length} samples`);
  return s[0]?.value;
};
/** A metric's value by GPU index. */
const byGpu = (p: Page, name: string) => Object.fromEntries(samplesOf(p, name).map((s) => [s.labels.gpu, s.value]));

beforeAll(async () => {
  lib = buildFakeNvml(tmp);
  process.env.CUDA_BINDINGS_NVML = lib;
  setFakeNvmlKnob(lib, 'FAKE_NVML_GPUS', '8');
  setFakeNvmlKnob(lib, 'FAKE_NVML_FAIL_GPU', '3');
  // This process on GPUs 0 and 2 (so /proc has it); pid 999999 (not in /proc) on GPU 5.
  setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESSES', `0:${pid}:100;2:${pid}:50;5:999999:7`);
  text = new Registry();
  open = new Registry();
  open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  gpus = gpuCollectors(text, { interval: INTERVAL, hostname: HOST });
  gpusOpen = gpuCollectors(open, { sampler: gpus.sampler, hostname: HOST });
  await gpus.ready;
  // The GPM ratios need two samples.
  await until('a second sample', () => gpus.sampler.samples >= 2);
}, 60_000);

afterAll(async () => {
  await gpusOpen?.close();
  await gpus?.close();
  for (const k of ['FAKE_NVML_GPUS', 'FAKE_NVML_FAIL_GPU', 'FAKE_NVML_FAIL_STATUS', 'FAKE_NVML_PROCESSES', 'FAKE_NVML_SLOW_MS'] as const)
    setFakeNvmlKnob(lib, k, undefined);
  if (saved === undefined) delete process.env.CUDA_BINDINGS_NVML;
  else process.env.CUDA_BINDINGS_NVML = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('dcgm-exporter compatibility', () => {
  test("the default counters are dcgm-exporter's: names, types and help as its counters file gives them (fixture)", async () => {
    const pick = (c: { name: string; type: string; help: string }) => ({ name: c.name, type: c.type, help: c.help });
    expect(DCGM_DEFAULT_COUNTERS.map(pick)).toEqual(fixture.counters.map(pick));
    expect(DCGM_ECC_COUNTERS.map(pick)).toEqual(fixture.commentedOutServed.map(pick));
    const p = await page();
    expect(p.bad).toEqual([]);
    for (const c of [...fixture.counters, ...fixture.commentedOutServed]) {
      expect([c.name, p.type.get(c.name), p.help.get(c.name)]).toEqual([c.name, c.type, c.help]);
      expect(samplesOf(p, c.name).length).toBeGreaterThan(0);
    }
  });

  test("every GPU metric carries dcgm-exporter's labels, in its order, with its values", async () => {
    const p = await page();
    const dcgm = p.samples.filter((s) => s.name.startsWith('DCGM_FI_'));
    expect(dcgm.length).toBeGreaterThan(150);
    for (const s of dcgm) {
      const extra = fixture.counters.find((c) => c.name === s.name)?.extraLabels ?? [];
      // err_msg (dcgm-exporter's own text of an XID) is the one label not served (fixture: differences).
      expect([s.name, Object.keys(s.labels)]).toEqual([s.name, [...fixture.gpuLabels, ...extra.filter((l) => l !== 'err_msg')]]);
      const i = Number(s.labels.gpu);
      expect(s.labels).toMatchObject({
        UUID: FAKE_GPUS8[i].uuid,
        pci_bus_id: FAKE_GPUS8[i].busId,
        device: `nvidia${i}`,
        modelName: FAKE_GPUS8[i].name,
        Hostname: HOST,
        DCGM_FI_DRIVER_VERSION: '580.65.06',
      });
    }
  });

  test("each GPU's own readings, in dcgm-exporter's units (°C, MiB, W, MHz, %)", async () => {
    const p = await page();
    const up = [0, 1, 2, 4, 5, 6, 7];
    const expected = (f: (r: ReturnType<typeof fakeReadings>) => number) =>
      Object.fromEntries(up.map((i) => [String(i), f(fakeReadings(i))]));
    expect(byGpu(p, 'DCGM_FI_DEV_GPU_TEMP')).toEqual(expected((r) => r.temperature));
    expect(byGpu(p, 'DCGM_FI_DEV_FB_USED')).toEqual(expected((r) => r.usedMiB));
    expect(byGpu(p, 'DCGM_FI_DEV_POWER_USAGE')).toEqual(expected((r) => r.powerW));
    expect(valueOf(p, 'DCGM_FI_DEV_SM_CLOCK', { gpu: '0' })).toBe(1755);
    expect(valueOf(p, 'DCGM_FI_DEV_GPU_UTIL', { gpu: '0' })).toBe(37);
    expect(valueOf(p, 'DCGM_FI_DEV_FB_RESERVED', { gpu: '0' })).toBe(512);
    expect(valueOf(p, 'DCGM_FI_DEV_FB_FREE', { gpu: '0' })).toBe(80 * 1024 - 1024 - 512);
    expect(valueOf(p, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', { gpu: '2' })).toBe(5000002000);
    expect(valueOf(p, 'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL', { gpu: '0' })).toBe(10000);
    expect(valueOf(p, 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', { gpu: '0' })).toBe(2);
    // GPM: percentages as ratios, MiB/s as bytes a second.
    expect(valueOf(p, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', { gpu: '0' })).toBe(0.42);
    expect(valueOf(p, 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', { gpu: '0' })).toBe(0.125);
    expect(valueOf(p, 'DCGM_FI_PROF_PCIE_TX_BYTES', { gpu: '0' })).toBe(100 * 2 ** 20);
  });

  test('what a GPU does not support is left out, not reported as 0', async () => {
    const p = await page();
    // GPU 1, the L4: no memory temperature, NVLink, remapped rows, ECC or GPM.
    for (const name of [
      'DCGM_FI_DEV_MEMORY_TEMP',
      'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL',
      'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS',
      'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL',
      'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
    ])
      expect([name, samplesOf(p, name, { gpu: '1' })]).toEqual([name, []]);
    expect(valueOf(p, 'DCGM_FI_DEV_ENC_UTIL', { gpu: '1' })).toBe(4);
    // vGPU licensing: 0 where NVML says the GPU has none (as DCGM reports it), left out where NVML cannot tell.
    expect(valueOf(p, 'DCGM_FI_DEV_VGPU_LICENSE_STATUS', { gpu: '0' })).toBe(0);
    expect(samplesOf(p, 'DCGM_FI_DEV_VGPU_LICENSE_STATUS', { gpu: '1' })).toEqual([]);
  });
});

describe('a GPU whose queries fail', () => {
  test('the lost GPU (GPU_IS_LOST) is left out of every reading, marked down and counted; the other seven are served', async () => {
    const p = await page();
    expect(p.samples.filter((s) => s.name.startsWith('DCGM_FI_') && s.labels.gpu === '3')).toEqual([]);
    expect(byGpu(p, 'cuda_bindings_exporter_gpu_up')).toEqual({ '0': 1, '1': 1, '2': 1, '3': 0, '4': 1, '5': 1, '6': 1, '7': 1 });
    const errors = samplesOf(p, 'cuda_bindings_exporter_nvml_errors_total');
    expect(errors.length).toBeGreaterThan(0);
    // Only GPU 3 failed; once it answers GPU_IS_LOST it is asked nothing more that sample.
    expect(errors.map((e) => e.labels)).toEqual([{ function: 'nvmlDeviceGetClockInfo', gpu: '3', error: 'NVML_ERROR_GPU_IS_LOST' }]);
    expect(errors[0].value).toBeGreaterThanOrEqual(gpus.sampler.samples - 2);
    // The lost GPU still has its labels where it is listed (NVML still names it).
    expect(samplesOf(p, 'cuda_bindings_exporter_gpu_up', { gpu: '3' })[0].labels.UUID).toBe(FAKE_GPUS8[3].uuid);
  });

  test('a GPU answering NVML_ERROR_UNKNOWN: each failing call counted by function, the GPU still up, its readings left out', async () => {
    setFakeNvmlKnob(lib, 'FAKE_NVML_FAIL_STATUS', 'unknown');
    try {
      const unknown = (p: Page) => samplesOf(p, 'cuda_bindings_exporter_nvml_errors_total', { gpu: '3', error: 'NVML_ERROR_UNKNOWN' });
      await until('UNKNOWN errors of GPU 3', async () => unknown(await page()).length > 5);
      const p = await page();
      const fns = unknown(p).map((e) => e.labels.function);
      expect(fns).toEqual(expect.arrayContaining(['nvmlDeviceGetTemperature', 'nvmlDeviceGetPowerUsage', 'nvmlDeviceGetMemoryInfo_v2']));
      expect(valueOf(p, 'cuda_bindings_exporter_gpu_up', { gpu: '3' })).toBe(1);
      expect(samplesOf(p, 'DCGM_FI_DEV_GPU_TEMP', { gpu: '3' })).toEqual([]);
      expect(Object.keys(byGpu(p, 'DCGM_FI_DEV_GPU_TEMP'))).toHaveLength(7);
    } finally {
      setFakeNvmlKnob(lib, 'FAKE_NVML_FAIL_STATUS', undefined);
    }
  });
});

describe('what dcgm-exporter lacks', () => {
  test("processes: each one's GPU memory with pid, user and command; host RSS and CPU once per process (/proc)", async () => {
    const p = await page();
    const me = hostProcess(process.pid);
    const user = os.userInfo().username;
    expect(me.user).toBe(user);
    const mine = samplesOf(p, 'gpu_process_memory_used_bytes', { pid });
    expect(mine.map((s) => [s.labels.gpu, s.labels.user, s.labels.command, s.value])).toEqual([
      ['0', user, me.command, 100 * 2 ** 20],
      ['2', user, me.command, 50 * 2 ** 20],
    ]);
    expect(me.command).toMatch(/node/);
    // Not in this /proc (another PID namespace): no user, NVML's name for the command.
    expect(
      samplesOf(p, 'gpu_process_memory_used_bytes', { pid: '999999' }).map((s) => [s.labels.gpu, s.labels.user, s.labels.command]),
    ).toEqual([['5', '', 'proc999999']]);
    const rss = samplesOf(p, 'gpu_process_host_memory_resident_bytes');
    expect(rss.map((s) => s.labels)).toEqual([{ Hostname: HOST, pid, user, command: me.command }]);
    expect(rss[0].value).toBeGreaterThan(10 * 2 ** 20);
    const cpu = samplesOf(p, 'gpu_process_host_cpu_seconds_total', { pid });
    expect(cpu).toHaveLength(1);
    expect(cpu[0].value).toBeGreaterThan(0);
  });

  test('processes that come and go are added and dropped at the next sample', async () => {
    setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESSES', `1:${pid}:30;6:4243:1`);
    try {
      await until('the new process list', async () => {
        const rows = samplesOf(await page(), 'gpu_process_memory_used_bytes').map((s) => `${s.labels.gpu}/${s.labels.pid}/${s.value}`);
        return rows.join(' ') === `1/${pid}/${30 * 2 ** 20} 6/4243/${2 ** 20}`;
      });
      setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESSES', '');
      await until('no processes', async () => samplesOf(await page(), 'gpu_process_memory_used_bytes').length === 0);
      expect(samplesOf(await page(), 'gpu_process_host_memory_resident_bytes')).toEqual([]);
    } finally {
      setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESSES', `0:${pid}:100;2:${pid}:50;5:999999:7`);
    }
  });

  test('clock event (throttle) reasons as a labelled gauge: each reason the GPU supports, 1 where it holds the clocks down', async () => {
    const p = await page();
    const reasons = (gpu: string) =>
      Object.fromEntries(samplesOf(p, 'gpu_clocks_event_reason_active', { gpu }).map((s) => [s.labels.reason, s.value]));
    expect(reasons('0')).toEqual({
      GpuIdle: 0,
      ApplicationsClocksSetting: 0,
      SwPowerCap: 1,
      HwSlowdown: 1,
      SyncBoost: 0,
      SwThermalSlowdown: 0,
      HwThermalSlowdown: 0,
      HwPowerBrakeSlowdown: 0,
    });
    expect(reasons('1')).toEqual({ GpuIdle: 1, SwPowerCap: 0 });
    expect(reasons('3')).toEqual({});
  });

  test("ECC totals under dcgm-exporter's names for them (commented out in its counters file), where ECC is on", async () => {
    const p = await page();
    expect(['SBE_VOL', 'DBE_VOL', 'SBE_AGG', 'DBE_AGG'].map((k) => valueOf(p, `DCGM_FI_DEV_ECC_${k}_TOTAL`, { gpu: '0' }))).toEqual([
      3, 0, 7, 0,
    ]);
    expect(samplesOf(p, 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', { gpu: '1' })).toEqual([]);
  });

  test('XIDs and other NVML events are counted per GPU and XID as they arrive, waited for on the sampler thread', async () => {
    const before = gpus.sampler.samples;
    const t0 = Date.now();
    queueFakeNvmlEvent(lib, 2, FAKE_EVENT.xid, 79);
    queueFakeNvmlEvent(lib, 2, FAKE_EVENT.xid, 79);
    queueFakeNvmlEvent(lib, 0, FAKE_EVENT.xid, 13);
    queueFakeNvmlEvent(lib, 0, FAKE_EVENT.doubleBitEcc);
    await until('the XIDs counted', () => gpus.sampler.xids.reduce((n, x) => n + x.count, 0) === 3 && gpus.sampler.events.length === 3);
    const waited = Date.now() - t0;
    const p = await page();
    expect(samplesOf(p, 'gpu_xid_errors_total').map((s) => [s.labels.gpu, s.labels.xid, s.value])).toEqual([
      ['2', '79', 2],
      ['0', '13', 1],
    ]);
    expect(valueOf(p, 'gpu_nvml_events_total', { gpu: '0', event: 'DoubleBitEccError' })).toBe(1);
    expect(valueOf(p, 'gpu_nvml_events_total', { gpu: '2', event: 'XidCriticalError' })).toBe(2);
    // DCGM_FI_DEV_XID_ERRORS: the last XID, its number in err_code; 0 on a GPU without one; none for the lost GPU.
    const last = samplesOf(p, 'DCGM_FI_DEV_XID_ERRORS').map((s) => [s.labels.gpu, s.labels.err_code, s.value]);
    expect(last).toEqual([
      ['0', '13', 13],
      ['1', '0', 0],
      ['2', '79', 79],
      ['4', '0', 0],
      ['5', '0', 0],
      ['6', '0', 0],
      ['7', '0', 0],
    ]);
    // Delivered between samples, not at the next one: well within an interval or two of sampling.
    process.stdout.write(`events counted ${waited} ms after they were queued (${gpus.sampler.samples - before} samples meanwhile)\n`);
    expect(waited).toBeLessThan(2000);
  });

  test("the exporter's own health: samples, the last one's duration and time, the sampler's restarts", async () => {
    const p = await page();
    expect(valueOf(p, 'cuda_bindings_exporter_samples_total', {})).toBeGreaterThanOrEqual(2);
    const duration = valueOf(p, 'cuda_bindings_exporter_sample_duration_seconds', {})!;
    expect(duration).toBeGreaterThan(0);
    expect(duration).toBeLessThan(5);
    expect(Math.abs(valueOf(p, 'cuda_bindings_exporter_last_sample_timestamp_seconds', {})! - Date.now() / 1000)).toBeLessThan(10);
    expect(valueOf(p, 'cuda_bindings_exporter_sampler_restarts_total', {})).toBe(0);
  });
});

describe('serving from memory', () => {
  test('a scrape never waits on a GPU: with every power reading taking 60 ms, scrapes and the event loop stay quick', async () => {
    setFakeNvmlKnob(lib, 'FAKE_NVML_SLOW_MS', '60');
    const delay = monitorEventLoopDelay({ resolution: 5 });
    try {
      // A sample now takes 7 × 60 ms on the sampler's thread.
      await until(
        'a slow sample',
        async () => (valueOf(await page(), 'cuda_bindings_exporter_sample_duration_seconds', {}) ?? 0) > 0.35,
        5000,
      );
      delay.enable();
      const times: number[] = [];
      for (let i = 0; i < 40; i++) {
        const t = performance.now();
        const body = await text.metrics();
        times.push(performance.now() - t);
        expect(body).toContain('DCGM_FI_DEV_GPU_TEMP{gpu="0"');
        await new Promise((r) => setTimeout(r, 10));
      }
      delay.disable();
      const worst = Math.max(...times);
      process.stdout.write(
        `scrapes while sampling took 0.42 s: slowest ${worst.toFixed(1)} ms; event loop delay max ${(delay.max / 1e6).toFixed(1)} ms\n`,
      );
      expect(worst).toBeLessThan(200);
    } finally {
      setFakeNvmlKnob(lib, 'FAKE_NVML_SLOW_MS', undefined);
    }
  });

  test("OpenMetrics: the same metrics; dcgm-exporter's counters keep their names (type unknown), this package's end in _total", async () => {
    const body = await open.metrics();
    expect(body.endsWith('# EOF\n')).toBe(true);
    const p = parseExposition(body);
    expect(p.bad).toEqual([]);
    for (const c of [...fixture.counters, ...fixture.commentedOutServed]) {
      expect([c.name, p.type.get(c.name)]).toEqual([c.name, c.type === 'counter' ? 'unknown' : 'gauge']);
      expect(samplesOf(p, c.name).length).toBeGreaterThan(0);
    }
    expect(p.type.get('gpu_xid_errors')).toBe('counter');
    expect(samplesOf(p, 'gpu_xid_errors_total').length).toBeGreaterThan(0);
    expect(valueOf(p, 'DCGM_FI_DEV_GPU_TEMP', { gpu: '0' })).toBe(41);
    // The text registry still calls them counters.
    expect((await page()).type.get('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION')).toBe('counter');
  });
});

describe('options', () => {
  test('thread: false samples on this thread, on a timer, with the same readings; hostname: null leaves the host label out', async () => {
    const r = new Registry();
    const c = gpuCollectors(r, { thread: false, interval: 50, hostname: null, processes: false, gpm: false });
    try {
      await c.ready;
      expect(c.sampler.threaded).toBe(false);
      const p = parseExposition(await r.metrics());
      expect(byGpu(p, 'DCGM_FI_DEV_GPU_TEMP')).toMatchObject({ '0': 41, '7': 47 });
      expect(samplesOf(p, 'DCGM_FI_DEV_GPU_TEMP', { gpu: '0' })[0].labels).not.toHaveProperty('Hostname');
      expect(samplesOf(p, 'gpu_process_memory_used_bytes')).toEqual([]);
      expect(samplesOf(p, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE')).toEqual([]);
    } finally {
      await c.close();
    }
    expect(r.getMetricsAsArray()).toEqual([]);
  });

  test("hostnameLabel: 'hostname' names the label as dcgm-exporter's main branch does", async () => {
    const r = new Registry();
    const c = gpuCollectors(r, { sampler: gpus.sampler, hostname: 'h', hostnameLabel: 'hostname' });
    try {
      const s = samplesOf(parseExposition(await r.metrics()), 'DCGM_FI_DEV_GPU_TEMP', { gpu: '0' })[0];
      expect([s.labels.hostname, s.labels.Hostname]).toEqual(['h', undefined]);
    } finally {
      await c.close();
    }
    // A shared sampler is not stopped with the collectors that borrowed it.
    const n = gpus.sampler.samples;
    await until('another sample', () => gpus.sampler.samples > n);
  });

  test('options are checked: an unknown or misspelt one, sampler options beside a sampler, a bad interval, a registry that is not one', () => {
    const r = new Registry();
    expect(() => gpuCollectors(r, { intervall: 5 } as never)).toThrow(
      /gpuCollectors: unknown option 'intervall' \(did you mean 'interval'\?\)/,
    );
    expect(() => gpuCollectors(r, { sampler: gpus.sampler, interval: 5 })).toThrow(/go to the GpuSampler passed as 'sampler'/);
    expect(() => gpuCollectors(r, { hostnameLabel: 'HOST' as never, thread: false })).toThrow(/'Hostname' or 'hostname'/);
    expect(() => new GpuSampler({ interval: 0 })).toThrow(RangeError);
    expect(() => gpuCollectors({} as never)).toThrow(/must be a prom-client Registry/);
    expect(r.getMetricsAsArray()).toEqual([]);
  });

  test("a registry that already has one of the names refuses the collectors (prom-client's own check)", async () => {
    const r = new Registry();
    const c = gpuCollectors(r, { sampler: gpus.sampler });
    try {
      expect(() => gpuCollectors(r, { sampler: gpus.sampler })).toThrow(/already been registered/);
    } finally {
      await c.close();
    }
  });
});

describe('/proc', () => {
  test('a process: user, command line (control characters escaped, long ones cut), resident memory, CPU time', () => {
    const proc = path.join(tmp, 'proc');
    const dir = path.join(proc, '77');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'status'), 'Name:\tx\nUid:\t4321\t4321\t4321\t4321\nVmRSS:\t  2048 kB\n');
    fs.writeFileSync(path.join(dir, 'cmdline'), `python3\0train.py\0--name\0evil\x1b[2J\0${'x'.repeat(300)}\0`);
    // The name in parentheses holds ") (": the fields are read after the last ')'.
    fs.writeFileSync(path.join(dir, 'stat'), `77 (a) (b) S 1 77 77 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 1000 10\n`);
    fs.writeFileSync(path.join(tmp, 'passwd'), 'root:x:0:0::/root:/bin/sh\ntrainer:x:4321:4321::/home/t:/bin/sh\n');
    const p = hostProcess(77, proc, path.join(tmp, 'passwd'));
    expect(p).toMatchObject({ user: 'trainer', rssBytes: 2048 * 1024, cpuSeconds: 3 });
    expect(p.command).toHaveLength(COMMAND_MAX);
    expect(p.command!.startsWith('python3 train.py --name evil\\x1b[2J xxx')).toBe(true);
    expect(p.command!.endsWith('…')).toBe(true);
    expect(hostProcess(78, proc)).toEqual({ user: null, command: null, rssBytes: null, cpuSeconds: null });
  });
});
