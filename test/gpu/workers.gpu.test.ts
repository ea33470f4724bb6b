// Four worker threads use the GPU at once, each on device (i % device count) with streams of its
// own: copies in, vectorAdd, copies back, every byte checked; and each sees its own current device
// after the others made theirs current (the current device is per thread). On two GPUs the
// workers spread over both. The workers run test/gpu/fixtures/gpu-worker.ts through tsx's
// require hook (fixtures/workers.ts).
import { cudart } from '../../src';
import { runWorker } from './fixtures/workers';
import { describeGpu, gpu } from './helpers';

const WORKERS = 4;
const { count } = gpu;

describeGpu(`worker threads on ${count} device(s)`, () => {
  test(`${WORKERS} workers, each on device (i % ${count}) with its own streams: every byte right, each sees its own current device`, async () => {
    // This thread's current device is not one the first worker uses, where there are two.
    const mine = count - 1;
    cudart.cudaSetDevice(mine);
    const arrived = new SharedArrayBuffer(4);
    const results = await Promise.all(
      Array.from({ length: WORKERS }, (_, index) =>
        runWorker({ index, device: index % count, workers: WORKERS, rounds: 8, n: 1 << 20, arrived }),
      ),
    );
    for (const r of results) console.log(JSON.stringify(r));
    expect(results).toEqual(
      Array.from({ length: WORKERS }, (_, index) => ({
        kind: 'done',
        index,
        device: index % count,
        seenAfterOthers: index % count,
        seenAtEnd: index % count,
        rounds: 8,
        bytesChecked: 8 * 2 * (1 << 20) * 4,
        mismatchedWords: 0,
      })),
    );
    expect(cudart.cudaGetDevice()).toEqual([cudart.cudaError_t.cudaSuccess, mine]);
  }, 120_000);
});
