// A fake libnccl of one rank and a fake libcudart whose "device memory" is host memory, built by
// gcc at test time, so the NCCL bindings and core's Communicator run without a GPU or NCCL.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CUDART_VERSION } from '../../../src/runtime/constants.gen';

const CUDART = `
#include <stdlib.h>
#include <string.h>
static int current;
int cudaRuntimeGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }
int cudaDriverGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }
int cudaGetDeviceCount(int *n) { *n = 1; return 0; }
int cudaGetDevice(int *d) { *d = current; return 0; }
int cudaSetDevice(int d) { if (d != 0) return 101; current = d; return 0; }
int cudaMalloc(void **p, size_t n) { *p = calloc(1, n ? n : 1); return 0; }
int cudaFree(void *p) { free(p); return 0; }
int cudaMemcpy(void *d, const void *s, size_t n, int kind) { memcpy(d, s, n); return 0; }
int cudaMemset(void *d, int v, size_t n) { memset(d, v, n); return 0; }
int cudaStreamCreateWithPriority(void **s, unsigned f, int p) { *s = malloc(8); return 0; }
int cudaStreamDestroy(void *s) { free(s); return 0; }
int cudaStreamSynchronize(void *s) { return 0; }
int cudaStreamQuery(void *s) { return 0; }
int cudaDeviceSynchronize(void) { return 0; }
int cudaGetLastError(void) { return 0; }
int cudaGetDeviceProperties(char *p, int d) { strcpy(p, "Fake GPU"); return 0; }
const char *cudaGetErrorName(int e) { return e ? "cudaErrorInvalidDevice" : "cudaSuccess"; }
const char *cudaGetErrorString(int e) { return e ? "invalid device ordinal" : "no error"; }
`;

// One rank: every collective copies count elements (the sum, product, ... of one value is the
// value). A non-blocking communicator reports ncclInProgress for its first 20 polls.
const NCCL = `
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct { size_t size; unsigned magic, version; int blocking; } cfg_head;
struct comm { int nranks, rank, dev, blocking, polls, aborted; };
static const int tsize[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
static char last[256];
static int in_group;
static struct { const void *src; void *dst; size_t n; int send_posted, recv_posted; } p2p;
int ncclGetVersion(int *v) { *v = 22809; return 0; }
int ncclGetUniqueId(ncclUniqueId *id) { for (int i = 0; i < 128; i++) id->internal[i] = (char)(i * 7 + 3); return 0; }
const char *ncclGetErrorString(int r) { static const char *s[] = {"no error", "unhandled cuda error", "unhandled system error", "internal error", "invalid argument", "invalid usage", "remote process exited or there was a network error", "NCCL operation in progress"}; return r >= 0 && r < 8 ? s[r] : "unknown result code"; }
const char *ncclGetLastError(void *comm) { return last; }
static int fail(int code, const char *msg) { snprintf(last, sizeof last, "%s", msg); return code; }
static int idok(const ncclUniqueId *id) { for (int i = 0; i < 128; i++) if (id->internal[i] != (char)(i * 7 + 3)) return 0; return 1; }
static struct comm *mk(int nranks, int rank, int blocking) { struct comm *c = calloc(1, sizeof *c); c->nranks = nranks; c->rank = rank; c->blocking = blocking; return c; }
int ncclCommInitRankConfig(struct comm **out, int nranks, ncclUniqueId id, int rank, cfg_head *cfg) {
  if (nranks != 1 || rank != 0) return fail(4, "fake libnccl: one rank only");
  if (!idok(&id)) return fail(4, "fake libnccl: not the unique id ncclGetUniqueId made");
  if (cfg && (cfg->magic != 0xcafebeef || cfg->size != 80 || cfg->version != 22809)) return fail(4, "fake libnccl: config not made by NCCL_CONFIG_INITIALIZER");
  int blocking = !cfg || cfg->blocking != 0;
  *out = mk(nranks, rank, blocking);
  return blocking ? 0 : 7;
}
int ncclCommInitRank(struct comm **out, int nranks, ncclUniqueId id, int rank) { return ncclCommInitRankConfig(out, nranks, id, rank, 0); }
int ncclCommInitAll(struct comm **out, int ndev, const int *devlist) {
  if (ndev != 1 || (devlist && devlist[0] != 0)) return fail(4, "fake libnccl: device 0 only");
  out[0] = mk(1, 0, 1); return 0;
}
int ncclCommGetAsyncError(struct comm *c, int *e) { if (!c) return 4; *e = c->blocking || c->polls++ >= 20 ? 0 : 7; return 0; }
int ncclCommCount(struct comm *c, int *n) { if (!c) return 4; *n = c->nranks; return 0; }
int ncclCommCuDevice(struct comm *c, int *d) { if (!c) return 4; *d = c->dev; return 0; }
int ncclCommUserRank(struct comm *c, int *r) { if (!c) return 4; *r = c->rank; return 0; }
int destroyed, aborted;
int ncclCommDestroy(struct comm *c) { if (!c) return 4; destroyed++; free(c); return 0; }
int ncclCommAbort(struct comm *c) { if (!c) return 4; aborted++; free(c); return 0; }
int ncclCommFinalize(struct comm *c) { return 0; }
int fakeDestroyed(void) { return destroyed; }
int fakeAborted(void) { return aborted; }
int ncclCommSplit(struct comm *c, int color, int key, struct comm **out, cfg_head *cfg) {
  if (!c) return 4;
  *out = color == -1 ? 0 : mk(1, 0, cfg ? cfg->blocking != 0 : c->blocking);
  return *out && !(*out)->blocking ? 7 : 0;
}
static int coll(const void *s, void *d, size_t n, int t, struct comm *c) {
  if (!c) return fail(4, "fake libnccl: NULL communicator");
  if (t < 0 || t > 11) return fail(4, "fake libnccl: invalid datatype");
  if (n && s != d) memmove(d, s, n * tsize[t]);
  return 0;
}
int ncclAllReduce(const void *s, void *d, size_t n, int t, int op, struct comm *c, void *st) { if (op < 0 || op > 4) return fail(4, "fake libnccl: invalid op"); return coll(s, d, n, t, c); }
int ncclBroadcast(const void *s, void *d, size_t n, int t, int root, struct comm *c, void *st) { return root ? fail(4, "fake libnccl: invalid root") : coll(s, d, n, t, c); }
int ncclReduce(const void *s, void *d, size_t n, int t, int op, int root, struct comm *c, void *st) { return coll(s, d, n, t, c); }
int ncclAllGather(const void *s, void *d, size_t n, int t, struct comm *c, void *st) { return coll(s, d, n, t, c); }
int ncclReduceScatter(const void *s, void *d, size_t n, int t, int op, struct comm *c, void *st) { return coll(s, d, n, t, c); }
int ncclAlltoAll(const void *s, void *d, size_t n, int t, struct comm *c, void *st) { return coll(s, d, n, t, c); }
int ncclGroupStart(void) { in_group++; return 0; }
int ncclSend(const void *s, size_t n, int t, int peer, struct comm *c, void *st) { if (!in_group) return fail(5, "fake libnccl: send to self outside a group"); p2p.src = s; p2p.n = n * tsize[t]; p2p.send_posted = 1; return 0; }
int ncclRecv(void *d, size_t n, int t, int peer, struct comm *c, void *st) { if (!in_group) return fail(5, "fake libnccl: recv from self outside a group"); p2p.dst = d; p2p.recv_posted = 1; return 0; }
int ncclGroupEnd(void) {
  if (!in_group) return fail(5, "fake libnccl: ncclGroupEnd without ncclGroupStart");
  if (--in_group == 0 && p2p.send_posted && p2p.recv_posted) { memcpy(p2p.dst, p2p.src, p2p.n); memset(&p2p, 0, sizeof p2p); }
  return 0;
}
int ncclGroupDepth(void) { return in_group; }
int ncclCommInitRankScalable(struct comm **out, int nranks, int rank, int nId, ncclUniqueId *ids, cfg_head *cfg) {
  for (int i = 0; i < nId; i++) if (!idok(&ids[i])) return fail(4, "fake libnccl: a bad id among commIds");
  return ncclCommInitRankConfig(out, nranks, ids[0], rank, cfg);
}
typedef struct { size_t size; unsigned magic, version; float estimatedTime; } siminfo;
int ncclGroupSimulateEnd(siminfo *s) { if (!s || s->magic != 0x74685283) return fail(4, "fake libnccl: simInfo not made by NCCL_SIM_INFO_INITIALIZER"); s->estimatedTime = 12.5f; return 0; }
int ncclCommShrink(struct comm *c, int *excl, int n, struct comm **out, cfg_head *cfg, int flags) {
  if (n != 1 || excl[0] != 7) return fail(4, "fake libnccl: expected excludeRanksList [7]");
  *out = mk(1, 0, 1); return 0;
}
`;

/** Builds both fakes into `dir`; returns the environment that makes the bindings load them. */
export function buildFakes(dir: string): { CUDA_BINDINGS_CUDART: string; CUDA_BINDINGS_NCCL: string } {
  const out = { CUDA_BINDINGS_CUDART: path.join(dir, 'libcudart-fake.so'), CUDA_BINDINGS_NCCL: path.join(dir, 'libnccl-fake.so') };
  for (const [src, lib] of [
    [CUDART, out.CUDA_BINDINGS_CUDART],
    [NCCL, out.CUDA_BINDINGS_NCCL],
  ]) {
    const c = `${lib}.c`;
    fs.writeFileSync(c, src);
    execFileSync('gcc', ['-shared', '-fPIC', '-O1', '-o', lib, c]);
  }
  return out;
}
