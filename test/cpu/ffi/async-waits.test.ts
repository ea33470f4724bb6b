// Awaited waits hold no thread of libuv's pool: against a fake libcudart whose streams and events
// stay not ready (cudaErrorNotReady) until a deadline, and whose blocking calls sleep until it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cudart } from '../../../src';
import { FAKE_CONTROLS, removeFakeCudart, runOnFake } from '../helpers/fake-cudart';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-waits-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const lib = path.join(tmp, 'libcudart-timed.so');

beforeAll(() => {
  const src = path.join(tmp, 'timed.c');
  fs.writeFileSync(
    src,
    String.raw`
    #include <pthread.h>
    #include <stdlib.h>
    #include <time.h>
    #include <unistd.h>
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
    /* each stream handle: busy until a deadline, or failing with an error */
    struct st { void *h; double until; int err; } table[64];
    static struct st *find(void *h) {
      pthread_mutex_lock(&mu);
      struct st *t = 0;
      for (int i = 0; i < 64 && !t; i++) if (table[i].h == h || !table[i].h) { t = &table[i]; t->h = h; }
      pthread_mutex_unlock(&mu);
      return t;
    }
    struct ev { double until; struct st *on; int dev; };
    /* streams from handle 0x5000 up are of device 1, the others of device 0; an event records only into a stream of its device */
    static int current;
    static int dev_of(void *s) { return (unsigned long)s >= 0x5000 && (unsigned long)s < 0xde71ce; }
    static int queries, events_live, syncs; /* syncs: blocking waits, i.e. synchronize called before the work was done */
    void fake_delay(void *s, int ms) { find(s)->until = now() + ms / 1000.0; }
    void fake_fail(void *s, int err) { find(s)->err = err; }
    int fake_queries(void) { return queries; }
    int fake_events_live(void) { return events_live; }
    int fake_syncs(void) { return syncs; }
    int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
    int cudaGetDevice(int *d) { *d = current; return 0; }
    int cudaSetDevice(int d) { current = d; return 0; }
    int cudaStreamGetDevice(void *s, int *d) { *d = dev_of(s); return 0; }
    int cudaStreamQuery(void *s) { struct st *t = find(s); queries++; return t->err ? t->err : now() < t->until ? 600 : 0; }
    int cudaStreamSynchronize(void *s) { struct st *t = find(s); if (now() < t->until) syncs++; while (now() < t->until) usleep(1000); return t->err; }
    int cudaEventCreateWithFlags(void **e, unsigned f) { *e = calloc(1, sizeof(struct ev)); ((struct ev *)*e)->dev = current; events_live++; return 0; }
    int cudaEventRecord(void *e, void *s) { struct st *t = find(s); struct ev *v = e; if ((unsigned long)s > 2 && v->dev != dev_of(s)) return 400; v->until = t->until; v->on = t; return 0; }
    int cudaEventQuery(void *e) { struct ev *v = e; queries++; return v->on && v->on->err ? v->on->err : now() < v->until ? 600 : 0; }
    int cudaEventSynchronize(void *e) { struct ev *v = e; if (now() < v->until) syncs++; while (now() < v->until) usleep(1000); return v->on ? v->on->err : 0; }
    int cudaEventDestroy(void *e) { free(e); events_live--; return 0; }
    int cudaMemcpy(void *d, const void *s, size_t n, int k) { usleep(300000); return 0; }
    /* the driver's side of a device wait: the device's work is the stream entry of handle 0xde71ce */
    int cudaFree(void *p) { return 0; }
    int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
    int cuCtxGetCurrent(void **c) { *c = (void *)0xc7; return 0; }
    int cuCtxRecordEvent(void *c, void *e) { return cudaEventRecord(e, (void *)0xde71ce); }
    int cuCtxSynchronize_v2(void *c) { syncs++; return 0; }`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-pthread', '-o', lib, src]);
});

/** Runs `body` (an async function body) in a fresh Node on the fake; returns what it printed, a JSON value per line. */
function onFake(body: string): unknown[] {
  const script = `
    const { cudart } = require('./src');
    const fs = require('node:fs');
    const K = require('koffi').load(process.env.CUDA_BINDINGS_CUDART);
    const fake = { delay: K.func('void fake_delay(uint64_t, int)'), fail: K.func('void fake_fail(uint64_t, int)'),
      queries: K.func('int fake_queries(void)'), eventsLive: K.func('int fake_events_live(void)'), syncs: K.func('int fake_syncs(void)') };
    const out = (v) => console.log(JSON.stringify(v));
    const settle = (p) => p.then((v) => ({ ok: v }), (e) => ({ name: e.name, message: e.message }));
    (async () => { ${body} })().catch((e) => { out({ crashed: String(e.stack) }); process.exitCode = 1; });`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib, CUDA_BINDINGS_CUDA: lib, UV_THREADPOOL_SIZE: '4' },
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`the script failed (${r.status}): ${r.stdout}${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

test('8 awaited 1-second waits hold no pool thread: an fs.promises.readFile meanwhile takes well under 200 ms', () => {
  const [result] = onFake(`
    const streams = Array.from({ length: 8 }, (_, i) => cudart.cudaStream_t(0x1000 + i));
    const events = [];
    const t0 = performance.now(); // before the work is queued (see the test of another device's stream)
    for (const s of streams.slice(4)) {
      fake.delay(s, 1000);
      const [, ev] = cudart.cudaEventCreateWithFlags(2);
      cudart.cudaEventRecord(ev, s);
      events.push(ev);
    }
    for (const s of streams.slice(0, 4)) fake.delay(s, 1000);
    const waits = [...streams.slice(0, 4).map((s) => cudart.async.cudaStreamSynchronize(s)), ...events.map((e) => cudart.async.cudaEventSynchronize(e))];
    await new Promise((r) => setTimeout(r, 50));
    const r0 = performance.now();
    await fs.promises.readFile('package.json');
    const readMs = performance.now() - r0;
    const statuses = await Promise.all(waits);
    out({ readMs, waitedMs: performance.now() - t0, statuses, syncs: fake.syncs(), eventsLeft: fake.eventsLive() - 4 });`);
  const r = result as { readMs: number; waitedMs: number; statuses: number[][]; syncs: number; eventsLeft: number };
  expect(r.readMs).toBeLessThan(200);
  expect(r.waitedMs).toBeGreaterThanOrEqual(990);
  expect(r.statuses).toEqual(Array(8).fill([0]));
  // No blocking call was made, and the events pinning the streams' work were destroyed.
  expect(r.syncs).toBe(0);
  expect(r.eventsLeft).toBe(0);
});

test('a short wait resolves within milliseconds, and a long one costs about one query per millisecond', () => {
  const [short, long] = onFake(`
    const s = cudart.cudaStream_t(0x2000);
    fake.delay(s, 2);
    let t0 = performance.now();
    await cudart.async.cudaStreamSynchronize(s);
    out(performance.now() - t0);
    fake.delay(s, 300);
    const q0 = fake.queries();
    await cudart.async.cudaStreamSynchronize(s);
    out(fake.queries() - q0);`) as number[];
  expect(short).toBeLessThan(50);
  expect(long).toBeGreaterThan(10);
  expect(long).toBeLessThan(2000);
});

test("a stream of another device is pinned by an event made on its device; the caller's device is restored", () => {
  const [r] = onFake(`
    const s = cudart.cudaStream_t(0x5000);
    // t0 before the work is queued: a stall of this process between the two would otherwise be
    // taken off the wait (CI measured 87.7 ms of a 100 ms one).
    const t0 = performance.now();
    fake.delay(s, 100);
    const status = await cudart.async.cudaStreamSynchronize(s);
    out({ status, ms: performance.now() - t0, device: cudart.cudaGetDevice(), eventsLive: fake.eventsLive() });`) as Record<
    string,
    unknown
  >[];
  expect(r).toMatchObject({ status: [0], device: [0, 0], eventsLive: 0 });
  expect(r.ms).toBeGreaterThanOrEqual(90);
});

test('a device wait polls an event recorded for its context (cuCtxRecordEvent), not cuCtxSynchronize on the pool', () => {
  const [waited, timedOut] = onFake(`
    const device = 0xde71ce;
    const t0 = performance.now(); // before the work is queued, as above
    fake.delay(device, 300);
    const status = await cudart.async.cudaDeviceSynchronize();
    out({ status, ms: performance.now() - t0, syncs: fake.syncs(), eventsLive: fake.eventsLive() });
    fake.delay(device, 5000);
    out(await settle(cudart.async.cudaDeviceSynchronize({ timeout: 20 })));`) as Record<string, unknown>[];
  expect(waited).toMatchObject({ status: [0], syncs: 0, eventsLive: 0 });
  expect(waited.ms).toBeGreaterThanOrEqual(290);
  expect(timedOut).toEqual({
    name: 'TimeoutError',
    message: 'async.cudaDeviceSynchronize: timed out after 20 ms; the GPU work was not cancelled',
  });
});

test('signal and timeout: abort and timeout reject naming the function; an aborted signal rejects at once; the pinning event is released', () => {
  const [aborted, timedOut, signalTimeout, already, copy, after] = onFake(`
    const s = cudart.cudaStream_t(0x3000);
    fake.delay(s, 5000);
    const live = fake.eventsLive();
    const ac = new AbortController();
    let t0 = performance.now();
    setTimeout(() => ac.abort(), 30);
    out({ ...(await settle(cudart.async.cudaStreamSynchronize(s, { signal: ac.signal }))), ms: performance.now() - t0 });
    const [, ev] = cudart.cudaEventCreateWithFlags(2);
    cudart.cudaEventRecord(ev, s);
    t0 = performance.now();
    out({ ...(await settle(cudart.async.cudaEventSynchronize(ev, { timeout: 40 }))), ms: performance.now() - t0 });
    out(await settle(cudart.async.cudaStreamSynchronize(s, { signal: AbortSignal.timeout(20) })));
    const q0 = fake.queries();
    const p = cudart.async.cudaStreamSynchronize(s, { signal: AbortSignal.abort() });
    out({ ...(await settle(p)), queries: fake.queries() - q0 });
    t0 = performance.now();
    out({ ...(await settle(cudart.async.cudaMemcpy(new Uint8Array(8), new Uint8Array(8), 8, 0, { timeout: 20 }))), ms: performance.now() - t0 });
    cudart.cudaEventDestroy(ev);
    out({ eventsLeft: fake.eventsLive() - live });`) as Record<string, unknown>[];
  expect(aborted).toMatchObject({ name: 'AbortError', message: 'async.cudaStreamSynchronize: aborted; the GPU work was not cancelled' });
  expect(aborted.ms).toBeLessThan(1000);
  expect(timedOut).toMatchObject({
    name: 'TimeoutError',
    message: 'async.cudaEventSynchronize: timed out after 40 ms; the GPU work was not cancelled',
  });
  expect(timedOut.ms).toBeLessThan(1000);
  expect(signalTimeout).toMatchObject({
    name: 'TimeoutError',
    message: 'async.cudaStreamSynchronize: timed out (signal); the GPU work was not cancelled',
  });
  expect(already).toEqual({
    name: 'AbortError',
    message: 'async.cudaStreamSynchronize: aborted; the GPU work was not cancelled',
    queries: 0,
  });
  // A copy on the pool gives up waiting; the copy itself runs to its end.
  expect(copy).toMatchObject({ name: 'TimeoutError', message: 'async.cudaMemcpy: timed out after 20 ms; the GPU work was not cancelled' });
  expect(copy.ms).toBeLessThan(250);
  expect(after).toEqual({ eventsLeft: 0 });
});

test('errors from the queries come back as the facade tuple: at once, and during the wait', () => {
  const [atOnce, during, event] = onFake(`
    const a = cudart.cudaStream_t(0x4000), b = cudart.cudaStream_t(0x4001);
    fake.fail(a, 700);
    out(await cudart.async.cudaStreamSynchronize(a));
    fake.delay(b, 5000);
    setTimeout(() => fake.fail(b, 719), 20);
    out(await cudart.async.cudaStreamSynchronize(b));
    const [, ev] = cudart.cudaEventCreateWithFlags(2);
    cudart.cudaEventRecord(ev, a);
    out(await cudart.async.cudaEventSynchronize(ev));`);
  expect(atOnce).toEqual([cudart.cudaError_t.cudaErrorIllegalAddress]);
  // The stream failed after its work was pinned by an event: the event reports it as CUDA's would.
  expect(during).toEqual([cudart.cudaError_t.cudaErrorLaunchFailure]);
  expect(event).toEqual([cudart.cudaError_t.cudaErrorIllegalAddress]);
});

test('options are checked: unknown keys, a signal that is not an AbortSignal, a negative timeout', async () => {
  const s = cudart.cudaStream_t(0x10);
  await expect(cudart.async.cudaStreamSynchronize(s, { timout: 5 } as never)).rejects.toThrow(
    new TypeError("async.cudaStreamSynchronize: unknown option 'timout' (the options are signal, timeout)"),
  );
  await expect(cudart.async.cudaEventSynchronize(cudart.cudaEvent_t(0x20), { signal: {} } as never)).rejects.toThrow(
    new TypeError("async.cudaEventSynchronize: option 'signal' must be an AbortSignal, got an object (Object)"),
  );
  await expect(cudart.async.cudaDeviceSynchronize({ timeout: -1 })).rejects.toThrow(
    new RangeError("async.cudaDeviceSynchronize: option 'timeout' must be a non-negative number of milliseconds, got -1"),
  );
  await expect(cudart.async.memcpyHost(new Uint8Array(4), new Uint8Array(4), 4, 5 as never)).rejects.toThrow(
    new TypeError("async.memcpyHost: parameter 'options' must be an object such as { signal, timeout }, got 5"),
  );
});

describe("core's awaited forms", () => {
  afterAll(removeFakeCudart);

  test('Stream/Event.synchronize poll (a JS host function runs meanwhile), give up with the method named, and check their options', () => {
    const r = runOnFake(`${FAKE_CONTROLS}
      const { core } = require('./src');
      const settle = (p) => p.then(() => 'ok', (e) => e.name + ': ' + e.message);
      (async () => {
        const dev = core.Device.get(0);
        const s = dev.createStream();
        const ev = dev.createEvent();
        fake.setBusy(s.handle, true);
        ev.record(s);
        console.log(await settle(s.synchronize({ timeout: 30 })));
        console.log(await settle(ev.synchronize({ signal: AbortSignal.abort() })));
        console.log(await settle(s.synchronize({ timeOut: 30 })));
        let ran = false;
        s.onComplete(() => { ran = true; });
        const waiting = s.synchronize();
        setTimeout(() => fake.setBusy(s.handle, false), 30);
        console.log(await settle(waiting), ran, await settle(ev.synchronize()));
        s.close();
      })();`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual([
      'TimeoutError: Stream.synchronize: timed out after 30 ms; the GPU work was not cancelled',
      'AbortError: Event.synchronize: aborted; the GPU work was not cancelled',
      "TypeError: Stream.synchronize: unknown option 'timeOut' (the options are signal, timeout)",
      'ok true ok',
    ]);
  });
});
