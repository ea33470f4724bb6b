// A fake libcudart built with gcc at test time: enough of the runtime for the core layer (streams,
// events, memory, libraries and kernels, pools, stream capture and graphs with host nodes) to run
// without a GPU. Like CUDA, one thread of the library runs host functions, in order. Test-only
// controls: fake_set_busy(stream, busy) makes events recorded on a stream incomplete until cleared;
// fake_count(name) says how often a function was called.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SOURCE = String.raw`
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
typedef void (*hostfn)(void *);
typedef void (*streamcb)(void *, int, void *);

/* host functions: one library thread runs them in order */
struct job { hostfn f; streamcb cb; void *stream; void *user; struct job *next; };
static struct job *head, *tail;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, idle = PTHREAD_COND_INITIALIZER;
static int started;
static void *running;
/* jobs queued or running on stream s (on any stream when s is NULL) */
static int queued_on(void *s) { int n = s ? running == s : running != 0; for (struct job *j = head; j; j = j->next) n += !s || j->stream == s; return n; }
static void *worker(void *p) {
  for (;;) {
    pthread_mutex_lock(&mu);
    while (!head) pthread_cond_wait(&cv, &mu);
    struct job *j = head; head = j->next; if (!head) tail = 0;
    running = j->stream ? j->stream : (void *)1;
    pthread_mutex_unlock(&mu);
    if (j->f) j->f(j->user); else j->cb(j->stream, 0, j->user);
    free(j);
    pthread_mutex_lock(&mu); running = 0; pthread_cond_broadcast(&idle); pthread_mutex_unlock(&mu);
  }
  return 0;
}
static void enqueue(hostfn f, streamcb cb, void *s, void *u) {
  struct job *j = calloc(1, sizeof *j); j->f = f; j->cb = cb; j->stream = s; j->user = u;
  pthread_mutex_lock(&mu);
  if (!started) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_detach(t); started = 1; }
  if (tail) tail->next = j; else head = j;
  tail = j;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
}

/* call counts, by name */
static char names[64][64]; static int counts[64];
static void count(const char *n) { for (int i = 0; i < 64; i++) { if (!names[i][0]) strcpy(names[i], n); if (!strcmp(names[i], n)) { counts[i]++; return; } } }
int fake_count(const char *n) { for (int i = 0; i < 64; i++) if (!strcmp(names[i], n)) return counts[i]; return 0; }
#define COUNT count(__func__)

/* handles are addresses of small structs */
struct stream { int busy; int capturing; struct graph *graph; };
struct event { struct stream *on; void *raw; };
struct node { hostfn f; void *user; };
struct graph { int n; struct node nodes[64]; };
static struct stream legacy;
/* the null, legacy (1) and per-thread (2) streams are one */
static struct stream *S(void *s) { return (unsigned long)s > 2 ? (struct stream *)s : &legacy; }
void fake_set_busy(void *s, int busy) { S(s)->busy = busy; }

static char namebuf[64];
const char *cudaGetErrorName(int e) { snprintf(namebuf, sizeof namebuf, "cudaErrorFake%d", e); return namebuf; }
const char *cudaGetErrorString(int e) { return "fake error"; }
int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
int cudaGetLastError(void) { return 0; }
int cudaPeekAtLastError(void) { return 0; }
int cudaGetDeviceCount(int *n) { *n = 1; return 0; }
int cudaGetDevice(int *d) { *d = 0; return 0; }
int cudaSetDevice(int d) { return 0; }
int cudaDeviceSynchronize(void) { pthread_mutex_lock(&mu); while (queued_on(0)) pthread_cond_wait(&idle, &mu); pthread_mutex_unlock(&mu); return 0; }
int cudaGetDeviceProperties(void *p, int d) { memset(p, 0, 1008); return 0; }

int cudaStreamCreateWithPriority(void **s, unsigned f, int p) { COUNT; *s = calloc(1, sizeof(struct stream)); return 0; }
int cudaStreamCreateWithFlags(void **s, unsigned f) { *s = calloc(1, sizeof(struct stream)); return 0; }
int cudaStreamDestroy(void *s) { COUNT; return 0; }
/* like CUDA, a stream is not ready while host functions queued on it have not run */
static int pending(void *s) { pthread_mutex_lock(&mu); int n = queued_on((unsigned long)s > 2 ? s : 0); pthread_mutex_unlock(&mu); return n; }
int cudaStreamQuery(void *s) { return S(s)->busy || pending(s) ? 600 : 0; }
int cudaStreamWaitEvent(void *s, void *e, unsigned f) { COUNT; return 0; }
int cudaStreamSynchronize(void *s) { pthread_mutex_lock(&mu); while (queued_on(s)) pthread_cond_wait(&idle, &mu); pthread_mutex_unlock(&mu); return 0; }
int cudaStreamAddCallback(void *s, streamcb cb, void *u, unsigned f) { enqueue(0, cb, s, u); return 0; }
int cudaStreamBeginCapture(void *s, int mode) { if (!s) return 1; S(s)->capturing = 1; S(s)->graph = calloc(1, sizeof(struct graph)); return 0; }
int cudaStreamIsCapturing(void *s, int *st) { COUNT; *st = S(s)->capturing; return 0; }
int cudaStreamEndCapture(void *s, void **g) { if (!S(s)->capturing) return 1; S(s)->capturing = 0; *g = S(s)->graph; S(s)->graph = 0; return 0; }
int cudaLaunchHostFunc(void *s, hostfn f, void *u) {
  COUNT;
  struct stream *st = S(s);
  if (st->capturing) { struct graph *g = st->graph; g->nodes[g->n].f = f; g->nodes[g->n].user = u; g->n++; return 0; }
  enqueue(f, 0, s, u); return 0;
}

int cudaEventCreateWithFlags(void **e, unsigned f) { COUNT; *e = calloc(1, sizeof(struct event)); return 0; }
int cudaEventCreate(void **e) { *e = calloc(1, sizeof(struct event)); return 0; }
int cudaEventDestroy(void *e) { COUNT; return 0; }
int cudaEventRecord(void *e, void *s) { COUNT; ((struct event *)e)->on = S(s); ((struct event *)e)->raw = s; return 0; }
/* an event is complete once its stream is not busy and has no host function left to run */
int cudaEventQuery(void *e) { struct event *ev = e; return ev->on && (ev->on->busy || pending(ev->raw)) ? 600 : 0; }
int cudaEventSynchronize(void *e) { return 0; }
int cudaEventElapsedTime(float *ms, void *a, void *b) { *ms = 1.5f; return 0; }

static unsigned long long next_address = 0x700000000000ULL;
int cudaMalloc(void **p, size_t n) { COUNT; *p = (void *)next_address; next_address += (n + 0xfff) & ~0xfffULL; return 0; }
int cudaMallocManaged(void **p, size_t n, unsigned f) { return cudaMalloc(p, n); }
int cudaFree(void *p) { if (p) COUNT; return 0; }
int cudaMemcpy(void *d, const void *s, size_t n, int k) { COUNT; return 0; }
int cudaMemcpyAsync(void *d, const void *s, size_t n, int k, void *st) { COUNT; return 0; }
int cudaMemset(void *d, int v, size_t n) { return 0; }
int cudaMemsetAsync(void *d, int v, size_t n, void *s) { COUNT; return 0; }
int cudaMemPrefetchAsync() { COUNT; return 0; }
int cudaMemAdvise() { return 0; }
int cudaHostAlloc(void **p, size_t n, unsigned f) { *p = calloc(1, n); return 0; }
int cudaFreeHost(void *p) { free(p); return 0; }
int cudaHostGetDevicePointer(void **d, void *h, unsigned f) { *d = h; return 0; }

int cudaLibraryLoadData(void **lib) { *lib = calloc(1, 8); return 0; }
int cudaLibraryLoadFromFile(void **lib) { *lib = calloc(1, 8); return 0; }
int cudaLibraryUnload(void *lib) { COUNT; return 0; }
int cudaLibraryGetKernel(void **k, void *lib, const char *name) { *k = calloc(1, 8); return 0; }
int cudaLibraryGetKernelCount(unsigned *n, void *lib) { *n = 0; return 0; }
int cudaFuncGetAttributes(void *a, const void *f) { COUNT; memset(a, 0, 144); return 0; }
int cudaKernelSetAttributeForDevice() { COUNT; return 0; }
int cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n) { COUNT; *n = 1; return 0; }
int cudaLaunchKernel() { COUNT; return 0; }

int cudaDeviceGetDefaultMemPool(void **p, int d) { static int pool; *p = &pool; return 0; }
int cudaMemPoolCreate(void **p, const void *props) { *p = calloc(1, 8); return 0; }
int cudaMemPoolDestroy(void *p) { return 0; }
int cudaMallocFromPoolAsync(void **p, size_t n, void *pool, void *s) { return cudaMalloc(p, n); }
int cudaFreeAsync(void *p, void *s) { return 0; }
int cudaMemPoolTrimTo(void *p, size_t n) { return 0; }
int cudaMemPoolGetAttribute(void *p, int a, void *v) { *(unsigned long long *)v = 0; return 0; }
int cudaMemPoolSetAttribute(void *p, int a, void *v) { return 0; }

int cudaGraphInstantiate(void **x, void *g, unsigned long long f) { COUNT; struct graph *c = malloc(sizeof *c); memcpy(c, g, sizeof *c); *x = c; return 0; }
int cudaGraphLaunch(void *x, void *s) { COUNT; struct graph *g = x; for (int i = 0; i < g->n; i++) enqueue(g->nodes[i].f, 0, s, g->nodes[i].user); return 0; }
int cudaGraphUpload(void *x, void *s) { COUNT; return 0; }
int cudaGraphDestroy(void *g) { COUNT; return 0; }
int cudaGraphExecDestroy(void *x) { COUNT; return 0; }
int cudaGraphExecUpdate(void *x, void *g, void *info) { COUNT; memcpy(x, g, sizeof(struct graph)); return 0; }
int cudaGraphGetNodes(void *g, void **nodes, size_t *n) { *n = ((struct graph *)g)->n; return 0; }
int cudaGraphCreate(void **g, unsigned f) { *g = calloc(1, sizeof(struct graph)); return 0; }
int cudaGraphAddHostNode(void **node, void *g, const void *deps, size_t n, const struct node *p) {
  struct graph *gr = g; gr->nodes[gr->n] = *p; *node = &gr->nodes[gr->n]; gr->n++; return 0;
}
`;

let built: string | undefined;
let dir: string | undefined;

/** Builds the fake library once per test file; returns its path. */
export function fakeCudart(): string {
  if (built) return built;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-fake-'));
  const src = path.join(dir, 'fake.c');
  fs.writeFileSync(src, SOURCE);
  built = path.join(dir, 'libcudart-fake.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-pthread', '-o', built, src]);
  return built;
}

/** Removes the fake library's directory (call in afterAll). */
export function removeFakeCudart(): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  built = dir = undefined;
}

/** Runs `script` (CommonJS, from the repository root) in a fresh Node on the fake library; `args` go to node. */
export function runOnFake(script: string, args: string[] = []): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...args, '--import', 'tsx', '-e', script], {
    encoding: 'utf8', cwd: path.join(__dirname, '..', '..', '..'), env: { ...process.env, CUDA_BINDINGS_CUDART: fakeCudart() }, timeout: 30_000,
  });
}

/** Script lines that bind the fake's test controls: `fake.setBusy(stream, busy)`, `fake.count(name)`. */
export const FAKE_CONTROLS = `
  const fake = (() => {
    const lib = require('koffi').load(process.env.CUDA_BINDINGS_CUDART);
    const setBusy = lib.func('void fake_set_busy(uint64_t, int)');
    const count = lib.func('int fake_count(const char *)');
    return { setBusy: (s, busy) => setBusy(s, busy ? 1 : 0), count };
  })();`;
