// clock: CUDA's sample of that name. Each block of timedReduction finds the minimum of 512 values
// in dynamic shared memory and records clock() when it starts and when it ends; the host averages
// the clocks a block took.
//   npx tsx examples/clock.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { check, deviceLine, launch, loadKernel, runExample, verify } from './lib/runtime';

const NUM_BLOCKS = 64;
const NUM_THREADS = 256;
const K = cudart.cudaMemcpyKind;

runExample('clock', (r) => {
  console.log('CUDA Clock sample');
  console.log(deviceLine());
  const timedReduction = loadKernel('samples.fatbin', 'timedReduction');

  const input = new Float32Array(NUM_THREADS * 2);
  for (let i = 0; i < input.length; i++) input[i] = i;
  const output = new Float32Array(NUM_BLOCKS).fill(-1);
  // clock_t is a long: 8 bytes on 64-bit Linux. Start times, then end times.
  const timer = new BigInt64Array(NUM_BLOCKS * 2);

  const dInput = r.malloc(input.byteLength);
  const dOutput = r.malloc(output.byteLength);
  const dTimer = r.malloc(timer.byteLength);
  check(cudart.cudaMemcpy(dInput, input, input.byteLength, K.cudaMemcpyHostToDevice), 'cudaMemcpy(input)');

  const sharedBytes = 4 * 2 * NUM_THREADS;
  launch(timedReduction, NUM_BLOCKS, NUM_THREADS, [dInput, dOutput, dTimer], null, sharedBytes);
  check(cudart.cudaDeviceSynchronize(), 'cudaDeviceSynchronize');

  check(cudart.cudaMemcpy(timer, dTimer, timer.byteLength, K.cudaMemcpyDeviceToHost), 'cudaMemcpy(timer)');
  check(cudart.cudaMemcpy(output, dOutput, output.byteLength, K.cudaMemcpyDeviceToHost), 'cudaMemcpy(output)');

  // clock() is the 32-bit cycle counter: a block's time is the difference modulo 2^32.
  let total = 0;
  for (let i = 0; i < NUM_BLOCKS; i++) total += Number(BigInt.asUintN(32, timer[i + NUM_BLOCKS] - timer[i]));
  const average = total / NUM_BLOCKS;
  console.log(`Average clocks/block = ${average}`);

  // Each block's minimum of 0 .. 511 is 0.
  const minima = verify('block minima', output, () => 0);
  if (!(average > 0)) console.error(`clock: the blocks took ${average} clocks on average`);
  return minima && average > 0;
});
