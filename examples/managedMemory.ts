// managedMemory: unified memory with hints. A managed buffer advised read-mostly and preferring the
// GPU, prefetched there before a kernel reads it and back to the host after (the range's last
// prefetch location says where the pages went), then three buffers prefetched in one batched call
// and discarded once their contents no longer matter; every result checked.
//   npx tsx examples/managedMemory.ts
// Exits with status 1, and one line on stderr saying why, when a device is missing; prints
// Result = WAIVED (status 0) on a device without concurrent managed access.
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { Program, i32 } = core;

const SOURCE = `
extern "C" __global__ void square(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i];
}`;

const where = (l: core.MemoryLocation | null): string => (l === null ? 'nowhere yet' : l === 'host' ? 'the host' : `device ${l.ordinal}`);

async function main(): Promise<number> {
  const dev = firstDevice('managedMemory');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name}`);
  if (!dev.attribute('ConcurrentManagedAccess')) {
    console.log('> this device cannot prefetch managed memory (no concurrent managed access)');
    console.log('Result = WAIVED');
    return 0;
  }
  using stream = dev.createStream({ nonBlocking: true });
  using mod = Program.compile(SOURCE, { name: 'managedMemory.cu' }).load();
  const n = 1 << 20;
  using input = dev.allocateManaged(n * 4);
  using output = dev.allocateManaged(n * 4);
  input.copyFrom(Int32Array.from({ length: n }, (_, i) => i % 1000));

  input.advise('readMostly', dev).advise('preferredLocation', dev);
  console.log(`> input: read-mostly ${input.readMostly}, preferred location ${where(input.preferredLocation)}`);
  input.prefetch(dev, stream);
  output.prefetch(dev, stream);
  mod.kernel('square').launch({ grid: Math.ceil(n / 256), block: 256, stream }, input, output, i32(n));
  output.prefetch('host', stream);
  await stream.synchronize();
  console.log(`> output last prefetched to ${where(output.lastPrefetchLocation)}, input to ${where(input.lastPrefetchLocation)}`);
  const got = output.copyTo(new Int32Array(n));
  let ok = output.lastPrefetchLocation === 'host' && input.lastPrefetchLocation === dev;
  for (let i = 0; i < n && ok; i++) if (got[i] !== (i % 1000) ** 2) ok = false;
  console.log(`> out[i] = in[i]^2 for ${n} elements: ${ok ? 'correct' : 'WRONG'}`);

  // Batched: three buffers to three places in one call (cuMemPrefetchBatchAsync, CUDA 13.0's driver).
  using a = dev.allocateManaged(1 << 20);
  using b = dev.allocateManaged(1 << 20);
  using c = dev.allocateManaged(1 << 20);
  try {
    core.prefetchBatch(stream, [a, b, c], [dev, 'host', dev]);
    await stream.synchronize();
    const places = [a, b, c].map((x) => where(x.lastPrefetchLocation));
    console.log(`> one batched prefetch placed them on ${places.join(', ')}`);
    ok &&= places.join() === [where(dev), 'the host', where(dev)].join();
    core.discardBatch(stream, [a, b, c]);
    await stream.synchronize();
    console.log('> and one batched discard dropped their contents (no migration of pages no one will read)');
  } catch (e) {
    console.log(`> batched prefetch is not available: ${(e as Error).message}`);
  }
  console.log(`Result = ${ok ? 'PASS' : 'FAIL'}`);
  return ok ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`managedMemory: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
