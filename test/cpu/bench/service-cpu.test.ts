// The service benchmark's CPU side (bench/service-cpu.ts): what it reads out of a --trace-gc log and a
// CPU profile, and one short run of examples/gpuService.ts on the fake GPU, loaded as on the H100.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { longStretches, type CpuProfile } from '../../../bench/service-profile';
import { gcSummary } from '../../../bench/service-stats';

const root = path.join(__dirname, '..', '..', '..');

test('gcSummary counts collections by kind and reason, their pauses, and the heap allocated between them', () => {
  const log = [
    'listening on http://127.0.0.1:1',
    '[1:0x1]     100 ms: Scavenge 10.0 (12.0) -> 8.0 (13.0) MB, 1.50 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ',
    '[1:0x1]     110 ms: Scavenge 9.0 (13.0) -> 8.5 (13.0) MB, 4.00 / 0.00 ms  (average mu = 1.000, current mu = 1.000) external memory pressure; ',
    '[1:0x1]     200 ms: Mark-Compact 12.5 (14.0) -> 7.0 (12.0) MB, 3.25 / 0.01 ms  (+ 2.0 ms in 5 steps since start of marking, biggest step 1.0 ms, walltime since start of marking 20 ms) (average mu = 0.9, current mu = 0.8) finalize incremental marking via task; GC in old space requested',
  ].join('\n');
  const g = gcSummary(log);
  expect(g.kinds).toEqual({
    Scavenge: { count: 2, totalMs: 5.5, maxMs: 4, over3ms: 1, reasons: { 'allocation failure': 1, 'external memory pressure': 1 } },
    'Mark-Compact': { count: 1, totalMs: 3.25, maxMs: 3.25, over3ms: 1, reasons: { 'finalize incremental marking via task': 1 } },
  });
  // 9.0 - 8.0 MiB before the second, 12.5 - 8.5 before the third
  expect(g.allocatedBytes).toBe(5 * 2 ** 20);
});

test('longStretches: runs of samples with no idle one between, over the threshold, by where their time went', () => {
  const frame = (functionName: string, url = '') => ({ functionName, url });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 5, 7] },
      { id: 2, callFrame: frame('(idle)') },
      { id: 3, callFrame: frame('(garbage collector)') },
      { id: 4, callFrame: frame('download', 'file:///x/src/core/memory/transfer.ts'), children: [6] },
      { id: 5, callFrame: frame('parserOnIncoming', 'node:_http_server') },
      { id: 6, callFrame: frame('helper', 'file:///x/node_modules/tsx/dist/a.cjs') },
      { id: 7, callFrame: frame('cudaMemcpyAsync') },
    ],
    // idle, then 5 ms of work (gc 2, package 1 through a helper, http 1, CUDA 1), idle, then 1 ms of gc
    samples: [2, 3, 3, 6, 5, 7, 2, 3, 2],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
  const l = longStretches(profile, 3);
  expect([l.count, l.totalMs, l.maxMs, l.busyMs]).toEqual([1, 5, 5, 6]);
  expect(l.byBucket).toEqual({ gc: 2, 'package (cuda-bindings, koffi)': 1, 'node:http': 1, 'CUDA library (native)': 1 });
  expect(l.topFunctions[0]).toEqual(['(garbage collector) ()', 2]);
});

test('the service of examples/gpuService.ts on the fake GPU: every answer right, every impossible request a 400, and no collection forced by external memory', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/service-cpu.ts', '--seconds', '1', '--concurrency', '64'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.stderr).toBe('');
  const run = r.stdout.split('\n').find((l) => l.startsWith('| service on the fake GPU | 64 |'));
  // | name | concurrency | req/s | latency | loop delay | wrong | 400s (sent) | other |
  const [, , , rate, , , wrong, bad, other] = (run ?? '').split('|').map((c) => c.trim());
  const [answered, sent] = /^(\d+) \((\d+)\)$/.exec(bad)!.slice(1).map(Number);
  expect([Number(rate.replace(/,/g, '')) > 0, wrong, other, answered === sent && sent > 0]).toEqual([true, '0', '0', true]);
  expect(r.stdout).not.toContain('external memory pressure');
  expect(r.stdout).toMatch(/the service's CPU time \(all its threads\) during the runs: [\d.]+ µs a request/);
});
