// Bad input fails in JavaScript, before C, with an error that names the function and parameter.
import { cudart, cuda } from '../../../src';

const INSUFFICIENT = cudart.cudaError_t.cudaErrorInsufficientDriver;

describe('pointers', () => {
  test('a string where a pointer goes is a TypeError', () => {
    expect(() => cudart.cudaFree('0x1234' as any)).toThrow(
      new TypeError(
        'cudaFree: parameter \'devPtr\' must be an address (bigint), a Buffer, TypedArray, DataView, ArrayBuffer or null, got the string "0x1234"',
      ),
    );
  });
  test('an object where a pointer goes is a TypeError', () => {
    expect(() => cudart.cudaFree({} as any)).toThrow(/cudaFree: parameter 'devPtr' must be an address/);
  });
  test('a plain number is never taken as a pointer', () => {
    expect(() => cudart.cudaFree(4096 as any)).toThrow(
      /cudaFree: parameter 'devPtr' must be an address as a bigint \(a plain number is never taken as a pointer\)/,
    );
  });
  test('a negative address is a RangeError', () => {
    expect(() => cudart.cudaFree(-1n)).toThrow(RangeError);
  });
  test('an address of 2^64 or more is a RangeError', () => {
    expect(() => cudart.cudaFree(2n ** 64n)).toThrow(/cudaFree: parameter 'devPtr' must be an address within \[0, 2\^64\)/);
  });
  test('null is accepted where C accepts NULL', () => {
    expect(cudart.cudaFree(null)).toEqual([INSUFFICIENT]);
  });
  test('host memory of every kind is accepted', () => {
    for (const m of [Buffer.alloc(8), new Float32Array(2), new DataView(new ArrayBuffer(8)), new ArrayBuffer(8)]) {
      expect(cudart.cudaMemcpy(m, 0n, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost)[0]).toBe(INSUFFICIENT);
    }
  });
});

describe('host buffer extents', () => {
  test('a count larger than the source buffer is a RangeError', () => {
    expect(() => cudart.cudaMemcpy(0n, Buffer.alloc(4), 8, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)).toThrow(
      new RangeError("cudaMemcpy: parameter 'src' holds 4 bytes but count needs 8"),
    );
  });
  test('a count larger than the destination buffer is a RangeError', () => {
    expect(() => cudart.cudaMemcpyAsync(new Uint8Array(7), 0n, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, null)).toThrow(
      /cudaMemcpyAsync: parameter 'dst' holds 7 bytes but count needs 8/,
    );
  });
  test('a 2D copy checks pitch * (height - 1) + width', () => {
    expect(() => cudart.cudaMemcpy2D(0n, 64, Buffer.alloc(100), 32, 16, 4, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)).toThrow(
      /cudaMemcpy2D: parameter 'src' holds 100 bytes but span2D\(spitch, width, height\) needs 112/,
    );
    expect(cudart.cudaMemcpy2D(0n, 64, Buffer.alloc(112), 32, 16, 4, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)[0]).toBe(INSUFFICIENT);
  });
  test('symbol copies, memset and host registration check their buffers', () => {
    expect(() => cudart.cudaMemcpyToSymbol(0n, Buffer.alloc(2), 4, 0, 1)).toThrow(/cudaMemcpyToSymbol: parameter 'src' holds 2 bytes/);
    // @ts-expect-error: host memory is not a device pointer to the compiler; JavaScript callers get the check
    expect(() => cudart.cudaMemset(Buffer.alloc(2), 0, 3)).toThrow(/cudaMemset: parameter 'devPtr' holds 2 bytes/);
    expect(() => cudart.cudaHostRegister(Buffer.alloc(10), 4096, 0)).toThrow(/cudaHostRegister: parameter 'ptr' holds 10 bytes/);
  });
  test('an exact fit is accepted', () => {
    expect(cudart.cudaMemcpy(0n, Buffer.alloc(8), 8, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)[0]).toBe(INSUFFICIENT);
  });
});

test('a C typedef of an enum is an alias whose members are types too (cudart.cudaError_t.cudaSuccess)', () => {
  // This file is type-checked: the annotations below do not compile when the alias is only a const and a type.
  const ok: cudart.cudaError_t.cudaSuccess = cudart.cudaError_t.cudaSuccess;
  const notReady: cuda.CUresult.CUDA_ERROR_NOT_READY = cuda.CUresult.CUDA_ERROR_NOT_READY;
  expect([ok, notReady]).toEqual([0, 600]);
  expect(cudart.cudaError_t).toBe(cudart.cudaError);
});

describe('integers', () => {
  test('a fraction is a RangeError', () => {
    expect(() => cudart.cudaSetDevice(1.5)).toThrow(
      new RangeError("cudaSetDevice: parameter 'device' must be an integer within [-2147483648, 2147483647], got 1.5"),
    );
  });
  test('NaN and Infinity are RangeErrors', () => {
    expect(() => cudart.cudaSetDevice(NaN)).toThrow(
      /cudaSetDevice: parameter 'device' must be an integer within \[-2147483648, 2147483647\], got NaN/,
    );
    expect(() => cudart.cudaMalloc(Infinity)).toThrow(
      /cudaMalloc: parameter 'size' must be an integer within \[0, 2\^53 - 1\], got Infinity/,
    );
  });
  test('a negative size is a RangeError', () => {
    expect(() => cudart.cudaMalloc(-1)).toThrow(
      new RangeError("cudaMalloc: parameter 'size' must be an integer within [0, 2^53 - 1], got -1"),
    );
  });
  test('a size or count takes a bigint too, as cuda-python takes any int', () => {
    // Without a driver the call itself fails with 35: the argument passed the check.
    expect(cudart.cudaMalloc(10n)[0]).toBe(INSUFFICIENT);
    expect(cudart.cudaMemset(0x1000n, 0, 16n)[0]).toBe(INSUFFICIENT);
    expect(() => cudart.cudaMalloc(-1n)).toThrow(
      new RangeError("cudaMalloc: parameter 'size' must be an integer within [0, 2^53 - 1], got -1n"),
    );
    expect(() => cudart.cudaMalloc(2n ** 53n)).toThrow(
      new RangeError(`cudaMalloc: parameter 'size' must be an integer within [0, 2^53 - 1], got ${2n ** 53n}n`),
    );
    // Struct size fields too; they read back as numbers.
    const e = new cudart.cudaExtent({ width: 4n, height: 2, depth: 1n });
    expect([e.width, e.height, e.depth]).toEqual([4, 2, 1]);
    expect(() => (e.width = 2n ** 53n)).toThrow(/^cudaExtent\.width must be an integer within \[0, 2\^53 - 1\], got 9007199254740992n$/);
  });
  test('a value out of the C type range is a RangeError', () => {
    expect(() => cudart.cudaSetDevice(2 ** 31)).toThrow(
      /cudaSetDevice: parameter 'device' must be an integer within \[-2147483648, 2147483647\]/,
    );
    expect(() => cudart.cudaStreamCreateWithFlags(-1)).toThrow(
      /cudaStreamCreateWithFlags: parameter 'flags' must be an integer within \[0, 4294967295\]/,
    );
  });
  test('a string where an integer goes is a TypeError', () => {
    expect(() => cudart.cudaSetDevice('0' as any)).toThrow(
      new TypeError('cudaSetDevice: parameter \'device\' must be a 32-bit integer, got the string "0"'),
    );
  });
  test('64-bit integers take bigints and safe numbers', () => {
    expect(cudart.cudaGraphInstantiate(null, 0n)[0]).toBe(INSUFFICIENT);
    expect(cudart.cudaGraphInstantiate(null, 1)[0]).toBe(INSUFFICIENT);
    expect(() => cudart.cudaGraphInstantiate(null, 2n ** 64n)).toThrow(
      /cudaGraphInstantiate: parameter 'flags' must be an integer within \[0, 2\^64\)/,
    );
    expect(() => cudart.cudaGraphInstantiate(null, 2 ** 60)).toThrow(RangeError);
  });
});

describe('handles', () => {
  test('a number where a handle goes is a TypeError', () => {
    expect(() => cudart.cudaStreamQuery(1 as any)).toThrow(
      new TypeError("cudaStreamQuery: parameter 'stream' must be a handle (bigint) or null, got 1"),
    );
  });
  test('null and the special streams are accepted', () => {
    expect(cudart.cudaStreamQuery(null)).toEqual([INSUFFICIENT]);
    expect(cudart.cudaStreamQuery(cudart.cudaStreamLegacy)).toEqual([INSUFFICIENT]);
    expect(cudart.cudaStreamQuery(cudart.cudaStreamPerThread)).toEqual([INSUFFICIENT]);
  });
  test('a handle can be made from an integer', () => {
    expect(cudart.cudaStream_t(123)).toBe(123n);
    expect(cudart.cudaEvent_t(5n)).toBe(5n);
    expect(() => cudart.cudaStream_t(-1)).toThrow(/cudaStream_t\(\): parameter 'value' must be an integer within \[0, 2\^64\), got -1/);
    expect(() => cudart.cudaStream_t('1' as any)).toThrow(TypeError);
  });
  test('a handle of the wrong kind is a compile error', () => {
    const ev = cudart.cudaEvent_t(1);
    // @ts-expect-error a cudaEvent_t is not a cudaStream_t
    const call = () => cudart.cudaStreamQuery(ev);
    expect(typeof call).toBe('function');
  });
});

describe('strings, structs and arrays', () => {
  test('a number where a string goes is a TypeError', () => {
    expect(() => cudart.cudaDeviceGetByPCIBusId(0 as any)).toThrow(/cudaDeviceGetByPCIBusId: parameter 'pciBusId' must be a string, got 0/);
  });
  test('a string with NUL is a RangeError', () => {
    expect(() => cudart.cudaDeviceGetByPCIBusId('a\0b')).toThrow(/must be a string without NUL characters/);
  });
  test('a struct argument takes the class, a plain object of its fields, or null', () => {
    expect(cudart.cudaMemcpy3D(new cudart.cudaMemcpy3DParms())[0]).toBe(INSUFFICIENT);
    expect(cudart.cudaMemcpy3D({ kind: cudart.cudaMemcpyKind.cudaMemcpyDefault })[0]).toBe(INSUFFICIENT);
    expect(() => cudart.cudaMemcpy3D({ knid: 1 } as any)).toThrow(/cudaMemcpy3D: parameter 'p': cudaMemcpy3DParms: no field named 'knid'/);
    expect(() => cudart.cudaMemcpy3D(new cudart.cudaExtent() as any)).toThrow(/cudaMemcpy3D: parameter 'p' must be a cudaMemcpy3DParms/);
  });
  test('a struct by value takes the class or a plain object', () => {
    const d = new cudart.dim3({ x: 1, y: 1, z: 1 });
    expect(cudart.cudaLaunchKernel(0n, d, { x: 1, y: 1, z: 1 }, null, 0, null)).toEqual([INSUFFICIENT]);
    expect(() => cudart.cudaLaunchKernel(0n, 5 as any, d, null, 0, null)).toThrow(/cudaLaunchKernel: parameter 'gridDim' must be a dim3/);
  });
  test('an array shorter than its count is a RangeError', () => {
    expect(() => cudart.cudaGraphAddEmptyNode(null, [], 2)).toThrow(
      new RangeError("cudaGraphAddEmptyNode: parameter 'pDependencies' has 0 elements but the count says 2"),
    );
  });
  test('an array element of the wrong type names its index', () => {
    expect(() => cudart.cudaGraphAddEmptyNode(null, [5 as any], 1)).toThrow(
      /cudaGraphAddEmptyNode: parameter 'pDependencies\[0\]' must be an address or handle \(bigint\) or null, got 5/,
    );
  });
  test('attribute values have the type of the attribute', () => {
    const A = cudart.cudaMemPoolAttr;
    expect(cudart.cudaMemPoolSetAttribute(null, A.cudaMemPoolAttrReleaseThreshold, 1n << 40n)[0]).toBe(INSUFFICIENT);
    expect(cudart.cudaMemPoolSetAttribute(null, A.cudaMemPoolReuseAllowOpportunistic, 1)[0]).toBe(INSUFFICIENT);
    expect(() => cudart.cudaMemPoolSetAttribute(null, A.cudaMemPoolReuseAllowOpportunistic, 1.5)).toThrow(RangeError);
    expect(() => cudart.cudaMemPoolSetAttribute(null, A.cudaMemPoolAttrReleaseThreshold, -1n)).toThrow(
      /cudaMemPoolSetAttribute: parameter 'value'/,
    );
  });
});

describe('crash guards', () => {
  test('an output string of length 0 is refused (libcuda writes past it)', () => {
    expect(() => cudart.cudaDeviceGetPCIBusId(0, 0)).toThrow(
      new RangeError("cudaDeviceGetPCIBusId: parameter 'len' must be at least 1, got 0"),
    );
  });
  test('a NULL kernel in a launch config is refused', () => {
    expect(() => cudart.cudaLaunchKernelExC(new cudart.cudaLaunchConfig_t(), null, [])).toThrow(
      /cudaLaunchKernelExC: parameter 'func' must be a kernel, not NULL/,
    );
  });
  test('a negative count names the count', () => {
    expect(() => cudart.cudaSetValidDevices([], -1)).toThrow(
      new RangeError("cudaSetValidDevices: parameter 'len' must not be negative, got -1"),
    );
  });
  test('undefined is not NULL', () => {
    expect(() => cudart.cudaMemcpy3D(undefined as any)).toThrow(/cudaMemcpy3D: parameter 'p' must be a cudaMemcpy3DParms/);
    expect(() => cudart.cudaGraphAddEmptyNode(null, undefined as any, 0)).toThrow(/parameter 'pDependencies' must be an array/);
  });
});
