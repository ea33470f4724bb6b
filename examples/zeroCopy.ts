// zeroCopy: CUDA's simpleZeroCopy in spirit. A kernel adds two vectors held in host memory and
// writes the sum to host memory, with no copies: first in mapped page-locked memory from
// cudaHostAlloc(cudaHostAllocMapped), then in a Node Buffer registered with
// cudaHostRegister(cudaHostRegisterMapped). cudaHostGetDevicePointer gives the kernel's addresses.
//   npx tsx examples/zeroCopy.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { blocksFor, check, deviceLine, launch, loadKernel, runExample, verify } from './lib/runtime';

const N = 1 << 20;
const BYTES = N * 4;
const THREADS = 256;

runExample('zeroCopy', (r) => {
  const [canMap] = check(
    cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrCanMapHostMemory, 0),
    'cudaDeviceGetAttribute(cudaDevAttrCanMapHostMemory)',
  );
  if (!canMap) {
    console.error('zeroCopy: device 0 cannot map host memory (cudaDevAttrCanMapHostMemory is 0)');
    return false;
  }
  // Before anything makes the context: its flags cannot change once it is active (and on 64-bit
  // systems, with unified addressing, host memory is mapped anyway).
  const [flagsErr] = cudart.cudaSetDeviceFlags(cudart.cudaDeviceMapHost);
  if (flagsErr !== cudart.cudaError_t.cudaErrorSetOnActiveProcess) check([flagsErr], 'cudaSetDeviceFlags(cudaDeviceMapHost)');
  console.log(`  ${deviceLine()}`);
  const vectorAdd = loadKernel('samples.fatbin', 'vectorAdd');
  const blocks = blocksFor(N, THREADS);
  const devicePointer = (host: cudart.Pointer, what: string) =>
    check(cudart.cudaHostGetDevicePointer(host, 0), `cudaHostGetDevicePointer(${what})`)[0];
  // Small integers and quarters: the sums are exact in floats.
  const fill = (a: Float32Array, b: Float32Array) => {
    for (let i = 0; i < N; i++) {
      a[i] = i % 1000;
      b[i] = (i % 7) * 0.25;
    }
  };

  // 1. Mapped page-locked memory.
  console.log('> Using CUDA Host Allocated (cudaHostAlloc with cudaHostAllocMapped)');
  const [a, b, c] = [0, 1, 2].map(() => r.pinnedFloats(N, cudart.cudaHostAllocMapped));
  fill(a.data, b.data);
  c.data.fill(-1);
  console.log('> vectorAdd kernel will add vectors using mapped CPU memory...');
  launch(vectorAdd, blocks, THREADS, [devicePointer(a.ptr, 'a'), devicePointer(b.ptr, 'b'), devicePointer(c.ptr, 'c'), cudart.i32(N)]);
  check(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
  console.log('> Checking the results from vectorAdd() ...');
  const mappedOk = verify('cudaHostAlloc memory', c.data, (i) => a.data[i] + b.data[i]);

  // 2. A Buffer registered with CUDA: one registration for the three vectors, so that no two
  // registered ranges share a page.
  console.log('> Using a registered Buffer (cudaHostRegister with cudaHostRegisterMapped)');
  const buf = Buffer.alloc(3 * BYTES);
  check(cudart.cudaHostRegister(buf, buf.length, cudart.cudaHostRegisterMapped), 'cudaHostRegister');
  r.defer(() => cudart.cudaHostUnregister(buf));
  const all = new Float32Array(buf.buffer, buf.byteOffset, 3 * N);
  const [ra, rb, rc] = [0, 1, 2].map((k) => all.subarray(k * N, (k + 1) * N));
  fill(ra, rb);
  rc.fill(-1);
  const dBuf = devicePointer(buf, 'the registered Buffer');
  console.log('> vectorAdd kernel will add vectors using registered CPU memory...');
  launch(vectorAdd, blocks, THREADS, [dBuf, dBuf + BigInt(BYTES), dBuf + BigInt(2 * BYTES), cudart.i32(N)]);
  check(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');
  console.log('> Checking the results from vectorAdd() ...');
  const registeredOk = verify('registered Buffer', rc, (i) => ra[i] + rb[i]);

  console.log('> Releasing CPU memory...');
  return mappedOk && registeredOk;
});
