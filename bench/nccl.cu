// NCCL's allReduce from C on one rank: 4 B (ns per call, n calls then one stream sync) and 256 MiB
// (algorithm bandwidth, GB/s), for the rows beside the facade's and core's (bench/nccl.ts).
//   nccl  ->  CSV lines c,<operation>,<value>
// Built by bench/run.sh against nccl.h (see there for where it is found) and libnccl.so.2.
#include <nccl.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#define NC(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { fprintf(stderr, "%s: %s\n", #x, ncclGetErrorString(r)); exit(1); } } while (0)
static double now_ns() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
// The median of 5 timed loops of n calls and a stream sync, in ns per call.
template <class F> double bench(F f, int n, cudaStream_t s) {
  std::vector<double> r;
  for (int rep = 0; rep < 5; rep++) { double t = now_ns(); for (int i = 0; i < n; i++) f(); cudaStreamSynchronize(s); r.push_back((now_ns() - t) / n); }
  std::sort(r.begin(), r.end()); return r[2];
}
int main() {
  ncclUniqueId id; NC(ncclGetUniqueId(&id));
  cudaSetDevice(0);
  ncclComm_t comm; NC(ncclCommInitRank(&comm, 1, id, 0));
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  size_t big = 256u << 20; void *a, *b; cudaMalloc(&a, big); cudaMalloc(&b, big);
  for (int i = 0; i < 10; i++) NC(ncclAllReduce(a, b, 1, ncclFloat32, ncclSum, comm, s));
  printf("c,ncclAllReduce_4B,%.1f\n", bench([&] { ncclAllReduce(a, b, 1, ncclFloat32, ncclSum, comm, s); }, 10000, s));
  double ns = bench([&] { ncclAllReduce(a, b, big / 4, ncclFloat32, ncclSum, comm, s); }, 10, s);
  printf("c,ncclAllReduce_256MiB_algbw_GBps,%.2f\n", big / ns);
  ncclCommDestroy(comm);
  return 0;
}
