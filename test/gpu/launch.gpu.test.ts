// Kernel launches on a GPU: every scalar width, a struct by value, 64 arguments, the pre-packed form,
// cudaLaunchKernelExC with a cluster dimension, a cooperative launch, attributes and occupancy.
import { cudart, nvrtc } from '../../src';
import { describeGpu, rtOk } from './helpers';

const ok = rtOk;
const { i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, ptr } = cudart;

const SRC = `
struct S { char c; double d; };
extern "C" __global__ void widths(signed char a, unsigned char b, short c, unsigned short d, int e, unsigned f,
    long long g, unsigned long long h, unsigned short half, float i, double j, S s, double *out) {
  out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f; out[6] = (double)g; out[7] = (double)h;
  out[8] = half; out[9] = i; out[10] = j; out[11] = s.c; out[12] = s.d;
}
#define A8(p) int p##0, int p##1, int p##2, int p##3, int p##4, int p##5, int p##6, int p##7
#define S8(p) p##0 + p##1 + p##2 + p##3 + p##4 + p##5 + p##6 + p##7
extern "C" __global__ void many(A8(a), A8(b), A8(c), A8(d), A8(e), A8(f), A8(g),
    int h0, int h1, int h2, int h3, int h4, int h5, int h6, long long *out) {
  *out = S8(a) + S8(b) + S8(c) + S8(d) + S8(e) + S8(f) + S8(g) + h0 + h1 + h2 + h3 + h4 + h5 + h6;
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(int *out) { out[blockIdx.x] = blockIdx.x + 1; }
extern "C" __global__ void fill(int *out, int v) { out[blockIdx.x * blockDim.x + threadIdx.x] = v; }
`;

describeGpu('kernel launches on a GPU', () => {
  let lib: cudart.cudaLibrary_t;
  let out: bigint;
  const kernel = (name: string) => ok(cudart.cudaLibraryGetKernel(lib, name), 'cudaLibraryGetKernel')[0];
  const one = { x: 1, y: 1, z: 1 };
  beforeAll(() => {
    ok(cudart.cudaSetDevice(0) as [cudart.cudaError_t], 'cudaSetDevice');
    const [, prog] = nvrtc.nvrtcCreateProgram(SRC, 'launch.cu', 0, null, null);
    const [, p] = cudart.cudaGetDeviceProperties(0);
    const opts = [`--gpu-architecture=sm_${p!.major}${p!.minor}`];
    const [cerr] = nvrtc.nvrtcCompileProgram(prog!, 1, opts);
    if (cerr !== 0) {
      const [, n] = nvrtc.nvrtcGetProgramLogSize(prog!);
      const log = Buffer.alloc(n!);
      nvrtc.nvrtcGetProgramLog(prog!, log);
      throw new Error(log.toString());
    }
    const [, size] = nvrtc.nvrtcGetCUBINSize(prog!);
    const cubin = Buffer.alloc(size!);
    nvrtc.nvrtcGetCUBIN(prog!, cubin);
    nvrtc.nvrtcDestroyProgram(prog!);
    [lib] = ok(cudart.cudaLibraryLoadData(cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadData');
    [out] = ok(cudart.cudaMalloc(1 << 16), 'cudaMalloc');
  });
  afterAll(() => {
    cudart.cudaFree(out);
    cudart.cudaLibraryUnload(lib);
  });

  test('each scalar width and a struct by value arrive intact', () => {
    class S extends cudart.CStruct {
      static layout = { cType: 'struct S', path: '', size: 16, align: 8, union: false, fields: {} };
      static view(m: Uint8Array) {
        return new S(m);
      }
      constructor(m?: Uint8Array) {
        super(16, m);
        this._dv.setInt8(this._o, -7);
        this._dv.setFloat64(this._o + 8, 6.5, true);
      }
    }
    const args = [
      i8(-5),
      u8(250),
      i16(-30000),
      u16(60000),
      i32(-2_000_000_000),
      u32(4_000_000_000),
      i64(-(2n ** 40n)),
      u64(2n ** 50n),
      f16.bits(0x3c00),
      f32(1.5),
      f64(-0.125),
      new S(),
      ptr(out),
    ];
    ok(cudart.cudaLaunchKernel(kernel('widths'), one, one, args, 0, null) as [cudart.cudaError_t], 'cudaLaunchKernel');
    const got = new Float64Array(13);
    ok(cudart.cudaMemcpy(got, out, 13 * 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost) as [cudart.cudaError_t], 'cudaMemcpy');
    expect(Array.from(got)).toEqual([-5, 250, -30000, 60000, -2e9, 4e9, -(2 ** 40), 2 ** 50, 0x3c00, 1.5, -0.125, -7, 6.5]);
  });

  test('64 arguments, per call and pre-packed with one changed in place', () => {
    const ints = Array.from({ length: 63 }, (_, k) => i32(k + 1));
    ok(cudart.cudaLaunchKernel(kernel('many'), one, one, [...ints, ptr(out)], 0, null) as [cudart.cudaError_t], 'cudaLaunchKernel');
    const got = new BigInt64Array(1);
    cudart.cudaMemcpy(got, out, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(got[0]).toBe(BigInt((63 * 64) / 2));
    const packed = new cudart.KernelArgs([...ints, ptr(out)]);
    packed.set(0, 1001);
    ok(cudart.cudaLaunchKernel(kernel('many'), one, one, packed, 0, null) as [cudart.cudaError_t], 'cudaLaunchKernel');
    cudart.cudaMemcpy(got, out, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(got[0]).toBe(BigInt((63 * 64) / 2 + 1000));
  });

  test('cudaLaunchKernelExC with a launch attribute, and cudaFuncGetAttributes / occupancy', () => {
    const k = kernel('fill');
    const attr = new cudart.cudaLaunchAttribute({ id: cudart.cudaLaunchAttributeID.cudaLaunchAttributePriority });
    attr.val.priority = 0;
    const config = new cudart.cudaLaunchConfig_t({
      gridDim: { x: 4, y: 1, z: 1 },
      blockDim: { x: 64, y: 1, z: 1 },
      dynamicSmemBytes: 0,
      stream: null,
      attrs: [attr],
      numAttrs: 1,
    });
    ok(cudart.cudaLaunchKernelExC(config, k, [ptr(out), i32(42)]) as [cudart.cudaError_t], 'cudaLaunchKernelExC');
    const got = new Int32Array(256);
    cudart.cudaMemcpy(got, out, 256 * 4, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(got.every((x) => x === 42)).toBe(true);
    const [fa] = ok(cudart.cudaFuncGetAttributes(k), 'cudaFuncGetAttributes');
    expect(fa.maxThreadsPerBlock).toBeGreaterThan(0);
    const [blocks] = ok(cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(k, 64, 0), 'occupancy');
    expect(blocks).toBeGreaterThan(0);
  });

  test('a kernel with compile-time cluster dimensions, and a cooperative launch', () => {
    cudart.cudaMemset(out, 0, 64);
    ok(cudart.cudaLaunchKernel(kernel('clustered'), { x: 8, y: 1, z: 1 }, one, [ptr(out)], 0, null) as [cudart.cudaError_t], 'clustered');
    const got = new Int32Array(8);
    cudart.cudaMemcpy(got, out, 32, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(Array.from(got)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    ok(
      cudart.cudaLaunchCooperativeKernel(kernel('fill'), { x: 2, y: 1, z: 1 }, { x: 32, y: 1, z: 1 }, [ptr(out), i32(7)], 0, null) as [
        cudart.cudaError_t,
      ],
      'cooperative',
    );
    const coop = new Int32Array(64);
    cudart.cudaMemcpy(coop, out, 256, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(coop.every((x) => x === 7)).toBe(true);
  });
});
