// nvJitLink, nvFatbin and the driver's cuLink* through fakes built by gcc (this machine has none of
// them): the facades' call shapes and checks, and core's ObjectCode, Linker and fatbins.
import koffi from 'koffi';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildFakeLinkers } from '../helpers/fake-linkers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-linking-'));
const libs = buildFakeLinkers(tmp);
// The libraries open on first use: pointing the loader at the fakes before any call is enough.
process.env.CUDA_BINDINGS_NVJITLINK = libs.nvjitlink;
process.env.CUDA_BINDINGS_NVFATBIN = libs.nvfatbin;
process.env.CUDA_BINDINGS_CUDA = libs.cuda;

import { nvjitlink, nvfatbin } from '../../../src';
import { ObjectCode } from '../../../src/core/compile/ObjectCode';
import { Linker, nvJitLinkOptions } from '../../../src/core/compile/Linker';
import { CudaBindingsError, LinkError } from '../../../src/core/base/errors';
import { Program } from '../../../src/core/compile/Program';

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** How many handles a fake holds now, and has made so far. */
const counters = (file: string) => {
  const lib = koffi.load(file);
  const live = lib.func('int fake_live(void)');
  const created = lib.func('int fake_created(void)');
  return { live: () => live() as number, created: () => created() as number };
};
const jit = counters(libs.nvjitlink);
const fat = counters(libs.nvfatbin);
const drv = counters(libs.cuda);

const { nvJitLinkResult: R, nvJitLinkInputType: T } = nvjitlink;
const PTX = Buffer.from('.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n');
const text = (b: Uint8Array) => Buffer.from(b).toString('latin1');

describe('nvJitLink facade', () => {
  test('nvJitLinkVersion returns the major and minor, and the library in use is the fake', () => {
    expect(nvjitlink.nvJitLinkVersion()).toEqual([R.NVJITLINK_SUCCESS, 13, 0]);
    expect(nvjitlink.libraryInfo()).toMatchObject({ file: libs.nvjitlink, version: 13000 });
  });

  test('an unrecognised option or architecture is NVJITLINK_ERROR_UNRECOGNIZED_OPTION, with no handle', () => {
    expect(nvjitlink.nvJitLinkCreate(1, ['-fictitious_option'])).toEqual([R.NVJITLINK_ERROR_UNRECOGNIZED_OPTION, null]);
    expect(nvjitlink.nvJitLinkCreate(1, ['-arch=sm_XX'])).toEqual([R.NVJITLINK_ERROR_UNRECOGNIZED_OPTION, null]);
    expect(nvjitlink.nvJitLinkCreate(0, [])).toEqual([R.NVJITLINK_ERROR_MISSING_ARCH, null]);
  });

  test('create, add PTX, complete, read the cubin into a Buffer it allocates, destroy', () => {
    const live = jit.live();
    const [err, h] = nvjitlink.nvJitLinkCreate(1, ['-arch=sm_90']);
    expect(err).toBe(R.NVJITLINK_SUCCESS);
    expect(typeof h).toBe('bigint');
    expect(nvjitlink.nvJitLinkAddData(h, T.NVJITLINK_INPUT_ANY, PTX, PTX.length, 'test_data')).toEqual([R.NVJITLINK_SUCCESS]);
    expect(nvjitlink.nvJitLinkComplete(h)).toEqual([R.NVJITLINK_SUCCESS]);
    const [, size] = nvjitlink.nvJitLinkGetLinkedCubinSize(h);
    const [cerr, cubin] = nvjitlink.nvJitLinkGetLinkedCubin(h, null);
    expect(cerr).toBe(R.NVJITLINK_SUCCESS);
    expect(cubin!.length).toBe(size);
    expect(text(cubin!)).toBe(`\x7fELF-arch=sm_90|10:${PTX.length}:test_data`);
    expect(nvjitlink.nvJitLinkDestroy(h)).toEqual([R.NVJITLINK_SUCCESS]);
    expect(jit.live()).toBe(live);
  });

  test("a caller's Buffer is filled when large enough, and one too small is a RangeError naming the function, the parameter and the size call", () => {
    const [, h] = nvjitlink.nvJitLinkCreate(1, ['-arch=sm_80']);
    nvjitlink.nvJitLinkAddData(h, T.NVJITLINK_INPUT_PTX, PTX, PTX.length, 'p');
    nvjitlink.nvJitLinkComplete(h);
    const [, size] = nvjitlink.nvJitLinkGetLinkedCubinSize(h);
    const out = Buffer.alloc(size!);
    expect(nvjitlink.nvJitLinkGetLinkedCubin(h, out)).toEqual([R.NVJITLINK_SUCCESS, out]);
    expect(out.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(() => nvjitlink.nvJitLinkGetLinkedCubin(h, Buffer.alloc(4))).toThrow(
      new RangeError(`nvJitLinkGetLinkedCubin: parameter 'cubin' holds 4 bytes but nvJitLinkGetLinkedCubinSize says ${size} are written`),
    );
    expect(() => nvjitlink.nvJitLinkGetInfoLog(h, new Uint8Array(0))).toThrow(
      /^nvJitLinkGetInfoLog: parameter 'log' holds 0 bytes but nvJitLinkGetInfoLogSize says \d+ are written$/,
    );
    nvjitlink.nvJitLinkDestroy(h);
  });

  test('an input shorter than its size, or fewer options than the count, is refused before C', () => {
    const [, h] = nvjitlink.nvJitLinkCreate(1, ['-arch=sm_90']);
    expect(() => nvjitlink.nvJitLinkAddData(h, T.NVJITLINK_INPUT_PTX, PTX, PTX.length + 1, 'p')).toThrow(
      new RangeError(`nvJitLinkAddData: parameter 'data' holds ${PTX.length} bytes but size needs ${PTX.length + 1}`),
    );
    expect(() => nvjitlink.nvJitLinkCreate(2, ['-arch=sm_90'])).toThrow(/^nvJitLinkCreate: parameter 'options'/);
    expect(() => nvjitlink.nvJitLinkAddData(h, T.NVJITLINK_INPUT_PTX, 'text' as never, 4, 'p')).toThrow(TypeError);
    nvjitlink.nvJitLinkDestroy(h);
  });

  test('the error log of a link with nothing in it is one NUL, as its size call says', () => {
    const [, h] = nvjitlink.nvJitLinkCreate(1, ['-arch=sm_90']);
    nvjitlink.nvJitLinkComplete(h);
    const [, n] = nvjitlink.nvJitLinkGetErrorLogSize(h);
    expect(n).toBe(1);
    expect(nvjitlink.nvJitLinkGetErrorLog(h, null)).toEqual([R.NVJITLINK_SUCCESS, Buffer.from([0])]);
    nvjitlink.nvJitLinkDestroy(h);
  });

  test('with -lto -ptx, LTO-IR links to PTX, read through nvJitLinkGetLinkedPtx', () => {
    const ltoir = Buffer.from([0xed, 0x43, 0x4e, 0x7f, 1, 2, 3, 4]);
    const [, h] = nvjitlink.nvJitLinkCreate(3, ['-arch=sm_90', '-lto', '-ptx']);
    expect(nvjitlink.nvJitLinkAddData(h, T.NVJITLINK_INPUT_LTOIR, ltoir, ltoir.length, 'lto')).toEqual([0]);
    nvjitlink.nvJitLinkComplete(h);
    const [err, ptx] = nvjitlink.nvJitLinkGetLinkedPtx(h, null);
    expect(err).toBe(0);
    expect(ptx!.toString('latin1')).toBe('.version 9.0\n// 3:8:lto\0');
    nvjitlink.nvJitLinkDestroy(h);
  });

  test("nvJitLinkDestroy of NULL is the library's error, not a crash", () => {
    expect(nvjitlink.nvJitLinkDestroy(null)).toEqual([R.NVJITLINK_ERROR_INVALID_INPUT]);
  });
});

describe('nvFatbin facade', () => {
  const { nvFatbinResult: F } = nvfatbin;

  test('nvFatbinGetErrorString is empty for success and names the others', () => {
    expect(nvfatbin.nvFatbinGetErrorString(F.NVFATBIN_SUCCESS)).toEqual([F.NVFATBIN_SUCCESS, '']);
    expect(nvfatbin.nvFatbinGetErrorString(F.NVFATBIN_ERROR_ELF_ARCH_MISMATCH)[1]).toBe('NVFATBIN_ERROR_ELF_ARCH_MISMATCH');
    expect(nvfatbin.nvFatbinVersion()).toEqual([F.NVFATBIN_SUCCESS, 13, 0]);
  });

  test('create with no options and destroy; an unsupported option is NVFATBIN_ERROR_UNRECOGNIZED_OPTION', () => {
    const [err, h] = nvfatbin.nvFatbinCreate([], 0);
    expect(err).toBe(F.NVFATBIN_SUCCESS);
    expect(nvfatbin.nvFatbinDestroy(h)).toEqual([F.NVFATBIN_SUCCESS]);
    expect(nvfatbin.nvFatbinCreate(['--unsupported_option'], 1)).toEqual([F.NVFATBIN_ERROR_UNRECOGNIZED_OPTION, null]);
    expect(fat.live()).toBe(0);
  });

  test('PTX, a cubin and LTO-IR go in with their numeric architectures; the fatbin comes back sized by nvFatbinSize', () => {
    const [, h] = nvfatbin.nvFatbinCreate([], 0);
    const cubin = Buffer.from('\x7fELF sm_90', 'latin1');
    expect(nvfatbin.nvFatbinAddPTX(h, PTX, PTX.length, '90', 'add', '-arch=sm_90')).toEqual([0]);
    expect(nvfatbin.nvFatbinAddCubin(h, cubin, cubin.length, '90', 'inc')).toEqual([0]);
    expect(nvfatbin.nvFatbinAddLTOIR(h, Buffer.from([1, 2]), 2, '90', 'lto', '')).toEqual([0]);
    const [, size] = nvfatbin.nvFatbinSize(h);
    const [err, bin] = nvfatbin.nvFatbinGet(h, null);
    expect(err).toBe(0);
    expect(bin!.length).toBe(size);
    expect(text(bin!)).toBe(`\x50\xed\x55\xbaptx:90:add:${PTX.length},cubin:90:inc:${cubin.length},ltoir:90:lto:2`);
    expect(() => nvfatbin.nvFatbinGet(h, Buffer.alloc(2))).toThrow(
      `nvFatbinGet: parameter 'buffer' holds 2 bytes but nvFatbinSize says ${size} are written`,
    );
    expect(() => nvfatbin.nvFatbinAddCubin(h, cubin, 100, '90', 'inc')).toThrow(
      `nvFatbinAddCubin: parameter 'code' holds ${cubin.length} bytes but size needs 100`,
    );
    nvfatbin.nvFatbinDestroy(h);
  });

  test('a cubin added under another architecture is NVFATBIN_ERROR_ELF_ARCH_MISMATCH', () => {
    const [, h] = nvfatbin.nvFatbinCreate([], 0);
    const cubin = Buffer.from('\x7fELF sm_80', 'latin1');
    expect(nvfatbin.nvFatbinAddCubin(h, cubin, cubin.length, '75', 'inc')).toEqual([F.NVFATBIN_ERROR_ELF_ARCH_MISMATCH]);
    nvfatbin.nvFatbinDestroy(h);
  });
});

describe('ObjectCode', () => {
  test('fromBytes tells a cubin, a fatbin, LTO-IR, an archive and PTX text by their first bytes', () => {
    expect(ObjectCode.fromBytes(Buffer.from('\x7fELF....', 'latin1')).kind).toBe('cubin');
    expect(ObjectCode.fromBytes(Buffer.from([0x50, 0xed, 0x55, 0xba, 0])).kind).toBe('fatbin');
    expect(ObjectCode.fromBytes(Buffer.from([0xed, 0x43, 0x4e, 0x7f, 1])).kind).toBe('ltoir');
    expect(ObjectCode.fromBytes(Buffer.from('!<arch>\nx')).kind).toBe('library');
    const ptx = ObjectCode.fromBytes('//\n// Generated\n//\n\n.version 9.0\n.target sm_90\n\0');
    expect([ptx.kind, ptx.text.endsWith('sm_90\n')]).toEqual(['ptx', true]);
  });

  test('fromBytes refuses what it cannot tell, empty code and an unknown kind', () => {
    expect(() => ObjectCode.fromBytes(Buffer.from('hello'))).toThrow(/^ObjectCode\.fromBytes: cannot tell what 'code' holds/);
    expect(() => ObjectCode.fromBytes(new Uint8Array(0), 'cubin')).toThrow(
      new RangeError("ObjectCode.fromBytes: parameter 'code' is empty"),
    );
    expect(() => ObjectCode.fromBytes(Buffer.from('x'), 'elf' as never)).toThrow(
      'ObjectCode.fromBytes: parameter \'kind\' must be one of cubin, ptx, ltoir, fatbin, object, library, got the string "elf"',
    );
  });

  test('PTX with a NUL before its end is refused, naming the offset: the driver would stop there, nvJitLink would not', () => {
    // 27 bytes of PTX, a NUL, then code the driver would never see.
    const hidden = '.version 9.0\n.target sm_90\n\0.visible .entry hidden() { ret; }\n';
    const message =
      "ObjectCode.fromBytes: parameter 'code' holds PTX text with a NUL at byte 27, before its end at byte 62; PTX may end with NULs, not hold one";
    expect(() => ObjectCode.fromBytes(hidden, 'ptx')).toThrow(new RangeError(message));
    expect(() => ObjectCode.fromBytes(Buffer.from(hidden))).toThrow(new RangeError(message));
    // NULs that end it are a terminator, and go.
    expect(ObjectCode.fromBytes(Buffer.from('.version 9.0\n\0\0')).code.length).toBe(13);
    // Bytes changed after the check are caught before nvFatbin runs.
    const bytes = Buffer.from(PTX);
    const changed = ObjectCode.fromBytes(bytes, 'ptx', { name: 'k.ptx', arch: 'compute_90' });
    bytes[5] = 0;
    const made = fat.created();
    expect(() => ObjectCode.fatbin([changed])).toThrow(
      new RangeError(
        `ObjectCode.fatbin: objects[0] ('k.ptx') holds PTX text with a NUL at byte 5, before its end at byte ${PTX.length}; PTX may end with NULs, not hold one`,
      ),
    );
    expect(fat.created()).toBe(made);
  });

  test('fromFile takes the kind from the file name and the name for link logs', () => {
    const f = path.join(tmp, 'dev.o');
    fs.writeFileSync(f, '\x7fELF host object', 'latin1');
    const o = ObjectCode.fromFile(f);
    expect([o.kind, o.name, o.code.length]).toEqual(['object', 'dev.o', 16]);
    expect(() => ObjectCode.fromFile(path.join(tmp, 'missing.cubin'))).toThrow(
      `ObjectCode.fromFile: no file ${path.join(tmp, 'missing.cubin')}`,
    );
  });

  test('LTO-IR, objects and libraries do not load: they must be linked first', () => {
    const lto = ObjectCode.fromBytes(Buffer.from([0xed, 0x43, 0x4e, 0x7f]), 'ltoir', { name: 'a.ltoir' });
    expect(() => lto.load()).toThrow(
      "ObjectCode.load: 'a.ltoir' is ltoir, which does not load; link it first: new Linker(code, { arch }).link('cubin')",
    );
  });

  test('ObjectCode.fatbin bundles cubins for two architectures and PTX through nvFatbin', () => {
    const sm90 = ObjectCode.fromBytes(Buffer.from('\x7fELF sm_90', 'latin1'), 'cubin', { arch: 'sm_90', name: 'k90' });
    const sm80 = ObjectCode.fromBytes(Buffer.from('\x7fELF sm_80', 'latin1'), 'cubin', { arch: 'sm_80', name: 'k80' });
    const ptx = ObjectCode.fromBytes(PTX, 'ptx', { arch: 'compute_90', name: 'kptx' });
    const fb = ObjectCode.fatbin([sm90, sm80, ptx]);
    expect(fb.kind).toBe('fatbin');
    expect(text(fb.code)).toBe(`\x50\xed\x55\xbacubin:90:k90#0:10,cubin:80:k80#1:10,ptx:90:kptx#2:${PTX.length}`);
    expect(fat.live()).toBe(0);
  });

  test('ObjectCode.fatbin refuses inputs without an architecture, of a kind a fatbin cannot hold, and says which when nvFatbin refuses', () => {
    const noArch = ObjectCode.fromBytes(Buffer.from('\x7fELF', 'latin1'), 'cubin', { name: 'k' });
    expect(() => ObjectCode.fatbin([noArch])).toThrow("ObjectCode.fatbin: objects[0] ('k') has no arch; make it with { arch: 'sm_90' }");
    const obj = ObjectCode.fromBytes(Buffer.from('\x7fELF', 'latin1'), 'object', { name: 'h.o', arch: 'sm_90' });
    expect(() => ObjectCode.fatbin([obj])).toThrow(
      "ObjectCode.fatbin: objects[0] ('h.o') is object; a fatbin holds cubins, PTX and LTO-IR",
    );
    const wrong = ObjectCode.fromBytes(Buffer.from('\x7fELF sm_80', 'latin1'), 'cubin', { arch: 'sm_75', name: 'k80' });
    expect(() => ObjectCode.fatbin([wrong])).toThrow(
      "NVFATBIN_ERROR_ELF_ARCH_MISMATCH: NVFATBIN_ERROR_ELF_ARCH_MISMATCH (in nvFatbinAddCubin(objects[0] 'k80', arch 75))",
    );
    // One of the package's errors, with the status and the library (issue #30).
    expect(() => ObjectCode.fatbin([wrong])).toThrow(CudaBindingsError);
    try {
      ObjectCode.fatbin([wrong]);
    } catch (e) {
      const err = e as CudaBindingsError;
      expect([err.name, err.code, err.codeName, err.library]).toEqual([
        'CudaBindingsError',
        nvfatbin.nvFatbinResult.NVFATBIN_ERROR_ELF_ARCH_MISMATCH,
        'NVFATBIN_ERROR_ELF_ARCH_MISMATCH',
        'libnvfatbin',
      ]);
    }
    expect(fat.live()).toBe(0);
  });
});

describe('Linker', () => {
  const ptx = ObjectCode.fromBytes(PTX, 'ptx', { name: 'first.ptx' });
  const lto = ObjectCode.fromBytes(Buffer.from([0xed, 0x43, 0x4e, 0x7f, 9]), 'ltoir', { name: 'second.ltoir' });
  const cubin = ObjectCode.fromBytes(Buffer.from('\x7fELF lib', 'latin1'), 'cubin', { name: 'third.cubin' });
  const broken = ObjectCode.fromBytes(Buffer.from('.version 9.0\ncall undefined_symbol;\n'), 'ptx', { name: 'second' });

  test('PTX bytes given a NUL after the ObjectCode was made are refused by link() on either backend, before the linker runs', () => {
    const bytes = Buffer.from(PTX);
    const changed = ObjectCode.fromBytes(bytes, 'ptx', { name: 'changed.ptx' });
    bytes[13] = 0;
    const before = [jit.created(), drv.created()];
    for (const backend of ['nvjitlink', 'driver'] as const)
      expect(() => new Linker(cubin, changed, { arch: 'sm_90', backend, cache: false }).link()).toThrow(
        new RangeError(
          `Linker.link: objects[1] ('changed.ptx') holds PTX text with a NUL at byte 13, before its end at byte ${PTX.length}; PTX may end with NULs, not hold one`,
        ),
      );
    expect([jit.created(), drv.created()]).toEqual(before);
  });

  test('every option becomes its nvJitLink flag, in a fixed order', () => {
    expect(
      nvJitLinkOptions(
        {
          lto: true,
          maxRegisters: 32,
          optimization: 3,
          debug: true,
          lineInfo: true,
          ftz: true,
          precDiv: false,
          precSqrt: true,
          fma: false,
          kernelsUsed: ['k1', 'k2'],
          variablesUsed: ['v'],
          time: true,
          verbose: true,
          ptxasOptions: ['-v', '--warn-on-spills'],
        },
        '90',
        'ptx',
      ),
    ).toEqual([
      '-arch=sm_90',
      '-lto',
      '-ptx',
      '-maxrregcount=32',
      '-O3',
      '-g',
      '-lineinfo',
      '-ftz=true',
      '-prec-div=false',
      '-prec-sqrt=true',
      '-fma=false',
      '-kernels-used=k1',
      '-kernels-used=k2',
      '-variables-used=v',
      '-time',
      '-verbose',
      '-Xptxas=-v',
      '-Xptxas=--warn-on-spills',
    ]);
  });

  test('PTX, LTO-IR and a cubin link with LTO through nvJitLink into a cubin, in order, with the info log on the output and the linker', () => {
    const linker = new Linker(ptx, lto, cubin, { arch: 'sm_90', lto: true, optimization: 3, cache: false });
    const out = linker.link('cubin');
    expect(out.kind).toBe('cubin');
    expect(out.arch).toBe('sm_90');
    expect(text(out.code)).toBe(`\x7fELF-arch=sm_90 -lto -O3|2:${PTX.length}:first.ptx,3:5:second.ltoir,1:8:third.cubin`);
    expect(linker.backend).toBe('nvJitLink');
    expect(linker.infoLog).toBe('info    : linked with -arch=sm_90 -lto -O3');
    expect(out.infoLog).toBe(linker.infoLog);
    expect(jit.live()).toBe(0);
  });

  test("link('ptx') needs LTO, and with it returns PTX text", () => {
    expect(() => new Linker(lto, { arch: '90', cache: false }).link('ptx')).toThrow(
      "Linker.link: target 'ptx' needs { lto: true } (nvJitLink writes PTX only after link-time optimisation)",
    );
    const out = new Linker(lto, { arch: '90', lto: true, cache: false }).link('ptx');
    expect([out.kind, out.text]).toEqual(['ptx', '.version 9.0\n// 3:5:second.ltoir']);
  });

  test('a failed link throws a LinkError carrying the error log, and frees the nvJitLink handle', () => {
    const linker = new Linker(ptx, broken, { arch: 'sm_90', cache: false });
    let err: unknown;
    try {
      linker.link();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LinkError);
    const e = err as LinkError;
    expect(e.message).toBe(
      "NVJITLINK_ERROR_FINALIZE: error   : Undefined reference to 'undefined_symbol' in 'second' (in nvJitLinkComplete)",
    );
    expect([e.backend, e.code, e.codeName]).toEqual(['nvJitLink', R.NVJITLINK_ERROR_FINALIZE, 'NVJITLINK_ERROR_FINALIZE']);
    expect(e.errorLog).toContain("Undefined reference to 'undefined_symbol'");
    expect(linker.errorLog).toBe(e.errorLog);
    expect(jit.live()).toBe(0);
  });

  test('LTO-IR without { lto: true } fails in nvJitLinkAddData, naming the input', () => {
    expect(() => new Linker(lto, { arch: 'sm_90', cache: false }).link()).toThrow(
      "NVJITLINK_ERROR_LTO_NOT_ENABLED: ERROR: LTO-IR input needs -lto (in nvJitLinkAddData(objects[0] 'second.ltoir', ltoir))",
    );
    expect(jit.live()).toBe(0);
  });

  test("{ backend: 'driver' } links through cuLink*: the options as JIT options, PTX with its NUL, the logs from the option buffers", () => {
    const linker = new Linker(ptx, cubin, { arch: 'sm_90', maxRegisters: 64, optimization: 2, backend: 'driver', cache: false });
    const out = linker.link();
    // CU_JIT_MAX_REGISTERS (0) = 64, CU_JIT_OPTIMIZATION_LEVEL (7) = 2, CU_JIT_TARGET (9) = 90; inputs PTX (1) and cubin (0).
    expect(text(out.code)).toBe('\x7fELFdriver|0=64,7=2,9=90|1:first.ptx,0:third.cubin');
    expect(linker.backend).toBe('cuLink');
    expect(linker.infoLog).toBe('info    : fake cuLink linked 1:first.ptx,0:third.cubin');
    expect(drv.live()).toBe(0);
  });

  test('the driver refuses LTO-IR inputs, LTO, PTX output and nvJitLink-only options, each saying why', () => {
    expect(() => new Linker(ptx, lto, { arch: 'sm_90', backend: 'driver' }).link()).toThrow(
      "Linker.link: objects[1] ('second.ltoir') is LTO-IR, which only nvJitLink links; with { backend: 'driver' }, which takes cubin, PTX, fatbin, object and library inputs",
    );
    expect(() => new Linker(ptx, { arch: 'sm_90', backend: 'driver', lto: true }).link()).toThrow(
      "Linker.link: option 'lto' needs nvJitLink; with { backend: 'driver' }",
    );
    expect(() => new Linker(ptx, { arch: 'sm_90', backend: 'driver', ftz: true }).link()).toThrow(
      "Linker.link: option 'ftz' needs nvJitLink; with { backend: 'driver' }",
    );
    expect(drv.created()).toBe(1);
  });

  test('a failed driver link throws a LinkError with the error log the driver wrote', () => {
    const linker = new Linker(ptx, broken, { arch: 'sm_90', backend: 'driver', cache: false });
    expect(() => linker.link()).toThrow(
      new LinkError(
        218,
        'CUDA_ERROR_INVALID_PTX',
        'cuLink',
        "ptxas fatal   : Unresolved extern function 'undefined_symbol'",
        '',
        'cuLinkComplete',
      ),
    );
    expect(linker.errorLog).toBe("ptxas fatal   : Unresolved extern function 'undefined_symbol'");
    expect(() => linker.link()).toThrow(CudaBindingsError);
    expect(drv.live()).toBe(0);
  });

  test('linked outputs come from the disk cache the second time, keyed by the inputs and options', () => {
    const cache = path.join(tmp, 'cache');
    const before = jit.created();
    const a = new Linker(ptx, cubin, { arch: 'sm_90', cache }).link();
    const b = new Linker(ptx, cubin, { arch: 'sm_90', cache }).link();
    expect(jit.created()).toBe(before + 1);
    expect(Buffer.from(b.code).equals(Buffer.from(a.code))).toBe(true);
    expect(b.infoLog).toBe(a.infoLog);
    new Linker(ptx, cubin, { arch: 'sm_90', cache, optimization: 1 }).link();
    new Linker(cubin, ptx, { arch: 'sm_90', cache }).link();
    expect(jit.created()).toBe(before + 3);
  });

  test('the constructor checks its arguments and options', () => {
    expect(() => new Linker()).toThrow('new Linker: nothing to link; pass one ObjectCode or more');
    expect(() => new Linker(ptx, 'x' as never, {})).toThrow('new Linker: argument 1 must be an ObjectCode, got the string "x"');
    expect(() => new Linker(ptx, { arch: 'sm_90', lto: 1 } as never)).toThrow("new Linker: option 'lto' must be a boolean, got 1");
    expect(() => new Linker(ptx, { maxRegisters: 0 })).toThrow("new Linker: option 'maxRegisters' must be an integer from 1 to 255, got 0");
    expect(() => new Linker(ptx, { optimization: 4 })).toThrow("new Linker: option 'optimization' must be 0, 1, 2 or 3, got 4");
    expect(() => new Linker(ptx, { arch: 'hopper' })).toThrow(
      "new Linker: option 'arch' must be a Device or an architecture such as 'sm_90' or '90', got the string \"hopper\"",
    );
    expect(() => new Linker(ptx, { lineinfo: true } as never)).toThrow(
      /^new Linker: unknown option 'lineinfo' \(did you mean 'lineInfo'\?\); the options are /,
    );
    expect(() => new Linker(ptx, { kernelsUsed: 'k' } as never)).toThrow(
      `new Linker: option 'kernelsUsed' must be an array of non-empty strings, got "k"`,
    );
    expect(() => new Linker(ptx, { backend: 'cuda' } as never)).toThrow(
      "new Linker: option 'backend' must be 'auto', 'nvjitlink' or 'driver', got the string \"cuda\"",
    );
    expect(() => new Linker(ptx, {}).link('fatbin' as never)).toThrow(
      "Linker.link: parameter 'target' must be 'cubin' or 'ptx', got the string \"fatbin\"",
    );
  });
});

describe('Linker without nvJitLink', () => {
  // As when libnvJitLink.so.13 is not installed: its first call throws the loader's error.
  const load = () => {
    let mods: { Linker: typeof Linker; ObjectCode: typeof ObjectCode } | undefined;
    jest.isolateModules(() => {
      jest.doMock('../../../src/nvjitlink', () => ({
        ...jest.requireActual('../../../src/nvjitlink'),
        nvJitLinkVersion: () => {
          throw new Error('libnvJitLink: could not load the library. Tried:\n  - libnvJitLink.so.13: cannot open shared object file');
        },
      }));
      mods = {
        Linker: require('../../../src/core/compile/Linker').Linker,
        ObjectCode: require('../../../src/core/compile/ObjectCode').ObjectCode,
      };
    });
    return mods!;
  };

  test('falls back to the driver for cubin and PTX inputs', () => {
    const m = load();
    const linker = new m.Linker(m.ObjectCode.fromBytes(PTX, 'ptx', { name: 'a.ptx' }), { arch: 'sm_90', cache: false });
    expect(text(linker.link().code)).toBe('\x7fELFdriver|9=90|1:a.ptx');
    expect(linker.backend).toBe('cuLink');
  });

  test('refuses LTO-IR with the reason nvJitLink is missing, and refuses to be forced', () => {
    const m = load();
    const lto = m.ObjectCode.fromBytes(Buffer.from([0xed, 0x43, 0x4e, 0x7f]), 'ltoir', { name: 'dev.ltoir' });
    expect(() => new m.Linker(lto, { arch: 'sm_90', lto: true }).link()).toThrow(
      "Linker.link: objects[0] ('dev.ltoir') is LTO-IR, which only nvJitLink links; nvJitLink is not available (libnvJitLink: could not load the library. Tried:), so the driver's cuLink* links, which takes cubin, PTX, fatbin, object and library inputs",
    );
    expect(() => new m.Linker(lto, { arch: 'sm_90', backend: 'nvjitlink' }).link()).toThrow(
      /^Linker\.link: nvJitLink is not available: libnvJitLink: could not load the library/,
    );
  });
});

const nvcc = ['/usr/local/cuda/bin/nvcc', ...(process.env.PATH ?? '').split(':').map((d) => path.join(d, 'nvcc'))].some((p) =>
  fs.existsSync(p),
);
(nvcc ? describe : describe.skip)(
  nvcc ? "Program.compile({ target: 'ltoir' }) into the Linker" : 'Program to Linker: skipped, no nvcc on this machine',
  () => {
    test('two units compiled to LTO-IR (NVRTC -dlto, or nvcc -dlto -ltoir) reach nvJitLink as LTO-IR, by name and size', () => {
      const math = Program.compile('extern "C" __device__ float affine(float a, float x, float b) { return a * x + b; }\n', {
        name: 'math.cu',
        arch: 'sm_90',
        target: 'ltoir',
        cache: false,
      });
      const kernel = Program.compile(
        'extern "C" __device__ float affine(float, float, float);\nextern "C" __global__ void k(float *y) { y[0] = affine(2, y[0], 1); }\n',
        { name: 'kernel.cu', arch: 'sm_90', target: 'ltoir', cache: false },
      );
      expect([math.target, math.arch, math.objectCode.kind, ObjectCode.fromBytes(math.code).kind]).toEqual([
        'ltoir',
        'compute_90',
        'ltoir',
        'ltoir',
      ]);
      expect(() => math.load()).toThrow(
        "Program.load: LTO-IR does not load; link it first: new Linker(program.objectCode, { lto: true }).link('cubin').load()",
      );
      const out = new Linker(math.objectCode, kernel.objectCode, { arch: 'sm_90', lto: true, cache: false }).link();
      expect(text(out.code)).toBe(`\x7fELF-arch=sm_90 -lto|3:${math.code.length}:math.cu,3:${kernel.code.length}:kernel.cu`);
    }, 60_000);
  },
);

describe('Linker, part 4: handle, backend options, new nvJitLink options, linkPtx; ObjectCode.path', () => {
  const lto = ObjectCode.fromBytes(Buffer.from([0xed, 0x43, 0x4e, 0x7f, 9]), 'ltoir', { name: 'unit.ltoir' });
  const ptx = ObjectCode.fromBytes(PTX, 'ptx', { name: 'first.ptx' });

  test('splitCompile, splitCompileExtended, optimizeUnusedVariables and noCache become their flags, readable before linking', () => {
    const linker = new Linker(lto, {
      arch: 'sm_90',
      lto: true,
      splitCompile: 0,
      splitCompileExtended: 4,
      optimizeUnusedVariables: true,
      noCache: true,
      cache: false,
    });
    const created = jit.created();
    expect(linker.backendOptions('ptx')).toEqual({
      backend: 'nvJitLink',
      options: ['-arch=sm_90', '-lto', '-ptx', '-split-compile=0', '-split-compile-extended=4', '-optimize-unused-variables', '-no-cache'],
    });
    expect(jit.created()).toBe(created); // read without linking
    const out = linker.linkPtx();
    expect([out.kind, out.text]).toEqual(['ptx', '.version 9.0\n// 3:5:unit.ltoir']);
  });

  test("the driver's options read as NAME=value", () => {
    const linker = new Linker(ptx, { arch: 'sm_90', maxRegisters: 64, backend: 'driver', cache: false });
    expect(linker.backendOptions()).toEqual({ backend: 'cuLink', options: ['CU_JIT_MAX_REGISTERS=64', 'CU_JIT_TARGET=90'] });
  });

  test('keepHandle keeps the last link handle until the next link or close(); without it the linker holds none', () => {
    const plain = new Linker(ptx, { arch: 'sm_90', cache: false });
    plain.link();
    expect([plain.handle, jit.live()]).toEqual([null, 0]);
    for (const [backend, counter] of [
      ['nvjitlink', jit],
      ['driver', drv],
    ] as const) {
      const linker = new Linker(ptx, { arch: 'sm_90', keepHandle: true, backend });
      expect(linker.handle).toBeNull();
      linker.link();
      const first = linker.handle;
      expect(first).not.toBeNull();
      expect(counter.live()).toBe(1);
      const made = counter.created();
      linker.link(); // the first handle destroyed, a new one kept
      expect([linker.handle === null, counter.created() - made, counter.live()]).toEqual([false, 1, 1]);
      linker.close();
      linker.close();
      expect([linker.handle, linker.isClosed, counter.live()]).toEqual([null, true, 0]);
      expect(() => linker.link()).toThrow('Linker.link: the Linker was closed');
    }
  });

  test('the new options are checked, naming the option', () => {
    expect(() => new Linker(lto, { splitCompile: -1 })).toThrow(
      new RangeError("new Linker: option 'splitCompile' must be a thread count (0: every processor, 1: no split), got -1"),
    );
    expect(() => new Linker(lto, { splitCompileExtended: 2 })).toThrow(
      "new Linker: option 'splitCompileExtended' is for link-time optimisation; pass { lto: true } with it",
    );
    expect(() => new Linker(lto, { noCache: 'yes' as never })).toThrow("new Linker: option 'noCache' must be a boolean, got yes");
    for (const k of ['splitCompile', 'optimizeUnusedVariables', 'noCache'] as const)
      expect(() => new Linker(ptx, { arch: 'sm_90', backend: 'driver', [k]: k === 'splitCompile' ? 2 : true }).link()).toThrow(
        `Linker.link: option '${k}' needs nvJitLink; with { backend: 'driver' }`,
      );
  });

  test('ObjectCode.fromFile keeps the absolute path it came from; code made in memory has none', () => {
    const file = path.join(tmp, 'unit.ltoir');
    fs.writeFileSync(file, Buffer.from([0xed, 0x43, 0x4e, 0x7f, 1]));
    const rel = path.relative(process.cwd(), file);
    const code = ObjectCode.fromFile(rel);
    expect([code.kind, code.path, code.name]).toEqual(['ltoir', file, 'unit.ltoir']);
    expect(ObjectCode.fromFile(file, 'cubin').kind).toBe('cubin');
    expect(lto.path).toBeNull();
  });
});
