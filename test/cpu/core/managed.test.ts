// Managed memory without a GPU: advice and the last prefetch location read back, discard, and the
// batched prefetch and discard, through one fake library that is both libcudart and libcuda
// (test/cpu/fixtures/fake-managed.c, built with gcc here) and keeps what a driver would; and a
// build of it without the CUDA 13.0 batched entry points, as an older driver.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
let dir: string;
let lib: string;
let old: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-managed-'));
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  const src = path.join(__dirname, '..', 'fixtures', 'fake-managed.c');
  lib = path.join(dir, 'libfake-managed.so');
  old = path.join(dir, 'libfake-managed-old.so');
  execFileSync('gcc', ['-shared', '-fPIC', `-I${include}`, '-o', lib, src]);
  execFileSync('gcc', ['-shared', '-fPIC', '-DNO_BATCH', `-I${include}`, '-o', old, src]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `body` (with `core`, `log()`, `err(f)` and `out(v)` in scope) on `library` as both runtime and driver; returns what it outputs. */
function onFake(body: string, library = lib): unknown {
  const script = `
    const koffi = require('koffi');
    const { core } = require('./src');
    const log = koffi.load(process.env.CUDA_BINDINGS_CUDA).func('const char *fake_log(void)');
    const out = (v) => console.log(JSON.stringify(v));
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    const where = (l) => l === null || l === 'host' ? l : 'device ' + l.ordinal;
    (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDART: library, CUDA_BINDINGS_CUDA: library },
    timeout: 120_000,
  });
  if (run.stderr !== '' || run.status !== 0) throw new Error(`the child failed (status ${run.status}):\n${run.stderr}\n${run.stdout}`);
  return JSON.parse(run.stdout);
}

test('advice and the last prefetch location read back from the range', () => {
  const r = onFake(`
    const d0 = core.Device.get(0), d1 = core.Device.get(1);
    const b = d0.allocateManaged(4096);
    const before = { readMostly: b.readMostly, preferred: where(b.preferredLocation), last: where(b.lastPrefetchLocation), accessedBy: b.accessedBy.map(where) };
    b.advise('readMostly', d0).advise('preferredLocation', 'host').advise('accessedBy', d1).advise('accessedBy', 'host');
    b.prefetch(d1);
    const after = { readMostly: b.readMostly, preferred: where(b.preferredLocation), last: where(b.lastPrefetchLocation), accessedBy: b.accessedBy.map(where) };
    b.advise('readMostly', d0, false).advise('accessedBy', d1, false).prefetch('host');
    const cleared = { readMostly: b.readMostly, last: where(b.lastPrefetchLocation), accessedBy: b.accessedBy.map(where) };
    out({ before, after, cleared });`);
  expect(r).toEqual({
    before: { readMostly: false, preferred: null, last: null, accessedBy: [] },
    after: { readMostly: true, preferred: 'host', last: 'device 1', accessedBy: ['device 1', 'host'] },
    cleared: { readMostly: false, last: 'host', accessedBy: ['host'] },
  });
});

test('discard and discardPrefetch of one buffer, and the batched forms, reach the driver with their ranges and locations', () => {
  const r = onFake(`
    const d0 = core.Device.get(0), d1 = core.Device.get(1);
    const s = d0.createStream();
    const a = d0.allocateManaged(4096), b = d0.allocateManaged(8192), c = d0.allocateManaged(100);
    a.discard(s);
    b.discardPrefetch(d1);
    core.prefetchBatch(s, [a, b, c], d1);
    const lastAll = [a, b, c].map((x) => where(x.lastPrefetchLocation));
    core.prefetchBatch(s, [a, b, c], [d0, 'host', d1]);
    const lastEach = [a, b, c].map((x) => where(x.lastPrefetchLocation));
    core.discardBatch(s, [a, c]);
    core.discardPrefetchBatch(s, [a, b], 'host');
    out({ log: log().split('\\n'), lastAll, lastEach });`);
  expect(r).toEqual({
    log: [
      'discard flags=0 stream=set managed:4096',
      'discardPrefetch flags=0 stream=null managed:8192 loc0=device1@0',
      'prefetch flags=0 stream=set managed:4096 managed:8192 managed:100 loc0=device1@0',
      'prefetch flags=0 stream=set managed:4096 managed:8192 managed:100 loc0=device0@0 loc1=host0@1 loc2=device1@2',
      'discard flags=0 stream=set managed:4096 managed:100',
      'discardPrefetch flags=0 stream=set managed:4096 managed:8192 loc0=host0@0',
      '',
    ],
    lastAll: ['device 1', 'device 1', 'device 1'],
    lastEach: ['device 0', 'host', 'device 1'],
  });
});

test('non-managed memory, closed buffers, bad locations and counts are refused before C', () => {
  const r = onFake(`
    const d0 = core.Device.get(0);
    const s = d0.createStream();
    const plain = d0.allocate(64), m = d0.allocateManaged(64), gone = d0.allocateManaged(64);
    gone.close();
    out([
      err(() => plain.lastPrefetchLocation),
      err(() => plain.discard()),
      err(() => gone.readMostly),
      err(() => core.prefetchBatch(s, [m, plain], d0)),
      err(() => core.prefetchBatch(s, [m, gone], d0)),
      err(() => core.prefetchBatch(s, [], d0)),
      err(() => core.prefetchBatch(s, [m, m], [d0])),
      err(() => core.prefetchBatch(s, [m], 'cpu')),
      err(() => core.discardBatch(5, [m])),
      err(() => m.discardPrefetch(0)),
      log(),
    ]);`);
  expect(r).toEqual([
    'Error: DeviceBuffer.lastPrefetchLocation: this buffer must be managed memory (device.allocateManaged or a ManagedMemoryPool); it is device memory',
    'Error: DeviceBuffer.discard: this buffer must be managed memory (device.allocateManaged or a ManagedMemoryPool); it is device memory',
    'Error: DeviceBuffer.readMostly: the buffer was closed',
    "Error: prefetchBatch: parameter 'buffers[1]' must be managed memory (device.allocateManaged or a ManagedMemoryPool); it is device memory",
    "Error: prefetchBatch: parameter 'buffers[1]' is a DeviceBuffer that was closed",
    "TypeError: prefetchBatch: parameter 'buffers' must be a non-empty array of managed DeviceBuffers, got an empty array",
    "RangeError: prefetchBatch: parameter 'locations' has 1 locations for 2 buffers; give one, or one per buffer",
    "TypeError: prefetchBatch: parameter 'locations' must be a Device or 'host', got the string \"cpu\"",
    "TypeError: discardBatch: parameter 'stream' must be a Stream, got 5",
    "TypeError: DeviceBuffer.discardPrefetch: parameter 'where' must be a Device or 'host', got 0",
    '',
  ]);
});

test('a driver without the CUDA 13.0 batched calls: an error that says what is needed; single prefetch still works', () => {
  const r = onFake(
    `
    const d0 = core.Device.get(0);
    const s = d0.createStream();
    const m = d0.allocateManaged(64);
    m.prefetch(d0, s);
    out([err(() => core.prefetchBatch(s, [m], d0)), err(() => m.discard(s)), where(m.lastPrefetchLocation)]);`,
    old,
  );
  expect(r).toEqual([
    'Error: prefetchBatch: this driver (CUDA 13.0) has no cuMemPrefetchBatchAsync, which came with CUDA 13.0 (driver 580); update the driver, or prefetch buffer by buffer with buf.prefetch()',
    'Error: DeviceBuffer.discard: this driver (CUDA 13.0) has no cuMemDiscardBatchAsync, which came with CUDA 13.0 (driver 580); update the driver, or prefetch buffer by buffer with buf.prefetch()',
    'device 0',
  ]);
});
