// ltoLink: link-time optimisation across two translation units. NVRTC compiles each CUDA C++ file to
// LTO-IR (a device function in one, the kernel that calls it in the other), nvJitLink links them
// with LTO into one cubin (the call is inlined across the files), and the kernel's result is checked.
//   npx tsx examples/ltoLink.ts
// Exits with status 1, and one line on stderr saying why, when a device, NVRTC or nvJitLink is missing.
import { performance } from 'node:perf_hooks';
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { Program, Linker, f32, i32 } = core;
const N = 1_000_003;

// Translation unit 1: only a device function, with external linkage.
const MATH_CU = `
extern "C" __device__ float affine(float a, float x, float b) { return a * x + b; }
`;

// Translation unit 2: the kernel, which sees only the declaration.
const KERNEL_CU = `
extern "C" __device__ float affine(float a, float x, float b);
extern "C" __global__ void applyAffine(const float *x, float *y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = affine(a, x[i], b);
}
`;

function main(): number {
  const dev = firstDevice('ltoLink');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name} (compute capability ${dev.computeCapability.join('.')})`);

  const t0 = performance.now();
  let math, kernel;
  try {
    math = Program.compile(MATH_CU, { name: 'math.cu', arch: dev, target: 'ltoir' });
    kernel = Program.compile(KERNEL_CU, { name: 'kernel.cu', arch: dev, target: 'ltoir' });
  } catch (e) {
    console.error(`ltoLink: could not compile to LTO-IR: ${(e as Error).message.split('\n')[0]}`);
    return 1;
  }
  const t1 = performance.now();
  console.log(
    `> ${math.compiler}: math.cu → ${math.code.length} bytes of LTO-IR, kernel.cu → ${kernel.code.length} bytes (${(t1 - t0).toFixed(1)} ms${math.fromCache && kernel.fromCache ? ', from the disk cache' : ''})`,
  );

  const linker = new Linker(math.objectCode, kernel.objectCode, { arch: dev, lto: true, optimization: 3 });
  let cubin;
  try {
    cubin = linker.link('cubin');
  } catch (e) {
    console.error(`ltoLink: the link failed: ${(e as Error).message.split('\n')[0]}`);
    return 1;
  }
  const t2 = performance.now();
  console.log(
    `> ${linker.backend} linked them with LTO into a ${cubin.code.length}-byte cubin for ${cubin.arch} (${(t2 - t1).toFixed(1)} ms)`,
  );
  if (linker.infoLog)
    console.log(
      linker.infoLog
        .split('\n')
        .map((l) => `  | ${l}`)
        .join('\n'),
    );

  const mod = cubin.load();
  const x = Float32Array.from({ length: N }, (_, i) => (i % 1000) / 8);
  const dx = dev.allocate(4 * N);
  const dy = dev.allocate(4 * N);
  dx.copyFrom(x);
  const block = 256;
  mod.kernel('applyAffine').launch({ grid: Math.ceil(N / block), block }, dx, dy, f32(3), f32(-1), i32(N));
  const y = dy.copyTo(new Float32Array(N));
  for (const r of [dx, dy, mod]) r.close();

  let bad = 0;
  for (let i = 0; i < N; i++) if (y[i] !== Math.fround(Math.fround(3 * x[i]) - 1)) bad++;
  console.log(`> y = 3 * x - 1 for ${N} elements: ${bad === 0 ? 'all correct' : `${bad} wrong`}`);
  console.log(`Result = ${bad === 0 ? 'PASS' : 'FAIL'}`);
  return bad === 0 ? 0 : 1;
}

process.exitCode = main();
