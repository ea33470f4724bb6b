// nvJitLink, nvFatbin and libNVVM on a GPU machine: the facades as cuda-python's test_nvjitlink.py,
// test_nvfatbin.py and test_nvvm.py exercise them, then core's Linker, ObjectCode.fatbin and NVVM
// programs producing kernels whose results are checked. Without a device the suite is skipped,
// and its title says why.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core, nvjitlink, nvfatbin, nvvm } from '../../src';
import { describeGpu, okFor } from './helpers';
import { KERNEL_CU, MATH_CU } from './fixtures/affine-units';

const { Device, Program, Linker, ObjectCode, LinkError, f32, i32 } = core;

const J = nvjitlink.nvJitLinkResult;
const F = nvfatbin.nvFatbinResult;
const jok = okFor(J.NVJITLINK_SUCCESS, J);
const fok = okFor(F.NVFATBIN_SUCCESS, F);

// CUDA 13 compiles for Turing (sm_75) and newer: cuda-python's older sm_60 row is left out.
const ARCHS = ['sm_75', 'sm_80', 'sm_90'];
const PTX_VERSIONS = ['6.4', '7.0', '8.5'];
// nvJitLink reads PTX as a C string: the bytes end before a NUL that sits right after them, as a
// Python bytes object's do in cuda-python's test (without it the result depended on the next byte).
const nulTerminated = (text: string) => {
  const b = Buffer.from(`${text}\0`);
  return b.subarray(0, b.length - 1);
};
const ptxFor = (version: string, arch: string) =>
  nulTerminated(`
.version ${version}
.target ${arch}
.address_size 64

.visible .entry _Z6kernelPi(
    .param .u64 _Z6kernelPi_param_0
)
{
    .reg .b32   %r<3>;
    .reg .b64   %rd<3>;

    ld.param.u64    %rd1, [_Z6kernelPi_param_0];
    cvta.to.global.u64  %rd2, %rd1;
    mov.u32     %r1, %tid.x;
    add.u32     %r2, %r1, 41;
    st.global.u32   [%rd2+0], %r2;
    ret;
}
`);

let tmp = '';
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'linking-gpu-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * The entries of a fatbin container as its headers list them: the container (magic 0xBA55ED50, u16
 * version, u16 header size, u64 size), then per entry u16 kind (1 PTX, 2 ELF, 8 LTO-IR), u32 header
 * size at 4, u32 padded payload size at 8 and u32 SM at 28; as nvcc -fatbin and fatbinary write it.
 */
function fatbinEntries(bin: Uint8Array): { kind: string; sm: number }[] {
  const b = Buffer.from(bin.buffer, bin.byteOffset, bin.byteLength);
  expect(b.readUInt32LE(0)).toBe(0xba55ed50);
  const start = b.readUInt16LE(6);
  const end = start + Number(b.readBigUInt64LE(8));
  const kinds: Record<number, string> = { 1: 'ptx', 2: 'elf', 8: 'ltoir' };
  const out: { kind: string; sm: number }[] = [];
  for (let at = start; at < end; at += b.readUInt32LE(at + 4) + b.readUInt32LE(at + 8))
    out.push({ kind: kinds[b.readUInt16LE(at)] ?? `kind ${b.readUInt16LE(at)}`, sm: b.readUInt32LE(at + 28) });
  return out;
}

/** The device's architecture digits ('90'). */
const digits = () => Device.get(0).computeCapability.join('');

/** Runs `name(int *out)` on one thread; returns out[0]. */
function runOneInt(mod: core.Module, name: string): number {
  const d = Device.get(0);
  const out = d.allocate(4);
  out.copyFrom(new Int32Array([-1]));
  mod.kernel(name).launch({ grid: 1, block: 1 }, out);
  const r = out.copyTo(new Int32Array(1))[0];
  out.close();
  return r;
}

/** Launches `name(const float *x, float *y, float a, float b, int n)`; returns how many y != a * x + b. */
function affineMismatches(mod: core.Module, name: string, n = 10_007): number {
  const d = Device.get(0);
  const x = Float32Array.from({ length: n }, (_, i) => (i % 977) / 4);
  const dx = d.allocate(4 * n);
  const dy = d.allocate(4 * n);
  dx.copyFrom(x);
  mod.kernel(name).launch({ grid: Math.ceil(n / 256), block: 256 }, dx, dy, f32(3), f32(-1), i32(n));
  const y = dy.copyTo(new Float32Array(n));
  dx.close();
  dy.close();
  let bad = 0;
  for (let i = 0; i < n; i++) if (y[i] !== Math.fround(Math.fround(3 * x[i]) - 1)) bad++;
  return bad;
}

describeGpu('nvJitLink facade (cuda-python test_nvjitlink.py)', () => {
  test('nvJitLinkVersion is 13.x, and every bound symbol is exported by the library loaded', () => {
    const [major, minor] = jok(nvjitlink.nvJitLinkVersion(), 'nvJitLinkVersion');
    expect(major).toBe(13);
    expect(minor).toBeGreaterThanOrEqual(0);
    const lib = nvjitlink.libraryInfo().path;
    const exported = new Set(
      execFileSync('nm', ['-D', '--defined-only', lib])
        .toString()
        .split('\n')
        .map((l) => l.split(' ').pop()!.replace(/@.*/, '')),
    );
    const { declarations } = require('../../src/ffi/nvjitlink.gen');
    expect(
      Object.values(declarations as Record<string, [string]>)
        .map(([s]) => s)
        .filter((s) => !exported.has(s)),
    ).toEqual([]);
  });

  test('an unrecognised option is NVJITLINK_ERROR_UNRECOGNIZED_OPTION; an unknown -arch is refused too', () => {
    expect(nvjitlink.nvJitLinkCreate(1, ['-fictitious_option'])).toEqual([J.NVJITLINK_ERROR_UNRECOGNIZED_OPTION, null]);
    const [e, h] = nvjitlink.nvJitLinkCreate(1, ['-arch=sm_XX']);
    expect([J[e], h]).toEqual([expect.stringMatching(/^NVJITLINK_ERROR_UNRECOGNIZED_(OPTION|ARCH)$/), null]);
  });

  test.each(ARCHS)('create and destroy, and complete an empty link, for %s', (arch) => {
    const [h] = jok(nvjitlink.nvJitLinkCreate(1, [`-arch=${arch}`]), 'nvJitLinkCreate');
    expect(h).not.toBe(0n);
    jok(nvjitlink.nvJitLinkDestroy(h), 'nvJitLinkDestroy');
    const [h2] = jok(nvjitlink.nvJitLinkCreate(1, [`-arch=${arch}`]), 'nvJitLinkCreate');
    jok(nvjitlink.nvJitLinkComplete(h2), 'nvJitLinkComplete');
    const [size] = jok(nvjitlink.nvJitLinkGetErrorLogSize(h2), 'nvJitLinkGetErrorLogSize');
    const log = Buffer.alloc(size);
    jok(nvjitlink.nvJitLinkGetErrorLog(h2, log), 'nvJitLinkGetErrorLog');
    expect(log.length).toBe(size);
    nvjitlink.nvJitLinkDestroy(h2);
  });

  test.each(ARCHS.map((a, i) => [a, PTX_VERSIONS[i]]))(
    'PTX (%s, ISA %s) by data and by file links to a cubin, with an info log',
    (arch, version) => {
      const ptx = ptxFor(version, arch);
      const [h] = jok(nvjitlink.nvJitLinkCreate(1, [`-arch=${arch}`]), 'nvJitLinkCreate');
      jok(
        nvjitlink.nvJitLinkAddData(h, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_ANY, ptx, ptx.length, 'test_data'),
        'nvJitLinkAddData',
      );
      jok(nvjitlink.nvJitLinkComplete(h), 'nvJitLinkComplete');
      const [infoSize] = jok(nvjitlink.nvJitLinkGetInfoLogSize(h), 'nvJitLinkGetInfoLogSize');
      const [info] = jok(nvjitlink.nvJitLinkGetInfoLog(h, null), 'nvJitLinkGetInfoLog');
      expect(info.length).toBe(infoSize);
      const [size] = jok(nvjitlink.nvJitLinkGetLinkedCubinSize(h), 'nvJitLinkGetLinkedCubinSize');
      const [cubin] = jok(nvjitlink.nvJitLinkGetLinkedCubin(h, null), 'nvJitLinkGetLinkedCubin');
      expect(cubin.length).toBe(size);
      expect([...cubin.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
      nvjitlink.nvJitLinkDestroy(h);

      const file = path.join(tmp, `test_file_${arch}.ptx`);
      fs.writeFileSync(file, ptx);
      const [h2] = jok(nvjitlink.nvJitLinkCreate(1, [`-arch=${arch}`]), 'nvJitLinkCreate');
      jok(nvjitlink.nvJitLinkAddFile(h2, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_ANY, file), 'nvJitLinkAddFile');
      jok(nvjitlink.nvJitLinkComplete(h2), 'nvJitLinkComplete');
      nvjitlink.nvJitLinkDestroy(h2);
    },
  );

  test('the cubin linked for this GPU loads and its kernel runs', () => {
    const arch = `sm_${digits()}`;
    const ptx = ptxFor('8.5', 'sm_75');
    const [h] = jok(nvjitlink.nvJitLinkCreate(1, [`-arch=${arch}`]), 'nvJitLinkCreate');
    jok(nvjitlink.nvJitLinkAddData(h, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_PTX, ptx, ptx.length, 'k.ptx'), 'nvJitLinkAddData');
    jok(nvjitlink.nvJitLinkComplete(h), 'nvJitLinkComplete');
    const [cubin] = jok(nvjitlink.nvJitLinkGetLinkedCubin(h, null), 'nvJitLinkGetLinkedCubin');
    nvjitlink.nvJitLinkDestroy(h);
    const mod = ObjectCode.fromBytes(cubin, 'cubin').load();
    expect(runOneInt(mod, '_Z6kernelPi')).toBe(41);
    mod.close();
  });

  test.each(ARCHS)('with -lto -ptx, LTO-IR from NVRTC links to PTX for %s', (arch) => {
    const lto = Program.compile('__global__ void A() {}', { arch, target: 'ltoir', cache: false });
    const [h] = jok(nvjitlink.nvJitLinkCreate(3, [`-arch=${arch}`, '-lto', '-ptx']), 'nvJitLinkCreate');
    jok(
      nvjitlink.nvJitLinkAddData(h, nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_LTOIR, lto.code, lto.code.length, 'test_data'),
      'nvJitLinkAddData',
    );
    jok(nvjitlink.nvJitLinkComplete(h), 'nvJitLinkComplete');
    const [size] = jok(nvjitlink.nvJitLinkGetLinkedPtxSize(h), 'nvJitLinkGetLinkedPtxSize');
    const ptx = Buffer.alloc(size);
    jok(nvjitlink.nvJitLinkGetLinkedPtx(h, ptx), 'nvJitLinkGetLinkedPtx');
    expect(ptx.toString('latin1')).toMatch(/\.visible \.entry _Z1Av/);
    expect(() => nvjitlink.nvJitLinkGetLinkedPtx(h, Buffer.alloc(size - 1))).toThrow(RangeError);
    nvjitlink.nvJitLinkDestroy(h);
  });
});

describeGpu('nvFatbin facade (cuda-python test_nvfatbin.py)', () => {
  test('nvFatbinGetErrorString is empty for success and says something for every error', () => {
    for (const v of Object.values(F).filter((x): x is number => typeof x === 'number')) {
      const [, s] = nvfatbin.nvFatbinGetErrorString(v);
      if (v === F.NVFATBIN_SUCCESS) expect(s).toBe('');
      else expect(s).not.toBe('');
    }
  });

  test('version, every symbol exported, an empty fatbin, and an unsupported option', () => {
    const [major] = fok(nvfatbin.nvFatbinVersion(), 'nvFatbinVersion');
    expect(major).toBe(13);
    const exported = new Set(
      execFileSync('nm', ['-D', '--defined-only', nvfatbin.libraryInfo().path])
        .toString()
        .split('\n')
        .map((l) => l.split(' ').pop()!.replace(/@.*/, '')),
    );
    const { declarations } = require('../../src/ffi/nvfatbin.gen');
    expect(
      Object.values(declarations as Record<string, [string]>)
        .map(([s]) => s)
        .filter((s) => !exported.has(s)),
    ).toEqual([]);
    const [h] = fok(nvfatbin.nvFatbinCreate([], 0), 'nvFatbinCreate');
    const [size] = fok(nvfatbin.nvFatbinSize(h), 'nvFatbinSize');
    fok(nvfatbin.nvFatbinGet(h, Buffer.alloc(size)), 'nvFatbinGet');
    fok(nvfatbin.nvFatbinDestroy(h), 'nvFatbinDestroy');
    expect(nvfatbin.nvFatbinCreate(['--unsupported_option'], 1)).toEqual([F.NVFATBIN_ERROR_UNRECOGNIZED_OPTION, null]);
  });

  test.each(ARCHS.flatMap((a) => PTX_VERSIONS.map((v) => [a, v])))('PTX for %s (ISA %s) goes into a fatbin', (arch, version) => {
    const ptx = ptxFor(version, arch);
    const [h] = fok(nvfatbin.nvFatbinCreate([], 0), 'nvFatbinCreate');
    fok(nvfatbin.nvFatbinAddPTX(h, ptx, ptx.length, arch.split('_')[1], 'add', `-arch=${arch}`), 'nvFatbinAddPTX');
    const [bin] = fok(nvfatbin.nvFatbinGet(h, null), 'nvFatbinGet');
    expect(bin.length).toBeGreaterThan(ptx.length / 4);
    nvfatbin.nvFatbinDestroy(h);
  });

  test.each(ARCHS)('a cubin and LTO-IR for %s go in under their architecture', (arch) => {
    const cubin = Program.compile('__device__ int inc(int x) { return x + 1; }', { arch, target: 'cubin', cache: false });
    const lto = Program.compile('__global__ void A() {}', { arch, target: 'ltoir', cache: false });
    const [h] = fok(nvfatbin.nvFatbinCreate([], 0), 'nvFatbinCreate');
    fok(nvfatbin.nvFatbinAddCubin(h, cubin.code, cubin.code.length, arch.split('_')[1], 'inc'), 'nvFatbinAddCubin');
    fok(nvfatbin.nvFatbinAddLTOIR(h, lto.code, lto.code.length, arch.split('_')[1], 'lto', ''), 'nvFatbinAddLTOIR');
    const [bin] = fok(nvfatbin.nvFatbinGet(h, null), 'nvFatbinGet');
    nvfatbin.nvFatbinDestroy(h);
    const sm = Number(arch.split('_')[1]);
    expect(fatbinEntries(bin)).toEqual([
      { kind: 'elf', sm },
      { kind: 'ltoir', sm },
    ]);
  });

  test('an sm_80 cubin added as 75 is NVFATBIN_ERROR_ELF_ARCH_MISMATCH', () => {
    const cubin = Program.compile('__device__ int inc(int x) { return x + 1; }', { arch: 'sm_80', target: 'cubin', cache: false });
    const [h] = fok(nvfatbin.nvFatbinCreate([], 0), 'nvFatbinCreate');
    expect(nvfatbin.nvFatbinAddCubin(h, cubin.code, cubin.code.length, '75', 'inc')).toEqual([F.NVFATBIN_ERROR_ELF_ARCH_MISMATCH]);
    nvfatbin.nvFatbinDestroy(h);
  });

  test('a host object from nvcc goes in with nvFatbinAddReloc', () => {
    const src = path.join(tmp, 'object.cu');
    fs.writeFileSync(src, '__global__ void A() {}\n');
    const nvcc =
      ['/usr/local/cuda/bin/nvcc', process.env.CUDA_HOME && path.join(process.env.CUDA_HOME, 'bin', 'nvcc')].find(
        (p) => p && fs.existsSync(p),
      ) ?? 'nvcc';
    const r = spawnSync(nvcc, ['-c', '-arch', `sm_${digits()}`, '-o', path.join(tmp, 'object.o'), src], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const obj = fs.readFileSync(path.join(tmp, 'object.o'));
    const [h] = fok(nvfatbin.nvFatbinCreate([], 0), 'nvFatbinCreate');
    fok(nvfatbin.nvFatbinAddReloc(h, obj, obj.length), 'nvFatbinAddReloc');
    fok(nvfatbin.nvFatbinGet(h, null), 'nvFatbinGet');
    nvfatbin.nvFatbinDestroy(h);
  });
});

describeGpu('core: Linker, fatbins and NVVM IR producing kernels that compute the right result', () => {
  test('LTO link of two NVRTC units through nvJitLink: the kernel computes a * x + b', () => {
    const math = Program.compile(MATH_CU, { name: 'math.cu', target: 'ltoir', cache: false });
    const kernel = Program.compile(KERNEL_CU, { name: 'kernel.cu', target: 'ltoir', cache: false });
    expect([math.objectCode.kind, kernel.objectCode.kind]).toEqual(['ltoir', 'ltoir']);
    const linker = new Linker(math.objectCode, kernel.objectCode, { lto: true, optimization: 3, cache: false });
    const cubin = linker.link('cubin');
    expect([linker.backend, cubin.kind, cubin.arch]).toEqual(['nvJitLink', 'cubin', `sm_${digits()}`]);
    const mod = cubin.load();
    expect(affineMismatches(mod, 'applyAffine')).toBe(0);
    mod.close();
  });

  test("the same units as relocatable cubins through the driver's cuLink* (forced): the same result; LTO-IR refused", () => {
    const opts = { target: 'cubin' as const, options: ['--relocatable-device-code=true'], cache: false };
    const math = Program.compile(MATH_CU, { ...opts, name: 'math.cu' });
    const kernel = Program.compile(KERNEL_CU, { ...opts, name: 'kernel.cu' });
    const linker = new Linker(math.objectCode, kernel.objectCode, { backend: 'driver', optimization: 3, cache: false });
    const mod = linker.link().load();
    expect(linker.backend).toBe('cuLink');
    expect(affineMismatches(mod, 'applyAffine')).toBe(0);
    mod.close();
    const lto = Program.compile(MATH_CU, { name: 'math.cu', target: 'ltoir', cache: false });
    expect(() => new Linker(lto.objectCode, kernel.objectCode, { backend: 'driver' }).link()).toThrow(
      /^Linker\.link: objects\[0\] \('math\.cu'\) is LTO-IR, which only nvJitLink links; with \{ backend: 'driver' \}/,
    );
  });

  test('PTX, LTO-IR and a cubin mixed in one link', () => {
    const rdc = ['--relocatable-device-code=true'];
    const addOne = Program.compile('extern "C" __device__ float addOne(float x) { return x + 1.0f; }', {
      name: 'addOne.cu',
      target: 'ptx',
      options: rdc,
      cache: false,
    });
    const timesTwo = Program.compile('extern "C" __device__ float timesTwo(float x) { return 2.0f * x; }', {
      name: 'timesTwo.cu',
      target: 'cubin',
      options: rdc,
      cache: false,
    });
    const kernel = Program.compile(
      `
      extern "C" __device__ float addOne(float x);
      extern "C" __device__ float timesTwo(float x);
      extern "C" __global__ void mixed(float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = timesTwo(addOne((float)i));
      }`,
      { name: 'mixed.cu', target: 'ltoir', cache: false },
    );
    const kinds = [addOne, timesTwo, kernel].map((p) => p.objectCode.kind);
    expect(kinds).toEqual(['ptx', 'cubin', 'ltoir']);
    const mod = new Linker(addOne.objectCode, kernel.objectCode, timesTwo.objectCode, { lto: true, cache: false }).link().load();
    const n = 4099;
    const d = Device.get(0);
    const y = d.allocate(4 * n);
    mod.kernel('mixed').launch({ grid: Math.ceil(n / 128), block: 128 }, y, i32(n));
    const out = y.copyTo(new Float32Array(n));
    y.close();
    mod.close();
    expect(out.every((v, i) => v === 2 * (i + 1))).toBe(true);
  });

  test('a link error carries the log, from nvJitLink and from cuLink*', () => {
    const src =
      'extern "C" __device__ float missingFunction(float);\nextern "C" __global__ void k(float *y) { y[0] = missingFunction(y[0]); }\n';
    const lto = Program.compile(src, { name: 'broken.cu', target: 'ltoir', cache: false });
    const linker = new Linker(lto.objectCode, { lto: true, cache: false });
    let e: unknown;
    try {
      linker.link();
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(LinkError);
    const le = e as InstanceType<typeof LinkError>;
    console.log(`nvJitLink link error: ${le.message}\n${le.errorLog}`);
    expect(le.backend).toBe('nvJitLink');
    expect(le.message).toMatch(/^NVJITLINK_ERROR_\w+: /);
    expect(le.errorLog).toContain('missingFunction');
    expect(linker.errorLog).toBe(le.errorLog);

    const cubin = Program.compile(src, { name: 'broken.cu', target: 'cubin', options: ['--relocatable-device-code=true'], cache: false });
    const driver = new Linker(cubin.objectCode, { backend: 'driver', cache: false });
    let de: unknown;
    try {
      driver.link();
    } catch (x) {
      de = x;
    }
    expect(de).toBeInstanceOf(LinkError);
    console.log(`cuLink link error: ${(de as Error).message}\n${(de as InstanceType<typeof LinkError>).errorLog}`);
    expect((de as InstanceType<typeof LinkError>).backend).toBe('cuLink');
    expect((de as InstanceType<typeof LinkError>).errorLog).toContain('missingFunction');
  });

  test("link('ptx') after LTO gives PTX that loads and runs", () => {
    const math = Program.compile(MATH_CU, { name: 'math.cu', target: 'ltoir', cache: false });
    const kernel = Program.compile(KERNEL_CU, { name: 'kernel.cu', target: 'ltoir', cache: false });
    const ptx = new Linker(math.objectCode, kernel.objectCode, { lto: true, cache: false }).link('ptx');
    expect(ptx.kind).toBe('ptx');
    expect(ptx.text).toMatch(/\.visible \.entry applyAffine\(/);
    const mod = ptx.load();
    expect(affineMismatches(mod, 'applyAffine')).toBe(0);
    mod.close();
  });

  test('a fatbin of sm_90 and sm_80 cubins and PTX loads and runs; one of sm_80 and PTX runs through the PTX on a newer GPU', () => {
    const src = 'extern "C" __global__ void answer(int *out) { out[0] = 42 + __CUDA_ARCH__ / 10; }\n';
    const sm90 = Program.compile(src, { arch: 'sm_90', target: 'cubin', cache: false }).objectCode;
    const sm80 = Program.compile(src, { arch: 'sm_80', target: 'cubin', cache: false }).objectCode;
    const ptx80 = Program.compile(src, { arch: 'compute_80', target: 'ptx', cache: false }).objectCode;
    const fat = ObjectCode.fatbin([sm90, sm80, ptx80]);
    expect(fat.kind).toBe('fatbin');
    expect([...fat.code.subarray(0, 4)]).toEqual([0x50, 0xed, 0x55, 0xba]);
    const arch = Number(digits());
    const mod = fat.load();
    // sm_90 picks its cubin; an sm_8x device the sm_80 one; anything newer JIT-compiles the compute_80 PTX.
    const expected = arch === 90 ? 42 + 90 : 42 + 80;
    expect(runOneInt(mod, 'answer')).toBe(expected);
    mod.close();
    if (arch >= 90) {
      const viaPtx = ObjectCode.fatbin([sm80, ptx80]).load();
      expect(runOneInt(viaPtx, 'answer')).toBe(42 + 80);
      viaPtx.close();
    }
  });

  test('NVVM IR → PTX → launch, with libdevice', () => {
    const [, major, , debugMajor] = nvvm.nvvmIRVersion();
    const ir = `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @__nv_sqrtf(float)
define void @roots(float addrspace(1)* %y) {
entry:
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = sext i32 %i to i64
  %f = sitofp i32 %i to float
  %s = call float @__nv_sqrtf(float %f)
  %p = getelementptr float, float addrspace(1)* %y, i64 %idx
  store float %s, float addrspace(1)* %p, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*)* @roots, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 ${major}, i32 0, i32 ${debugMajor}, i32 0}
`;
    const program = Program.compile(ir, { language: 'nvvm', libdevice: true, cache: false });
    expect(program.objectCode.text).toMatch(new RegExp(`\\.target sm_${digits()}`));
    const mod = program.load();
    const d = Device.get(0);
    const y = d.allocate(4 * 256);
    mod.kernel('roots').launch({ grid: 1, block: 256 }, y);
    const out = y.copyTo(new Float32Array(256));
    y.close();
    mod.close();
    expect(out.every((v, i) => v === Math.fround(Math.sqrt(i)))).toBe(true);
  });

  test('NVVM IR compiled to LTO-IR links with an NVRTC unit through nvJitLink', () => {
    const [, major, , debugMajor] = nvvm.nvvmIRVersion();
    const ir = `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define float @affine(float %a, float %x, float %b) {
entry:
  %m = fmul float %a, %x
  %r = fadd float %m, %b
  ret float %r
}
!nvvmir.version = !{!0}
!0 = !{i32 ${major}, i32 0, i32 ${debugMajor}, i32 0}
`;
    const math = Program.compile(ir, { language: 'nvvm', target: 'ltoir', name: 'affine.ll', cache: false });
    const kernel = Program.compile(KERNEL_CU, { name: 'kernel.cu', target: 'ltoir', cache: false });
    const mod = new Linker(math.objectCode, kernel.objectCode, { lto: true, cache: false }).link().load();
    expect(affineMismatches(mod, 'applyAffine')).toBe(0);
    mod.close();
  });

  test('a linked cubin comes from the disk cache the second time, the same bytes', () => {
    const cache = path.join(tmp, 'cache');
    const math = Program.compile(MATH_CU, { name: 'math.cu', target: 'ltoir', cache });
    const kernel = Program.compile(KERNEL_CU, { name: 'kernel.cu', target: 'ltoir', cache });
    const a = new Linker(math.objectCode, kernel.objectCode, { lto: true, cache }).link();
    const t0 = performance.now();
    const b = new Linker(math.objectCode, kernel.objectCode, { lto: true, cache }).link();
    const t1 = performance.now();
    console.log(`linked cubin from the disk cache in ${(t1 - t0).toFixed(2)} ms`);
    expect(Buffer.from(b.code).equals(Buffer.from(a.code))).toBe(true);
    expect(fs.readdirSync(cache).filter((f) => f.endsWith('.cubin')).length).toBe(1);
  });
});
