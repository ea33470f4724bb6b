// JS host functions, against a fake libcudart that calls them from its own thread as CUDA does.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CUDART_VERSION } from '../../../src/runtime/constants.gen';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-hostfn-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const lib = path.join(tmp, 'libcudart-hostfn.so');

beforeAll(() => {
  const src = path.join(tmp, 'h.c');
  // Like CUDA, one thread of the library runs the host functions, in order.
  fs.writeFileSync(
    src,
    `
    #include <pthread.h>
    #include <unistd.h>
    #include <stdlib.h>
    typedef void (*hostfn)(void *);
    typedef void (*streamcb)(void *, int, void *);
    struct job { hostfn f; streamcb cb; void *stream; void *user; struct job *next; };
    static struct job *head, *tail;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    static int started;
    static void *running; /* the stream of the job being run */
    static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
    static int queued_on(void *s) { int n = running == s; for (struct job *j = head; j; j = j->next) n += j->stream == s; return n; }
    static void *worker(void *p) {
      for (;;) {
        pthread_mutex_lock(&mu);
        while (!head) pthread_cond_wait(&cv, &mu);
        struct job *j = head; head = j->next; if (!head) tail = 0;
        running = j->stream;
        pthread_mutex_unlock(&mu);
        if (j->f) j->f(j->user); else j->cb(j->stream, 0, j->user);
        free(j);
        pthread_mutex_lock(&mu);
        running = 0;
        pthread_cond_broadcast(&idle);
        pthread_mutex_unlock(&mu);
      }
      return 0;
    }
    static void start(struct job *j) {
      pthread_mutex_lock(&mu);
      if (!started) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_detach(t); started = 1; usleep(1000); }
      if (tail) tail->next = j; else head = j;
      tail = j;
      pthread_cond_signal(&cv);
      pthread_mutex_unlock(&mu);
    }
    int cudaRuntimeGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }
    int cudaLaunchHostFunc(void *s, hostfn f, void *u) { if (!s) return 400; struct job *j = calloc(1, sizeof *j); j->f = f; j->stream = s; j->user = u; start(j); return 0; }
    int cudaStreamAddCallback(void *s, streamcb cb, void *u, unsigned flags) { struct job *j = calloc(1, sizeof *j); j->cb = cb; j->stream = s; j->user = u; start(j); return 0; }
    /* Like CUDA, a synchronize waits until the host functions queued on the stream before it have run. */
    int cudaStreamSynchronize(void *s) { pthread_mutex_lock(&mu); while (queued_on(s)) pthread_cond_wait(&idle, &mu); pthread_mutex_unlock(&mu); return 0; }
    int cudaDeviceSynchronize(void) { return 0; }
    int cudaStreamIsCapturing(void *s, int *status) { *status = 0; return 0; }`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-pthread', '-o', lib, src]);
});

// The timeout only guards against a hang: on a loaded machine starting tsx alone took over 20 s.
function node(script: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib },
    timeout: 180_000,
  });
}

test('a JS host function runs on the JS thread with its user data, and the process waits for it', () => {
  const r = node(`
    const { cudart } = require('./src');
    const { isMainThread } = require('worker_threads');
    const s = cudart.cudaStream_t(0x10);
    console.log(JSON.stringify(cudart.cudaLaunchHostFunc(s, (u) => console.log('ran', isMainThread, String(u)), 0x1234n)));
    console.log('pending', cudart.pendingHostFunctions());`);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout.trim().split('\n')).toEqual(['[0]', 'pending 1', 'ran true 4660']);
});

test('a stream callback gets the stream and the status', () => {
  const r = node(`
    const { cudart } = require('./src');
    cudart.cudaStreamAddCallback(cudart.cudaStream_t(0x20), (s, status, u) => console.log(String(s), status, String(u)), 0x99n, 0);`);
  expect([r.status, r.stdout.trim()]).toEqual([0, '32 0 153']);
});

test('an exception in a host function is reported and the process goes on', () => {
  const r = node(`
    const { cudart } = require('./src');
    cudart.hostCallbacks.on('error', (e, d) => console.log('caught', e.message, d.where));
    cudart.cudaLaunchHostFunc(cudart.cudaStream_t(1n << 4n), () => { throw new Error('boom'); }, null);
    cudart.cudaLaunchHostFunc(cudart.cudaStream_t(1n << 5n), () => console.log('second ran'), null);`);
  expect(r.status).toBe(0);
  expect(r.stdout.trim().split('\n').sort()).toEqual(['caught boom cudaLaunchHostFunc', 'second ran']);
});

test('without a listener the exception is printed to stderr, not thrown', () => {
  const r = node(`
    const { cudart } = require('./src');
    cudart.cudaLaunchHostFunc(cudart.cudaStream_t(0x10), () => { throw new Error('boom'); }, null);`);
  expect(r.status).toBe(0);
  expect(r.stderr).toMatch(/^cuda-bindings: a host function passed to cudaLaunchHostFunc threw: Error: boom/);
});

test('a blocking wait with a host function pending is refused instead of deadlocking', () => {
  const r = node(`
    const { cudart } = require('./src');
    const s = cudart.cudaStream_t(0x10);
    cudart.cudaLaunchHostFunc(s, () => console.log('ran'), null);
    for (const f of [() => cudart.cudaStreamSynchronize(s), () => cudart.cudaDeviceSynchronize()]) {
      try { f(); console.log('not refused'); } catch (e) { console.log(e.message); }
    }
    console.log(JSON.stringify(cudart.cudaStreamSynchronize(cudart.cudaStream_t(0x30))));`);
  expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
  const lines = r.stdout.trim().split('\n');
  expect(lines[0]).toBe(
    'cudaStreamSynchronize: 1 JS host function is still pending, and they run on this thread: a blocking wait here would never return. Await the promise form instead (cudart.async.cudaStreamSynchronize and the like).',
  );
  expect(lines[1]).toMatch(/^cudaDeviceSynchronize: 1 JS host function is still pending/);
  expect(lines.slice(2)).toEqual(['[0]', 'ran']);
});

test('10,000 host functions in a row all run, through one registered trampoline', () => {
  const r = node(`
    const { cudart } = require('./src');
    const koffi = require('koffi');
    let n = 0;
    const s = cudart.cudaStream_t(0x10);
    for (let i = 0; i < 10000; i++) if (cudart.cudaLaunchHostFunc(s, () => n++, null)[0] !== 0) throw new Error('launch');
    const t = setInterval(() => { if (n === 10000) { clearInterval(t); setImmediate(() => setImmediate(() => console.log(n, cudart.pendingHostFunctions(), koffi.stats().callbacks))); } }, 10);`);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe('10000 0 1');
}, 30_000);

test('a failed launch forgets its callback at once', () => {
  const r = node(`
    const { cudart } = require('./src');
    const koffi = require('koffi');
    console.log(JSON.stringify(cudart.cudaLaunchHostFunc(null, () => {}, null)), cudart.pendingHostFunctions());
    setTimeout(() => console.log(koffi.stats().callbacks), 5);`);
  expect(r.stdout.trim().split('\n')).toEqual(['[400] 0', '1']);
});

test('frees that wait for the device are held back while a host function is pending', () => {
  const r = node(`
    const { cudart } = require('./src');
    const HC = require('./src/ffi/host-callbacks');
    const order = [];
    cudart.cudaLaunchHostFunc(cudart.cudaStream_t(0x10), () => order.push('callback'), null);
    HC.whenNoHostFunctionsPending(() => { order.push('free'); console.log(order.join(',')); });
    order.push('after');`);
  expect(r.stdout.trim()).toBe('after,callback,free');
});

test('process.exit with a host function pending and a wait for it on the thread pool exits at once with its code', () => {
  // Node's exit joins the thread pool, where the wait is blocked until the host function runs on the
  // JS thread, which is exiting: without the library's exit guard this never ends.
  const r = node(`
    const { cudart } = require('./src');
    const s = cudart.cudaStream_t(0x10);
    cudart.cudaLaunchHostFunc(s, () => console.log('host function ran'), null);
    void cudart.async.cudaStreamSynchronize(s);
    console.log('exiting with', cudart.pendingHostFunctions(), 'pending');
    process.exit(3);`);
  expect([r.status, r.signal, r.stdout, r.stderr]).toEqual([3, null, 'exiting with 1 pending\n', '']);
});
