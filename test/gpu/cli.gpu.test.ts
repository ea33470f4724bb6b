// The CLI on a GPU: `info --json` agrees with nvidia-smi, and `bandwidth` measures what the C anchor
// (.gpu/anchors/anchor_c.cu) measures. How close it comes is the benchmark's business (npm run bench):
// here a figure off by a unit or a factor fails, a noisy 15% does not.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import { describeGpu, gpu } from './helpers';

const { count } = gpu;

async function json(...argv: string[]): Promise<any> {
  const out: string[] = [];
  const code = await main([...argv, '--json'], { log: (s) => out.push(s), err: () => undefined });
  expect(code).toBe(0);
  return JSON.parse(out.join('\n'));
}

describeGpu('the CLI on a GPU', () => {
  test('info --json agrees with nvidia-smi on name, UUID, memory and PCI bus id', async () => {
    const info = await json('info');
    const smi = execFileSync('nvidia-smi', ['--query-gpu=name,uuid,memory.total,pci.bus_id', '--format=csv,noheader,nounits'])
      .toString()
      .trim()
      .split('\n')
      .map((l) => l.split(',').map((x) => x.trim()));
    expect(info.deviceCount).toBe(count);
    for (const d of info.devices) {
      const row = smi.find((r) => r[1] === d.uuid);
      expect(row).toBeDefined();
      const [name, , memMiB, bus] = row!;
      expect(d.name).toBe(name);
      // nvidia-smi counts memory the driver reserves; the runtime's total is a little less.
      expect(Math.abs(d.memoryTotalBytes / 2 ** 20 - Number(memMiB)) / Number(memMiB)).toBeLessThan(0.02);
      expect(bus.toLowerCase()).toContain(d.pciBusId.toLowerCase().replace(/^0000/, ''));
    }
  });

  test('bandwidth --json: every direction and size, pinned H2D of 256 MiB measures what C measures (within 2x)', async () => {
    const bw = await json('bandwidth');
    expect(bw.rows.length).toBe(25);
    for (const r of bw.rows) expect(r.gbPerSecond).toBeGreaterThan(0);
    const ours = bw.rows.find((r: any) => r.direction === 'H2D' && r.memory === 'pinned' && r.bytes === 256 * 2 ** 20).gbPerSecond;
    const anchor = path.join(__dirname, '..', '..', '.gpu', 'anchors', 'anchor_c.cu');
    if (!fs.existsSync(anchor)) throw new Error(`the C anchor is not here (${anchor}): run ../shared/gpu/pack.sh before the GPU suite`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anchor-'));
    execFileSync('nvcc', ['-O2', '-arch=native', '-o', path.join(dir, 'anchor_c'), anchor, '-lcuda']);
    const c = execFileSync(path.join(dir, 'anchor_c'), { cwd: dir }).toString();
    const cFigure = Number(/c,H2D_pinned_256MiB_GBps,([\d.]+)/.exec(c)![1]);
    console.log(`pinned H2D 256 MiB: cuda-bindings bandwidth ${ours.toFixed(2)} GB/s, C anchor ${cFigure.toFixed(2)} GB/s`);
    expect(ours / cFigure).toBeGreaterThan(0.5);
    expect(ours / cFigure).toBeLessThan(2);
  }, 120_000);

  test('latency --json times every call', async () => {
    const l = await json('latency');
    expect(l.rows.length).toBe(10);
    for (const r of l.rows) expect(r.nsPerCall).toBeGreaterThan(0);
  }, 120_000);
});
