// The C side of the stable benchmark (bench/stable/run.ts): a long-lived process that times one
// operation per request, so that C, the facade, core, raw koffi, cuda-python and CuPy take turns
// operation by operation, round after round, each process kept warm.
//   c <kernels.cubin>   then on stdin: "<op> <loop|batch> <n>" -> stdout: ns per call, or "-" if unknown
// loop: one timed loop of n calls. batch: n calls enqueued in batches of 128, only the enqueueing
// timed, the stream synchronised (untimed) after each batch, so the queue never fills and the figure
// is the CPU's cost of the call, not the GPU's rate of draining it.
#include <cuda_runtime.h>
#include <cuda.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
static double now_ns() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
#define CHECK(x) do { auto e = (x); if (e != 0) { fprintf(stderr, "%s: error %d\n", #x, (int)e); exit(1); } } while (0)
static cudaStream_t s;
static double loop(const std::function<void()> &f, long n) {
  double t = now_ns();
  for (long i = 0; i < n; i++) f();
  return (now_ns() - t) / n;
}
static double batch(const std::function<void()> &f, long n) {
  const long B = 128;
  double total = 0;
  for (long done = 0; done < n; done += B) {
    double t = now_ns();
    for (long i = 0; i < B; i++) f();
    total += now_ns() - t;
    cudaStreamSynchronize(s);
  }
  return total / (((n + B - 1) / B) * B);
}
int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: c kernels.cubin\n"); return 2; }
  CHECK(cudaSetDevice(0)); CHECK(cudaFree(0));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev; CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CHECK(cudaEventRecord(ev, s)); CHECK(cudaStreamSynchronize(s));
  cudaLibrary_t lib; CHECK(cudaLibraryLoadFromFile(&lib, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t k0, k8, kcopy;
  CHECK(cudaLibraryGetKernel(&k0, lib, "empty")); CHECK(cudaLibraryGetKernel(&k8, lib, "empty8")); CHECK(cudaLibraryGetKernel(&kcopy, lib, "copyFloats"));
  CUmodule mod; CUfunction f0, f8;
  CHECK(cuModuleLoad(&mod, argv[1])); CHECK(cuModuleGetFunction(&f0, mod, "empty")); CHECK(cuModuleGetFunction(&f8, mod, "empty8"));
  void *d; CHECK(cudaMalloc(&d, 1 << 20));
  cudaMemPool_t pool; CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  int *pinned; CHECK(cudaMallocHost((void **)&pinned, 4096)); pinned[0] = 1;
  int hv = 1, dev = 0;
  int c = 1; unsigned du = 2; float e = 3, f = 4; long long g = 5; double h = 6;
  void *args8[] = {&d, &d, &c, &du, &e, &f, &g, &h};
  cudaDeviceProp p;
  cudaGraph_t graph; cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaLaunchKernel((void *)k0, dim3(1), dim3(1), nullptr, 0, s));
  CHECK(cudaStreamEndCapture(s, &graph)); CHECK(cudaGraphInstantiate(&exec, graph, 0)); CHECK(cudaGraphUpload(exec, s));
  const int N = 1 << 20; const size_t bytes = N * sizeof(float);
  float *hx = (float *)calloc(N, 4), *hy = (float *)calloc(N, 4), *dx, *dy;
  CHECK(cudaMalloc(&dx, bytes)); CHECK(cudaMalloc(&dy, bytes));
  int nn = N; void *cargs[] = {&dx, &dy, &nn};
  std::map<std::string, std::function<void()>> ops = {
    {"cudaGetDevice", [&] { cudaGetDevice(&dev); }},
    {"cudaPeekAtLastError", [&] { cudaPeekAtLastError(); }},
    {"cudaStreamQuery", [&] { cudaStreamQuery(s); }},
    {"cudaEventQuery", [&] { cudaEventQuery(ev); }},
    {"cudaEventRecord", [&] { cudaEventRecord(ev, s); }},
    {"cudaGetDeviceProperties", [&] { cudaGetDeviceProperties(&p, 0); }},
    {"cudaGetDeviceProperties+5fields", [&] { cudaGetDeviceProperties(&p, 0); volatile size_t x = strlen(p.name) + p.totalGlobalMem + p.multiProcessorCount + p.major + p.minor; (void)x; }},
    {"cudaMalloc+cudaFree_1MiB", [&] { void *q; cudaMalloc(&q, 1 << 20); cudaFree(q); }},
    {"cudaMallocAsync+cudaFreeAsync_1MiB", [&] { void *q; cudaMallocAsync(&q, 1 << 20, s); cudaFreeAsync(q, s); }},
    {"cudaMallocFromPoolAsync+cudaFreeAsync_1MiB", [&] { void *q; cudaMallocFromPoolAsync(&q, 1 << 20, pool, s); cudaFreeAsync(q, s); }},
    {"cudaMemcpy_H2D_4B", [&] { cudaMemcpy(d, &hv, 4, cudaMemcpyHostToDevice); }},
    {"cudaMemcpy_D2H_4B", [&] { cudaMemcpy(&hv, d, 4, cudaMemcpyDeviceToHost); }},
    {"cudaMemcpyAsync_H2D_4B_pinned", [&] { cudaMemcpyAsync(d, pinned, 4, cudaMemcpyHostToDevice, s); }},
    {"cudaLaunchKernel_empty", [&] { cudaLaunchKernel((void *)k0, dim3(1), dim3(1), nullptr, 0, s); }},
    {"cudaLaunchKernel_8args", [&] { cudaLaunchKernel((void *)k8, dim3(1), dim3(1), args8, 0, s); }},
    {"cuLaunchKernel_empty", [&] { cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, nullptr, nullptr); }},
    {"cuLaunchKernel_8args", [&] { cuLaunchKernel(f8, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args8, nullptr); }},
    {"cudaGraphLaunch_1kernel", [&] { cudaGraphLaunch(exec, s); }},
    {"launch+sync_empty", [&] { cudaLaunchKernel((void *)k0, dim3(1), dim3(1), nullptr, 0, s); cudaStreamSynchronize(s); }},
    // 4 MiB through a copy kernel, copies written out by hand from pageable memory (what In/Out does).
    {"InOut_4MiB", [&] {
      cudaMemcpyAsync(dx, hx, bytes, cudaMemcpyHostToDevice, s);
      cudaLaunchKernel((void *)kcopy, dim3(N / 256), dim3(256), cargs, 0, s);
      cudaMemcpyAsync(hy, dy, bytes, cudaMemcpyDeviceToHost, s);
      cudaStreamSynchronize(s);
    }},
  };
  printf("ready\n"); fflush(stdout);
  char name[128], kind[16]; long n;
  while (scanf("%127s %15s %ld", name, kind, &n) == 3) {
    auto it = ops.find(name);
    if (it == ops.end()) printf("-\n");
    else { double v = strcmp(kind, "batch") == 0 ? batch(it->second, n) : loop(it->second, n); cudaStreamSynchronize(s); printf("%.2f\n", v); }
    fflush(stdout);
  }
  return 0;
}
