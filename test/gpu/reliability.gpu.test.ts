// Reliability on a GPU: a thousand waits awaited at once, a process that ends with work in flight,
// and faults: an illegal address (sticky, so in a child process), out of memory (not sticky).
// A library that cannot be found is test/cpu/ffi/loader.test.ts's ("when nothing loads, the error
// lists every path tried"): it needs no GPU.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { core, cudart } from '../../src';
import { launch1d, ok, sampleKernel } from './fixtures/samples';
import { describeGpu } from './helpers';

const root = path.join(__dirname, '..', '..');
const { Device } = core;
const { i32, f32 } = cudart;
const CHILD_TIMEOUT_MS = 60_000;
/** What a crash of the process leaves on stderr. */
const CRASH = /Aborted|terminate called|Segmentation fault|core dumped|FATAL ERROR|Assertion .* failed/;

/** Runs test/gpu/fixtures/<script> in a child Node process under tsx. */
function child(script: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures', script), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
  });
  const timedOut = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  console.log(
    `== fixtures/${[script, ...args].join(' ')}: exit ${r.status}${r.signal ? ` (${r.signal})` : ''}${timedOut ? ' (timed out)' : ''}\n${r.stdout}${r.stderr}`,
  );
  return { status: r.status, signal: r.signal, timedOut, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** The JSON a fixture printed after `RESULT `. */
function result(stdout: string): Record<string, unknown> | null {
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  return line ? JSON.parse(line.slice('RESULT '.length)) : null;
}

/** How many 32-bit words differ (compares bits, so -0 and NaN count as they are). */
function wordMismatches(a: Float32Array, b: Float32Array): number {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let bad = Math.abs(x.length - y.length);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) bad++;
  return bad;
}

describeGpu('reliability on a GPU', () => {
  test('1,000 events and 4 streams awaited at once, with synchronous calls on the JS thread meanwhile: all resolve, in stream order, results right', async () => {
    const STREAMS = 4;
    const EVENTS = 250; // a stream
    const N = 1 << 20;
    // busyScale: a quarter of a second or so on an H100, so that the waits start long before the work ends.
    const BUSY_ITERATIONS = 1 << 23;
    const device = Device.get(0);
    const busy = sampleKernel('busyScale');
    const affine = sampleKernel('affine');
    const input = new Float32Array(N);
    const expected = new Float32Array(N);
    for (let i = 0; i < N; i++) expected[i] = (input[i] = i % 1000) * 2 + EVENTS;
    const streams = Array.from({ length: STREAMS }, () => device.createStream({ nonBlocking: true }));
    const buffers = streams.map((s) => device.allocate(N * 4).copyFrom(input, { stream: s }));
    // Each stream: x * 2 after a long busy loop, then EVENTS times x + 1, an event after each.
    const events = streams.map((s, k) => {
      ok(
        [launch1d(busy, N, [buffers[k].ptr, i32(N), f32(2), f32(1), f32(0), i32(BUSY_ITERATIONS)], s.handle)],
        'cudaLaunchKernel(busyScale)',
      );
      return Array.from({ length: EVENTS }, () => {
        ok([launch1d(affine, N, [buffers[k].ptr, f32(1), f32(1), i32(N)], s.handle)], 'cudaLaunchKernel(affine)');
        return device.createEvent({ timing: false }).record(s);
      });
    });
    const pendingAtStart = events.flat().filter((e) => !e.query()).length;

    let calls = 0;
    let wrongCalls = 0;
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      const [err, dev] = cudart.cudaGetDevice();
      calls++;
      if (err !== cudart.cudaError_t.cudaSuccess || dev !== 0) wrongCalls++;
      setImmediate(spin);
    };
    setImmediate(spin);
    let resolved = 0;
    let outOfOrder = 0;
    const waits = events.flatMap((list) =>
      list.map((e, k) =>
        e.synchronize().then(() => {
          resolved++;
          // The event before this one on its stream must be complete too.
          if (k > 0 && !list[k - 1].query()) outOfOrder++;
        }),
      ),
    );
    const settled = await Promise.allSettled([...waits, ...streams.map((s) => s.synchronize())]);
    spinning = false;

    const wrong = buffers.map((b) => wordMismatches(b.copyTo(new Float32Array(N)), expected));
    for (const r of [...events.flat(), ...buffers, ...streams]) r.close();
    console.log(`1,000 waits: ${pendingAtStart} events pending when the waits began; ${calls} cudaGetDevice calls meanwhile`);
    expect({
      rejected: settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason)),
      resolved,
      outOfOrder,
      wrongCalls,
      wrong,
      workInFlight: pendingAtStart > 0,
      callsMeanwhile: calls > 0,
    }).toEqual({
      rejected: [],
      resolved: STREAMS * EVENTS,
      outOfOrder: 0,
      wrongCalls: 0,
      wrong: streams.map(() => 0),
      workInFlight: true,
      callsMeanwhile: true,
    });
  }, 120_000);

  test(
    'a script that returns with a kernel, an awaited wait and a JS host function in flight: they finish, then it exits 0',
    () => {
      const r = child('exit-with-work.ts', 'return');
      expect({
        status: r.status,
        signal: r.signal,
        timedOut: r.timedOut,
        crashed: CRASH.test(r.stderr),
        lines: r.stdout.trim().split('\n').sort(),
      }).toEqual({
        status: 0,
        signal: null,
        timedOut: false,
        crashed: false,
        lines: ['host function ran', 'queued: kernel running true, host functions pending 1', 'wait resolved'],
      });
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  test(
    'process.exit(0) with a kernel, an awaited wait and a JS host function in flight: exit status 0, no crash',
    () => {
      const r = child('exit-with-work.ts', 'exit');
      expect({ status: r.status, signal: r.signal, timedOut: r.timedOut, crashed: CRASH.test(r.stderr), stdout: r.stdout.trim() }).toEqual({
        status: 0,
        signal: null,
        timedOut: false,
        crashed: false,
        stdout: 'queued: kernel running true, host functions pending 1',
      });
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  test(
    "an illegal address in a kernel: the facade's synchronize returns cudaErrorIllegalAddress (700), and so does every call after it",
    () => {
      const r = child('illegal-address.ts', 'facade');
      const got = result(r.stdout) as { launch: number; sync: number; next: number; last: number } | null;
      expect({ status: r.status, signal: r.signal, timedOut: r.timedOut, crashed: CRASH.test(r.stderr), reported: got !== null }).toEqual({
        status: 0,
        signal: null,
        timedOut: false,
        crashed: false,
        reported: true,
      });
      // The fault is asynchronous: the launch succeeds, the wait (or, at the latest, the next call) reports it.
      expect({ launch: got!.launch, first: got!.sync || got!.next, next: got!.next }).toEqual({ launch: 0, first: 700, next: 700 });
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  test(
    'an illegal address in a kernel: core throws a CudaError "cudaErrorIllegalAddress: …" from the wait and from the next call',
    () => {
      const r = child('illegal-address.ts', 'core');
      type Caught = { isCudaError: boolean; name: string; code: number; message: string } | null;
      const got = result(r.stdout) as { launch: number; sync: Caught; next: Caught } | null;
      expect({ status: r.status, signal: r.signal, timedOut: r.timedOut, crashed: CRASH.test(r.stderr), reported: got !== null }).toEqual({
        status: 0,
        signal: null,
        timedOut: false,
        crashed: false,
        reported: true,
      });
      const asCudaError = { isCudaError: true, name: 'CudaError', code: 700, message: expect.stringMatching(/^cudaErrorIllegalAddress: /) };
      expect(got!.launch).toBe(0);
      expect(got!.sync ?? got!.next).toEqual(asCudaError);
      expect(got!.next).toEqual(asCudaError);
    },
    CHILD_TIMEOUT_MS + 10_000,
  );

  test('out of memory: allocate(2 ** 50) throws CudaError cudaErrorMemoryAllocation (2); a small allocation and copies work after it', () => {
    const device = Device.get(0);
    let err: unknown;
    try {
      device.allocate(2 ** 50).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(core.CudaError);
    const e = err as core.CudaError;
    expect({ code: e.code, codeName: e.codeName, message: e.message }).toEqual({
      code: cudart.cudaError_t.cudaErrorMemoryAllocation,
      codeName: 'cudaErrorMemoryAllocation',
      message: expect.stringMatching(/^cudaErrorMemoryAllocation: /),
    });
    const buf = device.allocate(1 << 16);
    const src = Uint32Array.from({ length: 1 << 14 }, (_, i) => i * 7 + 1);
    buf.copyFrom(src);
    const back = buf.copyTo(new Uint32Array(1 << 14));
    buf.close();
    expect(Buffer.compare(Buffer.from(back.buffer), Buffer.from(src.buffer))).toBe(0);
  });
});
