// One family of errors (issue #30): every error class of the package extends CudaBindingsError, so a
// user catches them all with one instanceof; their messages and fields are what they were; and an
// error being built never hides the failure it reports when a library cannot describe the status.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as root from '../../../src';
import * as core from '../../../src/core';
import { CudaBindingsError, LIBRARIES, StatusError, isCudaLibrary, statusMessage, statusText } from '../../../src/ffi/errors';
import { LibraryLoadError } from '../../../src/ffi/loader';
import { CommandError, NoGpu } from '../../../src/cli/common';
import { UsageError } from '../../../src/cli/args';
import type { LibrarySpec } from '../../../src/ffi/loader';

/** Every error class, made as the package makes it, with the message it must read. */
const made: [string, () => Error, string][] = [
  [
    'CudaError',
    () => new core.CudaError(2, 'cudaErrorMemoryAllocation', 'cudaMalloc', 'out of memory'),
    'cudaErrorMemoryAllocation: out of memory (in cudaMalloc)',
  ],
  [
    'CompileError',
    () => new core.CompileError('nvcc exited with status 1: x.cu(1): error: bad', 'nvcc', 'log'),
    'nvcc exited with status 1: x.cu(1): error: bad',
  ],
  [
    'NvrtcError',
    () => new core.NvrtcError(6, 'NVRTC_ERROR_COMPILATION', 'warn\nk.cu(3): error: no\n'),
    'NVRTC_ERROR_COMPILATION: k.cu(3): error: no',
  ],
  [
    'NvvmError',
    () => new core.NvvmError(9, 'NVVM_ERROR_COMPILATION', 'nvvmCompileProgram', '\nparse error\n'),
    'NVVM_ERROR_COMPILATION: parse error (in nvvmCompileProgram)',
  ],
  [
    'LinkError',
    () => new core.LinkError(4, 'NVJITLINK_ERROR_PTX_COMPILE', 'nvJitLink', 'ptxas error: x', '', 'nvJitLinkComplete'),
    'NVJITLINK_ERROR_PTX_COMPILE: ptxas error: x (in nvJitLinkComplete)',
  ],
  [
    'NvmlError',
    () => new core.NvmlError(3, 'NVML_ERROR_NOT_SUPPORTED', 'nvmlDeviceGetPowerUsage', 'Not Supported'),
    'NVML_ERROR_NOT_SUPPORTED: Not Supported (in nvmlDeviceGetPowerUsage)',
  ],
  // Status 0 needs no text from libnccl (the guard's test below covers a library that cannot give it).
  ['NcclError', () => new core.NcclError(0, 'ncclSuccess', 'ncclAllReduce', ' busy '), 'ncclSuccess:  (busy) (in ncclAllReduce)'],
  [
    'StatusError',
    () => new StatusError(35, 'cudaErrorInsufficientDriver', 'cudaGetDeviceCount', 'insufficient driver', 'libcudart'),
    'cudaErrorInsufficientDriver: insufficient driver (in cudaGetDeviceCount)',
  ],
  [
    'LibraryLoadError',
    () => new LibraryLoadError('libcudart', [{ candidate: 'libcudart.so.13', reason: 'not found' }]),
    'libcudart: could not load the library. Tried:\n  - libcudart.so.13: not found',
  ],
  ['CommandError', () => new CommandError(2, 'cudaErrorMemoryAllocation', 'out of memory'), 'out of memory'],
  ['NoGpu', () => new NoGpu(35, 'cudaErrorInsufficientDriver', 'no NVIDIA driver found'), 'no NVIDIA driver found'],
  ['UsageError', () => new UsageError("unknown option '--colour'", 'info'), "unknown option '--colour'"],
];

describe('one family', () => {
  test.each(made)('%s is a CudaBindingsError and an Error, named and worded as before', (name, make, message) => {
    const e = make();
    expect(e).toBeInstanceOf(CudaBindingsError);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe(name);
    expect(e.message).toBe(message);
    expect(String(e)).toBe(`${name}: ${message}`);
  });

  test('the base is one class, exported by cuda-bindings, /core and every library entry point', () => {
    const entries = ['runtime', 'driver', 'nvrtc', 'nvjitlink', 'nvvm', 'nvfatbin', 'nccl', 'nvml'].map(
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- each library's entry point, by name
      (api) => (require(`../../../src/${api}`) as { CudaBindingsError: unknown; LibraryLoadError: unknown }).CudaBindingsError,
    );
    expect(new Set([root.CudaBindingsError, core.CudaBindingsError, ...entries])).toEqual(new Set([CudaBindingsError]));
  });

  test('a failure is caught once, whatever threw it', () => {
    const caught = made.map(([, make]) => {
      try {
        throw make();
      } catch (e) {
        return e instanceof CudaBindingsError;
      }
    });
    expect(caught.every(Boolean)).toBe(true);
    expect(new TypeError('x')).not.toBeInstanceOf(CudaBindingsError); // bad arguments stay JavaScript's own
  });

  test('the fields the classes had are kept; the base adds code, codeName, fn and library where they are known', () => {
    const cuda = new core.CudaError(2, 'cudaErrorMemoryAllocation', 'cudaMalloc', 'out of memory', 'libcudart');
    expect([cuda.code, cuda.codeName, cuda.fn, cuda.library]).toEqual([2, 'cudaErrorMemoryAllocation', 'cudaMalloc', 'libcudart']);
    const link = new core.LinkError(218, 'CUDA_ERROR_INVALID_PTX', 'cuLink', 'ptxas fatal', 'info', 'cuLinkComplete');
    expect([link.code, link.codeName, link.backend, link.errorLog, link.infoLog, link.fn, link.library]).toEqual([
      218,
      'CUDA_ERROR_INVALID_PTX',
      'cuLink',
      'ptxas fatal',
      'info',
      'cuLinkComplete',
      'libcuda',
    ]);
    const nvrtc = new core.NvrtcError(6, 'NVRTC_ERROR_COMPILATION', 'log');
    expect([nvrtc.code, nvrtc.codeName, nvrtc.compiler, nvrtc.log, nvrtc.library]).toEqual([
      6,
      'NVRTC_ERROR_COMPILATION',
      'nvrtc',
      'log',
      'libnvrtc',
    ]);
    const nvvm = new core.NvvmError(9, 'NVVM_ERROR_COMPILATION', 'nvvmVerifyProgram', 'bad');
    expect([nvvm.code, nvvm.codeName, nvvm.fn, nvvm.compiler, nvvm.library]).toEqual([
      9,
      'NVVM_ERROR_COMPILATION',
      'nvvmVerifyProgram',
      'nvvm',
      'libnvvm',
    ]);
    expect(new core.CompileError('m', 'nvcc', 'l').library).toBeUndefined();
    const nvml = new core.NvmlError(3, 'NVML_ERROR_NOT_SUPPORTED', 'nvmlDeviceGetPowerUsage', 'Not Supported');
    expect([nvml.code, nvml.codeName, nvml.fn, nvml.library]).toEqual([
      3,
      'NVML_ERROR_NOT_SUPPORTED',
      'nvmlDeviceGetPowerUsage',
      'libnvidia-ml',
    ]);
    const nccl = new core.NcclError(0, 'ncclSuccess', 'ncclAllReduce', 'x');
    expect([nccl.code, nccl.codeName, nccl.fn, nccl.lastError, nccl.library]).toEqual([0, 'ncclSuccess', 'ncclAllReduce', 'x', 'libnccl']);
    const load = new LibraryLoadError('libnvvm', []);
    expect([load.label, load.attempts, load.library]).toEqual(['libnvvm', [], 'libnvvm']);
    const cmd = new CommandError(null, 'UsageError', 'm', { a: 1 });
    expect([cmd.code, cmd.codeName, cmd.partial]).toEqual([null, 'UsageError', { a: 1 }]);
    expect(new UsageError('m', 'top').command).toBe('top');
  });

  test('what an error does not know is absent, not an own property set to undefined', () => {
    const own = (e: Error) => Object.keys(e).sort();
    expect(own(new LibraryLoadError('libfoo', []))).toEqual(['attempts', 'label', 'name']);
    expect(own(new UsageError('m'))).toEqual(['command', 'name']);
    expect(own(new core.CudaError(1, 'cudaErrorInvalidValue', 'f', 'x'))).toEqual(['code', 'codeName', 'fn', 'name']);
    expect(own(new CudaBindingsError('m'))).toEqual(['name']);
    expect(new CudaBindingsError('m', { code: 7, library: 'libnvfatbin' })).toMatchObject({
      name: 'CudaBindingsError',
      code: 7,
      library: 'libnvfatbin',
    });
  });

  test("the library names are the loader records' labels, all eight", () => {
    const ffi = path.join(__dirname, '..', '..', '..', 'src', 'ffi');
    const labels = fs
      .readdirSync(ffi)
      .filter((f) => f.endsWith('-lib.gen.ts'))
      .flatMap((f) =>
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- every *-lib module of src/ffi, by file name
        Object.values(require(path.join(ffi, f)) as Record<string, unknown>).filter(
          (v): v is LibrarySpec => typeof v === 'object' && v !== null && 'label' in v && 'envVar' in v,
        ),
      )
      .map((s) => s.label);
    expect(labels.sort()).toEqual([...LIBRARIES].sort());
    expect(labels.every(isCudaLibrary)).toBe(true);
    expect(isCudaLibrary('libfoo')).toBe(false);
  });

  test('statusMessage and statusText: the shared status wording, and a lookup that throws gives the fallback', () => {
    expect(statusMessage('NVML_ERROR_NOT_FOUND', 'Not Found', 'nvmlDeviceGetHandleByUUID')).toBe(
      'NVML_ERROR_NOT_FOUND: Not Found (in nvmlDeviceGetHandleByUUID)',
    );
    expect(statusText(() => 'no error', 'x')).toBe('no error');
    expect(statusText(() => null, 'x')).toBe('x');
    expect(
      statusText(() => {
        throw new LibraryLoadError('libnccl', []);
      }, 'unknown error'),
    ).toBe('unknown error');
  });
});

/** Loads `modulePath` afresh with `facade` replaced by its real exports over `overrides`. */
function withFacade<T>(facade: string, overrides: Record<string, unknown>, modulePath: string): T {
  let out: T | undefined;
  jest.isolateModules(() => {
    jest.doMock(facade, () => ({ ...jest.requireActual(facade), ...overrides }));
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module under test, loaded over the replaced facade
    out = require(modulePath) as T;
  });
  jest.dontMock(facade);
  return out!;
}

const unloadable = (label: string) => () => {
  throw new LibraryLoadError(label, [{ candidate: `${label}.so`, reason: 'no such file' }]);
};

describe('an error being built never hides the failure it reports', () => {
  test("NcclError: a libnccl that cannot give ncclGetErrorString leaves the status, the call and NCCL's last error", () => {
    const { NcclError } = withFacade<typeof import('../../../src/core/nccl/Communicator')>(
      '../../../src/nccl',
      { ncclGetErrorString: unloadable('libnccl') },
      '../../../src/core/nccl/Communicator',
    );
    let e: InstanceType<typeof NcclError> | undefined;
    expect(() => (e = new NcclError(2, 'ncclSystemError', 'ncclAllReduce', 'socket closed'))).not.toThrow();
    expect(e!.message).toBe('ncclSystemError: unknown error (socket closed) (in ncclAllReduce)');
    expect([e!.code, e!.codeName, e!.fn, e!.lastError, e!.library]).toEqual([
      2,
      'ncclSystemError',
      'ncclAllReduce',
      'socket closed',
      'libnccl',
    ]);
    expect(e!.name).toBe('NcclError');
  });

  test('NcclError: with the text, the message is what it was', () => {
    const { NcclError } = withFacade<typeof import('../../../src/core/nccl/Communicator')>(
      '../../../src/nccl',
      { ncclGetErrorString: () => [0, 'invalid argument'] },
      '../../../src/core/nccl/Communicator',
    );
    expect(new NcclError(4, 'ncclInvalidArgument', 'ncclCommInitRankConfig', 'one rank only').message).toBe(
      'ncclInvalidArgument: invalid argument (one rank only) (in ncclCommInitRankConfig)',
    );
  });

  test('runtimeError: a libcudart that cannot name the status gives a CudaError named by the enum', () => {
    const { runtimeError, CudaError } = withFacade<typeof import('../../../src/core/base/errors')>(
      '../../../src/runtime',
      { cudaGetErrorName: unloadable('libcudart'), cudaGetErrorString: unloadable('libcudart') },
      '../../../src/core/base/errors',
    );
    const e = runtimeError(2, 'cudaMalloc');
    expect(e).toBeInstanceOf(CudaError);
    expect(e.message).toBe('cudaErrorMemoryAllocation: unknown error (in cudaMalloc)');
    expect([e.code, e.codeName, e.fn, e.library]).toEqual([2, 'cudaErrorMemoryAllocation', 'cudaMalloc', 'libcudart']);
  });

  test('driverError and nvrtcError: the same when libcuda or libnvrtc cannot describe the status', () => {
    const { driverError } = withFacade<typeof import('../../../src/core/base/errors')>(
      '../../../src/driver',
      { cuGetErrorString: unloadable('libcuda') },
      '../../../src/core/base/errors',
    );
    expect(driverError(100, 'cuInit').message).toBe('CUDA_ERROR_NO_DEVICE: unknown error (in cuInit)');
    const { nvrtcError } = withFacade<typeof import('../../../src/core/base/errors')>(
      '../../../src/nvrtc',
      { nvrtcGetErrorString: unloadable('libnvrtc') },
      '../../../src/core/base/errors',
    );
    expect(nvrtcError(6, 'nvrtcCompileProgram').message).toBe('NVRTC_ERROR_COMPILATION: unknown error (in nvrtcCompileProgram)');
  });
});
