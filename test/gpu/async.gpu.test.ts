// Waiting without blocking the event loop: a timer keeps firing while a kernel spins for 200 ms.
import { cudart, nvrtc } from '../../src';
import { describeGpu, okFor, rtOk } from './helpers';

const nvOk = okFor<nvrtc.nvrtcResult>(nvrtc.nvrtcResult.NVRTC_SUCCESS, nvrtc.nvrtcResult);

/** A kernel that spins for `ns` nanoseconds, compiled with NVRTC and loaded through the runtime. */
function spinKernel(): cudart.cudaKernel_t {
  const src =
    'extern "C" __global__ void spin(unsigned long long ns) { unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); unsigned long long t = t0; while (t - t0 < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); }';
  const [prog] = nvOk(nvrtc.nvrtcCreateProgram(src, 'spin.cu', 0, null, null), 'nvrtcCreateProgram');
  const [, p] = cudart.cudaGetDeviceProperties(0);
  const opts = [`--gpu-architecture=sm_${p!.major}${p!.minor}`];
  nvOk(nvrtc.nvrtcCompileProgram(prog!, opts.length, opts), 'nvrtcCompileProgram');
  const [size] = nvOk(nvrtc.nvrtcGetCUBINSize(prog!), 'nvrtcGetCUBINSize');
  const cubin = Buffer.alloc(size!);
  nvOk(nvrtc.nvrtcGetCUBIN(prog!, cubin), 'nvrtcGetCUBIN');
  nvrtc.nvrtcDestroyProgram(prog!);
  const [lib] = rtOk(cudart.cudaLibraryLoadData(cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadData');
  const [k] = rtOk(cudart.cudaLibraryGetKernel(lib!, 'spin'), 'cudaLibraryGetKernel');
  return k!;
}

describeGpu('async waits on a GPU', () => {
  let kernel: cudart.cudaKernel_t;
  beforeAll(() => {
    rtOk(cudart.cudaSetDevice(0), 'cudaSetDevice');
    kernel = spinKernel();
  });
  const one = { x: 1, y: 1, z: 1 };
  const spin = (stream: cudart.cudaStream_t | null) =>
    rtOk(cudart.cudaLaunchKernel(kernel, one, one, [cudart.u64(200_000_000n)], 0, stream), 'cudaLaunchKernel');

  /** Counts 10 ms timer ticks while `wait` runs. */
  async function ticksDuring(wait: () => Promise<[number]>): Promise<{ ticks: number; ms: number; status: number }> {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const t0 = Date.now();
    const [status] = await wait();
    clearInterval(timer);
    return { ticks, ms: Date.now() - t0, status };
  }

  test('cudaStreamSynchronize on a stream', async () => {
    const [s] = rtOk(cudart.cudaStreamCreate(), 'cudaStreamCreate');
    spin(s!);
    const r = await ticksDuring(() => cudart.async.cudaStreamSynchronize(s!));
    expect(r.status).toBe(0);
    expect(r.ms).toBeGreaterThanOrEqual(150);
    expect(r.ticks).toBeGreaterThanOrEqual(8);
    cudart.cudaStreamDestroy(s);
  });

  test('cudaStreamSynchronize on the legacy default stream (null) of the caller', async () => {
    spin(null);
    const r = await ticksDuring(() => cudart.async.cudaStreamSynchronize(null));
    expect([r.status, r.ms >= 150, r.ticks >= 8]).toEqual([0, true, true]);
  });

  test('cudaEventSynchronize', async () => {
    const [ev] = rtOk(cudart.cudaEventCreate(), 'cudaEventCreate');
    spin(null);
    cudart.cudaEventRecord(ev, null);
    const r = await ticksDuring(() => cudart.async.cudaEventSynchronize(ev));
    expect([r.status, r.ms >= 150, r.ticks >= 8]).toEqual([0, true, true]);
    cudart.cudaEventDestroy(ev);
  });

  test("cudaDeviceSynchronize waits for every stream of the caller's device", async () => {
    const [s] = rtOk(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
    spin(s!);
    const r = await ticksDuring(() => cudart.async.cudaDeviceSynchronize());
    expect([r.status, r.ms >= 150, r.ticks >= 8]).toEqual([0, true, true]);
    expect(cudart.cudaStreamQuery(s)).toEqual([0]);
    cudart.cudaStreamDestroy(s);
  });

  test('1000 concurrent awaited waits all settle', async () => {
    const [s] = rtOk(cudart.cudaStreamCreate(), 'cudaStreamCreate');
    const all = await Promise.all(Array.from({ length: 1000 }, () => cudart.async.cudaStreamSynchronize(s!)));
    expect(all.every(([e]) => e === 0)).toBe(true);
    cudart.cudaStreamDestroy(s);
  });
});
