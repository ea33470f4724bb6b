// 10^5 JS host functions on four streams, with device work between them: every one runs exactly
// once, in its stream's order, and none is left pending.
import { core, cudart } from '../../src';
import { Budget, expectDeviceMemoryBack, expectHostMemoryBack, gc, probeGpu, report, settle, Watch } from './helpers';

const TOTAL = 100_000;
const STREAMS = 4;
/** Host functions queued on a stream and not run yet, at most: CUDA's queue is finite, and a launch
 * that waited for room on the JS thread would wait for host functions that need that thread. */
const MAX_QUEUED = 2_000;
const { gpu, title } = probeGpu('soak: JS host functions');

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

(gpu ? describe : describe.skip)(title, () => {
  test(`${TOTAL} host functions on ${STREAMS} streams each run exactly once, in stream order`, async () => {
    const device = core.Device.get(0);
    const streams = Array.from({ length: STREAMS }, () => device.createStream({ nonBlocking: true }));
    const buffers = streams.map(() => device.allocate(1 << 20));
    const seen: number[][] = streams.map(() => []);
    const queued = streams.map(() => 0);
    gc();
    const watch = new Watch();
    const budget = new Budget('host functions', TOTAL, 90);
    let done = 0;
    try {
      outer: for (let i = 0; i < TOTAL / STREAMS; i++) {
        for (let s = 0; s < STREAMS; s++) {
          while (queued[s] - seen[s].length >= MAX_QUEUED) {
            if (budget.over()) break outer;
            await turn();
          }
          if (i % 1000 === 0) {
            watch.sample();
            if (budget.over()) break outer;
            buffers[s].fill(i % 256, { stream: streams[s] });
          }
          const list = seen[s];
          streams[s].onComplete(() => void list.push(i));
          queued[s]++;
          done++;
        }
      }
      await Promise.all(streams.map((s) => s.synchronize()));
    } finally {
      const elapsed = budget.elapsed;
      // Nothing may be left to run before the buffers go (a free would wait for the device).
      if (cudart.pendingHostFunctions() > 0) await device.synchronize();
      await settle();
      watch.finish();
      const ran = seen.reduce((n, l) => n + l.length, 0);
      report('host-functions', {
        cycles: done,
        target: TOTAL,
        ran,
        pending: cudart.pendingHostFunctions(),
        elapsedS: +elapsed.toFixed(2),
        ...watch.figures(),
      });
      for (const r of [...buffers, ...streams]) r.close();
    }
    if (done < TOTAL) budget.fail(done);
    const outOfOrder = seen.map((l) => l.findIndex((v, k) => v !== k));
    expect({ counts: seen.map((l) => l.length), outOfOrder, pending: cudart.pendingHostFunctions() }).toEqual({
      counts: streams.map(() => TOTAL / STREAMS),
      outOfOrder: streams.map(() => -1),
      pending: 0,
    });
    expectDeviceMemoryBack(watch);
    expectHostMemoryBack(watch);
  }, 200_000);
});
