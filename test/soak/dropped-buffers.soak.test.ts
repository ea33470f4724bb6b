// 10^4 DeviceBuffers of 1 MiB dropped without close(): the finalizer frees every one once they are
// collected, and the 10 GiB they held comes back.
import { core } from '../../src';
import {
  Budget,
  collectUntil,
  countFinalized,
  deviceFree,
  expectDeviceMemoryBack,
  gc,
  MiB,
  probeGpu,
  report,
  settle,
  Watch,
} from './helpers';

const DROPPED = 10_000;
const SIZE = 1 << 20;
const { gpu, title } = probeGpu('soak: dropped device buffers');

(gpu ? describe : describe.skip)(title, () => {
  test(`${DROPPED} buffers of 1 MiB dropped without close(): each freed by the finalizer, device free memory back within 64 MiB`, async () => {
    const device = core.Device.get(0);
    device.allocate(SIZE).close();
    gc();
    const finalized = countFinalized();
    try {
      const watch = new Watch();
      const budget = new Budget('dropped buffers', DROPPED, 90);
      let done = 0;
      for (; done < DROPPED; done++) {
        if (done % 1000 === 0) {
          watch.sample();
          if (budget.over()) break;
        }
        device.allocate(SIZE);
      }
      const elapsed = budget.elapsed;
      // Finalizers run as tasks of the event loop: none has run yet, so the buffers all hold their memory.
      const held = watch.freeBefore - deviceFree();
      const t0 = performance.now();
      const all = await collectUntil(() => (finalized.counts.DeviceBuffer ?? 0) >= done, 60_000);
      const collectS = (performance.now() - t0) / 1000;
      await settle();
      watch.finish();
      report('dropped-buffers', {
        cycles: done,
        target: DROPPED,
        elapsedS: +elapsed.toFixed(2),
        collectS: +collectS.toFixed(2),
        finalized: finalized.counts.DeviceBuffer ?? 0,
        heldMiB: Math.round(held / MiB),
        ...watch.figures(),
      });
      if (done < DROPPED) budget.fail(done);
      expect(held).toBeGreaterThanOrEqual(0.99 * DROPPED * SIZE);
      expect({ all, finalized: finalized.counts.DeviceBuffer }).toEqual({ all: true, finalized: DROPPED });
      expectDeviceMemoryBack(watch);
    } finally {
      finalized.stop();
    }
  }, 200_000);
});
