// streamOrderedAllocation: CUDA's sample of that name in spirit. A loop allocates its buffers on a
// stream (cudaMallocAsync from the device's default memory pool), computes, copies back and frees
// them on the stream (cudaFreeAsync), synchronizing every round. Run twice: with the pool's release
// threshold at 0, it gives its memory back at each synchronization and allocates it again; at
// UINT64_MAX it keeps it. Both runs are timed with events and every result is checked.
//   npx tsx examples/streamOrderedAllocation.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { at, blocksFor, check, deviceLine, elapsedMs, launch, loadKernel, runExample, verify } from './lib/runtime';

const N = 1 << 20;
const BYTES = N * 4;
const ITERATIONS = 20;
const THREADS = 256;
const UINT64_MAX = 2n ** 64n - 1n;
const K = cudart.cudaMemcpyKind;
const { cudaMemPoolAttrReleaseThreshold: RELEASE_THRESHOLD, cudaMemPoolAttrReservedMemCurrent: RESERVED } = cudart.cudaMemPoolAttr;

runExample('streamOrderedAllocation', (r) => {
  const device = 0;
  console.log(deviceLine(device));
  const [pools] = check(
    cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrMemoryPoolsSupported, device),
    'cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported)',
  );
  if (!pools) {
    console.error(`streamOrderedAllocation: device ${device} does not support memory pools (cudaDevAttrMemoryPoolsSupported is 0)`);
    return false;
  }
  const kernel = loadKernel('samples.fatbin', 'scaleAccumulate');
  const [pool] = check(cudart.cudaDeviceGetDefaultMemPool(device), 'cudaDeviceGetDefaultMemPool');
  const [oldThreshold] = check(
    cudart.cudaMemPoolGetAttribute(pool, RELEASE_THRESHOLD),
    'cudaMemPoolGetAttribute(cudaMemPoolAttrReleaseThreshold)',
  );
  r.defer(() => cudart.cudaMemPoolSetAttribute(pool, RELEASE_THRESHOLD, oldThreshold));
  const stream = r.stream(cudart.cudaStreamNonBlocking);
  const start = r.event();
  const stop = r.event();
  const hIn = r.pinnedFloats(N);
  const hOut = r.pinnedFloats(ITERATIONS * N);
  for (let i = 0; i < N; i++) hIn.data[i] = i % 1000;
  const blocks = blocksFor(N, THREADS);

  const run = (label: string, threshold: bigint): boolean => {
    check(
      cudart.cudaMemPoolSetAttribute(pool, RELEASE_THRESHOLD, threshold),
      `cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold, ${threshold})`,
    );
    check(cudart.cudaMemPoolTrimTo(pool, 0), 'cudaMemPoolTrimTo'); // each run starts from an empty pool
    hOut.data.fill(-1);
    check(cudart.cudaEventRecord(start, stream), 'cudaEventRecord(start)');
    for (let it = 0; it < ITERATIONS; it++) {
      const [dIn] = check(cudart.cudaMallocAsync(BYTES, stream), 'cudaMallocAsync(in)');
      const [dOut] = check(cudart.cudaMallocAsync(BYTES, stream), 'cudaMallocAsync(out)');
      check(cudart.cudaMemcpyAsync(dIn, hIn.ptr, BYTES, K.cudaMemcpyHostToDevice, stream), 'cudaMemcpyAsync(H2D)');
      check(cudart.cudaMemsetAsync(dOut, 0, BYTES, stream), 'cudaMemsetAsync');
      launch(kernel, blocks, THREADS, [dOut, dIn, cudart.f32(it + 1), cudart.i32(N)], stream); // out = in * (it + 1)
      check(cudart.cudaMemcpyAsync(at(hOut, it * N), dOut, BYTES, K.cudaMemcpyDeviceToHost, stream), 'cudaMemcpyAsync(D2H)');
      check(cudart.cudaFreeAsync(dIn, stream), 'cudaFreeAsync(in)');
      check(cudart.cudaFreeAsync(dOut, stream), 'cudaFreeAsync(out)');
      // A synchronization point: here a pool above its release threshold gives memory back.
      check(cudart.cudaStreamSynchronize(stream), 'cudaStreamSynchronize');
    }
    check(cudart.cudaEventRecord(stop, stream), 'cudaEventRecord(stop)');
    check(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize(stop)');
    const [reserved] = check(cudart.cudaMemPoolGetAttribute(pool, RESERVED), 'cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent)');
    console.log(
      `${label.padEnd(34)} ${ITERATIONS} rounds in ${elapsedMs(start, stop).toFixed(3).padStart(8)} ms; the pool keeps ${(Number(reserved) / 2 ** 20).toFixed(0)} MiB after the last synchronization`,
    );
    return verify(label, hOut.data, (i) => hIn.data[i % N] * (Math.floor(i / N) + 1));
  };

  console.log(`> ${ITERATIONS} rounds of: allocate 2 x ${BYTES >> 20} MiB, copy in, compute, copy out, free, synchronize`);
  const basic = run('release threshold 0:', 0n);
  const kept = run('release threshold UINT64_MAX:', UINT64_MAX);
  return basic && kept;
});
