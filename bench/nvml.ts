// NVML through the facade and core, as CSV lines `<impl>,<operation>,<value>` under the operation
// names bench/nvml.c prints for C; then the wall time of `cuda-bindings info` and the CPU `top`
// takes at 1 s intervals. Runs against the build (`npm run build` first), from the repo root:
//   node dist-bench/bench/nvml.js
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { nvml, core } = require(path.resolve('dist')) as typeof import('../src');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { time } = require(path.resolve('dist', 'cli', 'latency')) as typeof import('../src/cli/latency');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { top } = require(path.resolve('dist', 'cli', 'top')) as typeof import('../src/cli/top');
const bench = (fn: () => unknown, n: number): number => time(fn, n, 5);
const out = (impl: string, name: string, v: number) => console.log(`${impl},${name},${v.toFixed(v < 100 ? 2 : 1)}`);

async function main(): Promise<void> {
  if (nvml.nvmlInit()[0] !== 0) throw new Error('nvmlInit failed');
  const [, dev] = nvml.nvmlDeviceGetHandleByIndex(0);
  const util = new nvml.nvmlUtilization_t();
  out(
    'facade',
    'nvmlDeviceGetUtilizationRates',
    bench(() => nvml.nvmlDeviceGetUtilizationRates(dev!, util), 100_000),
  );
  const gpu = core.NvmlDevice.get(0);
  out(
    'core',
    'nvmlDeviceGetUtilizationRates',
    bench(() => gpu.utilization(), 100_000),
  );
  out(
    'core',
    'nvml_health_snapshot_no_pcie_throughput',
    bench(() => gpu.health({ pcieThroughput: false }), 200),
  );
  out(
    'core',
    'nvml_health_snapshot',
    bench(() => gpu.health(), 5),
  );
  nvml.nvmlShutdown();

  // `cuda-bindings info` from a fresh process, median of 5, in ns like the other rows.
  const walls: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [path.resolve('dist', 'cli', 'main.js'), 'info'], { encoding: 'utf8' });
    walls.push(Number(process.hrtime.bigint() - t));
    if (r.status !== 0) throw new Error(`info exited ${r.status}: ${r.stderr}`);
  }
  walls.sort((a, b) => a - b);
  out('core', 'cli_info_wall', walls[2]);

  // top at 1 s intervals, its NDJSON discarded: CPU time over wall time, after a first sample.
  const quiet = { log: () => {}, err: () => {} };
  await top({ command: 'top', named: true, json: true, help: false, count: 1 }, quiet);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await top({ command: 'top', named: true, json: true, help: false, count: 11, interval: 1000 }, quiet);
  const cpu = process.cpuUsage(cpu0);
  const wall = Number(process.hrtime.bigint() - t0) / 1000;
  out('core', 'top_1s_interval_cpu_percent', (100 * (cpu.user + cpu.system)) / wall);
}

main().catch((e) => {
  console.error(`bench/nvml: ${(e as Error).message}`);
  process.exitCode = 1;
});
