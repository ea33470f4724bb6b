// jitProgram: CUDA C++ compiled at run time by NVRTC to PTX, then JIT-compiled by the driver with
// cuModuleLoadDataEx (with its info log and wall time), and a kernel that writes each thread's index.
//   npx tsx examples/jitProgram.ts
// Exits with status 1, and one line on stderr saying why, when libcuda, libnvrtc or a device is missing.
import { performance } from 'node:perf_hooks';
import { cuda, nvrtc } from 'cuda-bindings';
import { check, checkNvrtc, compile, CudaCallError, missingLibraries } from './lib/driver';

const N = 1_000_003; // not a multiple of the block size: the last block is partly idle
const THREADS_PER_BLOCK = 256;

const KERNEL = `
extern "C" __global__ void fillIndex(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}
`;

function main(): number {
  const missing = missingLibraries('jitProgram');
  if (missing) {
    console.error(missing);
    return 1;
  }

  const [initErr] = cuda.cuInit(0);
  if (initErr !== cuda.CUresult.CUDA_SUCCESS) {
    const [, name] = cuda.cuGetErrorName(initErr);
    console.error(`cuInit failed: ${name ?? initErr}: no usable CUDA device (check the driver and CUDA_VISIBLE_DEVICES)`);
    return 1;
  }

  let ctx: cuda.CUcontext | null = null;
  let mod: cuda.CUmodule | null = null;
  let dOut: bigint | null = null;
  try {
    const [dev] = check(cuda.cuDeviceGet(0), 'cuDeviceGet(0)');
    const [name] = check(cuda.cuDeviceGetName(256, dev), 'cuDeviceGetName');
    const A = cuda.CUdevice_attribute;
    const [major] = check(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), 'cuDeviceGetAttribute');
    const [minor] = check(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), 'cuDeviceGetAttribute');
    console.log(`> Using CUDA Device [0]: ${name} (compute capability ${major}.${minor})`);
    [ctx] = check(cuda.cuCtxCreate(null, 0, dev), 'cuCtxCreate');

    // 1. NVRTC: CUDA C++ → PTX.
    const arch = `compute_${major}${minor}`;
    const t0 = performance.now();
    const ptx = compile(KERNEL, 'fillIndex.cu', arch, 'ptx', ['--std=c++17']);
    const t1 = performance.now();
    const [nvMajor, nvMinor] = checkNvrtc(nvrtc.nvrtcVersion(), 'nvrtcVersion');
    console.log(
      `> NVRTC ${nvMajor}.${nvMinor} compiled fillIndex to ${ptx.length - 1} bytes of PTX for ${arch} in ${(t1 - t0).toFixed(1)} ms`,
    );

    // 2. The driver's JIT: PTX → machine code, with its logs and wall time.
    const O = cuda.CUjit_option;
    const jit = new cuda.JitOptions({ [O.CU_JIT_WALL_TIME]: 0, [O.CU_JIT_LOG_VERBOSE]: 1 });
    const t2 = performance.now();
    const [loadErr, loaded] = cuda.cuModuleLoadDataEx(ptx, jit.count, jit.options, jit.values);
    const t3 = performance.now();
    if (loadErr !== cuda.CUresult.CUDA_SUCCESS) {
      if (jit.errorLog) console.error(`JIT error log:\n${jit.errorLog}`);
      check([loadErr], 'cuModuleLoadDataEx');
    }
    mod = loaded;
    console.log(
      `> cuModuleLoadDataEx JIT-compiled the PTX: wall time ${jit.wallTime.toFixed(3)} ms (JIT's own), ${(t3 - t2).toFixed(1)} ms (the call)`,
    );
    console.log(`> JIT info log:${jit.infoLog ? `\n${jit.infoLog}` : ' (empty)'}`);

    // 3. Launch and check.
    const [fill] = check(cuda.cuModuleGetFunction(mod, 'fillIndex'), 'cuModuleGetFunction(fillIndex)');
    const bytes = N * 4;
    [dOut] = check(cuda.cuMemAlloc(bytes), 'cuMemAlloc');
    check(cuda.cuMemsetD32(dOut, 0xffffffff, N), 'cuMemsetD32'); // -1 everywhere, so a missed element shows
    const blocks = Math.ceil(N / THREADS_PER_BLOCK);
    check(cuda.cuLaunchKernel(fill, blocks, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, null, [cuda.ptr(dOut), cuda.i32(N)], null), 'cuLaunchKernel');
    check(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');
    const out = new Int32Array(N);
    check(cuda.cuMemcpyDtoH(out, dOut, bytes), 'cuMemcpyDtoH');
    console.log(`> fillIndex<<<${blocks}, ${THREADS_PER_BLOCK}>>> wrote ${N} elements`);

    let bad = 0;
    let first = -1;
    for (let i = 0; i < N; i++) {
      if (out[i] !== i) {
        if (first < 0) first = i;
        bad++;
      }
    }
    if (bad > 0) {
      console.error(`${bad} elements are wrong; the first is out[${first}] = ${out[first]}`);
      console.log('Result = FAIL');
      return 1;
    }
    console.log('Result = PASS');
    return 0;
  } catch (e) {
    if (!(e instanceof CudaCallError)) throw e;
    console.error(e.message);
    return 1;
  } finally {
    if (dOut !== null) cuda.cuMemFree(dOut);
    if (mod !== null) cuda.cuModuleUnload(mod);
    if (ctx !== null) cuda.cuCtxDestroy(ctx);
  }
}

process.exitCode = main();
