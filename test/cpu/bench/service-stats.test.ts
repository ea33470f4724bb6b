// The service benchmark's harness without a GPU (bench/service-stats.ts, bench/service.cu): its
// percentiles, arguments and verdicts on the targets of issue #34, the table it prints, and the C
// program compiled with nvcc as the benchmark compiles it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { judge, parseArgs, percentile, renderTables, spread, type Memory, type Row } from '../../../bench/service-stats';

const MiB = 1 << 20;

function row(over: Partial<Row>): Row {
  return {
    name: 'service',
    concurrency: 64,
    requests: 3000,
    seconds: 1,
    latencyMs: { p50: 10, p99: 40, max: 90 },
    loopDelayMs: { p50: 0.5, p99: 3, max: 8 },
    wrong: 0,
    bad400: 60,
    badSent: 60,
    unexpected: 0,
    ...over,
  };
}
const cSeq = row({ name: 'C', concurrency: 1, requests: 1500, loopDelayMs: undefined, bad400: 30, badSent: 30 });
const memory: Memory = { deviceBefore: 500 * MiB, deviceAfter: 501 * MiB, rssBefore: 200 * MiB, rssAfter: 210 * MiB };

test('percentile takes the nearest rank of sorted values; spread sorts a copy', () => {
  const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
  expect([percentile([1, 2, 3, 4], 0.5), percentile([1, 2, 3, 4], 0.99), percentile([7], 0.5), percentile([], 0.5)]).toEqual([
    2,
    4,
    7,
    NaN,
  ]);
  expect(spread(values)).toEqual({ p50: 5, p99: 10, max: 10 });
  expect(values[0]).toBe(5);
  const many = Array.from({ length: 1000 }, (_, i) => 1000 - i);
  expect(spread(many)).toEqual({ p50: 500, p99: 990, max: 1000 });
});

test('arguments: the defaults, --short, explicit values, and what is refused', () => {
  expect(parseArgs([])).toEqual({ seconds: 15, concurrency: [16, 64, 256], cThreads: 8, short: false, handover: false });
  expect(parseArgs(['--short'])).toEqual({ seconds: 2, concurrency: [16, 64], cThreads: 8, short: true, handover: false });
  expect(parseArgs(['--short', '--seconds', '1', '--concurrency', '4,8', '--c-threads', '2', '--handover'])).toEqual({
    seconds: 1,
    concurrency: [4, 8],
    cThreads: 2,
    short: true,
    handover: true,
  });
  expect(() => parseArgs(['--seconds', '0'])).toThrow('--seconds must be a positive number, got 0');
  expect(() => parseArgs(['--concurrency', '16,x'])).toThrow('--concurrency must be positive integers, got NaN');
  expect(() => parseArgs(['--seconds'])).toThrow('--seconds needs a value');
  expect(() => parseArgs(['--fast'])).toThrow(/^unknown argument --fast/);
});

test('every target passes on figures that meet it', () => {
  const v = judge([row({ concurrency: 16 }), row({}), row({ concurrency: 256, latencyMs: { p50: 50, p99: 200, max: 600 } })], cSeq, memory);
  expect(v.map((x) => [x.target, x.pass])).toEqual([
    ['c=64: ≥ 1.5× sequential C req/s', true],
    ['c=64: event-loop delay p99 ≤ 5 ms', true],
    ['c=64: latency p99 ≤ 10× p50', true],
    ['0 wrong results', true],
    ['every impossible request answered 400, nothing else failed', true],
    ['device memory within 2 MiB after trim', true],
    ['RSS within 10% after trim', true],
    ['c=256: no request waits > 1 s', true],
  ]);
  expect(v[0].measured).toBe('2.00× (3,000 / 1,500)');
});

test('each target fails on its own, and a missing run fails the targets that need it', () => {
  const failed = (js: Row[], c: Row | undefined, m: Memory = memory) =>
    judge(js, c, m)
      .filter((x) => !x.pass)
      .map((x) => x.target);
  expect(failed([row({ requests: 2000 })], cSeq)).toEqual(['c=64: ≥ 1.5× sequential C req/s', 'c=256: no request waits > 1 s']);
  expect(failed([row({ loopDelayMs: { p50: 1, p99: 6, max: 9 } }), row({ concurrency: 256 })], cSeq)).toEqual([
    'c=64: event-loop delay p99 ≤ 5 ms',
  ]);
  expect(failed([row({ latencyMs: { p50: 10, p99: 101, max: 200 } }), row({ concurrency: 256 })], cSeq)).toEqual([
    'c=64: latency p99 ≤ 10× p50',
  ]);
  expect(failed([row({}), row({ concurrency: 256 })], { ...cSeq, wrong: 1 })).toEqual(['0 wrong results']);
  expect(failed([row({ bad400: 59, unexpected: 1 }), row({ concurrency: 256 })], cSeq)).toEqual([
    'every impossible request answered 400, nothing else failed',
  ]);
  expect(failed([row({}), row({ concurrency: 256 })], cSeq, { ...memory, deviceAfter: 503 * MiB, rssAfter: 221 * MiB })).toEqual([
    'device memory within 2 MiB after trim',
    'RSS within 10% after trim',
  ]);
  expect(failed([row({}), row({ concurrency: 256, latencyMs: { p50: 100, p99: 900, max: 1001 } })], cSeq)).toEqual([
    'c=256: no request waits > 1 s',
  ]);
  const missing = judge([row({ concurrency: 16 })], undefined, memory).filter((x) => !x.pass);
  expect(missing.map((x) => x.measured)).toEqual([
    'concurrency 64 was not run',
    'concurrency 64 was not run',
    'concurrency 64 was not run',
    'concurrency 256 was not run',
  ]);
});

test('the tables: one line per run (C without an event loop), one per target with pass or fail', () => {
  const rows = [cSeq, row({})];
  const text = renderTables(rows, judge(rows.slice(1), cSeq, { ...memory, rssAfter: 300 * MiB }));
  expect(text.split('\n').slice(0, 4)).toEqual([
    '| run | concurrency | req/s | latency p50 / p99 / max (ms) | event-loop delay p50 / p99 / max (ms) | wrong | 400s (sent) | other |',
    '|---|---:|---:|---|---|---:|---:|---:|',
    '| C | 1 | 1,500 | 10.0 / 40.0 / 90.0 | – | 0 | 30 (30) | 0 |',
    '| service | 64 | 3,000 | 10.0 / 40.0 / 90.0 | 0.50 / 3.00 / 8.00 | 0 | 60 (60) | 0 |',
  ]);
  expect(text).toContain('| RSS within 10% after trim | 50.0% (200 → 300 MiB) | **fail** |');
  expect(text).toContain('| c=64: event-loop delay p99 ≤ 5 ms | 3.00 ms | pass |');
});

test('bench/service.cu compiles with nvcc and refuses arguments it does not know, before any CUDA call', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-service-'));
  try {
    const exe = path.join(dir, 'service');
    const nvcc = spawnSync('nvcc', ['-O2', '-o', exe, path.join(__dirname, '..', '..', '..', 'bench', 'service.cu')], { encoding: 'utf8' });
    expect(nvcc.stderr).toBe('');
    const r = spawnSync(exe, ['fast', '1', '1'], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: 'usage: service <pageable|staged> <threads> <seconds>\n' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
