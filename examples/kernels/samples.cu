// The device code of the runtime examples (examples/*.ts), built into samples.fatbin by
// tools/build-kernels.sh for every architecture CUDA 13.0 supports, plus PTX for newer ones.
// The examples load it with cudaLibraryLoadFromFile and look the kernels up by name.

// vectorAdd, zeroCopy: C = A + B.
extern "C" __global__ void vectorAdd(const float *A, const float *B, float *C, int numElements) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < numElements) C[i] = A[i] + B[i];
}

// simpleCudaGraphs, streamOrderedAllocation: out += in * s.
extern "C" __global__ void scaleAccumulate(float *out, const float *in, float s, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) out[i] += in[i] * s;
}

// hostCallback: data = data * mul + add, in place.
extern "C" __global__ void affine(float *data, float mul, float add, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) data[i] = data[i] * mul + add;
}

// streamsAndEvents: data *= scale, after `iterations` rounds of x = x * a + b that take time but,
// with a = 1 and b = 0 given at run time, leave x as it was (the compiler cannot know that).
extern "C" __global__ void busyScale(float *data, int n, float scale, float a, float b, int iterations) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i >= n) return;
  float x = data[i];
  for (int k = 0; k < iterations; k++) x = fmaf(x, a, b);
  data[i] = x * scale;
}

// clock: CUDA's clock sample. Each block finds the minimum of its 2 * blockDim.x inputs in dynamic
// shared memory and writes the clock() at its start (timer[block]) and end (timer[block + gridDim.x]).
extern "C" __global__ void timedReduction(const float *input, float *output, clock_t *timer) {
  extern __shared__ float shared[];
  const int tid = threadIdx.x;
  const int bid = blockIdx.x;

  if (tid == 0) timer[bid] = clock();

  shared[tid] = input[tid];
  shared[tid + blockDim.x] = input[tid + blockDim.x];

  for (int d = blockDim.x; d > 0; d /= 2) {
    __syncthreads();
    if (tid < d) {
      float f0 = shared[tid];
      float f1 = shared[tid + d];
      if (f1 < f0) shared[tid] = f1;
    }
  }

  if (tid == 0) output[bid] = shared[0];
  __syncthreads();
  if (tid == 0) timer[bid + gridDim.x] = clock();
}
