// What .gpu/anchors/anchor_c.cu does not time, from C, on the same kernels the bindings launch
// (bench/kernels.cu, loaded as a library as our Module does):
//   extra <kernels.cubin>  ->  CSV lines c,<operation>,<ns per call or GB/s>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
static double now_ns() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
// The median of 5 timed loops of n calls, in ns per call (as the other anchors and our bench).
template <class F> double bench(F f, int n) {
  std::vector<double> r;
  for (int rep = 0; rep < 5; rep++) { double t = now_ns(); for (int i = 0; i < n; i++) f(); r.push_back((now_ns() - t) / n); }
  std::sort(r.begin(), r.end()); return r[2];
}
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: extra kernels.cubin\n"); return 2; }
  CHECK(cudaSetDevice(0));
  cudaStream_t s; CHECK(cudaStreamCreate(&s));
  cudaLibrary_t lib; CHECK(cudaLibraryLoadFromFile(&lib, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t empty, empty8; CHECK(cudaLibraryGetKernel(&empty, lib, "empty")); CHECK(cudaLibraryGetKernel(&empty8, lib, "empty8"));
  float *a; CHECK(cudaMalloc(&a, 1 << 20));
  int c = 1; unsigned d = 2; float e = 3, f = 4; long long g = 5; double h = 6;
  void *args8[] = {&a, &a, &c, &d, &e, &f, &g, &h};
  CHECK(cudaLaunchKernel((void *)empty8, dim3(1), dim3(1), args8, 0, s)); CHECK(cudaStreamSynchronize(s));
  printf("c,cudaLaunchKernel_empty_lib,%.1f\n", bench([&] { cudaLaunchKernel((void *)empty, dim3(1), dim3(1), nullptr, 0, s); }, 100000));
  CHECK(cudaStreamSynchronize(s));
  printf("c,cudaLaunchKernel_8args,%.1f\n", bench([&] { cudaLaunchKernel((void *)empty8, dim3(1), dim3(1), args8, 0, s); }, 100000));
  CHECK(cudaStreamSynchronize(s));
  // The same call under the name of core's prepared launch (8 plain-number arguments), timed again.
  printf("c,cudaLaunchKernel_8args_prepared,%.1f\n", bench([&] { cudaLaunchKernel((void *)empty8, dim3(1), dim3(1), args8, 0, s); }, 100000));
  CHECK(cudaStreamSynchronize(s));
  {
    // 4 MiB through a copy kernel with the copies written out by hand (buffers allocated once, pageable
    // host memory as a JS TypedArray is): what core's In/Out launch does for the user; both core rows
    // (In/Out and manual copies) are compared with it.
    cudaKernel_t copyFloats; CHECK(cudaLibraryGetKernel(&copyFloats, lib, "copyFloats"));
    const int n = 1 << 20; const size_t bytes = n * sizeof(float);
    float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes); memset(hx, 0, bytes);
    float *dx, *dy; CHECK(cudaMalloc(&dx, bytes)); CHECK(cudaMalloc(&dy, bytes));
    int nn = n; void *cargs[] = {&dx, &dy, &nn};
    auto once = [&] {
      cudaMemcpyAsync(dx, hx, bytes, cudaMemcpyHostToDevice, s);
      cudaLaunchKernel((void *)copyFloats, dim3(n / 256), dim3(256), cargs, 0, s);
      cudaMemcpyAsync(hy, dy, bytes, cudaMemcpyDeviceToHost, s);
      cudaStreamSynchronize(s);
    };
    once();
    double t = bench(once, 200);
    printf("c,InOut_launch_4MiB,%.1f\nc,manual_copies_launch_4MiB,%.1f\n", t, t);
    CHECK(cudaFree(dx)); CHECK(cudaFree(dy)); free(hx); free(hy);
  }
  cudaEvent_t ev; CHECK(cudaEventCreate(&ev));
  printf("c,cudaEventRecord,%.1f\n", bench([&] { cudaEventRecord(ev, s); }, 200000));
  CHECK(cudaStreamSynchronize(s));
  printf("c,cudaMallocAsync+cudaFreeAsync_1MiB,%.1f\n", bench([&] { void *q; cudaMallocAsync(&q, 1 << 20, s); cudaFreeAsync(q, s); }, 20000));
  CHECK(cudaStreamSynchronize(s));
  // What a pinned pool saves: a pinned allocation and free straight from CUDA, 1 MiB.
  printf("c,cudaHostAlloc+cudaFreeHost_1MiB,%.1f\n", bench([&] { void *h; cudaHostAlloc(&h, 1 << 20, 0); cudaFreeHost(h); }, 2000));
  int hv = 1;
  printf("c,cudaMemcpyAsync_H2D_4B,%.1f\n", bench([&] { cudaMemcpyAsync(a, &hv, 4, cudaMemcpyHostToDevice, s); }, 20000));
  CHECK(cudaStreamSynchronize(s));
  cudaDeviceProp p;
  printf("c,cudaGetDeviceProperties+5fields,%.1f\n", bench([&] { cudaGetDeviceProperties(&p, 0); volatile size_t x = strlen(p.name) + p.totalGlobalMem + p.multiProcessorCount + p.major + p.minor; (void)x; }, 2000));
  // A graph of one empty kernel, captured, instantiated and launched again and again.
  cudaGraph_t graph; cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaLaunchKernel((void *)empty, dim3(1), dim3(1), nullptr, 0, s);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphUpload(exec, s));
  printf("c,cudaGraphLaunch_1kernel,%.1f\n", bench([&] { cudaGraphLaunch(exec, s); }, 100000));
  CHECK(cudaStreamSynchronize(s));
  // 256 MiB host to device from ordinary (pageable) memory, GB/s (the anchors time pinned).
  const size_t B = 256u << 20;
  void *dev; CHECK(cudaMalloc(&dev, B));
  char *pageable = (char *)malloc(B); memset(pageable, 1, B);
  CHECK(cudaMemcpy(dev, pageable, B, cudaMemcpyHostToDevice));
  double t = now_ns();
  for (int i = 0; i < 10; i++) cudaMemcpy(dev, pageable, B, cudaMemcpyHostToDevice);
  printf("c,H2D_pageable_256MiB_GBps,%.2f\n", 10.0 * B / (now_ns() - t));
  void *pinned; CHECK(cudaMallocHost(&pinned, B));
  CHECK(cudaMemcpy(dev, pinned, B, cudaMemcpyHostToDevice));
  // The memory copy a staging copy adds: 256 MiB from pageable into pinned memory on one CPU thread.
  t = now_ns();
  for (int i = 0; i < 10; i++) memcpy(pinned, pageable, B);
  printf("c,memcpy_host_256MiB_GBps,%.2f\n", 10.0 * B / (now_ns() - t));
  return 0;
}
