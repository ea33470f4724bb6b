// The C side of the service benchmark (bench/service.ts): the work of examples/gpuService.ts per
// request, without HTTP, on the device's default memory pool (release threshold 1 GiB, as the
// service sets it): two buffers of N floats allocated on the thread's stream, input pair k copied in,
// saxpy, the result copied out, the stream synchronized, the buffers freed, 64 samples checked; every
// 50th request asks the pool for an impossible size and counts the refusal as a 400.
//   service <pageable|staged> <threads> <seconds>
// pageable: cudaMemcpyAsync straight from and to ordinary host memory (what a C loop does unless it
//           manages pinned memory itself); staged: memcpy through pinned memory of the thread's own,
//           as the service's upload does. Each thread has its own non-blocking stream and runs one
//           request after another. Prints one JSON line (a Row of bench/service-stats.ts).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <string>
#include <vector>
#include <cuda_runtime.h>

static const int N = 1 << 18, INPUTS = 16, SAMPLES = 64;
static const size_t IMPOSSIBLE_BYTES = 4ull << 42;

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

static float inputX(int k, int i) { return (float)((i * 7 + k) % 1024); }
static float inputY(int k, int i) { return (float)((i * 13 + 3 * k) % 512); }
static int sampleIndex(int j) { return j * (N / SAMPLES) + (j % 7); }

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { fprintf(stderr, "service: %s: %s (line %d)\n", #call, cudaGetErrorName(e_), __LINE__); exit(1); } } while (0)

static float *xs[INPUTS], *ys[INPUTS];
static bool staged;
static double deadline;
static cudaMemPool_t pool;

static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

struct Worker {
  pthread_t thread;
  std::vector<double> latencies;
  long requests = 0, wrong = 0, bad400 = 0, badSent = 0, unexpected = 0;
};

static void *work(void *arg) {
  Worker *w = (Worker *)arg;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *pinned = nullptr, *out = nullptr;
  if (staged) CHECK(cudaHostAlloc((void **)&pinned, 3ull * N * sizeof(float), cudaHostAllocPortable));
  else out = (float *)malloc(N * sizeof(float));
  float *result = staged ? pinned + 2 * N : out;
  for (long seq = 0; now() < deadline; seq++) {
    int k = seq % INPUTS;
    float a = (float)(1 + seq % 4);
    double t0 = now();
    void *x = nullptr, *y = nullptr;
    if (seq % 50 == 49) {
      w->badSent++;
      cudaError_t e = cudaMallocFromPoolAsync(&x, IMPOSSIBLE_BYTES, pool, s);
      if (e == cudaErrorMemoryAllocation) w->bad400++;
      else w->unexpected++;
      cudaGetLastError();
      if (e == cudaSuccess) CHECK(cudaFreeAsync(x, s));
    } else {
      CHECK(cudaMallocFromPoolAsync(&x, N * sizeof(float), pool, s));
      CHECK(cudaMallocFromPoolAsync(&y, N * sizeof(float), pool, s));
      const float *fromX = xs[k], *fromY = ys[k];
      if (staged) {
        memcpy(pinned, xs[k], N * sizeof(float));
        memcpy(pinned + N, ys[k], N * sizeof(float));
        fromX = pinned;
        fromY = pinned + N;
      }
      CHECK(cudaMemcpyAsync(x, fromX, N * sizeof(float), cudaMemcpyHostToDevice, s));
      CHECK(cudaMemcpyAsync(y, fromY, N * sizeof(float), cudaMemcpyHostToDevice, s));
      saxpy<<<(N + 255) / 256, 256, 0, s>>>(a, (const float *)x, (float *)y, N);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpyAsync(result, y, N * sizeof(float), cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaFreeAsync(x, s));
      CHECK(cudaFreeAsync(y, s));
      for (int j = 0; j < SAMPLES; j++) {
        int i = sampleIndex(j);
        if (result[i] != a * inputX(k, i) + inputY(k, i)) w->wrong++;
      }
    }
    w->latencies.push_back((now() - t0) * 1e3);
    w->requests++;
  }
  CHECK(cudaStreamSynchronize(s));
  if (staged) CHECK(cudaFreeHost(pinned));
  free(out);
  CHECK(cudaStreamDestroy(s));
  return nullptr;
}

static double percentile(const std::vector<double> &sorted, double p) {
  if (sorted.empty()) return NAN;
  size_t rank = (size_t)std::ceil(p * sorted.size());
  return sorted[std::min(sorted.size() - 1, rank > 0 ? rank - 1 : 0)];
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "pageable") && strcmp(argv[1], "staged"))) {
    fprintf(stderr, "usage: service <pageable|staged> <threads> <seconds>\n");
    return 2;
  }
  staged = !strcmp(argv[1], "staged");
  int threads = atoi(argv[2]);
  double seconds = atof(argv[3]);
  CHECK(cudaSetDevice(0));
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  unsigned long long threshold = 1ull << 30;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  for (int k = 0; k < INPUTS; k++) {
    xs[k] = (float *)malloc(N * sizeof(float));
    ys[k] = (float *)malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) xs[k][i] = inputX(k, i), ys[k][i] = inputY(k, i);
  }
  CHECK(cudaFree(nullptr)); // the context, before the clock starts
  std::vector<Worker> workers(threads);
  double start = now();
  deadline = start + seconds;
  for (auto &w : workers) pthread_create(&w.thread, nullptr, work, &w);
  std::vector<double> all;
  long requests = 0, wrong = 0, bad400 = 0, badSent = 0, unexpected = 0;
  for (auto &w : workers) {
    pthread_join(w.thread, nullptr);
    all.insert(all.end(), w.latencies.begin(), w.latencies.end());
    requests += w.requests, wrong += w.wrong, bad400 += w.bad400, badSent += w.badSent, unexpected += w.unexpected;
  }
  double elapsed = now() - start;
  std::sort(all.begin(), all.end());
  std::string name = std::string("C, ") + argv[1] + ", " + (threads == 1 ? "one thread" : std::to_string(threads) + " threads, a stream each");
  printf("{\"name\":\"%s\",\"concurrency\":%d,\"requests\":%ld,\"seconds\":%.3f,\"latencyMs\":{\"p50\":%.4f,\"p99\":%.4f,\"max\":%.4f},"
         "\"wrong\":%ld,\"bad400\":%ld,\"badSent\":%ld,\"unexpected\":%ld}\n",
         name.c_str(), threads, requests, elapsed, percentile(all, 0.5), percentile(all, 0.99), all.empty() ? NAN : all.back(), wrong, bad400,
         badSent, unexpected);
  return 0;
}
