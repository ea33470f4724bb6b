// The LTO benchmark's second unit: the kernel that calls the first unit's device function.
extern "C" __device__ float affine(float a, float x, float b);
extern "C" __global__ void applyAffine(const float *x, float *y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = affine(a, x[i], b);
}
