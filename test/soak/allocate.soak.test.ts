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
    await settle();
    watch.finish();
    report('allocate', { cycles: done, target: CYCLES, elapsedS: +elapsed.toFixed(2), usPerCycle: +((elapsed * 1e6) / done).toFixed(2), ...watch.figures() });
    if (done < CYCLES) budget.fail(done);
    expectDeviceMemoryBack(watch);
    expectHostMemoryBack(watch);
  }, 200_000);
});
