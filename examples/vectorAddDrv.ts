// vectorAddDrv: CUDA's sample of that name through the driver API, with the kernel compiled at run
// time by NVRTC (the sample loads a prebuilt fatbin; here NVRTC builds a CUBIN for this device).
//   npx tsx examples/vectorAddDrv.ts
// Exits with status 1, and one line on stderr saying why, when libcuda, libnvrtc or a device is missing.
import { cuda, nvrtc } from 'cuda-bindings';
import { check, checkNvrtc, compile, CudaCallError, missingLibraries } from './lib/driver';

const N = 50000;
const THREADS_PER_BLOCK = 256;

const KERNEL = `
extern "C" __global__ void VecAdd_kernel(const float *A, const float *B, float *C, int N) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
`;

function main(): number {
  const missing = missingLibraries('vectorAddDrv');
  if (missing) {
    console.error(missing);
    return 1;
  }
  console.log('Vector Addition (Driver API)');

  const [initErr] = cuda.cuInit(0);
  if (initErr !== cuda.CUresult.CUDA_SUCCESS) {
    const [, name] = cuda.cuGetErrorName(initErr);
    console.error(`cuInit failed: ${name ?? initErr}: no usable CUDA device (check the driver and CUDA_VISIBLE_DEVICES)`);
    return 1;
  }

  const allocations: bigint[] = [];
  let ctx: cuda.CUcontext | null = null;
  let mod: cuda.CUmodule | null = null;
  try {
    const [count] = check(cuda.cuDeviceGetCount(), 'cuDeviceGetCount');
    if (count === 0) {
      console.error('no CUDA device found');
      return 1;
    }
    const [dev] = check(cuda.cuDeviceGet(0), 'cuDeviceGet(0)');
    const [name] = check(cuda.cuDeviceGetName(256, dev), 'cuDeviceGetName');
    const A = cuda.CUdevice_attribute;
    const [major] = check(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), 'cuDeviceGetAttribute');
    const [minor] = check(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), 'cuDeviceGetAttribute');
    const [nvMajor, nvMinor] = checkNvrtc(nvrtc.nvrtcVersion(), 'nvrtcVersion');
    console.log(`> Using CUDA Device [0]: ${name} (compute capability ${major}.${minor})`);

    [ctx] = check(cuda.cuCtxCreate(null, 0, dev), 'cuCtxCreate');

    const arch = `sm_${major}${minor}`;
    const cubin = compile(KERNEL, 'vectorAdd_kernel.cu', arch, 'cubin');
    console.log(`> NVRTC ${nvMajor}.${nvMinor} compiled VecAdd_kernel for ${arch} (${cubin.length} bytes of CUBIN)`);
    [mod] = check(cuda.cuModuleLoadData(cubin), 'cuModuleLoadData');
    const [vecAdd] = check(cuda.cuModuleGetFunction(mod, 'VecAdd_kernel'), 'cuModuleGetFunction(VecAdd_kernel)');

    const bytes = N * 4;
    const hA = new Float32Array(N);
    const hB = new Float32Array(N);
    const hC = new Float32Array(N);
    for (let i = 0; i < N; i++) {
      hA[i] = Math.random();
      hB[i] = Math.random();
    }

    const alloc = (what: string): bigint => {
      const [p] = check(cuda.cuMemAlloc(bytes), `cuMemAlloc(${what})`);
      allocations.push(p);
      return p;
    };
    const dA = alloc('d_A');
    const dB = alloc('d_B');
    const dC = alloc('d_C');
    check(cuda.cuMemcpyHtoD(dA, hA, bytes), 'cuMemcpyHtoD(d_A)');
    check(cuda.cuMemcpyHtoD(dB, hB, bytes), 'cuMemcpyHtoD(d_B)');

    const blocksPerGrid = Math.ceil(N / THREADS_PER_BLOCK);
    console.log(`CUDA kernel launch with ${blocksPerGrid} blocks of ${THREADS_PER_BLOCK} threads`);
    check(
      cuda.cuLaunchKernel(
        vecAdd,
        blocksPerGrid,
        1,
        1,
        THREADS_PER_BLOCK,
        1,
        1,
        0,
        null,
        [cuda.ptr(dA), cuda.ptr(dB), cuda.ptr(dC), cuda.i32(N)],
        null,
      ),
      'cuLaunchKernel',
    );
    check(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');
    check(cuda.cuMemcpyDtoH(hC, dC, bytes), 'cuMemcpyDtoH(d_C)');

    // Every element, as the sample checks it.
    let bad = -1;
    for (let i = 0; i < N; i++) {
      if (Math.abs(hA[i] + hB[i] - hC[i]) > 1e-7) {
        bad = i;
        break;
      }
    }
    if (bad >= 0) {
      console.error(`Result verification failed at element ${bad}: ${hA[bad]} + ${hB[bad]} != ${hC[bad]}`);
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
    for (const p of allocations) cuda.cuMemFree(p);
    if (mod !== null) cuda.cuModuleUnload(mod);
    if (ctx !== null) cuda.cuCtxDestroy(ctx);
  }
}

process.exitCode = main();
