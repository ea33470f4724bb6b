// 10^6 allocations of 1 MiB, each closed at once: device memory comes back and host memory with it.
import { core } from '../../src';
import { Budget, expectDeviceMemoryBack, expectHostMemoryBack, gc, probeGpu, report, settle, Watch } from './helpers';

const CYCLES = 1_000_000;
const SIZE = 1 << 20;
const { gpu, title } = probeGpu('soak: allocate and close');

(gpu ? describe : describe.skip)(title, () => {
  test(`${CYCLES} allocate(1 MiB) + close() cycles: device free memory back within 64 MiB, host memory back`, async () => {
    // The first allocation creates the context and the driver's first pool: before the baseline.
    core.Device.get(0).allocate(SIZE).close();
    // One allocation stays live throughout, as in any process that holds device memory: with none,
    // each cudaFree gives the driver's 2 MiB chunk back and the next cudaMalloc maps it again, 100 µs
    // a cycle on an H100 through the facade as through core (C's anchor holds one too).
    const held = core.Device.get(0).allocate(SIZE);
    gc();
    const watch = new Watch();
    const budget = new Budget('allocate/close', CYCLES, 90);
    let done = 0;
    for (; done < CYCLES; done++) {
      if (done % 10_000 === 0) {
        watch.sample();
        if (budget.over()) break;
      }
      core.Device.get(0).allocate(SIZE).close();
    }
    const elapsed = budget.elapsed;
    held.close();
    await settle();
    watch.finish();
    report('allocate', {
      cycles: done,
      target: CYCLES,
      elapsedS: +elapsed.toFixed(2),
      usPerCycle: +((elapsed * 1e6) / done).toFixed(2),
      ...watch.figures(),
    });
    if (done < CYCLES) budget.fail(done);
    expectDeviceMemoryBack(watch);
    expectHostMemoryBack(watch);
  }, 200_000);
});
