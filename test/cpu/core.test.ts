// The core layer without a driver: errors that name the call and explain, argument checks.
import { core, cudart } from '../../src';

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
    expect(err.message).toBe('cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version (in cudaGetDeviceCount)');
  });

  test('pinned memory cannot be had: HostBuffer throws the CudaError of cudaHostAlloc', () => {
    expect(() => new core.HostBuffer(16)).toThrow(/^cudaErrorInsufficientDriver: .* \(in cudaHostAlloc\)$/);
  });
});

test('check() unwraps a facade tuple: nothing, one output, or several', () => {
  expect(core.check([0])).toBeUndefined();
  expect(core.check([0, 5])).toBe(5);
  expect(core.check([0, 1, 2])).toEqual([1, 2]);
  expect(() => core.check([cudart.cudaError_t.cudaErrorInvalidValue, null], 'cudaSomething')).toThrow(new core.CudaError(1, 'cudaErrorInvalidValue', 'cudaSomething', 'invalid argument'));
});

test('bad arguments are RangeErrors before any call', () => {
  expect(() => core.Device.get(-1)).toThrow(new RangeError("Device.get: parameter 'n' must be a device number, got -1"));
  expect(() => new core.HostBuffer(0)).toThrow(new RangeError("HostBuffer: parameter 'size' must be a positive integer, got 0"));
});
