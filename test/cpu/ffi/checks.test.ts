// One set of checks for every value that crosses into C: the facade, struct fields, kernel
// arguments, attribute values and the async calls report the same bad value in the same words.
import { cudart } from '../../../src';
import { describe as describeValue } from '../../../src/ffi/checks';

const U32_RANGE = 'must be an integer within [0, 4294967295], got -1';
const I32_RANGE = 'must be an integer within [-2147483648, 2147483647], got 1.5';

test('an unsigned 32-bit value out of range reads the same in the facade, a struct field and a kernel argument', () => {
  const dim = new cudart.dim3();
  const args = new cudart.KernelArgs([cudart.u32(1)]);
  expect(() => cudart.cudaStreamCreateWithFlags(-1)).toThrow(new RangeError(`cudaStreamCreateWithFlags: parameter 'flags' ${U32_RANGE}`));
  expect(() => (dim.x = -1)).toThrow(new RangeError(`dim3.x ${U32_RANGE}`));
  expect(() => cudart.u32(-1)).toThrow(new RangeError(`u32(): parameter 'value' ${U32_RANGE}`));
  expect(() => args.set(0, -1)).toThrow(new RangeError(`KernelArgs.set: parameter 'value' ${U32_RANGE}`));
});

test('a fraction where C takes an int reads the same in the facade and an attribute value', () => {
  expect(() => cudart.cudaSetDevice(1.5)).toThrow(new RangeError(`cudaSetDevice: parameter 'device' ${I32_RANGE}`));
  const attr = cudart.cudaMemPoolAttr.cudaMemPoolReuseFollowEventDependencies;
  expect(() => cudart.cudaMemPoolSetAttribute(null, attr, 1.5)).toThrow(
    new RangeError(`cudaMemPoolSetAttribute: parameter 'value' ${I32_RANGE}`),
  );
});

test('a negative size reads the same in the blocking and the async call', async () => {
  const dst = new Uint8Array(4);
  const src = new Uint8Array(4);
  const kind = cudart.cudaMemcpyKind.cudaMemcpyHostToHost;
  const want = "parameter 'count' must be an integer within [0, 2^53 - 1], got -1";
  expect(() => cudart.cudaMemcpy(dst, src, -1, kind)).toThrow(new RangeError(`cudaMemcpy: ${want}`));
  await expect(cudart.async.cudaMemcpy(dst, src, -1, kind)).rejects.toThrow(new RangeError(`async.cudaMemcpy: ${want}`));
});

test('an address out of range reads the same as a pointer argument, a handle argument and a pointer field', () => {
  const want = 'must be an address within [0, 2^64), got 18446744073709551616n';
  const p = new cudart.cudaPitchedPtr();
  expect(() => cudart.cudaFree(2n ** 64n)).toThrow(new RangeError(`cudaFree: parameter 'devPtr' ${want}`));
  expect(() => (p.ptr = 2n ** 64n)).toThrow(new RangeError(`cudaPitchedPtr.ptr ${want}`));
  expect(() => cudart.cudaGraphAddEmptyNode(null, [(2n ** 64n) as never], 1)).toThrow(
    new RangeError(`cudaGraphAddEmptyNode: parameter 'pDependencies[0]' ${want}`),
  );
});

test('an element of an array argument is named by its index, in the same format as a parameter', () => {
  expect(() => cudart.cudaGraphAddEmptyNode(null, [5 as never], 1)).toThrow(
    new TypeError("cudaGraphAddEmptyNode: parameter 'pDependencies[0]' must be an address or handle (bigint) or null, got 5"),
  );
});

test("one describe() names a bad value, in the facade's words, for every layer", () => {
  class Stream {}
  const values: unknown[] = [
    null,
    undefined,
    1.5,
    -1n,
    true,
    () => 1,
    Symbol('s'),
    'x\n',
    'a'.repeat(25),
    [1],
    new Float32Array(1),
    {},
    new Stream(),
  ];
  expect(values.map((v) => describeValue(v))).toEqual([
    'null',
    'undefined',
    '1.5',
    '-1n',
    'a boolean',
    'a function',
    'a symbol',
    'the string "x\\n"',
    `the string "${'a'.repeat(20)}…"`,
    'an array',
    'a Float32Array',
    'an object (Object)',
    'an object (Stream)',
  ]);
});
