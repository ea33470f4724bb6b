// The CUDA driver API and NVRTC against a real device: every test checks values the GPU, the driver
// or the compiler produced (device properties as the runtime sees them, copied data, kernel results,
// compiler logs, mangled names). Without libcuda or a device the whole suite is skipped, and its title
// says why; without libnvrtc only the parts that compile kernels are.
import { cudart, cuda, nvrtc } from '../../src';
import { fillPattern, patternMismatches, okFor, rtOk } from './helpers';

const { CUresult } = cuda;
const SUCCESS = CUresult.CUDA_SUCCESS;
const NVRTC_SUCCESS = nvrtc.nvrtcResult.NVRTC_SUCCESS;
const MiB = 1 << 20;

type Probe = { run: boolean; title: string };

/** Why a library could not be loaded, in one line. */
function loadFailure(e: unknown): string | null {
  if (!(e instanceof cuda.LibraryLoadError)) return null;
  const a = e.attempts[0];
  return a ? `${a.candidate}: ${a.reason}` : e.message.split('\n')[0];
}

/** Whether libcuda, libcudart and a device are there; when not, a title that says why the suite is skipped. */
function probeDriver(): Probe {
  try {
    const [err] = cuda.cuInit(0);
    if (err !== SUCCESS) {
      const [, name] = cuda.cuGetErrorName(err);
      return { run: false, title: `no CUDA device: cuInit(0) returned ${name ?? err}` };
    }
    const [cerr, count] = cuda.cuDeviceGetCount();
    if (cerr !== SUCCESS) return { run: false, title: `no CUDA device: cuDeviceGetCount returned ${CUresult[cerr] ?? cerr}` };
    if (!count) return { run: false, title: 'no CUDA device: cuDeviceGetCount returned 0 devices' };
    const [, version] = cuda.cuDriverGetVersion();
    try {
      cudart.cudaRuntimeGetVersion();
    } catch (e) {
      const why = loadFailure(e);
      if (why === null) throw e;
      return { run: false, title: `no libcudart (the driver suite checks the driver against the runtime): ${why}` };
    }
    return { run: true, title: `CUDA driver API (driver ${version}) on ${count} device(s)` };
  } catch (e) {
    const why = loadFailure(e);
    if (why === null) throw e;
    return { run: false, title: `no libcuda: ${why}` };
  }
}

function probeNvrtc(): Probe {
  try {
    const [err, major, minor] = nvrtc.nvrtcVersion();
    if (err !== NVRTC_SUCCESS) return { run: false, title: `NVRTC unusable: nvrtcVersion returned ${nvrtc.nvrtcResult[err] ?? err}` };
    return { run: true, title: `NVRTC ${major}.${minor}` };
  } catch (e) {
    const why = loadFailure(e);
    if (why === null) throw e;
    return { run: false, title: `no libnvrtc: ${why}` };
  }
}

const gpu = probeDriver();
const nv: Probe = gpu.run ? probeNvrtc() : { run: false, title: 'NVRTC' };
const describeGpu = gpu.run ? describe : describe.skip;
const describeNvrtc = nv.run ? describe : describe.skip;

/** Check that a driver, runtime or NVRTC call succeeded and give back its outputs, known non-null. */
const ok = okFor<cuda.CUresult>(SUCCESS, CUresult);
const nvOk = okFor<nvrtc.nvrtcResult>(NVRTC_SUCCESS, nvrtc.nvrtcResult);

/** The name of a driver status, so that a failed expectation shows names rather than numbers. */
function errName(err: cuda.CUresult): string {
  return CUresult[err] ?? `CUresult ${err}`;
}

/** Where `got` differs from `want(i)`: a count and the first few, for a readable failure. */
function mismatches(got: ArrayLike<number>, want: (i: number) => number): { count: number; first: string[] } {
  let count = 0;
  const first: string[] = [];
  for (let i = 0; i < got.length; i++) {
    const w = want(i);
    if (got[i] !== w) {
      if (count < 5) first.push(`[${i}] = ${got[i]}, want ${w}`);
      count++;
    }
  }
  return { count, first };
}

/** The program log of an NVRTC program, as text. */
function programLog(prog: nvrtc.nvrtcProgram): string {
  const [size] = nvOk(nvrtc.nvrtcGetProgramLogSize(prog), 'nvrtcGetProgramLogSize');
  const buf = Buffer.alloc(Math.max(1, size));
  nvOk(nvrtc.nvrtcGetProgramLog(prog, buf), 'nvrtcGetProgramLog');
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end < 0 ? buf.length : end);
}

interface Compiled {
  /** The PTX (NUL-terminated, as the driver wants it) or the CUBIN. */
  image: Buffer;
  log: string;
  /** Lowered names of the name expressions. */
  lowered: Map<string, string>;
}

/** Compiles with NVRTC to PTX (`--gpu-architecture=compute_XY`) or CUBIN (`sm_XY`); throws with the log on error. */
function compile(src: string, name: string, output: 'ptx' | 'cubin', cc: string, nameExpressions: string[] = []): Compiled {
  const [prog] = nvOk(nvrtc.nvrtcCreateProgram(src, name, 0, null, null), 'nvrtcCreateProgram');
  try {
    for (const e of nameExpressions) nvOk(nvrtc.nvrtcAddNameExpression(prog, e), `nvrtcAddNameExpression(${e})`);
    const opts = [`--gpu-architecture=${output === 'ptx' ? 'compute' : 'sm'}_${cc}`];
    const [cerr] = nvrtc.nvrtcCompileProgram(prog, opts.length, opts);
    const log = programLog(prog);
    if (cerr !== NVRTC_SUCCESS) throw new Error(`nvrtcCompileProgram(${name}, ${opts}) returned ${nvrtc.nvrtcResult[cerr]}:\n${log}`);
    let image: Buffer;
    if (output === 'ptx') {
      const [size] = nvOk(nvrtc.nvrtcGetPTXSize(prog), 'nvrtcGetPTXSize');
      image = Buffer.alloc(size);
      nvOk(nvrtc.nvrtcGetPTX(prog, image), 'nvrtcGetPTX');
    } else {
      const [size] = nvOk(nvrtc.nvrtcGetCUBINSize(prog), 'nvrtcGetCUBINSize');
      image = Buffer.alloc(size);
      nvOk(nvrtc.nvrtcGetCUBIN(prog, image), 'nvrtcGetCUBIN');
    }
    const lowered = new Map<string, string>();
    for (const e of nameExpressions) lowered.set(e, nvOk(nvrtc.nvrtcGetLoweredName(prog, e), `nvrtcGetLoweredName(${e})`)[0]);
    return { image, log, lowered };
  } finally {
    nvOk(nvrtc.nvrtcDestroyProgram(prog), 'nvrtcDestroyProgram');
  }
}

/** The JIT's wall time (the driver writes it back as a float into the option's value slot). */
const jitWallTimeMs = (jit: cuda.JitOptions): number => jit.wallTime;

const SAXPY = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
`;

const COUNTER = `
__device__ int counter = 5;
extern "C" __global__ void bump() { counter += 1; }
`;

jest.setTimeout(120_000);

describeGpu(gpu.title, () => {
  /** Device 0's compute capability as NVRTC spells it: "90". */
  let cc = '';
  let count = 0;

  beforeAll(() => {
    ok(cuda.cuInit(0), 'cuInit');
    [count] = ok(cuda.cuDeviceGetCount(), 'cuDeviceGetCount');
    // The runtime makes device 0's primary context current on this thread: the driver calls below use it.
    rtOk(cudart.cudaSetDevice(0), 'cudaSetDevice(0)');
    rtOk(cudart.cudaFree(null), 'cudaFree(null)');
    const A = cuda.CUdevice_attribute;
    const [major] = ok(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), 'compute capability major');
    const [minor] = ok(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0), 'compute capability minor');
    cc = `${major}${minor}`;
  });

  describe('initialization and devices', () => {
    test('cuInit, cuDriverGetVersion, cuDeviceGetCount agree with the runtime', () => {
      ok(cuda.cuInit(0), 'cuInit again');
      const [version] = ok(cuda.cuDriverGetVersion(), 'cuDriverGetVersion');
      expect(version).toBeGreaterThanOrEqual(13000);
      expect(version).toBe(rtOk(cudart.cudaDriverGetVersion(), 'cudaDriverGetVersion')[0]);
      expect(cuda.libraryInfo().version).toBe(version);
      expect(count).toBeGreaterThanOrEqual(1);
      expect(count).toBe(rtOk(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount')[0]);
    });

    test('every device: name, memory, compute capability and UUID equal cudaGetDeviceProperties', () => {
      const A = cuda.CUdevice_attribute;
      for (let i = 0; i < count; i++) {
        const [dev] = ok(cuda.cuDeviceGet(i), `cuDeviceGet(${i})`);
        expect(dev).toBe(i);
        const [prop] = rtOk(cudart.cudaGetDeviceProperties(i), `cudaGetDeviceProperties(${i})`);

        const [name] = ok(cuda.cuDeviceGetName(256, dev), 'cuDeviceGetName');
        expect(name.length).toBeGreaterThan(0);
        expect(name).toBe(prop.name);

        const [total] = ok(cuda.cuDeviceTotalMem(dev), 'cuDeviceTotalMem');
        expect(total).toBeGreaterThan(0);
        expect(total).toBe(prop.totalGlobalMem);

        const [major] = ok(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), 'major');
        const [minor] = ok(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), 'minor');
        expect(major).toBe(prop.major);
        expect(minor).toBe(prop.minor);
        expect(major).toBeGreaterThanOrEqual(7);
        expect(ok(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), 'SM count')[0]).toBe(
          prop.multiProcessorCount,
        );
        expect(ok(cuda.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev), 'warp size')[0]).toBe(32);

        const [uuid] = ok(cuda.cuDeviceGetUuid(dev), 'cuDeviceGetUuid');
        expect(Array.from(uuid.bytes)).toEqual(Array.from(prop.uuid.bytes));
        expect(uuid.bytes.some((b) => b !== 0)).toBe(true);
      }
      // An ordinal past the last device is refused.
      const [err, none] = cuda.cuDeviceGet(count);
      expect(errName(err)).toBe('CUDA_ERROR_INVALID_DEVICE');
      expect(none).toBeNull();
    });
  });

  describe('contexts', () => {
    test('the runtime uses the primary context: cuDevicePrimaryCtxRetain is what cuCtxGetCurrent returns', () => {
      rtOk(cudart.cudaSetDevice(0), 'cudaSetDevice(0)');
      rtOk(cudart.cudaFree(null), 'cudaFree(null)');
      const [primary] = ok(cuda.cuDevicePrimaryCtxRetain(0), 'cuDevicePrimaryCtxRetain(0)');
      try {
        expect(primary).not.toBe(0n);
        const [current] = ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent');
        expect(current).toBe(primary);
        expect(ok(cuda.cuCtxGetDevice(), 'cuCtxGetDevice')[0]).toBe(0);
        const [, active] = ok(cuda.cuDevicePrimaryCtxGetState(0), 'cuDevicePrimaryCtxGetState');
        expect(active).toBe(1);
        // Memory from cudaMalloc belongs to that context.
        const [p] = rtOk(cudart.cudaMalloc(4096), 'cudaMalloc');
        try {
          const [owner] = ok(
            cuda.cuPointerGetAttribute(cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT, p),
            'CONTEXT of a cudaMalloc pointer',
          );
          expect(owner).toBe(primary);
        } finally {
          rtOk(cudart.cudaFree(p), 'cudaFree');
        }
      } finally {
        ok(cuda.cuDevicePrimaryCtxRelease(0), 'cuDevicePrimaryCtxRelease(0)');
      }
      // The runtime still holds its own reference: the context is still active and current.
      expect(ok(cuda.cuDevicePrimaryCtxGetState(0), 'cuDevicePrimaryCtxGetState')[1]).toBe(1);
      expect(ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent')[0]).toBe(primary);
    });

    test('every device: cuCtxCreate, push / pop / get current / get device, allocate in it, cuCtxDestroy', () => {
      const [before] = ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent');
      expect(before).not.toBe(0n);
      const P = cuda.CUpointer_attribute;
      for (let i = 0; i < count; i++) {
        const [dev] = ok(cuda.cuDeviceGet(i), `cuDeviceGet(${i})`);
        const [ctx] = ok(cuda.cuCtxCreate(null, 0, dev), `cuCtxCreate(null, 0, ${dev})`);
        let destroyed = false;
        try {
          expect(ctx).not.toBe(0n);
          expect(ctx).not.toBe(before);
          // A new context is pushed as current.
          expect(ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent')[0]).toBe(ctx);
          expect(ok(cuda.cuCtxGetDevice(), 'cuCtxGetDevice')[0]).toBe(dev);
          const [version] = ok(cuda.cuCtxGetApiVersion(ctx), 'cuCtxGetApiVersion');
          expect(version).toBeGreaterThanOrEqual(3020);

          // Memory allocated now belongs to this context and this device.
          const [p] = ok(cuda.cuMemAlloc(MiB), 'cuMemAlloc');
          try {
            expect(ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_CONTEXT, p), 'CONTEXT')[0]).toBe(ctx);
            expect(ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p), 'DEVICE_ORDINAL')[0]).toBe(i);
            ok(cuda.cuMemsetD32(p, 0x600d + i, MiB / 4), 'cuMemsetD32');
            const back = new Uint32Array(MiB / 4);
            ok(cuda.cuMemcpyDtoH(back, p, MiB), 'cuMemcpyDtoH');
            expect(back.every((w) => w === 0x600d + i)).toBe(true);
          } finally {
            ok(cuda.cuMemFree(p), 'cuMemFree');
          }

          // Pop it: the previous context is current again; push it back.
          const [popped] = ok(cuda.cuCtxPopCurrent(), 'cuCtxPopCurrent');
          expect(popped).toBe(ctx);
          expect(ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent')[0]).toBe(before);
          expect(ok(cuda.cuCtxGetDevice(), 'cuCtxGetDevice')[0]).toBe(0);
          ok(cuda.cuCtxPushCurrent(ctx), 'cuCtxPushCurrent');
          expect(ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent')[0]).toBe(ctx);
          expect(ok(cuda.cuCtxGetDevice(), 'cuCtxGetDevice')[0]).toBe(dev);
          ok(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');

          // Destroying the current context pops it.
          ok(cuda.cuCtxDestroy(ctx), 'cuCtxDestroy');
          destroyed = true;
          expect(ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent')[0]).toBe(before);
        } finally {
          if (!destroyed) cuda.cuCtxDestroy(ctx);
        }
      }
      expect(ok(cuda.cuCtxGetCurrent(), 'cuCtxGetCurrent')[0]).toBe(before);
    });
  });

  describe('memory', () => {
    test('cuMemAlloc, HtoD / DtoD / DtoH of a 1 MiB pattern, cuMemsetD32, cuMemGetInfo, cuMemFree', () => {
      const bytes = MiB;
      const words = bytes / 4;
      const [free0, total] = ok(cuda.cuMemGetInfo(), 'cuMemGetInfo');
      expect(free0).toBeGreaterThan(0);
      expect(free0).toBeLessThanOrEqual(total);
      const [devTotal] = ok(cuda.cuDeviceTotalMem(0), 'cuDeviceTotalMem');
      expect(Math.abs(total - devTotal) / devTotal).toBeLessThan(0.01);

      const [a] = ok(cuda.cuMemAlloc(bytes), 'cuMemAlloc a');
      const [b] = ok(cuda.cuMemAlloc(bytes), 'cuMemAlloc b');
      const [big] = ok(cuda.cuMemAlloc(64 * MiB), 'cuMemAlloc 64 MiB');
      let free1 = 0;
      try {
        expect(typeof a).toBe('bigint');
        expect(a).not.toBe(0n);
        expect(b).not.toBe(a);
        [free1] = ok(cuda.cuMemGetInfo(), 'cuMemGetInfo');
        expect(free0 - free1).toBeGreaterThanOrEqual(64 * MiB);

        const src = new Uint32Array(words);
        fillPattern(src, 0xc0ffee);
        ok(cuda.cuMemcpyHtoD(a, src, bytes), 'cuMemcpyHtoD');
        ok(cuda.cuMemcpyDtoD(b, a, bytes), 'cuMemcpyDtoD');
        const back = new Uint32Array(words);
        ok(cuda.cuMemcpyDtoH(back, b, bytes), 'cuMemcpyDtoH');
        expect(patternMismatches(back, 0xc0ffee)).toBe(0);
        back.fill(0);
        ok(cuda.cuMemcpyDtoH(back, a, bytes), 'cuMemcpyDtoH of the source');
        expect(patternMismatches(back, 0xc0ffee)).toBe(0);

        // A partial copy at an offset: words [1000, 2000) of b.
        const part = new Uint32Array(1000);
        ok(cuda.cuMemcpyDtoH(part, b + 4000n, 4000), 'cuMemcpyDtoH at an offset');
        expect(Array.from(part)).toEqual(Array.from(src.subarray(1000, 2000)));

        // cuMemsetD32 over all of b, then over 100 words at word 1024.
        ok(cuda.cuMemsetD32(b, 0xdeadbeef, words), 'cuMemsetD32');
        ok(cuda.cuMemsetD32(b + 4096n, 0x12345678, 100), 'cuMemsetD32 at an offset');
        ok(cuda.cuMemcpyDtoH(back, b, bytes), 'cuMemcpyDtoH after memset');
        const m = mismatches(back, (i) => (i >= 1024 && i < 1124 ? 0x12345678 : 0xdeadbeef));
        expect(m).toEqual({ count: 0, first: [] });
      } finally {
        ok(cuda.cuMemFree(big), 'cuMemFree');
        ok(cuda.cuMemFree(b), 'cuMemFree');
        ok(cuda.cuMemFree(a), 'cuMemFree');
      }
      // Freeing gives the 64 MiB back.
      const [free2] = ok(cuda.cuMemGetInfo(), 'cuMemGetInfo');
      expect(free2 - free1).toBeGreaterThanOrEqual(60 * MiB);
    });

    test('runtime and driver together: cudaMalloc memory through cuMemcpy, pointer attributes', () => {
      const bytes = MiB;
      const words = bytes / 4;
      const P = cuda.CUpointer_attribute;
      const [d] = rtOk(cudart.cudaMalloc(bytes), 'cudaMalloc');
      const [e] = ok(cuda.cuMemAlloc(bytes), 'cuMemAlloc');
      try {
        // Driver writes, runtime reads; runtime writes, driver reads.
        const src = new Uint32Array(words);
        fillPattern(src, 0xfeedface);
        ok(cuda.cuMemcpyHtoD(d, src, bytes), 'cuMemcpyHtoD into cudaMalloc memory');
        const back = new Uint32Array(words);
        rtOk(cudart.cudaMemcpy(back, d, bytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost), 'cudaMemcpy D2H');
        expect(patternMismatches(back, 0xfeedface)).toBe(0);
        back.fill(0);
        ok(cuda.cuMemcpyDtoH(back, d, bytes), 'cuMemcpyDtoH from cudaMalloc memory');
        expect(patternMismatches(back, 0xfeedface)).toBe(0);

        fillPattern(src, 0x31337);
        rtOk(cudart.cudaMemcpy(e, src, bytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice), 'cudaMemcpy H2D into cuMemAlloc memory');
        back.fill(0);
        ok(cuda.cuMemcpyDtoH(back, e, bytes), 'cuMemcpyDtoH');
        expect(patternMismatches(back, 0x31337)).toBe(0);

        // One attribute at a time.
        const [type] = ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), 'MEMORY_TYPE');
        expect(type).toBe(cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE);
        const [ordinal] = ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d), 'DEVICE_ORDINAL');
        expect(ordinal).toBe(0);
        const [devPtr] = ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d), 'DEVICE_POINTER');
        expect(devPtr).toBe(d);
        const [start] = ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 100n), 'RANGE_START_ADDR');
        expect(start).toBe(d);
        const [size] = ok(cuda.cuPointerGetAttribute(P.CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 100n), 'RANGE_SIZE');
        expect(BigInt(size)).toBeGreaterThanOrEqual(BigInt(bytes));

        // Several at once, into caller-provided slots.
        const typeOut = Buffer.alloc(4);
        const ptrOut = Buffer.alloc(8);
        ok(
          cuda.cuPointerGetAttributes(
            2,
            [P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, P.CU_POINTER_ATTRIBUTE_DEVICE_POINTER],
            [typeOut, ptrOut],
            d + 256n,
          ),
          'cuPointerGetAttributes',
        );
        expect(typeOut.readInt32LE(0)).toBe(cuda.CUmemorytype.CU_MEMORYTYPE_DEVICE);
        expect(ptrOut.readBigUInt64LE(0)).toBe(d + 256n);
      } finally {
        ok(cuda.cuMemFree(e), 'cuMemFree');
        rtOk(cudart.cudaFree(d), 'cudaFree');
      }
    });
  });

  describe('streams and events', () => {
    test('events around a 64 MiB DtoD copy on a stream: elapsed time > 0, stream query succeeds', () => {
      const bytes = 64 * MiB;
      const [a] = ok(cuda.cuMemAlloc(bytes), 'cuMemAlloc');
      const [b] = ok(cuda.cuMemAlloc(bytes), 'cuMemAlloc');
      const [s] = ok(cuda.cuStreamCreate(cuda.CUstream_flags.CU_STREAM_DEFAULT), 'cuStreamCreate');
      const [start] = ok(cuda.cuEventCreate(cuda.CUevent_flags.CU_EVENT_DEFAULT), 'cuEventCreate');
      const [stop] = ok(cuda.cuEventCreate(cuda.CUevent_flags.CU_EVENT_DEFAULT), 'cuEventCreate');
      try {
        expect(s).not.toBe(0n);
        expect(start).not.toBe(stop);
        ok(cuda.cuMemsetD32(a, 0x01020304, bytes / 4), 'cuMemsetD32');
        ok(cuda.cuMemsetD32(b, 0, bytes / 4), 'cuMemsetD32');
        ok(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');

        ok(cuda.cuEventRecord(start, s), 'cuEventRecord start');
        ok(cuda.cuMemcpyDtoDAsync(b, a, bytes, s), 'cuMemcpyDtoDAsync');
        ok(cuda.cuEventRecord(stop, s), 'cuEventRecord stop');
        ok(cuda.cuStreamSynchronize(s), 'cuStreamSynchronize');
        expect(errName(cuda.cuStreamQuery(s)[0])).toBe('CUDA_SUCCESS');
        expect(errName(cuda.cuEventQuery(stop)[0])).toBe('CUDA_SUCCESS');

        const [ms] = ok(cuda.cuEventElapsedTime(start, stop), 'cuEventElapsedTime');
        expect(ms).toBeGreaterThan(0);
        expect(ms).toBeLessThan(10_000);

        // The copy really happened: the first and last words of the destination.
        const head = new Uint32Array(1024);
        ok(cuda.cuMemcpyDtoH(head, b, 4096), 'cuMemcpyDtoH head');
        expect(head.every((w) => w === 0x01020304)).toBe(true);
        head.fill(0);
        ok(cuda.cuMemcpyDtoH(head, b + BigInt(bytes - 4096), 4096), 'cuMemcpyDtoH tail');
        expect(head.every((w) => w === 0x01020304)).toBe(true);
      } finally {
        ok(cuda.cuEventDestroy(stop), 'cuEventDestroy');
        ok(cuda.cuEventDestroy(start), 'cuEventDestroy');
        ok(cuda.cuStreamDestroy(s), 'cuStreamDestroy');
        ok(cuda.cuMemFree(b), 'cuMemFree');
        ok(cuda.cuMemFree(a), 'cuMemFree');
      }
    });
  });

  describe('errors', () => {
    test('cuGetErrorName and cuGetErrorString for every CUresult', () => {
      const values = Object.values(CUresult).filter((v): v is cuda.CUresult => typeof v === 'number');
      expect(values.length).toBeGreaterThan(90);
      const bad: string[] = [];
      for (const v of values) {
        const [nerr, name] = cuda.cuGetErrorName(v);
        if (nerr !== SUCCESS || name !== CUresult[v]) bad.push(`cuGetErrorName(${v}) = [${errName(nerr)}, ${name}], want ${CUresult[v]}`);
        const [serr, text] = cuda.cuGetErrorString(v);
        if (serr !== SUCCESS || typeof text !== 'string' || text.length === 0)
          bad.push(`cuGetErrorString(${v}) = [${errName(serr)}, ${JSON.stringify(text)}]`);
      }
      expect(bad).toEqual([]);
      expect(cuda.cuGetErrorString(CUresult.CUDA_ERROR_INVALID_VALUE)).toEqual([SUCCESS, 'invalid argument']);
      // A value that is no CUresult.
      const [uerr, uname] = cuda.cuGetErrorName(12345 as cuda.CUresult);
      expect(errName(uerr)).toBe('CUDA_ERROR_INVALID_VALUE');
      expect(uname).toBeNull();
    });
  });

  describeNvrtc(nv.title, () => {
    test('nvrtcVersion is 13.x; the supported architectures include sm_90 and this device', () => {
      const [major, minor] = nvOk(nvrtc.nvrtcVersion(), 'nvrtcVersion');
      expect(major).toBe(13);
      expect(minor).toBeGreaterThanOrEqual(0);

      const [n] = nvOk(nvrtc.nvrtcGetNumSupportedArchs(), 'nvrtcGetNumSupportedArchs');
      expect(n).toBeGreaterThan(0);
      // C fills an array of n ints; the binding asks for n, allocates it and returns the list (as cuda-python).
      const [st, list] = nvrtc.nvrtcGetSupportedArchs();
      expect(st).toBe(NVRTC_SUCCESS);
      expect(list).toHaveLength(n);
      expect(list).toContain(90);
      expect(list).toContain(Number(cc));
      expect([...list!].sort((x, y) => x - y)).toEqual(list); // documented as ascending
    });

    test('a compile error: NVRTC_ERROR_COMPILATION and a log that names line 3 and the identifier', () => {
      const src = ['// line 1', 'extern "C" __global__ void broken(int *p) {', '  int x = undefined_thing;', '  p[0] = x;', '}', ''].join(
        '\n',
      );
      const [prog] = nvOk(nvrtc.nvrtcCreateProgram(src, 'broken.cu', 0, null, null), 'nvrtcCreateProgram');
      try {
        const opts = [`--gpu-architecture=compute_${cc}`];
        const [err] = nvrtc.nvrtcCompileProgram(prog, opts.length, opts);
        expect(nvrtc.nvrtcResult[err]).toBe('NVRTC_ERROR_COMPILATION');
        const [size] = nvOk(nvrtc.nvrtcGetProgramLogSize(prog), 'nvrtcGetProgramLogSize');
        expect(size).toBeGreaterThan(1);
        const buf = Buffer.alloc(size);
        nvOk(nvrtc.nvrtcGetProgramLog(prog, buf), 'nvrtcGetProgramLog');
        expect(buf[size - 1]).toBe(0);
        const log = buf.toString('utf8', 0, size - 1);
        expect(log).toContain('undefined_thing');
        expect(log).toMatch(/\(3\): error/);
      } finally {
        nvOk(nvrtc.nvrtcDestroyProgram(prog), 'nvrtcDestroyProgram');
      }
      const [, text] = nvrtc.nvrtcGetErrorString(nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION);
      expect(typeof text).toBe('string');
      expect(text.length).toBeGreaterThan(0);
      expect(text).toBe('NVRTC_ERROR_COMPILATION');
    });

    test('name expressions: &f<int> lowers to a mangled name that cuModuleGetFunction finds', () => {
      const src = 'template<typename T> __global__ void f(T *p) {}\n';
      const [prog] = nvOk(nvrtc.nvrtcCreateProgram(src, 'tmpl.cu', 0, null, null), 'nvrtcCreateProgram');
      try {
        nvOk(nvrtc.nvrtcAddNameExpression(prog, '&f<int>'), 'nvrtcAddNameExpression');
        // Lowered names exist only after compiling.
        expect(nvrtc.nvrtcResult[nvrtc.nvrtcGetLoweredName(prog, '&f<int>')[0]]).toBe('NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION');
      } finally {
        nvOk(nvrtc.nvrtcDestroyProgram(prog), 'nvrtcDestroyProgram');
      }

      const { image, lowered } = compile(src, 'tmpl.cu', 'cubin', cc, ['&f<int>']);
      const name = lowered.get('&f<int>')!;
      expect(name).toMatch(/^_Z/);
      expect(name).toContain('1fIi');
      const [mod] = ok(cuda.cuModuleLoadData(image), 'cuModuleLoadData');
      try {
        const [fn] = ok(cuda.cuModuleGetFunction(mod, name), `cuModuleGetFunction(${name})`);
        expect(fn).not.toBe(0n);
        expect(ok(cuda.cuFuncGetName(fn), 'cuFuncGetName')[0]).toBe(name);
        // The unmangled name is not there.
        expect(errName(cuda.cuModuleGetFunction(mod, 'f')[0])).toBe('CUDA_ERROR_NOT_FOUND');
      } finally {
        ok(cuda.cuModuleUnload(mod), 'cuModuleUnload');
      }
    });

    test('saxpy compiled by NVRTC loads through either API: PTX + JIT, CUBIN, and the runtime library API', () => {
      const n = 1 << 20;
      const block = 256;
      const grid = Math.ceil(n / block);

      const ptx = compile(SAXPY, 'saxpy.cu', 'ptx', cc).image;
      expect(ptx[ptx.length - 1]).toBe(0);
      const ptxText = ptx.toString('utf8', 0, ptx.length - 1);
      expect(ptxText).toContain('.entry saxpy');
      expect(ptxText).toContain(`.target sm_${cc}`);
      const cubin = compile(SAXPY, 'saxpy.cu', 'cubin', cc).image;
      expect(Array.from(cubin.subarray(0, 4))).toEqual([0x7f, 0x45, 0x4c, 0x46]); // ELF

      const jit = new cuda.JitOptions({ [cuda.CUjit_option.CU_JIT_WALL_TIME]: 0, [cuda.CUjit_option.CU_JIT_LOG_VERBOSE]: 1 });
      const [ptxMod] = ok(cuda.cuModuleLoadDataEx(ptx, jit.count, jit.options, jit.values), 'cuModuleLoadDataEx(PTX)');
      const [cubinMod] = ok(cuda.cuModuleLoadData(cubin), 'cuModuleLoadData(CUBIN)');
      const [s] = ok(cuda.cuStreamCreate(cuda.CUstream_flags.CU_STREAM_DEFAULT), 'cuStreamCreate');
      const [dx] = ok(cuda.cuMemAlloc(n * 4), 'cuMemAlloc x');
      const [dy] = ok(cuda.cuMemAlloc(n * 4), 'cuMemAlloc y');
      let lib: cudart.cudaLibrary_t | null = null;
      try {
        expect(typeof jit.infoLog).toBe('string');
        expect(jit.errorLog).toBe('');
        const wall = jitWallTimeMs(jit);
        expect(Number.isFinite(wall)).toBe(true);
        expect(wall).toBeGreaterThanOrEqual(0);

        const [fPtx] = ok(cuda.cuModuleGetFunction(ptxMod, 'saxpy'), 'cuModuleGetFunction (PTX module)');
        const [fCubin] = ok(cuda.cuModuleGetFunction(cubinMod, 'saxpy'), 'cuModuleGetFunction (CUBIN module)');
        expect(fPtx).not.toBe(fCubin);
        expect(ok(cuda.cuFuncGetName(fPtx), 'cuFuncGetName')[0]).toBe('saxpy');

        // Values chosen so that every result is exact in float, with or without FMA.
        const x = new Float32Array(n);
        const y = new Float32Array(n);
        for (let i = 0; i < n; i++) {
          x[i] = i;
          y[i] = (n - i) * 0.5;
        }
        ok(cuda.cuMemcpyHtoD(dx, x, n * 4), 'cuMemcpyHtoD x');
        ok(cuda.cuMemcpyHtoD(dy, y, n * 4), 'cuMemcpyHtoD y');
        ok(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');
        const out = new Float32Array(n);

        // 1. The JIT-compiled PTX, typed arguments: y = 2.5 x + y = 2i + n/2.
        ok(
          cuda.cuLaunchKernel(fPtx, grid, 1, 1, block, 1, 1, 0, s, [cuda.f32(2.5), cuda.ptr(dx), cuda.ptr(dy), cuda.i32(n)], null),
          'cuLaunchKernel (PTX)',
        );
        ok(cuda.cuStreamSynchronize(s), 'cuStreamSynchronize');
        ok(cuda.cuMemcpyDtoH(out, dy, n * 4), 'cuMemcpyDtoH');
        expect(mismatches(out, (i) => 2 * i + n / 2)).toEqual({ count: 0, first: [] });

        // 2. The CUBIN, arguments as one buffer through `extra`: y = -1 x + y = i + n/2.
        const packed = new cuda.KernelArgs([cuda.f32(-1), cuda.ptr(dx), cuda.ptr(dy), cuda.i32(n)]);
        expect(packed.buffer.length).toBe(28);
        const extra = cuda.launchParamBuffer(packed);
        ok(cuda.cuLaunchKernel(fCubin, grid, 1, 1, block, 1, 1, 0, s, null, extra), 'cuLaunchKernel (CUBIN, extra)');
        ok(cuda.cuStreamSynchronize(s), 'cuStreamSynchronize');
        ok(cuda.cuMemcpyDtoH(out, dy, n * 4), 'cuMemcpyDtoH');
        expect(mismatches(out, (i) => i + n / 2)).toEqual({ count: 0, first: [] });
        // The packed buffer's layout is the kernel's parameter layout (asked after the launch has loaded the function).
        const layout = [0, 1, 2, 3].map((k) => ok(cuda.cuFuncGetParamInfo(fCubin, k), `cuFuncGetParamInfo(${k})`));
        expect(layout).toEqual([
          [0, 4],
          [8, 8],
          [16, 8],
          [24, 4],
        ]);

        // 3. The same CUBIN through the runtime: y = 0.5 x + y = 1.5i + n/2.
        [lib] = rtOk(cudart.cudaLibraryLoadData(cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadData');
        const [kernel] = rtOk(cudart.cudaLibraryGetKernel(lib, 'saxpy'), 'cudaLibraryGetKernel');
        expect(kernel).not.toBe(0n);
        rtOk(
          cudart.cudaLaunchKernel(
            kernel,
            new cudart.dim3({ x: grid, y: 1, z: 1 }),
            new cudart.dim3({ x: block, y: 1, z: 1 }),
            [cuda.f32(0.5), cuda.ptr(dx), cuda.ptr(dy), cuda.i32(n)],
            0,
            cudart.cudaStream_t(s),
          ),
          'cudaLaunchKernel (cudaLibrary)',
        );
        ok(cuda.cuStreamSynchronize(s), 'cuStreamSynchronize');
        ok(cuda.cuMemcpyDtoH(out, dy, n * 4), 'cuMemcpyDtoH');
        expect(mismatches(out, (i) => 1.5 * i + n / 2)).toEqual({ count: 0, first: [] });

        // x was only read.
        const xBack = new Float32Array(n);
        ok(cuda.cuMemcpyDtoH(xBack, dx, n * 4), 'cuMemcpyDtoH x');
        expect(mismatches(xBack, (i) => i)).toEqual({ count: 0, first: [] });
      } finally {
        if (lib !== null) rtOk(cudart.cudaLibraryUnload(lib), 'cudaLibraryUnload');
        ok(cuda.cuMemFree(dy), 'cuMemFree');
        ok(cuda.cuMemFree(dx), 'cuMemFree');
        ok(cuda.cuStreamDestroy(s), 'cuStreamDestroy');
        ok(cuda.cuModuleUnload(cubinMod), 'cuModuleUnload');
        ok(cuda.cuModuleUnload(ptxMod), 'cuModuleUnload');
      }
    });

    test('cuModuleGetGlobal: read, bump on the device, write, read back a __device__ int', () => {
      const { image } = compile(COUNTER, 'counter.cu', 'cubin', cc);
      const [mod] = ok(cuda.cuModuleLoadData(image), 'cuModuleLoadData');
      try {
        const [addr, size] = ok(cuda.cuModuleGetGlobal(mod, 'counter'), 'cuModuleGetGlobal(counter)');
        expect(addr).not.toBe(0n);
        expect(size).toBe(4);
        const [bump] = ok(cuda.cuModuleGetFunction(mod, 'bump'), 'cuModuleGetFunction(bump)');
        const v = new Int32Array(1);
        const read = (): number => {
          ok(cuda.cuCtxSynchronize(), 'cuCtxSynchronize');
          v[0] = -1;
          ok(cuda.cuMemcpyDtoH(v, addr, 4), 'cuMemcpyDtoH(counter)');
          return v[0];
        };
        expect(read()).toBe(5);
        ok(cuda.cuLaunchKernel(bump, 1, 1, 1, 1, 1, 1, 0, null, null, null), 'cuLaunchKernel(bump)');
        expect(read()).toBe(6);
        ok(cuda.cuMemcpyHtoD(addr, new Int32Array([100]), 4), 'cuMemcpyHtoD(counter)');
        expect(read()).toBe(100);
        ok(cuda.cuLaunchKernel(bump, 1, 1, 1, 1, 1, 1, 0, null, [], null), 'cuLaunchKernel(bump) with an empty argument list');
        expect(read()).toBe(101);
        expect(errName(cuda.cuModuleGetGlobal(mod, 'no_such_global')[0])).toBe('CUDA_ERROR_NOT_FOUND');
      } finally {
        ok(cuda.cuModuleUnload(mod), 'cuModuleUnload');
      }
    });
  });
});
