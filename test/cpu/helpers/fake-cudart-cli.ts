// A fake libcudart for the CLI, built with gcc at test time: one device whose calls succeed (copies
// do nothing, an event pair measures 1.5 ms), and with FAKE_FAIL_MALLOC_HOST=1 a cudaMallocHost that
// fails with cudaErrorMemoryAllocation (2), as a machine out of pinned memory does; FAKE_DEVICE_NAME
// renames the device ("Fake GPU"). fake_count(name)
// says how often a function was called, so a test can check that every cudaMalloc met its cudaFree.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SOURCE = String.raw`
#include <stdlib.h>
#include <string.h>
static char names[32][48]; static int counts[32];
static void count(const char *n) { for (int i = 0; i < 32; i++) { if (!names[i][0]) strcpy(names[i], n); if (!strcmp(names[i], n)) { counts[i]++; return; } } }
int fake_count(const char *n) { for (int i = 0; i < 32; i++) if (!strcmp(names[i], n)) return counts[i]; return 0; }
#define COUNT count(__func__)
const char *cudaGetErrorName(int e) { return e == 2 ? "cudaErrorMemoryAllocation" : "cudaErrorFake"; }
const char *cudaGetErrorString(int e) { return "out of memory"; }
int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
int cudaDriverGetVersion(int *v) { *v = 13000; return 0; }
int cudaGetDeviceCount(int *n) { *n = 1; return 0; }
int cudaSetDevice(int d) { return 0; }
int cudaStreamCreateWithFlags(void **s, unsigned f) { COUNT; *s = calloc(1, 16); return 0; }
int cudaStreamDestroy(void *s) { COUNT; free(s); return 0; }
int cudaEventCreate(void **e) { COUNT; *e = calloc(1, 16); return 0; }
int cudaEventCreateWithFlags(void **e, unsigned f) { COUNT; *e = calloc(1, 16); return 0; }
int cudaEventDestroy(void *e) { COUNT; free(e); return 0; }
static unsigned long long next_address = 0x700000000000ULL;
int cudaMalloc(void **p, size_t n) { COUNT; *p = (void *)next_address; next_address += (n + 0xfff) & ~0xfffULL; return 0; }
int cudaFree(void *p) { if (p) COUNT; return 0; }
int cudaMallocHost(void **p, size_t n) { COUNT; if (getenv("FAKE_FAIL_MALLOC_HOST")) { *p = 0; return 2; } *p = malloc(n); return 0; }
int cudaFreeHost(void *p) { if (p) { COUNT; free(p); } return 0; }
int cudaMemcpy(void *d, const void *s, size_t n, int k) { return 0; }
int cudaMemcpyAsync(void *d, const void *s, size_t n, int k, void *st) { return 0; }
int cudaStreamSynchronize(void *s) { return 0; }
int cudaStreamQuery(void *s) { return 0; }
int cudaEventRecord(void *e, void *s) { return 0; }
int cudaEventQuery(void *e) { return 0; }
int cudaEventSynchronize(void *e) { return 0; }
int cudaEventElapsedTime(float *ms, void *a, void *b) { *ms = 1.5f; return 0; }
int cudaGetDevice(int *d) { *d = 0; return 0; }
int cudaPeekAtLastError(void) { return 0; }
int cudaGetLastError(void) { return 0; }
int cudaGetDeviceProperties(void *p, int d) { const char *n = getenv("FAKE_DEVICE_NAME"); memset(p, 0, 1008); strncpy((char *)p, n ? n : "Fake GPU", 255); return 0; }
int cudaDeviceGetAttribute(int *v, int a, int d) { *v = 1000; return 0; }
int cudaMemGetInfo(size_t *f, size_t *t) { *f = 1 << 30; *t = 2u << 30; return 0; }
int cudaDeviceCanAccessPeer(int *c, int d, int p) { *c = 0; return 0; }
int cudaDeviceGetPCIBusId(char *b, int n, int d) { strncpy(b, "0000:01:00.0", n); return 0; }
int cudaMallocAsync(void **p, size_t n, void *s) { *p = (void *)0x1000; return 0; }
int cudaFreeAsync(void *p, void *s) { return 0; }
`;

/** Builds the fake into `dir`; returns its path. */
export function buildFailingMallocHostCudart(dir: string): string {
  const src = path.join(dir, 'fake-cli.c');
  const lib = path.join(dir, 'libcudart-fake-cli.so');
  fs.writeFileSync(src, SOURCE);
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, src]);
  return lib;
}

/** A fresh directory for the fake (remove it in afterAll). */
export function fakeDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-fake-cli-'));
}
