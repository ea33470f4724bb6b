// The LTO benchmark's first unit (bench/linking.ts and bench/lto.cpp read this file): a device function.
extern "C" __device__ float affine(float a, float x, float b) { return a * x + b; }
