// Issue #34 on a GPU: DeviceBuffer.upload / download on a pool's buffers and a non-blocking stream
// give exact results, the event loop keeps turning while a download waits behind long GPU work (and
// does not with copyTo to pageable memory on a stream), the staging pool reuses its blocks, and the
// service example and its benchmark run in short mode. Skipped, saying why, without a device.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { core } from '../../src';
import { SAXPY_SOURCE } from '../../examples/lib/saxpy';
import { describeGpu } from './helpers';

const root = path.join(__dirname, '..', '..');
const { Device, Program, stagingPool, f32, i32, i64 } = core;
const MiB = 1 << 20;
const SPIN = `extern "C" __global__ void spin(long long cycles) { long long t = clock64(); while (clock64() - t < cycles) {} }`;

/** Runs `work` while a 1 ms interval ticks; resolves with its result, the ms it took and the longest gap between ticks. */
async function whileTicking<T>(work: () => Promise<T> | T): Promise<{ value: T; ms: number; gapMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  try {
    const value = await work();
    const ms = performance.now() - start;
    await new Promise((r) => setTimeout(r, 5)); // a tick after the work, so a blocked loop shows as a gap
    return { value, ms, gapMs: Math.max(gapMs, performance.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

describeGpu('upload and download (issue #34)', () => {
  let dev: core.Device;
  let stream: core.Stream;
  let saxpy: core.Kernel;
  let spin: core.Kernel;
  beforeAll(() => {
    dev = Device.get(0);
    stream = dev.createStream({ nonBlocking: true });
    saxpy = Program.compile(SAXPY_SOURCE).load().kernel('saxpy');
    spin = Program.compile(SPIN).load().kernel('spin');
  });
  /** Clock cycles of about `ms` milliseconds on this device (clockRate is in kHz). */
  const cycles = (ms: number) => i64(BigInt(Math.round((dev.attribute('ClockRate') || 1_500_000) * ms)));

  test('upload, saxpy and download on a pool buffer and a non-blocking stream: every element exact', async () => {
    const n = 1 << 20;
    const xs = Float32Array.from({ length: n }, (_, i) => i % 1000);
    const ys = Float32Array.from({ length: n }, (_, i) => (i * 3) % 777);
    const x = dev.memoryPool.allocate(4 * n, stream);
    const y = dev.memoryPool.allocate(4 * n, stream);
    x.upload(xs, { stream });
    y.upload(ys, { stream });
    xs.fill(-1); // the uploads copied it already
    saxpy.launch({ grid: n / 256, block: 256, stream }, f32(3), x, y, i32(n));
    const out = await y.download(Float32Array, { stream });
    const into = await y.download(new Float32Array(n), { stream });
    let wrong = 0;
    for (let i = 0; i < n; i++) if (out[i] !== 3 * (i % 1000) + ((i * 3) % 777) || into[i] !== out[i]) wrong++;
    expect({ wrong, length: out.length }).toEqual({ wrong: 0, length: n });
    stagingPool.release(out);
    expect(out.length).toBe(0);
    x.close();
    y.close();
  });

  test('a download waiting behind 300 ms of GPU work leaves the event loop free; copyTo to pageable memory on a stream does not', async () => {
    const buf = dev.memoryPool.allocate(64 * MiB, stream);
    buf.upload(new Uint8Array(64 * MiB).fill(7), { stream });
    await stream.synchronize();
    spin.launch({ grid: 1, block: 1, stream }, cycles(300));
    const polled = await whileTicking(() => buf.download(Uint8Array, { stream }));
    expect(polled.value[12345]).toBe(7);
    stagingPool.release(polled.value);
    spin.launch({ grid: 1, block: 1, stream }, cycles(300));
    const blocked = await whileTicking(() => buf.copyTo(new Uint8Array(64 * MiB), { stream }));
    console.log(
      `service: download ${polled.ms.toFixed(0)} ms, longest loop gap ${polled.gapMs.toFixed(1)} ms; copyTo ${blocked.ms.toFixed(0)} ms, gap ${blocked.gapMs.toFixed(1)} ms`,
    );
    expect(polled.ms).toBeGreaterThan(200);
    expect(polled.gapMs).toBeLessThan(50);
    expect(blocked.gapMs).toBeGreaterThan(200);
    buf.close();
  });

  test('round trips reuse the staging blocks: the pool grows to what is in flight, not with the number of requests', async () => {
    stagingPool.freeAllBlocks();
    const buf = dev.memoryPool.allocate(MiB, stream);
    const src = new Float32Array(MiB / 4).fill(2);
    for (let i = 0; i < 200; i++) {
      buf.upload(src, { stream });
      stagingPool.release(await buf.download(Float32Array, { stream }));
    }
    await new Promise((r) => setTimeout(r, 20)); // the upload blocks come back on the poller's next turn
    expect({ used: stagingPool.usedBytes(), total: stagingPool.totalBytes() <= 4 * MiB }).toEqual({ used: 0, total: true });
    buf.close();
  });

  test('upload from and download into kept staging arrays: every element exact, no block lent for either', async () => {
    const n = 1 << 20;
    const xs = stagingPool.allocate(Float32Array, n);
    const result = stagingPool.allocate(Float32Array, n);
    for (let i = 0; i < n; i++) xs[i] = i % 1000;
    const x = dev.memoryPool.allocate(4 * n, stream);
    const y = dev.memoryPool.allocate(4 * n, stream).upload(xs, { stream });
    const blocks = stagingPool.totalBytes();
    x.upload(xs, { stream });
    saxpy.launch({ grid: n / 256, block: 256, stream }, f32(2), x, y, i32(n));
    const back = await y.download(result, { stream });
    let wrong = 0;
    for (let i = 0; i < n; i++) if (result[i] !== 3 * (i % 1000)) wrong++;
    expect({ wrong, same: back === result, blocks: stagingPool.totalBytes() - blocks }).toEqual({ wrong: 0, same: true, blocks: 0 });
    [xs, result].forEach((a) => stagingPool.release(a));
    x.close();
    y.close();
  });

  test('64 downloads at once, again and again: into kept arrays V8 adds no young-generation collections; handed over, it does (external memory)', async () => {
    const bufs = Array.from({ length: 64 }, () => dev.memoryPool.allocate(MiB, stream));
    const kept = bufs.map(() => stagingPool.allocate(Uint8Array, MiB));
    /** Young-generation collections during 30 rounds of `each` on the 64 buffers at once. */
    const minorCollections = async (each: (b: core.DeviceBuffer, i: number) => Promise<unknown>) => {
      let count = 0;
      const observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries())
          if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) count++;
      });
      observer.observe({ entryTypes: ['gc'] });
      for (let round = 0; round < 30; round++) await Promise.all(bufs.map(each));
      await new Promise((r) => setTimeout(r, 50));
      observer.disconnect();
      return count;
    };
    // Each request also makes a small ArrayBuffer (as an HTTP answer does): V8 checks its external memory then.
    const intoKept = await minorCollections(async (b, i) => {
      await b.download(kept[i], { stream });
      return new Float32Array(64);
    });
    const handedOver = await minorCollections(async (b) => {
      const a = await b.download(Uint8Array, { stream });
      const small = new Float32Array(64);
      stagingPool.release(a);
      return small;
    });
    console.log(`service: young-generation collections over 1920 downloads: into kept arrays ${intoKept}, handed over ${handedOver}`);
    expect(handedOver).toBeGreaterThan(3 * intoKept + 10);
    kept.forEach((a) => stagingPool.release(a));
    bufs.forEach((b) => b.close());
  });

  test('examples/gpuService.ts serves 600 requests to itself, every answer right', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join('examples', 'gpuService.ts')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 170_000,
    });
    console.log(r.stdout, r.stderr);
    expect({ status: r.status, pass: /^Result = PASS$/m.test(r.stdout) }).toEqual({ status: 0, pass: true });
  }, 180_000);

  test('npm run bench:service in short mode: C and the service run, every answer right, the table printed', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join('bench', 'service.ts'), '--short', '--seconds', '1', '--concurrency', '16,64'],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 280_000,
      },
    );
    console.log(r.stdout, r.stderr);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\| C, pageable, one thread \| 1 \| [\d,]+ \|/m);
    expect(r.stdout).toMatch(/^\| C, staged, 8 threads, a stream each \| 8 \|/m);
    expect(r.stdout).toMatch(
      /^\| service \(inputs and results in kept staging arrays: upload, saxpy, await download\) \| 64 \| [\d,]+ \|/m,
    );
    expect(r.stdout).toMatch(/^\| 0 wrong results \| 0 \| pass \|$/m);
    expect(r.stdout).toMatch(/^\| every impossible request answered 400, nothing else failed \| (\d+) of \1; 0 other answers \| pass \|$/m);
  }, 300_000);

  afterAll(() => stream?.close());
});
