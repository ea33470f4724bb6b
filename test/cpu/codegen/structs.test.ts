// Struct classes: own bytes, live nested views, copies on assignment, arrays, strings, pointers.
import koffi from 'koffi';
import { cudart } from '../../../src';

test('a struct is made from a plain object of its fields', () => {
  const e = new cudart.cudaExtent({ width: 4 });
  expect([e.width, e.height, e.depth]).toEqual([4, 0, 0]);
  expect(e.getBytes().length).toBe(cudart.cudaExtent.layout.size);
});

test("a class's layout is built on its first read, then is a plain value: the same object at every read", () => {
  // (cudaPos: no other test of this file reads its layout first.)
  expect(typeof Object.getOwnPropertyDescriptor(cudart.cudaPos, 'layout')?.get).toBe('function');
  const l = cudart.cudaPos.layout;
  expect(l).toEqual({
    cType: 'struct cudaPos',
    path: '',
    size: 24,
    align: 8,
    union: false,
    fields: { x: { offset: 0, size: 8 }, y: { offset: 8, size: 8 }, z: { offset: 16, size: 8 } },
  });
  expect(Object.getOwnPropertyDescriptor(cudart.cudaPos, 'layout')).toEqual({
    value: l,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  expect(cudart.cudaPos.layout).toBe(l);
});

test('an unknown field is a TypeError naming the struct and the field', () => {
  expect(() => new cudart.cudaExtent({ widht: 4 } as any)).toThrow(/cudaExtent: no field named 'widht'/);
});

test('a field rejects values outside its C type', () => {
  const d = new cudart.dim3();
  expect(() => (d.x = -1)).toThrow(new RangeError('dim3.x must be an integer within [0, 4294967295], got -1'));
  expect(() => ((d as any).x = 'a')).toThrow(TypeError);
});

test('getPtr() is the address of the bytes', () => {
  const e = new cudart.cudaExtent({ width: 7 });
  expect(koffi.decode(e.getPtr(), 'size_t')).toBe(7);
});

test('a nested struct field is a live view', () => {
  const p = new cudart.cudaMemcpy3DParms();
  p.extent.width = 16;
  expect(p.extent.width).toBe(16);
  const view = p.extent;
  p.extent = new cudart.cudaExtent({ width: 32, height: 2, depth: 1 });
  expect(view.width).toBe(32);
});

test('assigning a struct copies it', () => {
  const p = new cudart.cudaMemcpy3DParms();
  const e = new cudart.cudaExtent({ width: 8 });
  p.extent = e;
  e.width = 9;
  expect(p.extent.width).toBe(8);
});

test('an unnamed union member reads through its path', () => {
  const r = new cudart.cudaResourceDesc({ resType: cudart.cudaResourceType.cudaResourceTypeLinear });
  r.res.linear.devPtr = 0x1000n;
  r.res.linear.sizeInBytes = 256;
  expect(r.res.linear.devPtr).toBe(0x1000n);
  expect(r.res.array.array).toBe(0x1000n);
  expect(r.res.linear.sizeInBytes).toBe(256);
});

test('fixed arrays read and write as arrays', () => {
  const p = new cudart.cudaDeviceProp();
  p.maxThreadsDim = [1024, 1024, 64];
  expect(p.maxThreadsDim).toEqual([1024, 1024, 64]);
  expect(() => (p.maxThreadsDim = [1, 2, 3, 4])).toThrow(/cudaDeviceProp.maxThreadsDim must fit in \[3\], got 4 elements/);
});

test('char[] text fields read as strings, binary ones as bytes', () => {
  const p = new cudart.cudaDeviceProp();
  p.name = 'NVIDIA H100 80GB HBM3';
  expect(p.name).toBe('NVIDIA H100 80GB HBM3');
  expect(() => (p.name = 'x'.repeat(257))).toThrow(/^cudaDeviceProp\.name must fit in char\[256\], got 257 bytes$/);
  expect(p.uuid.bytes).toBeInstanceOf(Uint8Array);
  expect(p.uuid.bytes.length).toBe(16);
  const h = new cudart.cudaIpcMemHandle_t({ reserved: new Uint8Array(64).fill(7) });
  expect(Array.from(h.reserved.slice(0, 3))).toEqual([7, 7, 7]);
});

test('a char[N] field takes exactly N characters with no NUL and reads all N back, as cuda-python allows', () => {
  const p = new cudart.cudaDeviceProp();
  const full = 'NVIDIA H100' + ' '.repeat(256 - 'NVIDIA H100'.length);
  p.name = full;
  expect(p.name).toBe(full);
  expect(p.name.length).toBe(256);
  // The next field is untouched: the full field has no terminator spilling over.
  p.name = 'short';
  expect(p.name).toBe('short');
  // The bytes after the field are not written: the next field keeps its value.
  p.uuid = new cudart.cudaUUID_t({ bytes: new Uint8Array(16).fill(9) });
  p.name = full;
  expect(Array.from(p.uuid.bytes)).toEqual(new Array(16).fill(9));
});

test('64-bit fields are bigints, sizes are numbers', () => {
  const a = new cudart.cudaAccessPolicyWindow({ base_ptr: 0x10n, num_bytes: 4096 });
  expect(a.base_ptr).toBe(0x10n);
  expect(a.num_bytes).toBe(4096);
  const m = new cudart.cudaExternalSemaphoreSignalParams();
  m.params.fence.value = 5;
  expect(m.params.fence.value).toBe(5n);
});

test('a pointer field holding host memory keeps it alive and points at it', () => {
  const buf = Buffer.from([1, 2, 3, 4]);
  const p = new cudart.cudaPitchedPtr({ ptr: buf, pitch: 4, xsize: 4, ysize: 1 });
  expect(p.ptr).toBe(koffi.address(buf));
  expect(p._keep?.ptr).toBe(buf);
});

test('two nested pointer fields of one struct keep both buffers alive (srcPtr.ptr and dstPtr.ptr)', () => {
  const p = new cudart.cudaMemcpy3DParms();
  const src = new Uint8Array(8);
  const dst = new Uint8Array(8);
  p.srcPtr.ptr = src;
  p.dstPtr.ptr = dst;
  expect(p._keep).toEqual({ 'srcPtr.ptr': src, 'dstPtr.ptr': dst });
  // Assigning a struct to a nested field makes the outer struct keep what it holds.
  const q = new cudart.cudaMemcpy3DParms();
  q.srcPtr = p.srcPtr;
  expect(q._keep?.['srcPtr.ptr']).toBe(src);
});

test('a pointer field with a count takes an array of structs', () => {
  const sems = [cudart.cudaExternalSemaphore_t(1), cudart.cudaExternalSemaphore_t(2)];
  const params = new cudart.cudaExternalSemaphoreSignalNodeParams({ extSemArray: sems, numExtSems: 2 });
  expect(Array.from(koffi.decode(params.extSemArray, 'uint64_t', 2) as ArrayLike<bigint>)).toEqual([1n, 2n]);
  params.paramsArray = [{ flags: 3 }, new cudart.cudaExternalSemaphoreSignalParams({ flags: 4 })];
  const size = cudart.cudaExternalSemaphoreSignalParams.layout.size;
  const flagsAt = cudart.cudaExternalSemaphoreSignalParams.layout.fields.flags.offset;
  expect(koffi.decode(params.paramsArray + BigInt(size + flagsAt), 'uint32_t')).toBe(4);
});

test('a fixed array of structs reads as copies', () => {
  const f = new cudart.cudaEglFrame();
  const planes = f.planeDesc;
  planes[0].width = 5;
  expect(f.planeDesc[0].width).toBe(0);
  f.planeDesc = [{ width: 5 }];
  expect(f.planeDesc[0].width).toBe(5);
});

test('typedef names are aliases of the class', () => {
  expect(cudart.cudaUUID_t).toBe(cudart.CUuuid_st);
  expect(cudart.cudaStreamAttrValue).toBe(cudart.cudaLaunchAttributeValue);
});

test('make_cudaExtent, make_cudaPitchedPtr and make_cudaPos build the structs', () => {
  expect(cudart.make_cudaExtent(1, 2, 3).toJSON()).toEqual({ width: 1, height: 2, depth: 3 });
  expect(cudart.make_cudaPos(4, 5, 6).toJSON()).toEqual({ x: 4, y: 5, z: 6 });
  const p = cudart.make_cudaPitchedPtr(0x100n, 64, 16, 4);
  expect([p.ptr, p.pitch, p.xsize, p.ysize]).toEqual([0x100n, 64, 16, 4]);
});

test('output structs come back as instances', () => {
  const [err, desc] = cudart.cudaCreateChannelDesc(32, 0, 0, 0, cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat);
  expect(err).toBe(cudart.cudaError_t.cudaSuccess);
  expect(desc).toBeInstanceOf(cudart.cudaChannelFormatDesc);
  expect([desc.x, desc.f]).toEqual([32, cudart.cudaChannelFormatKind.cudaChannelFormatKindFloat]);
});

test('a kernel node takes its arguments typed, packed and kept alive with the struct', () => {
  const p = new cudart.cudaKernelNodeParams({ kernelParams: [cudart.ptr(0x1000n), cudart.i32(7)] });
  const argv = Array.from(koffi.decode(p.kernelParams, 'uint64_t', 2) as ArrayLike<bigint>);
  expect(koffi.decode(argv[0], 'uint64_t')).toBe(0x1000);
  expect(koffi.decode(argv[1], 'int32_t')).toBe(7);
  expect(() => (p.kernelParams = [5 as any])).toThrow(
    /cudaKernelNodeParams: parameter 'kernelParams\[0\]' must be a typed kernel argument/,
  );
});

test('a graph host node takes a JS function: every one goes through the one trampoline, told apart by a token in userData', () => {
  const fn = () => undefined;
  const a = new cudart.cudaHostNodeParams({ fn });
  const b = new cudart.cudaHostNodeParams({ fn: () => 1, userData: 5n });
  expect(typeof a.fn).toBe('bigint');
  expect(a.fn).not.toBe(0n);
  expect(b.fn).toBe(a.fn);
  // C's userData holds the token; the property reads the user's value.
  expect([a.userData, b.userData]).toEqual([0n, 5n]);
  expect(Buffer.from(b.getBytes()).readBigUInt64LE(8)).not.toBe(5n);
  expect(() => ((a as any).fn = 'f')).toThrow(TypeError);
});
