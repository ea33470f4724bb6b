// The core layer on a GPU: devices, streams, events, device and pinned memory, lifetimes.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core, cuda, cudart } from '../../src';
import { describeGpu, gpu } from './helpers';

const { count } = gpu;
const { Device, HostBuffer } = core;

describeGpu('core on a GPU', () => {
  test('devices: count, all, one object each, properties as the runtime gives them', () => {
    expect(Device.count()).toBe(count);
    expect(Device.all().length).toBe(count);
    const d = Device.get(0);
    expect(Device.get(0)).toBe(d);
    const [, p] = cudart.cudaGetDeviceProperties(0);
    expect([d.name, d.computeCapability]).toEqual([p!.name, [p!.major, p!.minor]]);
    expect(d.uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(d.attribute('MultiProcessorCount')).toBe(p!.multiProcessorCount);
    expect(d.attribute('cudaDevAttrWarpSize')).toBe(32);
    const m = d.memoryInfo();
    expect(m.free).toBeLessThanOrEqual(m.total);
    expect(() => Device.get(count!)).toThrow(/no device/);
  });

  test('the primary context is the one the runtime uses, the same the driver retains', () => {
    const d = Device.get(0);
    const ctx = d.primaryContext;
    const [err, retained] = cuda.cuDevicePrimaryCtxRetain(0);
    expect([err, retained]).toEqual([cuda.CUresult.CUDA_SUCCESS, ctx]);
    cuda.cuDevicePrimaryCtxRelease(0);
  });

  test('a stream, events and timing; waits that keep the event loop free', async () => {
    // (Jest's sandbox has no Symbol.dispose, so these tests close explicitly rather than with `using`.)
    const d = Device.get(0);
    const s = d.createStream({ nonBlocking: true });
    const start = d.createEvent();
    const stop = d.createEvent();
    const buf = d.allocate(256 << 20);
    const other = d.allocate(256 << 20);
    start.record(s);
    other.copyFrom(buf, { stream: s });
    stop.record(s);
    await stop.synchronize();
    expect(stop.query()).toBe(true);
    expect(stop.elapsedSince(start)).toBeGreaterThan(0);
    await s.synchronize();
    expect(s.query()).toBe(true);
    const order: string[] = [];
    s.onComplete(() => order.push('first'));
    const v = await s.hostCallback(() => (order.push('second'), 42));
    expect([v, order]).toEqual([42, ['first', 'second']]);
    for (const r of [other, buf, stop, start, s]) r.close();
  });

  test('device memory: copies both ways, slices as views, bounds checked, fill', () => {
    const d = Device.get(0);
    const buf = d.allocate(4096);
    const src = Uint32Array.from({ length: 1024 }, (_, i) => i * 3);
    buf.copyFrom(src);
    const back = buf.copyTo(new Uint32Array(1024));
    expect(back).toEqual(src);
    const part = buf.slice(1024, 8);
    expect(Array.from(part.copyTo(new Uint32Array(2)))).toEqual([768, 771]);
    expect(() => buf.slice(4000, 200)).toThrow(/200 bytes from 4000 go past the buffer's 4096 bytes/);
    expect(() => buf.copyFrom(new Uint8Array(5000))).toThrow(/the source has 5000 bytes, more than the buffer's 4096/);
    part.fill(0xff);
    expect(Array.from(buf.copyTo(new Uint32Array(258)).subarray(255, 258))).toEqual([765, 0xffffffff, 0xffffffff]);
    buf.close();
  });

  test('use after close throws instead of reaching freed memory; close twice is fine; a view dies with its allocation', () => {
    const d = Device.get(0);
    const buf = d.allocate(64);
    const view = buf.slice(0, 16);
    buf.close();
    buf.close();
    expect(buf.isClosed).toBe(true);
    expect(() => buf.ptr).toThrow('DeviceBuffer.ptr: the DeviceBuffer was closed');
    expect(() => view.copyTo(new Uint8Array(16))).toThrow(/the allocation this view belongs to was closed/);
    const s = d.createStream();
    s.close();
    expect(() => s.query()).toThrow('Stream.query: the Stream was closed');
  });

  test('`using` closes at the end of the block (in plain Node; the test sandbox lacks Symbol.dispose)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'core-using-'));
    const file = path.join(dir, 'using.ts');
    fs.writeFileSync(
      file,
      `
      import { core } from ${JSON.stringify(path.join(__dirname, '..', '..', 'src'))};
      let b: InstanceType<typeof core.DeviceBuffer> | undefined;
      { using buf = core.Device.get(0).allocate(16); b = buf; }
      console.log(b!.isClosed);`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], {
      encoding: 'utf8',
      cwd: path.join(__dirname, '..', '..'),
      timeout: 60_000,
    });
    fs.rmSync(dir, { recursive: true, force: true });
    expect([r.stderr, r.stdout.trim()]).toEqual(['', 'true']);
  }, 60_000);

  test('pinned and mapped host memory seen from JS, copied through the device', () => {
    const d = Device.get(0);
    const host = new HostBuffer(1 << 20, { mapped: true });
    const f = host.as(Float32Array);
    f.forEach((_, i) => (f[i] = i / 2));
    expect(host.devicePtr).not.toBeNull();
    const buf = d.allocate(1 << 20);
    buf.copyFrom(host.bytes);
    const back = buf.copyTo(new Float32Array(1 << 18));
    expect(back.every((x, i) => x === i / 2)).toBe(true);
    buf.close();
    host.close();
  });

  test('buffers nobody closes are freed by the garbage collector', () => {
    const r = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        '-e',
        `
      const { core, cudart } = require('./src');
      const d = core.Device.get(0);
      d.allocate(1);
      const before = d.memoryInfo().free;
      for (let i = 0; i < 64; i++) d.allocate(64 << 20);
      const during = d.memoryInfo().free;
      (async () => {
        for (let i = 0; i < 10; i++) { global.gc(); await new Promise((r) => setTimeout(r, 20)); }
        const after = d.memoryInfo().free;
        console.log(JSON.stringify({ took: before - during, back: after - during }));
      })();`,
      ],
      { encoding: 'utf8', cwd: path.join(__dirname, '..', '..'), timeout: 60_000 },
    );
    expect(r.stderr).toBe('');
    const { took, back } = JSON.parse(r.stdout);
    expect(took).toBeGreaterThanOrEqual(64 * (64 << 20));
    expect(back).toBeGreaterThanOrEqual(took * 0.9);
  }, 60_000);
});
