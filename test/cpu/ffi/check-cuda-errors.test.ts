// cuda-python's check idiom, as each facade exports it: checkCudaErrors(result) returns nothing, the
// output or the outputs, and on a failed status throws a StatusError that names the status, the
// call and the library. Without a driver (this machine, CI) runtime calls fail with
// cudaErrorInsufficientDriver, which is the failure checked for real; other statuses are results
// made here, as the facades return them.
import * as root from '../../../src';
import { cudart, cuda, nvrtc, nvjitlink, nvvm, nvfatbin, nccl, nvml, CudaBindingsError } from '../../../src';
import { StatusError } from '../../../src/ffi/errors';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import { namespaceOf } from '../../../tools/codegen/emit-library';

const hasDriver = cudart.cudaGetDeviceCount()[0] !== cudart.cudaError_t.cudaErrorInsufficientDriver;
const withoutDriver = hasDriver ? test.skip : test;
/** libNVVM, from the toolkit, gives real statuses without a GPU; where it is absent its tests skip. */
const withNvvm = (() => {
  try {
    nvvm.libraryInfo();
    return test;
  } catch {
    return test.skip;
  }
})();

/** What `body` threw (a test fails when it throws nothing). */
function thrown(body: () => unknown): StatusError {
  try {
    body();
  } catch (e) {
    return e as StatusError;
  }
  throw new Error('nothing was thrown');
}

describe('a successful result', () => {
  const ok = cudart.cudaError_t.cudaSuccess;

  test('with no output gives nothing', () => {
    expect(cudart.checkCudaErrors([ok])).toBeUndefined();
  });

  test('with one output gives the output', () => {
    expect(cudart.checkCudaErrors([ok, 5])).toBe(5);
    const stream = cudart.cudaStream_t(7);
    expect(cudart.checkCudaErrors([ok, stream])).toBe(stream);
  });

  test('with several outputs gives them as an array', () => {
    expect(cudart.checkCudaErrors([ok, 1, 2])).toEqual([1, 2]);
    expect(nvvm.checkCudaErrors([nvvm.nvvmResult.NVVM_SUCCESS, 2, 0, 3, 0])).toEqual([2, 0, 3, 0]);
  });

  test("with NCCL's ncclInProgress gives the outputs too (a non-blocking communicator's init)", () => {
    const comm = nccl.ncclComm_t(0x1000n);
    expect(nccl.checkCudaErrors([nccl.ncclResult_t.ncclInProgress, comm])).toBe(comm);
  });

  test('of a call gives its output', () => {
    const name = cudart.checkCudaErrors(cudart.cudaGetErrorName(cudart.cudaError_t.cudaErrorInvalidValue));
    expect(name).toBe('cudaErrorInvalidValue');
  });

  withNvvm('of a call with several outputs gives them', () => {
    const [, major, minor] = nvvm.nvvmVersion();
    expect(nvvm.checkCudaErrors(nvvm.nvvmVersion())).toEqual([major, minor]);
  });
});

describe('a failed call', () => {
  withoutDriver('throws a StatusError naming the status, its text, the call and the library', () => {
    const e = thrown(() => cudart.checkCudaErrors(cudart.cudaGetDeviceCount()));
    expect(e).toBeInstanceOf(StatusError);
    expect(e).toBeInstanceOf(CudaBindingsError);
    expect(e.name).toBe('StatusError');
    expect({ code: e.code, codeName: e.codeName, fn: e.fn, library: e.library }).toEqual({
      code: 35,
      codeName: 'cudaErrorInsufficientDriver',
      fn: 'cudaGetDeviceCount',
      library: 'libcudart',
    });
    expect(e.message).toBe(
      `cudaErrorInsufficientDriver: ${cudart.cudaGetErrorString(cudart.cudaError_t.cudaErrorInsufficientDriver)[1]} (in cudaGetDeviceCount)`,
    );
  });

  withoutDriver('without outputs is named too', () => {
    expect(thrown(() => cudart.checkCudaErrors(cudart.cudaDeviceSynchronize())).fn).toBe('cudaDeviceSynchronize');
    expect(thrown(() => cudart.checkCudaErrors(cudart.cudaStreamCreate())).fn).toBe('cudaStreamCreate');
  });

  withoutDriver('is named by the name passed, where one is', () => {
    expect(thrown(() => cudart.checkCudaErrors(cudart.cudaGetDeviceCount(), 'counting devices')).fn).toBe('counting devices');
  });

  withoutDriver('is named only by its own result: a result made elsewhere is not named after the last failed call', () => {
    cudart.cudaGetDeviceCount();
    const e = thrown(() => cudart.checkCudaErrors([cudart.cudaError_t.cudaErrorInsufficientDriver]));
    expect(e.fn).toBe('a call of the CUDA runtime API');
  });

  withNvvm('of libNVVM is named by its status and text', () => {
    const [, prog] = nvvm.nvvmCreateProgram();
    try {
      const e = thrown(() => nvvm.checkCudaErrors(nvvm.nvvmCompileProgram(prog, 0, null)));
      expect([e.codeName, e.fn, e.library]).toEqual(['NVVM_ERROR_NO_MODULE_IN_PROGRAM', 'nvvmCompileProgram', 'libnvvm']);
      expect(e.message).toMatch(/^NVVM_ERROR_NO_MODULE_IN_PROGRAM: .+ \(in nvvmCompileProgram\)$/);
    } finally {
      nvvm.nvvmDestroyProgram(prog);
    }
  });
});

describe('a failed status of each library', () => {
  // A status of each library's enum, checked by that library's checkCudaErrors.
  const cases: [string, () => unknown, string, string][] = [
    ['cudart', () => cudart.checkCudaErrors([cudart.cudaError_t.cudaErrorInvalidValue, null]), 'cudaErrorInvalidValue', 'libcudart'],
    ['cuda', () => cuda.checkCudaErrors([cuda.CUresult.CUDA_ERROR_NOT_FOUND, null]), 'CUDA_ERROR_NOT_FOUND', 'libcuda'],
    ['nvrtc', () => nvrtc.checkCudaErrors([nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION]), 'NVRTC_ERROR_COMPILATION', 'libnvrtc'],
    [
      'nvjitlink',
      () => nvjitlink.checkCudaErrors([nvjitlink.nvJitLinkResult.NVJITLINK_ERROR_PTX_COMPILE]),
      'NVJITLINK_ERROR_PTX_COMPILE',
      'libnvJitLink',
    ],
    ['nvvm', () => nvvm.checkCudaErrors([nvvm.nvvmResult.NVVM_ERROR_INVALID_IR]), 'NVVM_ERROR_INVALID_IR', 'libnvvm'],
    [
      'nvfatbin',
      () => nvfatbin.checkCudaErrors([nvfatbin.nvFatbinResult.NVFATBIN_ERROR_INVALID_ARCH, null]),
      'NVFATBIN_ERROR_INVALID_ARCH',
      'libnvfatbin',
    ],
    ['nccl', () => nccl.checkCudaErrors([nccl.ncclResult_t.ncclInvalidUsage, null]), 'ncclInvalidUsage', 'libnccl'],
    ['nvml', () => nvml.checkCudaErrors([nvml.nvmlReturn_t.NVML_ERROR_UNINITIALIZED, null]), 'NVML_ERROR_UNINITIALIZED', 'libnvidia-ml'],
  ];

  test.each(cases)(
    '%s: a StatusError with the status, its library and the message CODE_NAME: text (in call)',
    (_ns, check, codeName, library) => {
      // A library that is not installed cannot give the status's text; the error still names the status.
      const e = thrown(check);
      expect(e).toBeInstanceOf(StatusError);
      expect([e.codeName, e.library]).toEqual([codeName, library]);
      expect(e.message).toMatch(new RegExp(`^${codeName}: .+ \\(in a call of the .+ API\\)$`));
    },
  );

  test('a status the enum does not list is named by the enum and the number', () => {
    const e = thrown(() => cudart.checkCudaErrors([9999 as cudart.cudaError_t]));
    expect([e.code, e.codeName]).toEqual([9999, 'cudaError_t 9999']);
  });
});

describe('where it is found', () => {
  test.each(LIBRARIES.map((l) => [namespaceOf(l), l.api.id] as const))(
    '%s: checkCudaErrors and StatusError on the namespace and the subpath cuda-bindings/%s',
    (ns, id) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- each library's entry point, by name
      const entry = require(`../../../src/${id}`) as { checkCudaErrors: unknown; StatusError: unknown };
      expect(typeof entry.checkCudaErrors).toBe('function');
      expect(entry.StatusError).toBe(StatusError);
      expect((root as unknown as Record<string, { checkCudaErrors: unknown }>)[ns].checkCudaErrors).toBe(entry.checkCudaErrors);
    },
  );
});
