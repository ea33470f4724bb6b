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

// simpleCubemapTexture: CUDA's sample of that name. Thread (x, y) reads texel (x, y) of each of the
// six faces with texCubemap, at the direction through that texel's centre, and writes it negated to
// g_odata[face][y][x] (width * width floats a face).
extern "C" __global__ void transformCubemap(float *g_odata, int width, cudaTextureObject_t tex) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= (unsigned int)width || y >= (unsigned int)width) return;
  // Texel centres on [-1, 1].
  float u = ((x + 0.5f) / (float)width) * 2.f - 1.f;
  float v = ((y + 0.5f) / (float)width) * 2.f - 1.f;
  float cx, cy, cz;
  for (unsigned int face = 0; face < 6; face++) {
    if (face == 0) {         // +X
      cx = 1; cy = -v; cz = -u;
    } else if (face == 1) {  // -X
      cx = -1; cy = -v; cz = u;
    } else if (face == 2) {  // +Y
      cx = u; cy = 1; cz = v;
    } else if (face == 3) {  // -Y
      cx = u; cy = -1; cz = -v;
    } else if (face == 4) {  // +Z
      cx = u; cy = -v; cz = 1;
    } else {                 // -Z
      cx = -u; cy = -v; cz = -1;
    }
    g_odata[face * width * width + y * width + x] = -texCubemap<float>(tex, cx, cy, cz);
  }
}

// simpleP2P: dst = src * s, where src or dst may be memory of a peer GPU.
extern "C" __global__ void scaleInto(float *dst, const float *src, float s, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) dst[i] = src[i] * s;
}

// simpleIPC: data[i] = byte i of the pattern of `seed`, as lib/ipcChild.ts computes it in JS.
extern "C" __global__ void bytePattern(unsigned char *data, int n, unsigned int seed) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) data[i] = (unsigned char)((unsigned int)i * 31u + ((unsigned int)i >> 8) + seed);
}
