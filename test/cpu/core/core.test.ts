// The core layer without a driver: errors that name the call and explain, argument checks.
import { core, cudart, cuda, nvrtc } from '../../../src';

const hasDriver = cudart.cudaGetDeviceCount()[0] !== cudart.cudaError_t.cudaErrorInsufficientDriver;

(hasDriver ? describe.skip : describe)('without a driver', () => {
  test('a failed call throws a CudaError: code, C name, the call, and the explanation', () => {
    let e: unknown;
    try {
      core.Device.count();
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(core.CudaError);
    const err = e as InstanceType<typeof core.CudaError>;
    expect([err.code, err.codeName, err.fn]).toEqual([35, 'cudaErrorInsufficientDriver', 'cudaGetDeviceCount']);
    expect(err.message).toBe(
      'cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version (in cudaGetDeviceCount)',
    );
  });

  test('pinned memory cannot be had: HostBuffer throws the CudaError of cudaHostAlloc', () => {
    expect(() => new core.HostBuffer(16)).toThrow(/^cudaErrorInsufficientDriver: .* \(in cudaHostAlloc\)$/);
  });
});

test('check() unwraps a facade tuple: nothing, one output, or several', () => {
  expect(core.check([0])).toBeUndefined();
  expect(core.check([0, 5])).toBe(5);
  expect(core.check([0, 1, 2])).toEqual([1, 2]);
  expect(() => core.check([cudart.cudaError_t.cudaErrorInvalidValue, null], 'cudaSomething')).toThrow(
    new core.CudaError(1, 'cudaErrorInvalidValue', 'cudaSomething', 'invalid argument'),
  );
});

test("each API has its check, and the error names the status by that API's enum", () => {
  // 500 is cudaErrorSymbolNotFound to the runtime, CUDA_ERROR_NOT_FOUND to the driver; 6 is
  // NVRTC_ERROR_COMPILATION to NVRTC and cudaErrorLaunchTimeout's neighbour to the runtime.
  const named = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      const err = e as InstanceType<typeof core.CudaError>;
      return [err.constructor.name, err.code, err.codeName, err.fn, err.message.split(':')[0]];
    }
    return 'no error';
  };
  expect(named(() => core.check([cudart.cudaError_t.cudaErrorSymbolNotFound], 'f'))).toEqual([
    'CudaError',
    500,
    'cudaErrorSymbolNotFound',
    'f',
    'cudaErrorSymbolNotFound',
  ]);
  expect(named(() => core.checkDriver([cuda.CUresult.CUDA_ERROR_NOT_FOUND], 'cuF'))).toEqual([
    'CudaError',
    500,
    'CUDA_ERROR_NOT_FOUND',
    'cuF',
    'CUDA_ERROR_NOT_FOUND',
  ]);
  expect(named(() => core.checkNvrtc([nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION], 'nvrtcF'))).toEqual([
    'CudaError',
    6,
    'NVRTC_ERROR_COMPILATION',
    'nvrtcF',
    'NVRTC_ERROR_COMPILATION',
  ]);
  expect(core.checkDriver([cuda.CUresult.CUDA_SUCCESS, 7])).toBe(7);
  expect(core.checkNvrtc([nvrtc.nvrtcResult.NVRTC_SUCCESS, 'x', 2])).toEqual(['x', 2]);
  // A driver or NVRTC tuple given to the runtime's check does not compile.
  // @ts-expect-error CUresult is not cudaError_t
  expect(() => core.check([cuda.CUresult.CUDA_ERROR_NOT_FOUND])).toThrow();
  // @ts-expect-error nvrtcResult is not cudaError_t
  expect(() => core.check([nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION])).toThrow();
});

test('bad arguments are RangeErrors before any call', () => {
  expect(() => core.Device.get(-1)).toThrow(new RangeError("Device.get: parameter 'n' must be a device number, got -1"));
  expect(() => new core.HostBuffer(-1)).toThrow(new RangeError("HostBuffer: parameter 'size' must be a non-negative integer, got -1"));
});
