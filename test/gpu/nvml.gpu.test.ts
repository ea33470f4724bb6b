// NVML on a real GPU, against nvidia-smi: every value `nvidia-smi --query-gpu` also reports agrees
// with ours within the tolerances; a process holding 1 GiB shows in the process list; `top`,
// `topo` and the exporter work. Prints a field-by-field table (ours vs nvidia-smi) to stdout.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { cudart, core } from '../../src';
import { parseExposition, samplesOf } from '../cpu/helpers/exposition';

const root = path.join(__dirname, '..', '..');
const cli = path.join(root, 'src', 'cli', 'main.ts');

/** Why these tests cannot run here, or null when they can. */
function whyNot(): string | null {
  const [err, count] = cudart.cudaGetDeviceCount();
  if (err !== 0 || !count) return `no CUDA device (${cudart.cudaError_t[err] ?? err})`;
  const smi = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  if (smi.status !== 0) return `nvidia-smi is not available (${smi.error?.message ?? smi.stderr.trim()})`;
  try {
    core.NvmlDevice.count();
  } catch (e) {
    return `NVML is not available: ${(e as Error).message.split('\n')[0]}`;
  }
  return null;
}
const skip = whyNot();

const QUERY = [
  'index',
  'name',
  'uuid',
  'pci.bus_id',
  'memory.total',
  'memory.used',
  'temperature.gpu',
  'power.draw',
  'pcie.link.gen.current',
  'pcie.link.width.current',
  'clocks.sm',
  'clocks.mem',
  'compute_mode',
  'persistence_mode',
];

/** nvidia-smi's readings of every GPU, by field. */
function smiReadings(): Record<string, string>[] {
  const r = spawnSync('nvidia-smi', [`--query-gpu=${QUERY.join(',')}`, '--format=csv,noheader,nounits'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nvidia-smi failed: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((line) => Object.fromEntries(line.split(',').map((v, i) => [QUERY[i], v.trim()])));
}

interface Row {
  field: string;
  ours: string;
  smi: string;
  tolerance: string;
  ok: boolean;
}

/** Compares a numeric reading: within `rel` (a fraction) or `abs` of nvidia-smi's. */
function num(field: string, ours: number | null, smi: string, rel: number, abs = 0, tolerance = ''): Row {
  const s = Number(smi);
  const ok = ours !== null && Number.isFinite(s) && Math.abs(ours - s) <= Math.max(rel * Math.abs(s), abs);
  return {
    field,
    ours: ours === null ? 'null' : String(Number(ours.toFixed(2))),
    smi,
    tolerance: tolerance || (rel ? `±${rel * 100}%` : `±${abs}`),
    ok,
  };
}
const same = (field: string, ours: string | number | null, smi: string): Row => ({
  field,
  ours: String(ours),
  smi,
  tolerance: 'equal',
  ok: String(ours) === smi,
});

function printTable(gpu: number, rows: Row[]): void {
  const w = (k: keyof Row) => Math.max(k.length, ...rows.map((r) => String(r[k]).length));
  const cols: (keyof Row)[] = ['field', 'ours', 'smi', 'tolerance', 'ok'];
  const line = (r: Record<string, unknown>) => cols.map((c) => String(r[c]).padEnd(w(c))).join(' | ');
  const text = [
    `GPU ${gpu}: ours vs nvidia-smi`,
    line({ field: 'field', ours: 'ours', smi: 'nvidia-smi', tolerance: 'tolerance', ok: 'ok' }),
    cols.map((c) => '-'.repeat(w(c))).join('-|-'),
    ...rows.map((r) => line({ ...r, ok: r.ok ? 'yes' : 'NO' })),
  ];
  process.stdout.write(text.join('\n') + '\n\n');
}

(skip ? describe.skip : describe)(skip ? `NVML against nvidia-smi: skipped, ${skip}` : 'NVML against nvidia-smi', () => {
  afterAll(() => core.shutdownNvml());

  test('every field nvidia-smi --query-gpu reports agrees with health()', () => {
    const smi = smiReadings();
    const bad: string[] = [];
    for (const s of smi) {
      const gpu = core.NvmlDevice.get(Number(s.index));
      const h = gpu.health({ pcieThroughput: false });
      const MiB = 2 ** 20;
      const rows: Row[] = [
        same('name', h.name, s.name),
        same('uuid', h.uuid, s.uuid),
        same('pci.bus_id', h.pciBusId, s['pci.bus_id']),
        num('memory.total (MiB)', h.memory && h.memory.total / MiB, s['memory.total'], 0.01),
        // Used memory moves as processes come and go: 1% of the total.
        num('memory.used (MiB)', h.memory && h.memory.used / MiB, s['memory.used'], 0, 0.01 * Number(s['memory.total']), '±1% of total'),
        num('temperature.gpu (°C)', h.temperature.current, s['temperature.gpu'], 0, 3),
        num('power.draw (W)', h.power.draw, s['power.draw'], 0.15),
        same('pcie.link.gen.current', h.pcie.generation, s['pcie.link.gen.current']),
        same('pcie.link.width.current', h.pcie.width, s['pcie.link.width.current']),
        num('clocks.sm (MHz)', h.clocks.sm, s['clocks.sm'], 0.05),
        num('clocks.mem (MHz)', h.clocks.memory, s['clocks.mem'], 0.05),
        same('compute_mode', h.computeMode, s.compute_mode),
        same('persistence_mode', h.persistenceMode === null ? null : h.persistenceMode ? 'Enabled' : 'Disabled', s.persistence_mode),
      ];
      printTable(gpu.index, rows);
      process.stdout.write(`GPU ${gpu.index} health(): ${JSON.stringify(h)}\n\n`);
      bad.push(
        ...rows.filter((r) => !r.ok).map((r) => `GPU ${gpu.index} ${r.field}: ours ${r.ours}, nvidia-smi ${r.smi} (${r.tolerance})`),
      );
    }
    expect(bad).toEqual([]);
  });

  test("the functions the driver's libnvidia-ml does not export are listed, and throw when called, naming the symbol", () => {
    const { libnvml: lib } = require('../../src/ffi/nvml-lib.gen') as typeof import('../../src/ffi/nvml-lib.gen');
    const { declarations } = require('../../src/ffi/nvml.gen') as typeof import('../../src/ffi/nvml.gen');
    const file = lib.info().path;
    const nm = spawnSync('nm', ['-D', '--defined-only', file], { encoding: 'utf8' });
    const exported = new Set(nm.stdout.split('\n').map((l) => l.split(' ').pop()!.replace(/@.*/, '')));
    const missing = Object.entries(declarations)
      .filter(([, d]) => !exported.has(d[0]))
      .map(([name, d]) => `${name} (${d[0]})`);
    process.stdout.write(
      `${file}: ${Object.keys(declarations).length - missing.length} of ${Object.keys(declarations).length} bound functions exported; missing: ${missing.join(', ') || 'none'}\n`,
    );
    expect(nm.status).toBe(0);
    for (const [name, d] of Object.entries(declarations)
      .filter(([, d]) => !exported.has(d[0]))
      .slice(0, 5)) {
      expect(() => lib.bind(name as keyof typeof declarations)()).toThrow(
        new RegExp(`^${name}: libnvidia-ml at \\S+ does not export ${d[0]}`),
      );
    }
  });

  test('each CUDA device finds its NVML GPU by UUID', () => {
    const rows = core.Device.all().map((d) => [d.ordinal, d.uuid, d.nvml.uuid, d.nvml.index]);
    process.stdout.write(`CUDA device -> NVML index: ${JSON.stringify(rows)}\n`);
    expect(rows.map((r) => r[1])).toEqual(rows.map((r) => r[2]));
  });

  test('a process holding 1 GiB shows in the process list with at least that much memory', async () => {
    const script =
      "const { cudart } = require('./src'); cudart.cudaSetDevice(0); const [e, p] = cudart.cudaMalloc(2 ** 30); if (e) { console.log('error ' + e); process.exit(1); } cudart.cudaMemset(p, 0, 2 ** 30); cudart.cudaDeviceSynchronize(); console.log('ready'); setInterval(() => {}, 1000);";
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => (String(d).includes('ready') ? resolve() : reject(new Error(String(d)))));
        child.once('exit', (c) => reject(new Error(`the allocating process exited with ${c}`)));
      });
      const gpu = core.Device.get(0).nvml;
      const procs = gpu.health({ pcieThroughput: false }).processes;
      process.stdout.write(`processes on GPU ${gpu.index} (child pid ${child.pid}): ${JSON.stringify(procs)}\n`);
      const mine = procs?.find((p) => p.pid === child.pid);
      expect(mine).toBeDefined();
      expect(mine!.usedMemory).toBeGreaterThanOrEqual(2 ** 30);
      expect(mine!.name).toMatch(/node/);
    } finally {
      stop(child);
    }
  }, 60_000);

  test('top --count 3 --json prints 3 records of every GPU', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'top', '--count', '3', '--json'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    process.stdout.write(`top --count 3 --json, first record: ${JSON.stringify(records[0])}\n`);
    expect(records.length).toBe(3);
    for (const rec of records) expect(rec.gpus.length).toBe(core.NvmlDevice.count());
  }, 60_000);

  test('topo prints a matrix of every GPU', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'topo', '--json'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    const t = JSON.parse(r.stdout);
    const text = spawnSync(process.execPath, ['--import', 'tsx', cli, 'topo'], { cwd: root, encoding: 'utf8', timeout: 60_000 }).stdout;
    const smi = spawnSync('nvidia-smi', ['topo', '-m'], { encoding: 'utf8' }).stdout;
    process.stdout.write(`cuda-bindings topo:\n${text}\nnvidia-smi topo -m:\n${smi}\n`);
    expect(t.matrix.length).toBe(core.NvmlDevice.count());
    expect(t.matrix.every((row: unknown[], i: number) => row.length === t.matrix.length && (row[i] as { kind: string }).kind === 'X')).toBe(
      true,
    );
  }, 60_000);

  test("the exporter's /metrics parses and matches nvidia-smi", async () => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'examples', 'gpuExporter.ts'), '--port', '0'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = '';
        p.stdout.on('data', (d) => {
          buf += d;
          const m = /listening on (\S+)/.exec(buf);
          if (m) resolve(m[1]);
        });
        p.once('exit', (c) => reject(new Error(`exporter exited with ${c}`)));
      });
      const body = await new Promise<string>((resolve, reject) => {
        http
          .get(url, (res) => {
            let b = '';
            res.on('data', (d) => (b += d));
            res.on('end', () => resolve(b));
          })
          .on('error', reject);
      });
      process.stdout.write(`exporter, first lines:\n${body.split('\n').slice(0, 12).join('\n')}\n`);
      const page = parseExposition(body);
      expect(page.bad).toEqual([]);
      const smi = smiReadings();
      for (const s of smi) {
        const v = (name: string) => samplesOf(page, name, { gpu: s.index, UUID: s.uuid })[0]?.value ?? NaN;
        const total = v('DCGM_FI_DEV_FB_USED') + v('DCGM_FI_DEV_FB_FREE') + v('DCGM_FI_DEV_FB_RESERVED');
        expect(Math.abs(total - Number(s['memory.total']))).toBeLessThanOrEqual(0.01 * Number(s['memory.total']));
        expect(Math.abs(v('DCGM_FI_DEV_GPU_TEMP') - Number(s['temperature.gpu']))).toBeLessThanOrEqual(3);
        expect(Math.abs(v('DCGM_FI_DEV_POWER_USAGE') - Number(s['power.draw']))).toBeLessThanOrEqual(0.15 * Number(s['power.draw']));
      }
    } finally {
      stop(p);
    }
  }, 60_000);
});

function stop(p: ChildProcess): void {
  if (p.exitCode === null) p.kill('SIGTERM');
}
