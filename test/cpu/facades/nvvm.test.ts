// libNVVM for real: it needs no GPU, and the toolkit puts it on this machine. The facade as
// cuda-python's test_nvvm.py exercises it, then Program.compile with { language: 'nvvm' }.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nvvm } from '../../../src';
import { Program } from '../../../src/core/compile/Program';
import { NvvmError } from '../../../src/core/base/errors';

let missing = '';
try {
  nvvm.libraryInfo();
} catch (e) {
  missing = (e as Error).message.split('\n')[0];
}
// Only where the toolkit lacks libNVVM, and then the reason is in the test's name.
const suite = missing ? describe.skip : describe;
const why = missing ? ` (skipped: ${missing})` : '';

const { nvvmResult: R } = nvvm;
const [, irMajor, , dbgMajor] = missing ? [0, 2, 0, 3] : nvvm.nvvmIRVersion();

/** The smallest kernel, as cuda-python's MINIMAL_NVVMIR_TXT (NVVM's LLVM 7 dialect: typed pointers). */
const MINIMAL =
  Buffer.from(`target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @kernel() {
entry:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void ()* @kernel, !"kernel", i32 1}

!nvvmir.version = !{!1}
!1 = !{i32 ${irMajor}, i32 0, i32 ${dbgMajor}, i32 0}
`);

/** out[i] = a * sqrtf(i): a libdevice call, so libdevice must be linked. */
const SCALE = `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @__nv_sqrtf(float)

define void @scale(float addrspace(1)* %out, float %a) {
entry:
  %i = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = sext i32 %i to i64
  %p = getelementptr float, float addrspace(1)* %out, i64 %idx
  %f = sitofp i32 %i to float
  %s = call float @__nv_sqrtf(float %f)
  %v = fmul float %s, %a
  store float %v, float addrspace(1)* %p, align 4
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float)* @scale, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 ${irMajor}, i32 0, i32 ${dbgMajor}, i32 0}
`;

/** A program, destroyed after `body`. */
function withProgram<T>(body: (p: nvvm.nvvmProgram) => T): T {
  const [err, prog] = nvvm.nvvmCreateProgram();
  expect(err).toBe(R.NVVM_SUCCESS);
  try {
    return body(prog!);
  } finally {
    expect(nvvm.nvvmDestroyProgram(prog)).toEqual([R.NVVM_SUCCESS]);
  }
}
const logOf = (p: nvvm.nvvmProgram) => nvvm.nvvmGetProgramLog(p, null)[1]!.toString('latin1');

suite(`libNVVM facade${why}`, () => {
  test('nvvmVersion and nvvmIRVersion report at least 1.0 and 1.0.0.0', () => {
    const [err, major, minor] = nvvm.nvvmVersion();
    expect(err).toBe(R.NVVM_SUCCESS);
    expect(major! * 100 + minor!).toBeGreaterThanOrEqual(100);
    const v = nvvm.nvvmIRVersion();
    expect(v).toHaveLength(5);
    expect(v[1]).toBeGreaterThanOrEqual(1);
    expect(nvvm.libraryInfo().path).toMatch(/libnvvm\.so\.4/);
  });

  test('nvvmCreateProgram gives a handle', () => {
    withProgram((p) => expect(p).not.toBe(0n));
  });

  test.each(['nvvmCompileProgram', 'nvvmVerifyProgram'] as const)(
    '%s of a program without a module is NVVM_ERROR_NO_MODULE_IN_PROGRAM',
    (fn) => {
      withProgram((p) => expect(nvvm[fn](p, 0, [])).toEqual([R.NVVM_ERROR_NO_MODULE_IN_PROGRAM]));
    },
  );

  test.each([
    ['nvvmCompileProgram', R.NVVM_ERROR_COMPILATION],
    ['nvvmVerifyProgram', R.NVVM_ERROR_INVALID_IR],
  ] as const)('%s of text that is not IR fails with %s and says where in the log', (fn, status) => {
    const bad = Buffer.from('This is not NVVM IR');
    withProgram((p) => {
      expect(nvvm.nvvmAddModuleToProgram(p, bad, bad.length, 'FileNameHere.ll')).toEqual([R.NVVM_SUCCESS]);
      expect(nvvm[fn](p, 0, [])).toEqual([status]);
      expect(logOf(p)).toBe('FileNameHere.ll (1, 0): parse expected top-level entity\0');
    });
  });

  test.each(['nvvmCompileProgram', 'nvvmVerifyProgram'] as const)(
    '%s with an unknown option is NVVM_ERROR_INVALID_OPTION, named in the log',
    (fn) => {
      withProgram((p) => {
        nvvm.nvvmAddModuleToProgram(p, MINIMAL, MINIMAL.length, 'FileNameHere.ll');
        expect(nvvm[fn](p, 1, ['BadOption'])).toEqual([R.NVVM_ERROR_INVALID_OPTION]);
        expect(logOf(p)).toBe('libnvvm : error: BadOption is an unsupported option\0');
      });
    },
  );

  test.each([
    ['nvvmGetCompiledResultSize', 'nvvmGetCompiledResult'],
    ['nvvmGetProgramLogSize', 'nvvmGetProgramLog'],
  ] as const)('before compiling, %s is 1 and %s writes one NUL', (sizeFn, getFn) => {
    withProgram((p) => {
      expect(nvvm[sizeFn](p)).toEqual([R.NVVM_SUCCESS, 1]);
      const buf = Buffer.alloc(1, 0xff);
      expect(nvvm[getFn](p, buf)).toEqual([R.NVVM_SUCCESS, buf]);
      expect([...buf]).toEqual([0]);
    });
  });

  test.each([[[]], [['-opt=0']], [['-opt=3', '-g']]])(
    'the minimal module compiles with options %j: an empty log and a PTX entry',
    (options: string[]) => {
      withProgram((p) => {
        nvvm.nvvmAddModuleToProgram(p, MINIMAL, MINIMAL.length, 'FileNameHere.ll');
        expect(nvvm.nvvmVerifyProgram(p, options.length, options)).toEqual([R.NVVM_SUCCESS]);
        expect(nvvm.nvvmCompileProgram(p, options.length, options)).toEqual([R.NVVM_SUCCESS]);
        expect(nvvm.nvvmGetProgramLogSize(p)).toEqual([R.NVVM_SUCCESS, 1]);
        const [, size] = nvvm.nvvmGetCompiledResultSize(p);
        const [err, ptx] = nvvm.nvvmGetCompiledResult(p, null);
        expect(err).toBe(R.NVVM_SUCCESS);
        expect(ptx!.length).toBe(size);
        expect(ptx!.toString('latin1')).toContain('.visible .entry kernel()');
      });
    },
  );

  test('a buffer smaller than the size call says, or IR shorter than its size, is a RangeError before C', () => {
    withProgram((p) => {
      expect(() => nvvm.nvvmAddModuleToProgram(p, MINIMAL, MINIMAL.length + 1, 'm.ll')).toThrow(
        new RangeError(`nvvmAddModuleToProgram: parameter 'buffer' holds ${MINIMAL.length} bytes but size needs ${MINIMAL.length + 1}`),
      );
      nvvm.nvvmAddModuleToProgram(p, MINIMAL, MINIMAL.length, 'm.ll');
      nvvm.nvvmCompileProgram(p, 0, []);
      const [, size] = nvvm.nvvmGetCompiledResultSize(p);
      expect(() => nvvm.nvvmGetCompiledResult(p, Buffer.alloc(16))).toThrow(
        new RangeError(`nvvmGetCompiledResult: parameter 'buffer' holds 16 bytes but nvvmGetCompiledResultSize says ${size} are written`),
      );
      expect(() => nvvm.nvvmAddModuleToProgram(p, 'text' as never, 4, 'm.ll')).toThrow(TypeError);
    });
  });

  test('nvvmGetErrorString names a status', () => {
    expect(nvvm.nvvmGetErrorString(R.NVVM_ERROR_INVALID_OPTION)).toEqual([R.NVVM_SUCCESS, 'NVVM_ERROR_INVALID_OPTION']);
  });
});

suite(`Program.compile with { language: 'nvvm' }${why}`, () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-nvvm-cache-'));
  afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

  test('NVVM IR compiles to PTX for the architecture asked, with libdevice linked when asked', () => {
    const p = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: true, cache: false });
    expect([p.target, p.arch, p.compiler]).toEqual(['ptx', 'compute_90', expect.stringMatching(/^nvvm \d+\.\d+$/)]);
    const ptx = p.objectCode.text;
    expect(ptx).toMatch(/\.target sm_90/);
    expect(ptx).toMatch(/\.visible \.entry scale\(/);
    // __nv_sqrtf came from libdevice and was inlined: no call is left.
    expect(ptx).toMatch(/sqrt\.rn\.f32/);
    expect(ptx).not.toMatch(/__nv_sqrtf/);
  });

  test('without libdevice, the libdevice call stays unresolved in the PTX', () => {
    const p = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', cache: false });
    expect(p.objectCode.text).toMatch(/__nv_sqrtf/);
  });

  test('bitcode is taken as bytes, and target ltoir gives LTO-IR for a Linker', () => {
    const lib = fs.readFileSync(
      path.join(path.dirname(require('../../../src/core/compile/Program').libdevicePath(true)), 'libdevice.10.bc'),
    );
    expect(lib.subarray(0, 4).toString('hex')).toBe('4243c0de');
    const p = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', target: 'ltoir', libdevice: true, cache: false });
    expect(p.objectCode.kind).toBe('ltoir');
    expect(Buffer.from(p.code.subarray(0, 4)).toString('hex')).toBe('ed434e7f');
    expect(() => p.load()).toThrow(/^Program\.load: LTO-IR does not load; link it first/);
  });

  test('a broken module throws an NvvmError with the status, the first log line and the whole log', () => {
    let err: unknown;
    try {
      Program.compile('This is not NVVM IR', { language: 'nvvm', arch: 'sm_90', name: 'broken.ll', cache: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NvvmError);
    const e = err as NvvmError;
    expect(e.message).toBe('NVVM_ERROR_COMPILATION: broken.ll (1, 0): parse expected top-level entity (in nvvmCompileProgram)');
    expect([e.code, e.compiler, e.log]).toEqual([R.NVVM_ERROR_COMPILATION, 'nvvm', 'broken.ll (1, 0): parse expected top-level entity']);
  });

  test('a compiled module comes from the disk cache the second time', () => {
    const a = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: true, cache });
    const b = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: true, cache });
    const c = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_80', libdevice: true, cache });
    expect([a.fromCache, b.fromCache, c.fromCache]).toEqual([false, true, false]);
    expect(Buffer.from(b.code).equals(Buffer.from(a.code))).toBe(true);
  });

  test('compileAsync: nvvmCompileProgram on the pool gives the PTX of compile, shares its cache, rejects with its NvvmError', async () => {
    const sync = Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: true, cache: false });
    const dir = fs.mkdtempSync(path.join(cache, 'async-'));
    const p = await Program.compileAsync(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: true, cache: dir });
    expect([p.fromCache, p.compiler]).toEqual([false, sync.compiler]);
    expect(p.objectCode.text).toBe(sync.objectCode.text);
    expect(Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: true, cache: dir }).fromCache).toBe(true);
    const err = await Program.compileAsync('This is not NVVM IR', {
      language: 'nvvm',
      arch: 'sm_90',
      name: 'broken.ll',
      cache: false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NvvmError);
    expect((err as NvvmError).message).toBe(
      'NVVM_ERROR_COMPILATION: broken.ll (1, 0): parse expected top-level entity (in nvvmCompileProgram)',
    );
  });

  test('nvvm.async.nvvmCompileProgram resolves with the status of the blocking call; bad arguments reject', async () => {
    const [, prog] = nvvm.nvvmCreateProgram();
    try {
      expect(await nvvm.async.nvvmCompileProgram(prog, 0, null)).toEqual([R.NVVM_ERROR_NO_MODULE_IN_PROGRAM]);
      await expect(nvvm.async.nvvmCompileProgram(prog, 1, [5 as never])).rejects.toThrow(
        new TypeError("async.nvvmCompileProgram: parameter 'options[0]' must be a string, got 5"),
      );
    } finally {
      nvvm.nvvmDestroyProgram(prog);
    }
  });

  test('options that do not apply to NVVM IR are refused, naming the option', () => {
    expect(() => Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', target: 'cubin' })).toThrow(
      "Program.compile: NVVM IR compiles to 'ptx' or 'ltoir', not cubin; link the PTX for a cubin",
    );
    expect(() => Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', compiler: 'nvcc' })).toThrow(
      'Program.compile: NVVM IR is compiled by libNVVM; option \'compiler\' must be left out, got the string "nvcc"',
    );
    expect(() => Program.compile(SCALE, { language: 'nvvm', arch: 'sm_90', libdevice: '/nowhere/libdevice.10.bc' })).toThrow(
      "Program.compile: option 'libdevice' names /nowhere/libdevice.10.bc, which does not exist",
    );
    expect(() => Program.compile('', { language: 'nvvm', arch: 'sm_90' })).toThrow(
      "Program.compile: parameter 'source' must be NVVM IR (text or a Uint8Array of bitcode), got an empty string",
    );
    expect(() => Program.compile('x', { language: 'fortran' as never })).toThrow(
      "Program.compile: option 'language' must be 'c++' or 'nvvm', got the string \"fortran\"",
    );
    expect(() => Program.compile('__global__ void k() {}', { libdevice: true })).toThrow(
      "Program.compile: option 'libdevice' is for NVVM IR ({ language: 'nvvm' }); CUDA C++ links libdevice itself",
    );
  });
});
