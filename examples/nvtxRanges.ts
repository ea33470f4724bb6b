// nvtxRanges: NVTX ranges and markers around GPU work, for Nsight Systems. Run it under a profiler,
//   nsys profile -t cuda,nvtx -o ranges npx tsx examples/nvtxRanges.ts
// and the timeline shows the 'setup', 'iteration n' and 'verify' ranges (coloured, with the iteration
// as payload) over the copies and kernels, the 'app' domain's 'checkpoint' markers, and the
// registered 'scale' string. Without a profiler the calls do nothing and cost a few ns.
//   npx tsx examples/nvtxRanges.ts
// Exits with status 1, and one line on stderr saying why, when a device or NVRTC is missing.
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { Program, NvtxDomain, nvtx, f32, i32 } = core;

const SOURCE = `
extern "C" __global__ void scale(float *x, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}`;

async function main(): Promise<number> {
  const dev = firstDevice('nvtxRanges');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name}`);
  console.log(`> NVTX tool: ${nvtx.tool ?? 'none attached (run under nsys to see the ranges)'}`);
  using domain = NvtxDomain.create('app');
  const scaleName = domain.registerString('scale');
  domain.nameCategory(1, 'compute');

  const n = 1 << 20;
  const iterations = 5;
  nvtx.rangePush({ message: 'setup', color: 'blue' });
  using stream = dev.createStream({ nonBlocking: true });
  using mod = Program.compile(SOURCE, { name: 'nvtxRanges.cu' }).load();
  const kernel = mod.kernel('scale');
  using x = dev.allocate(n * 4);
  x.copyFrom(new Float32Array(n).fill(1));
  nvtx.rangePop();

  for (let it = 0; it < iterations; it++) {
    nvtx.rangePush({ message: `iteration ${it}`, color: 'green', payload: it });
    domain.rangePush({ message: scaleName, category: 1 });
    kernel.launch({ grid: Math.ceil(n / 256), block: 256, stream }, x, f32(2), i32(n));
    domain.rangePop();
    domain.mark({ message: 'checkpoint', payload: BigInt(it) });
    await stream.synchronize();
    nvtx.rangePop();
  }

  const ok = await nvtx.rangeAsync({ message: 'verify', color: 'orange' }, async () => {
    const y = await x.copyToAsync(new Float32Array(n));
    return y.every((v) => v === 2 ** iterations);
  });
  console.log(`> ${iterations} iterations of x *= 2 inside ranges: every element ${ok ? `is ${2 ** iterations}` : 'is NOT right'}`);
  console.log(`Result = ${ok ? 'PASS' : 'FAIL'}`);
  return ok ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`nvtxRanges: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
