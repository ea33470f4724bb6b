// vectorAddDrv: CUDA's sample of that name through the driver API, with the kernel compiled at run
// time by NVRTC (the sample loads a prebuilt fatbin; here NVRTC builds a CUBIN for this device).
//   npx tsx examples/vectorAddDrv.ts
// Exits with status 1, and one line on stderr saying why, when libcuda, libnvrtc or a device is missing.
import { cuda, nvrtc } from '../src';

const N = 50000;
const THREADS_PER_BLOCK = 256;

const KERNEL = `
extern "C" __global__ void VecAdd_kernel(const float *A, const float *B, float *C, int N) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < N) C[i] = A[i] + B[i];
}
`;

/** Thrown when a call fails; main() prints it and sets the exit status. */
class CudaCallError extends Error {}

/** The outputs of a driver call that must succeed. */
function check<T extends unknown[]>(r: readonly [cuda.CUresult, ...T], what: string): { [K in keyof T]: NonNullable<T[K]> } {
  const [err, ...out] = r;
  if (err !== cuda.CUresult.CUDA_SUCCESS) {
    const [, name] = cuda.cuGetErrorName(err);
    const [, text] = cuda.cuGetErrorString(err);
    throw new CudaCallError(`${what} failed: ${name ?? err} (${err}): ${text ?? 'unknown error'}`);
  }
  return out as { [K in keyof T]: NonNullable<T[K]> };
}

/** The outputs of an NVRTC call that must succeed. */
function checkNvrtc<T extends unknown[]>(r: readonly [nvrtc.nvrtcResult, ...T], what: string, log = ''): { [K in keyof T]: NonNullable<T[K]> } {
  const [err, ...out] = r;
  if (err !== nvrtc.nvrtcResult.NVRTC_SUCCESS) {
    const [, text] = nvrtc.nvrtcGetErrorString(err);
    throw new CudaCallError(`${what} failed: ${text} (${err})${log ? `\n${log}` : ''}`);
  }
  return out as { [K in keyof T]: NonNullable<T[K]> };
}

/** Which of libcuda and libnvrtc cannot be loaded, with what to do, in one line; null when both load. */
function missingLibraries(): string | null {
  const missing: string[] = [];
  const hints: string[] = [];
  const probe = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof cuda.LibraryLoadError)) throw e;
      missing.push(e.label);
      hints.push(e.message.split('\n').pop() ?? '');
    }
  };
  probe(() => cuda.cuDriverGetVersion());
  probe(() => nvrtc.nvrtcVersion());
  if (missing.length === 0) return null;
  return `vectorAddDrv needs ${missing.join(' and ')}, which could not be loaded: ${hints.join(' ')}`;
}

/** NVRTC source → CUBIN for `sm_XY`. */
function compileCubin(src: string, arch: string): Buffer {
  const [prog] = checkNvrtc(nvrtc.nvrtcCreateProgram(src, 'vectorAdd_kernel.cu', 0, null, null), 'nvrtcCreateProgram');
  try {
    const opts = [`--gpu-architecture=${arch}`];
    const [err] = nvrtc.nvrtcCompileProgram(prog, opts.length, opts);
    if (err !== nvrtc.nvrtcResult.NVRTC_SUCCESS) {
      const [, size] = nvrtc.nvrtcGetProgramLogSize(prog);
      const log = Buffer.alloc(Math.max(1, size ?? 1));
      nvrtc.nvrtcGetProgramLog(prog, log);
      checkNvrtc([err], `nvrtcCompileProgram(${opts.join(' ')})`, log.toString('utf8').replace(/\0.*$/s, ''));
    }
    const [size] = checkNvrtc(nvrtc.nvrtcGetCUBINSize(prog), 'nvrtcGetCUBINSize');
    const cubin = Buffer.alloc(size);
    checkNvrtc(nvrtc.nvrtcGetCUBIN(prog, cubin), 'nvrtcGetCUBIN');
    return cubin;
  } finally {
    nvrtc.nvrtcDestroyProgram(prog);
  }
}

function main(): number {
  const missing = missingLibraries();
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
    const cubin = compileCubin(KERNEL, arch);
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
      cuda.cuLaunchKernel(vecAdd, blocksPerGrid, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, null, [cuda.ptr(dA), cuda.ptr(dB), cuda.ptr(dC), cuda.i32(N)], null),
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
