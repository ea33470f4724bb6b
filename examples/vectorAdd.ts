// vectorAdd: CUDA's sample of that name through the runtime API: C = A + B on the GPU, every
// element checked. The kernel comes prebuilt from examples/kernels/samples.fatbin.
//   npx tsx examples/vectorAdd.ts [number of elements, 50000 by default]
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { blocksFor, check, launch, loadKernel, runExample, verify } from './lib/runtime';

const THREADS_PER_BLOCK = 256;
const K = cudart.cudaMemcpyKind;

const arg = process.argv[2];
const numElements = arg === undefined ? 50000 : Number(arg);
if (!Number.isSafeInteger(numElements) || numElements < 1 || numElements > 2 ** 31 - 1) {
  console.error(`vectorAdd: the element count must be an integer from 1 to ${2 ** 31 - 1}, got ${arg}`);
  process.exitCode = 1;
} else {
  runExample('vectorAdd', (r) => {
    const size = numElements * 4;
    console.log(`[Vector addition of ${numElements} elements]`);
    const hA = new Float32Array(numElements);
    const hB = new Float32Array(numElements);
    const hC = new Float32Array(numElements);
    for (let i = 0; i < numElements; i++) {
      hA[i] = Math.random();
      hB[i] = Math.random();
    }

    const dA = r.malloc(size);
    const dB = r.malloc(size);
    const dC = r.malloc(size);
    console.log('Copy input data from the host memory to the CUDA device');
    check(cudart.cudaMemcpy(dA, hA, size, K.cudaMemcpyHostToDevice), 'cudaMemcpy(d_A)');
    check(cudart.cudaMemcpy(dB, hB, size, K.cudaMemcpyHostToDevice), 'cudaMemcpy(d_B)');

    const blocks = blocksFor(numElements, THREADS_PER_BLOCK);
    console.log(`CUDA kernel launch with ${blocks} blocks of ${THREADS_PER_BLOCK} threads`);
    launch(loadKernel('samples.fatbin', 'vectorAdd'), blocks, THREADS_PER_BLOCK, [dA, dB, dC, cudart.i32(numElements)]);
    check(cudart.cudaGetLastError(), 'cudaGetLastError');

    console.log('Copy output data from the CUDA device to the host memory');
    check(cudart.cudaMemcpy(hC, dC, size, K.cudaMemcpyDeviceToHost), 'cudaMemcpy(h_C)');

    // Every element, within the sample's tolerance.
    if (!verify('Result verification', hC, (i) => hA[i] + hB[i], 1e-5)) return false;
    console.log('Test PASSED');
    return true;
  });
}
