// Program without a GPU: nvcc stands in for the missing NVRTC, the disk cache, errors with the log.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../../src';

const { Program, CompileError, ElementwiseKernel } = core;
const nvcc = ['/usr/local/cuda/bin/nvcc', ...(process.env.PATH ?? '').split(':').map((d) => path.join(d, 'nvcc'))].some((p) =>
  fs.existsSync(p),
);
const source =
  'extern "C" __global__ void twice(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }\n';

let cache: string;
beforeEach(() => {
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'program-test-'));
});
afterEach(() => fs.rmSync(cache, { recursive: true, force: true }));

(nvcc ? describe : describe.skip)(nvcc ? 'with nvcc (NVRTC is not on this machine)' : 'skipped: no nvcc on this machine', () => {
  test('compiles to a cubin for the architecture asked for, with nvcc when NVRTC cannot be loaded', () => {
    const p = Program.compile(source, { arch: 'sm_90', cache });
    expect(p.compiler).toMatch(/^nvcc \d+\.\d+/);
    expect([p.target, p.arch, p.fromCache]).toEqual(['cubin', 'sm_90', false]);
    expect(Array.from(p.code.subarray(0, 4))).toEqual([0x7f, 0x45, 0x4c, 0x46]); // ELF
    expect(Buffer.from(p.code).includes('twice')).toBe(true);
  });

  test('PTX comes back as text ending in a NUL (what the loader reads up to)', () => {
    const p = Program.compile(source, { arch: '90', target: 'ptx', cache: false });
    const text = Buffer.from(p.code).toString('latin1');
    expect(p.arch).toBe('compute_90');
    expect(text).toMatch(/\.target sm_90/);
    expect(text).toMatch(/\.entry twice/);
    expect(p.code[p.code.length - 1]).toBe(0);
  });

  test('the second compile of the same source and options comes from the disk cache; any change misses it', () => {
    const first = Program.compile(source, { arch: 'sm_90', cache, options: ['-DK=1'] });
    const again = Program.compile(source, { arch: 'sm_90', cache, options: ['-DK=1'] });
    expect([first.fromCache, again.fromCache]).toEqual([false, true]);
    expect(Buffer.from(again.code).equals(Buffer.from(first.code))).toBe(true);
    expect(Program.compile(source, { arch: 'sm_90', cache, options: ['-DK=2'] }).fromCache).toBe(false);
    expect(Program.compile(source, { arch: 'sm_80', cache, options: ['-DK=1'] }).fromCache).toBe(false);
    expect(Program.compile(source + '// changed\n', { arch: 'sm_90', cache, options: ['-DK=1'] }).fromCache).toBe(false);
    // Each entry is the code and its metadata.
    expect(fs.readdirSync(cache).filter((f) => f.endsWith('.cubin')).length).toBe(4);
    expect(fs.readdirSync(cache).filter((f) => f.endsWith('.json')).length).toBe(4);
  });

  test('headers given by name are found by #include', () => {
    const p = Program.compile('#include "scale.h"\nextern "C" __global__ void k(float *x) { x[0] = SCALE; }\n', {
      arch: 'sm_90',
      cache: false,
      headers: { 'scale.h': '#define SCALE 3.0f\n', 'unused/other.h': '' },
    });
    expect(Buffer.from(p.code).includes('k')).toBe(true);
  });

  test('a compile error throws a CompileError naming the error, with the whole log', () => {
    let e: unknown;
    try {
      Program.compile('extern "C" __global__ void bad() { undeclared = 1; }\n', { arch: 'sm_90', cache: false, name: 'bad.cu' });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(CompileError);
    const err = e as InstanceType<typeof CompileError>;
    expect(err.compiler).toBe('nvcc');
    expect(err.message).toMatch(/^nvcc exited with status \d+: .*identifier "undeclared" is undefined/);
    expect(err.log).toMatch(/bad\.cu\(1\): error/);
  });

  test('name expressions need NVRTC: a clear error rather than a kernel that cannot be found', () => {
    expect(() =>
      Program.compile('template <typename T> __global__ void f(T *x) {}\n', { arch: 'sm_90', cache: false, nameExpressions: ['f<float>'] }),
    ).toThrow(
      /^Program\.compile: name expressions need NVRTC, and NVRTC is not available \(.*libnvrtc.*\); with nvcc, declare the kernels extern "C"/,
    );
  });
});

(nvcc ? describe : describe.skip)(nvcc ? 'compileAsync with nvcc' : 'skipped: no nvcc on this machine', () => {
  test('the same code as compile, while the event loop goes on; the disk cache as in the sync form', async () => {
    const sync = Program.compile(source, { arch: 'sm_90', cache: false });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const p = await Program.compileAsync(source, { arch: 'sm_90', cache }).finally(() => clearInterval(timer));
    // nvcc took at least a few hundred ms: the loop ran timers meanwhile (compile would have blocked them).
    expect(ticks).toBeGreaterThan(3);
    expect([p.compiler, p.target, p.arch, p.fromCache]).toEqual([sync.compiler, 'cubin', 'sm_90', false]);
    expect(Buffer.from(p.code).includes('twice')).toBe(true);
    const again = await Program.compileAsync(source, { arch: 'sm_90', cache });
    expect(again.fromCache).toBe(true);
    expect(Buffer.from(again.code).equals(Buffer.from(p.code))).toBe(true);
    // One cache for both forms.
    expect(Program.compile(source, { arch: 'sm_90', cache }).fromCache).toBe(true);
  });

  test('a compile error rejects with the CompileError and log of the sync form', async () => {
    const bad = 'extern "C" __global__ void bad() { undeclared = 1; }\n';
    const e = await Program.compileAsync(bad, { arch: 'sm_90', cache: false, name: 'bad.cu' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CompileError);
    expect((e as Error).message).toMatch(/^nvcc exited with status \d+: .*identifier "undeclared" is undefined/);
    expect((e as InstanceType<typeof CompileError>).log).toMatch(/bad\.cu\(1\): error/);
  });

  test('timeout and abort reject naming compileAsync; nvcc is stopped and nothing is cached', async () => {
    const t0 = Date.now();
    await expect(Program.compileAsync(source + '// t\n', { arch: 'sm_90', cache, timeout: 1 })).rejects.toThrow(
      expect.objectContaining({
        name: 'TimeoutError',
        message: 'Program.compileAsync: timed out after 1 ms; the GPU work was not cancelled',
      }),
    );
    const ac = new AbortController();
    const p = Program.compileAsync(source + '// a\n', { arch: 'sm_90', cache, signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toThrow(
      expect.objectContaining({ name: 'AbortError', message: 'Program.compileAsync: aborted; the GPU work was not cancelled' }),
    );
    expect(Date.now() - t0).toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 200));
    expect(fs.readdirSync(cache)).toEqual([]);
  });
});

test('compileAsync checks its arguments and options as compile does, rejecting with its own name', async () => {
  await expect(Program.compileAsync('', { arch: 'sm_90' })).rejects.toThrow(
    new TypeError("Program.compileAsync: parameter 'source' must be CUDA C++ text, got an empty string"),
  );
  await expect(Program.compileAsync(source, { arch: 'volta' })).rejects.toThrow(
    "Program.compileAsync: option 'arch' must be a Device or an architecture such as 'sm_90' or '90', got the string \"volta\"",
  );
  await expect(Program.compileAsync(source, { arch: 'sm_90', compiler: 'nvrtc' })).rejects.toThrow(
    /^Program\.compileAsync: NVRTC is not available: /,
  );
  await expect(Program.compileAsync('!0 = !{}', { language: 'nvvm', arch: 'sm_90', target: 'cubin' })).rejects.toThrow(
    "Program.compileAsync: NVVM IR compiles to 'ptx' or 'ltoir', not cubin; link the PTX for a cubin",
  );
  await expect(Program.compileAsync(source, { arch: 'sm_90', timout: 5 } as never)).rejects.toThrow(
    new TypeError(
      "Program.compileAsync: unknown option 'timout' (the options are signal, timeout, name, options, headers, nameExpressions, arch, target, language, libdevice, compiler, cache, pch, createPch, usePch, pchDir, pchVerbose, pchMessages, instantiateTemplatesInPch, debug, lineInfo, optimization, ftz, precSqrt, precDiv, fma, keepHandle)",
    ),
  );
  await expect(Program.compileAsync(source, { arch: 'sm_90', signal: AbortSignal.abort() })).rejects.toThrow(
    expect.objectContaining({ name: 'AbortError' }),
  );
});

test('Module.loadAsync: checks as Module.load, then loads on the pool (here: the status of a machine without a driver)', async () => {
  const { Module } = core;
  await expect(Module.loadAsync(new Uint8Array(0))).rejects.toThrow(new RangeError("Module.loadAsync: parameter 'code' is empty"));
  await expect(Module.loadAsync(5 as never)).rejects.toThrow(/^Module\.loadAsync: parameter 'code' must be a file path or a Uint8Array/);
  await expect(Module.loadAsync('/no/such/file.cubin')).rejects.toThrow('Module.loadAsync: no file /no/such/file.cubin');
  await expect(Module.loadAsync(new Uint8Array([0x7f, 0x45, 0x4c, 0x46]), { nmaes: {} } as never)).rejects.toThrow(
    new TypeError("Module.loadAsync: unknown option 'nmaes' (the options are signal, timeout, names)"),
  );
  const ptx = new TextEncoder().encode('.version 8.0\n.target sm_90\n.address_size 64\n');
  let syncError = '';
  try {
    Module.load(ptx);
  } catch (e) {
    syncError = (e as Error).message;
  }
  expect(syncError).not.toBe('');
  await expect(Module.loadAsync(ptx)).rejects.toThrow(syncError);
});

test('options are checked before any compiler runs', () => {
  expect(() => Program.compile('', { arch: 'sm_90' })).toThrow(
    "Program.compile: parameter 'source' must be CUDA C++ text, got an empty string",
  );
  expect(() => Program.compile(source, { arch: 'volta' })).toThrow(
    "Program.compile: option 'arch' must be a Device or an architecture such as 'sm_90' or '90', got the string \"volta\"",
  );
  expect(() => Program.compile(source, { arch: 'sm_90', target: 'sass' as 'ptx' })).toThrow(
    "Program.compile: option 'target' must be 'cubin', 'ptx' or 'ltoir', got the string \"sass\"",
  );
  expect(() => Program.compile(source, { arch: 'sm_90', options: '-O3' as unknown as string[] })).toThrow(
    /option 'options' must be an array of strings/,
  );
  expect(() => Program.compile(source, { arch: 'sm_90', compiler: 'clang' as 'nvcc' })).toThrow(
    "Program.compile: option 'compiler' must be 'auto', 'nvrtc' or 'nvcc', got the string \"clang\"",
  );
  expect(() => Program.compile(source, { arch: 'sm_90', compiler: 'nvrtc' })).toThrow(/^Program\.compile: NVRTC is not available: /);
});

test('without an arch and without a device, the error says to pass one', () => {
  expect(() => Program.compile(source, { cache: false })).toThrow(
    /^Program\.compile: no 'arch' option and no device to take it from \(cudaErrorInsufficientDriver: .*\); pass \{ arch: 'sm_90' \}/,
  );
});

describe('ElementwiseKernel', () => {
  test('writes a grid-stride kernel: arrays bound to their element, scalars passed by value', () => {
    const k = new ElementwiseKernel('float x, float a, float y', 'float z', 'z = a * x + y', 'saxpy');
    expect(k.source('asaa')).toBe(
      [
        '',
        'extern "C" __global__ void saxpy(const float *__restrict__ x_, float a, const float *__restrict__ y_, float *__restrict__ z_, long long n) {',
        '  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {',
        '    const float &x = x_[i];',
        '    const float &y = y_[i];',
        '    float &z = z_[i];',
        '    z = a * x + y;',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
  });

  test('its source compiles (nvcc here; NVRTC on the GPU machine)', () => {
    if (!nvcc) return expect(nvcc).toBe(false);
    const k = new ElementwiseKernel('unsigned char b, double s', 'double out', 'out = b * s + i', 'mix', { preamble: '// helpers\n' });
    const p = Program.compile(k.source('asa'), { arch: 'sm_90', cache: false });
    expect(Buffer.from(p.code).includes('mix')).toBe(true);
  });

  test('declarations are checked', () => {
    expect(() => new ElementwiseKernel('float x', '', 'x')).toThrow('ElementwiseKernel: it needs at least one output parameter');
    expect(() => new ElementwiseKernel('float4 x', 'float y', 'y = x')).toThrow(
      /^ElementwiseKernel: parameter 'float4 x' must be '<type> <name>' with a type among bool, char/,
    );
    expect(() => new ElementwiseKernel('float x', 'float x', 'x = x')).toThrow("ElementwiseKernel: parameter name 'x' is used twice");
    expect(() => new ElementwiseKernel('float x', 'float y', 'y = x', 'not a name')).toThrow(
      'ElementwiseKernel: parameter \'name\' must be a C identifier, got the string "not a name"',
    );
    const k = new ElementwiseKernel('float x', 'float y', 'y = x');
    expect(() => k.call(1)).toThrow('ElementwiseKernel(elementwise): it takes 2 arguments (x, y), got 1');
    expect(() => k.call(1, 2)).toThrow("ElementwiseKernel(elementwise): output 'y' must be a DeviceBuffer, got number");
  });
});

describe('CachingAllocator and setAllocator', () => {
  test('arguments are checked; an empty allocator holds nothing', () => {
    const a = new core.CachingAllocator({ limit: 1 << 20 });
    expect([a.usedBytes(), a.totalBytes(), a.freeBytes(), a.limit]).toEqual([0, 0, 0, 1 << 20]);
    expect(() => a.allocate(-1, { device: null as never })).toThrow(
      "CachingAllocator.allocate: parameter 'size' must be a non-negative integer, got -1",
    );
    expect(() => a.allocate(16, {} as never)).toThrow(
      "CachingAllocator.allocate: parameter 'options.device' must be a Device, got undefined",
    );
    expect(() => (a.limit = 1.5)).toThrow("CachingAllocator.limit: parameter 'size' must be a non-negative integer, got 1.5");
    expect(() => core.setAllocator({} as never)).toThrow(
      /^setAllocator: parameter 'allocator' must have an allocate\(size, options\) method or be a MemoryResource or null/,
    );
    expect(core.setAllocator(a)).toBeNull();
    expect(core.getAllocator()).toBe(a);
    expect(core.setAllocator(null)).toBe(a);
  });
});

test('nvrtc.async.nvrtcCompileProgram rejects bad arguments before the library is needed', async () => {
  const { nvrtc } = await import('../../../src');
  await expect(nvrtc.async.nvrtcCompileProgram(nvrtc.nvrtcProgram(0x10), -1, null)).rejects.toThrow(
    "async.nvrtcCompileProgram: parameter 'numOptions' must not be negative, got -1",
  );
  await expect(nvrtc.async.nvrtcCompileProgram(nvrtc.nvrtcProgram(0x10), 0, null, { timeOut: 1 } as never)).rejects.toThrow(
    new TypeError("async.nvrtcCompileProgram: unknown option 'timeOut' (the options are signal, timeout)"),
  );
});
