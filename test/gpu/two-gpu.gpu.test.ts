// Two GPUs: peer access both ways, 64 MiB peer copies each way checked word for word, a kernel on
// GPU 1 reading GPU 0's memory, and IPC of memory and of an event to a child process on GPU 1.
// Skipped, saying why, with fewer than two devices or without peer access between 0 and 1.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { core, cudart } from '../../src';
import { fillPattern, patternMismatches } from './helpers';
import { launch1d, ok, probe, sampleKernel } from './fixtures/samples';

const root = path.join(__dirname, '..', '..');
const { Device } = core;
const BYTES = 64 << 20;
const WORDS = BYTES / 4;
const CHILD_TIMEOUT_MS = 120_000;

function twoGpus(): string | null {
  const { count, reason } = probe();
  if (reason !== null) return reason;
  if (count < 2) return `needs two devices; this machine has ${count}`;
  const [, ab] = cudart.cudaDeviceCanAccessPeer(0, 1);
  const [, ba] = cudart.cudaDeviceCanAccessPeer(1, 0);
  if (!ab || !ba) return `devices 0 and 1 cannot access each other's memory (0 -> 1: ${ab}, 1 -> 0: ${ba})`;
  return null;
}

const why = twoGpus();

/** Copies a device buffer back with its device current and counts the words off the pattern. */
function mismatches(buf: core.DeviceBuffer, seed: number): number {
  buf.device.makeCurrent();
  return patternMismatches(buf.copyTo(new Uint32Array(buf.size / 4)), seed);
}

/** Closes buffers with their own device current. */
function closeAll(...bufs: core.DeviceBuffer[]): void {
  for (const b of bufs) {
    b.device.makeCurrent();
    b.close();
  }
}

(why === null ? describe : describe.skip)(why === null ? 'two GPUs' : `two GPUs: skipped, ${why}`, () => {
  const ipcEvents = why === null && Device.get(0).attribute('IpcEventSupport') === 1 && Device.get(1).attribute('IpcEventSupport') === 1;

  test('peer access: each device can access the other; enabling it both ways works (twice is fine)', () => {
    const [d0, d1] = [Device.get(0), Device.get(1)];
    expect([d0.canAccessPeer(d1), d1.canAccessPeer(d0)]).toEqual([true, true]);
    for (let i = 0; i < 2; i++) {
      d0.enablePeerAccess(d1);
      d1.enablePeerAccess(d0);
    }
    expect(cudart.cudaGetLastError()).toEqual([cudart.cudaError_t.cudaSuccess]);
  });

  test('cudaMemcpyPeer of 64 MiB each way: every word arrives', () => {
    const [d0, d1] = [Device.get(0), Device.get(1)];
    const b0 = d0.allocate(BYTES);
    const b1 = d1.allocate(BYTES);
    const host = new Uint32Array(WORDS);
    fillPattern(host, 0x1234);
    d0.makeCurrent();
    b0.copyFrom(host);
    ok(cudart.cudaMemcpyPeer(b1.ptr, 1, b0.ptr, 0, BYTES), 'cudaMemcpyPeer(0 -> 1)');
    ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
    const oneGot = mismatches(b1, 0x1234);
    fillPattern(host, 0xabcd);
    d1.makeCurrent();
    b1.copyFrom(host);
    ok(cudart.cudaMemcpyPeer(b0.ptr, 0, b1.ptr, 1, BYTES), 'cudaMemcpyPeer(1 -> 0)');
    ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
    const zeroGot = mismatches(b0, 0xabcd);
    closeAll(b0, b1);
    expect({ oneGot, zeroGot }).toEqual({ oneGot: 0, zeroGot: 0 });
  }, 60_000);

  test("a kernel on GPU 1 reads GPU 0's memory directly (scaleInto): every float right", () => {
    const [d0, d1] = [Device.get(0), Device.get(1)];
    d1.enablePeerAccess(d0);
    const src = new Float32Array(WORDS);
    const expected = new Float32Array(WORDS);
    for (let i = 0; i < WORDS; i++) expected[i] = 2 * (src[i] = (i % 4096) - 2048);
    const b0 = d0.allocate(BYTES).copyFrom(src);
    const b1 = d1.allocate(BYTES);
    d1.makeCurrent();
    ok(
      [launch1d(sampleKernel('scaleInto'), WORDS, [b1.ptr, b0.ptr, cudart.f32(2), cudart.i32(WORDS)], null)],
      'cudaLaunchKernel(scaleInto) on GPU 1',
    );
    ok(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize on GPU 1');
    const got = b1.copyTo(new Float32Array(WORDS));
    closeAll(b0, b1);
    expect(Buffer.compare(Buffer.from(got.buffer), Buffer.from(expected.buffer))).toBe(0);
  }, 60_000);

  (ipcEvents ? test : test.skip)(
    `IPC${ipcEvents ? '' : ' (skipped: no cudaDevAttrIpcEventSupport)'}: a child on GPU 1 waits on the parent's event, reads the parent's memory and writes its own pattern`,
    async () => {
      const d0 = Device.get(0).makeCurrent();
      const PARENT = 0x5a5a;
      const CHILD = 0xa5a5;
      const stream = d0.createStream({ nonBlocking: true });
      const mem = d0.allocate(BYTES);
      const host = new Uint32Array(WORDS);
      fillPattern(host, PARENT);
      const [event] = ok(
        cudart.cudaEventCreateWithFlags(cudart.cudaEventInterprocess | cudart.cudaEventDisableTiming),
        'cudaEventCreateWithFlags(interprocess)',
      );
      try {
        // The child waits for this event on its own stream: the copy may still be under way when it starts.
        mem.copyFrom(host, { stream });
        ok(cudart.cudaEventRecord(event, stream.handle), 'cudaEventRecord');
        const [memHandle] = ok(cudart.cudaIpcGetMemHandle(mem.ptr), 'cudaIpcGetMemHandle');
        const [eventHandle] = ok(cudart.cudaIpcGetEventHandle(event), 'cudaIpcGetEventHandle');
        const hex = (h: { reserved: Uint8Array }) => Buffer.from(h.reserved).toString('hex');
        const r = spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            path.join(__dirname, 'fixtures', 'ipc-peer-child.ts'),
            '1',
            hex(memHandle),
            hex(eventHandle),
            String(BYTES),
            String(PARENT),
            String(CHILD),
          ],
          {
            cwd: root,
            encoding: 'utf8',
            timeout: CHILD_TIMEOUT_MS,
          },
        );
        console.log(`== fixtures/ipc-peer-child.ts: exit ${r.status}${r.signal ? ` (${r.signal})` : ''}\n${r.stdout}${r.stderr}`);
        const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('RESULT '));
        expect({ status: r.status, signal: r.signal, error: r.error?.message ?? null }).toEqual({ status: 0, signal: null, error: null });
        expect(JSON.parse(line!.slice('RESULT '.length))).toMatchObject({ device: 1, parentMismatches: 0, wrote: BYTES });

        // The child recorded the event after its write: the copy back waits for it.
        ok(cudart.cudaStreamWaitEvent(stream.handle, event, 0), 'cudaStreamWaitEvent');
        host.fill(0);
        mem.copyTo(host, { stream });
        await stream.synchronize();
        expect(patternMismatches(host, CHILD)).toBe(0);
      } finally {
        cudart.cudaEventDestroy(event);
        mem.close();
        stream.close();
      }
    },
    CHILD_TIMEOUT_MS + 30_000,
  );
});
