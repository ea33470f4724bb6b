// The exporter on a real GPU, against `nvidia-smi --query-gpu`: every dcgm-exporter metric that the GPU
// supports (nvidia-smi has a value for the matching field) is served, and only those; the values agree
// (temperature ±1 °C, power within 5%, memory exactly in whole MiB as DCGM divides, where nvidia-smi
// rounds to the nearest: 1 MiB below it). The exporter runs in this process
// and creates no CUDA context (NVML only, on its worker thread): nvidia-smi must not list this process.
// A second process holding 1 GiB of device memory shows up with its pid, user, command and bytes, as
// nvidia-smi --query-compute-apps lists it. Prints the figures side by side.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { startExporterServer, type ExporterServer } from '../../src/cli/exporter';
import { parseExposition, samplesOf, type Page } from '../cpu/helpers/exposition';

const root = path.join(__dirname, '..', '..');

/** Why this suite cannot run here (no nvidia-smi), or null. Probed without CUDA: this process must hold no context. */
function whyNot(): string | null {
  const smi = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  return smi.status === 0 ? null : `nvidia-smi is not available (${smi.error?.message ?? smi.stderr.trim()})`;
}
const skip = whyNot();
const suite = skip === null ? describe : describe.skip;

/** nvidia-smi's fields, each with the metric that must agree with it (null: a label or identity). */
const FIELDS: [field: string, metric: string | null][] = [
  ['index', null],
  ['uuid', null],
  ['pci.bus_id', null],
  ['name', null],
  ['driver_version', null],
  ['temperature.gpu', 'DCGM_FI_DEV_GPU_TEMP'],
  ['temperature.memory', 'DCGM_FI_DEV_MEMORY_TEMP'],
  ['power.draw', 'DCGM_FI_DEV_POWER_USAGE'],
  ['memory.used', 'DCGM_FI_DEV_FB_USED'],
  ['memory.free', 'DCGM_FI_DEV_FB_FREE'],
  ['memory.reserved', 'DCGM_FI_DEV_FB_RESERVED'],
  ['clocks.sm', 'DCGM_FI_DEV_SM_CLOCK'],
  ['clocks.mem', 'DCGM_FI_DEV_MEM_CLOCK'],
  ['utilization.gpu', 'DCGM_FI_DEV_GPU_UTIL'],
  ['utilization.memory', 'DCGM_FI_DEV_MEM_COPY_UTIL'],
  ['utilization.encoder', 'DCGM_FI_DEV_ENC_UTIL'],
  ['utilization.decoder', 'DCGM_FI_DEV_DEC_UTIL'],
  ['remapped_rows.correctable', 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS'],
  ['remapped_rows.uncorrectable', 'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS'],
  ['ecc.errors.corrected.volatile.total', 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL'],
  ['ecc.errors.uncorrected.volatile.total', 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL'],
  ['ecc.errors.corrected.aggregate.total', 'DCGM_FI_DEV_ECC_SBE_AGG_TOTAL'],
  ['ecc.errors.uncorrected.aggregate.total', 'DCGM_FI_DEV_ECC_DBE_AGG_TOTAL'],
];

/** `nvidia-smi --query-gpu` of the fields it knows, one record per GPU. */
function smi(fields: string[]): Record<string, string>[] {
  const r = spawnSync('nvidia-smi', [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nvidia-smi failed: ${r.stderr}${r.stdout}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((line) => Object.fromEntries(line.split(',').map((v, i) => [fields[i], v.trim()])));
}
/** Whether nvidia-smi has no value (`[N/A]`, `N/A`, or a reason in brackets). */
const absent = (v: string | undefined) => v === undefined || v === 'N/A' || /^\[.*\]$/.test(v);

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let b = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(b));
      })
      .on('error', reject);
  });
}

suite(`the exporter against nvidia-smi${skip ? `: skipped, ${skip}` : ''}`, () => {
  let srv: ExporterServer;
  let known: string[] = [];
  const page = async (): Promise<Page> => parseExposition(await get(`${srv.url}/metrics`));
  /** Waits for the next sample, so that nvidia-smi is read right beside it. */
  const nextSample = async () => {
    const n = srv.sampler.samples;
    while (srv.sampler.samples === n) await new Promise((r) => setTimeout(r, 10));
  };

  beforeAll(async () => {
    const help = spawnSync('nvidia-smi', ['--help-query-gpu'], { encoding: 'utf8' }).stdout;
    known = FIELDS.map(([f]) => f).filter((f) => help.includes(`"${f}"`));
    srv = await startExporterServer({ port: 0, interval: 500 });
    await srv.sampler.ready;
    await nextSample(); // GPM ratios need two samples
  }, 60_000);
  afterAll(async () => srv?.close());

  test('every metric the GPU supports is served and agrees with nvidia-smi (temperature ±1 °C, power within 5%, memory in whole MiB)', async () => {
    // nvidia-smi is read before the exporter's next sample, after it (before the scrape) and after the
    // scrape: a reading that moves (power right after the previous test's GPU work) is bracketed.
    const earlier = smi(known);
    await nextSample();
    const before = smi(known);
    const p = await page();
    const after = smi(known);
    const rows: string[] = [];
    const bad: string[] = [];
    for (const [i, s] of before.entries()) {
      const gpu = s.index;
      const labels = samplesOf(p, 'DCGM_FI_DEV_GPU_TEMP', { gpu })[0]?.labels;
      expect(labels).toMatchObject({
        UUID: s.uuid,
        pci_bus_id: s['pci.bus_id'],
        device: `nvidia${gpu}`,
        modelName: s.name,
        Hostname: process.env.NODE_NAME || os.hostname(),
        DCGM_FI_DRIVER_VERSION: s.driver_version,
      });
      for (const [field, metric] of FIELDS) {
        if (!metric || !known.includes(field)) continue;
        const ours = samplesOf(p, metric, { gpu })[0]?.value;
        const [e, a, b] = [earlier[i][field], before[i][field], after[i][field]];
        const has = !absent(a);
        rows.push(
          `GPU ${gpu}  ${field.padEnd(38)} nvidia-smi ${e.padStart(10)} / ${a.padStart(10)} / ${b.padStart(10)}   ${metric} ${ours ?? '(left out)'}`,
        );
        if (has !== (ours !== undefined)) {
          bad.push(
            `${metric}: ${ours === undefined ? 'left out, but nvidia-smi has ' + a : `${ours}, but nvidia-smi has no ${field} (${a})`}`,
          );
          continue;
        }
        if (!has || ours === undefined) continue;
        const reads = [e, a, b].filter((x) => !absent(x)).map(Number);
        const lo = Math.min(...reads);
        const hi = Math.max(...reads);
        const within = (tol: number) => ours >= lo - tol && ours <= hi + tol;
        const ok = field.startsWith('temperature.')
          ? within(1)
          : field === 'power.draw'
            ? within(0.05 * hi)
            : field.startsWith('memory.')
              ? // nvidia-smi rounds bytes to the nearest MiB; DCGM (and so the exporter) divides and drops
                // the remainder: 615.6 MiB reserved is 616 there and 615 here.
                ours >= lo - 1 && ours <= hi
              : field.startsWith('remapped_rows.') || field.startsWith('ecc.')
                ? within(0)
                : field.startsWith('clocks.')
                  ? within(0.1 * hi)
                  : within(10); // utilization, in points
        if (!ok) bad.push(`${metric} = ${ours}; nvidia-smi ${field} read ${a} then ${b}`);
      }
    }
    process.stdout.write(`the exporter beside nvidia-smi (read before the sample, before the scrape and after it):\n${rows.join('\n')}\n`);
    expect(bad).toEqual([]);
  }, 60_000);

  test('what nvidia-smi cannot show: GPM ratios (Hopper and later), energy, XIDs registered (0 until one), clock event reasons', async () => {
    const p = await page();
    const gpu0 = { gpu: '0' };
    const present = (name: string) => samplesOf(p, name, gpu0).map((s) => s.value);
    const cc = spawnSync('nvidia-smi', ['--query-gpu=compute_cap', '--format=csv,noheader'], { encoding: 'utf8' }).stdout.trim();
    const lines = [
      'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
      'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE',
      'DCGM_FI_PROF_DRAM_ACTIVE',
      'DCGM_FI_PROF_PCIE_TX_BYTES',
      'DCGM_FI_PROF_PCIE_RX_BYTES',
      'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION',
      'DCGM_FI_DEV_PCIE_REPLAY_COUNTER',
      'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL',
      'DCGM_FI_DEV_VGPU_LICENSE_STATUS',
      'DCGM_FI_DEV_ROW_REMAP_FAILURE',
      'DCGM_FI_DEV_XID_ERRORS',
    ].map((n) => `${n.padEnd(40)} ${present(n).join(', ') || '(left out)'}`);
    const reasons = samplesOf(p, 'gpu_clocks_event_reason_active', gpu0).map((s) => `${s.labels.reason}=${s.value}`);
    const errors = samplesOf(p, 'cuda_bindings_exporter_nvml_errors_total').map((s) => `${s.labels.function}/${s.labels.error}=${s.value}`);
    process.stdout.write(
      `GPU 0 (compute capability ${cc}):\n${lines.join('\n')}\nclock event reasons: ${reasons.join(' ')}\nNVML errors: ${errors.join(' ') || 'none'}\n` +
        `sample duration ${samplesOf(p, 'cuda_bindings_exporter_sample_duration_seconds')[0]?.value} s\n`,
    );
    if (Number(cc) >= 9) {
      const ratio = present('DCGM_FI_PROF_GR_ENGINE_ACTIVE')[0];
      expect(ratio).toBeGreaterThanOrEqual(0);
      expect(ratio).toBeLessThanOrEqual(1);
      expect(present('DCGM_FI_PROF_PCIE_TX_BYTES')).toHaveLength(1);
    }
    expect(present('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION')[0]).toBeGreaterThan(0);
    expect(samplesOf(p, 'DCGM_FI_DEV_XID_ERRORS', gpu0).map((s) => s.labels.err_code)).toEqual(['0']);
    expect(reasons.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  test('this process holds no CUDA context; a process holding 1 GiB shows with its pid, user, command and bytes, as nvidia-smi lists it', async () => {
    const apps = () =>
      spawnSync('nvidia-smi', ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(',').map((x) => x.trim()));
    expect(apps().map(([pid]) => pid)).not.toContain(String(process.pid));
    const child: ChildProcessWithoutNullStreams = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(root, 'test', 'gpu', 'fixtures', 'hold-gpu-memory.ts'), '1024'],
      { cwd: root },
    );
    try {
      const pid = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const m = /ready (\d+)/.exec(out);
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`hold-gpu-memory exited with ${code}`)));
      });
      await nextSample();
      await nextSample();
      const p = await page();
      const rows = samplesOf(p, 'gpu_process_memory_used_bytes', { pid });
      const listed = apps().find(([x]) => x === pid);
      process.stdout.write(
        `process ${pid}: exporter ${rows.map((r) => `${r.value / 2 ** 20} MiB user=${r.labels.user} command=${r.labels.command}`).join('; ')}; nvidia-smi ${listed?.[1]} MiB\n`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].labels).toMatchObject({ user: os.userInfo().username });
      expect(rows[0].labels.command).toMatch(/hold-gpu-memory\.ts 1024$/);
      expect(rows[0].value / 2 ** 20).toBe(Number(listed?.[1]));
      expect(samplesOf(p, 'gpu_process_host_memory_resident_bytes', { pid })[0].value).toBeGreaterThan(0);
      // Still none for this process: the exporter reads NVML only.
      expect(apps().map(([x]) => x)).not.toContain(String(process.pid));
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
