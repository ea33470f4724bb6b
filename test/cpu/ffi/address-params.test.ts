// addressParams (src/ffi/binding.ts): core's directByAddress functions take some pointers as numbers,
// bound as uint64_t; only the void * parameters named change, and naming any other is refused.
import { addressParams } from '../../../src/ffi/binding';

test('the void * parameters at the indexes given become uint64_t, and every other parameter stays', () => {
  // cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream), as generated.
  const params = ['void *', 'size_t', 'void *', 'void *'];
  expect(addressParams(params, [0, 3])).toEqual(['uint64_t', 'size_t', 'void *', 'uint64_t']);
  expect(addressParams(params, [])).toEqual(params);
  expect(params).toEqual(['void *', 'size_t', 'void *', 'void *']);
});

test('an index that is not a void * parameter is refused, naming it', () => {
  expect(() => addressParams(['void *', 'size_t'], [1])).toThrow('addressParams: parameter 1 is not a void * (size_t)');
  expect(() => addressParams(['void *'], [1])).toThrow('addressParams: parameter 1 is not a void * (undefined)');
});
