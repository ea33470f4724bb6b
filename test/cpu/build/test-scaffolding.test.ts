// The scaffolding the tests share: one fake libcudart source built in each variant by one helper,
// and one GPU probe for the GPU suites.
import * as fs from 'node:fs';
import koffi from 'koffi';
import { cudart } from '../../../src';
import { buildFakeCudart, type FakeCudartVariant } from '../helpers/fake-cudart';
import { gpu } from '../../gpu/helpers';

const variants: FakeCudartVariant[] = ['host-functions', 'memory', 'kernels'];

test.each(variants)(
  'the %s fake is built from test/cpu/fixtures/fake-cudart.c and reports the generated CUDART_VERSION',
  (variant) => {
    const { lib, dir } = buildFakeCudart(variant);
    try {
      const L = koffi.load(lib);
      const version = new Int32Array(1);
      expect(L.func('int cudaRuntimeGetVersion(_Out_ int *v)')(version)).toBe(0);
      expect(version[0]).toBe(cudart.CUDART_VERSION);
      const count = L.func('long fake_count(const char *)');
      expect(count('cudaMalloc')).toBe(0);
      L.unload();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
  60_000,
);

test('the GPU probe says why a machine without a driver has no device', () => {
  const [err] = cudart.cudaGetDeviceCount();
  if (err === cudart.cudaError_t.cudaSuccess) {
    expect(gpu.why).toBeNull();
    expect(gpu.count).toBeGreaterThan(0);
  } else {
    expect(gpu).toEqual({ count: 0, why: `no CUDA device: cudaGetDeviceCount returned ${cudart.cudaError_t[err]}` });
  }
});
