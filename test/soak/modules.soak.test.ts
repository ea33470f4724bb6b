// 10^4 loads and unloads of examples/kernels/samples.fatbin through the runtime's library API, with
// a launch checked byte for byte every 1000th: device memory comes back.
import * as fs from 'node:fs';
import { core, cudart } from '../../src';
import { FATBIN, ok, patternByte } from '../gpu/fixtures/samples';
import { Budget, expectDeviceMemoryBack, expectHostMemoryBack, gc, probeGpu, report, settle, Watch } from './helpers';

const CYCLES = 10_000;
const LAUNCH_EVERY = 1000;
const N = 1 << 16;
const { gpu, title } = probeGpu('soak: module loads');

(gpu ? describe : describe.skip)(title, () => {
  test(`${CYCLES} cudaLibraryLoadData + cudaLibraryGetKernel + cudaLibraryUnload, a launch every ${LAUNCH_EVERY}th: device free memory back within 64 MiB, host memory back`, async () => {
    const bytes = fs.readFileSync(FATBIN);
    const device = core.Device.get(0);
    const out = device.allocate(N);
    const host = new Uint8Array(N);
    const warm = ok(cudart.cudaLibraryLoadData(bytes, null, null, 0, null, null, 0), 'cudaLibraryLoadData')[0];
    ok(cudart.cudaLibraryUnload(warm), 'cudaLibraryUnload');
    gc();
    const watch = new Watch();
    const budget = new Budget('module loads', CYCLES, 90);
    let done = 0;
    let launches = 0;
    let wrongBytes = 0;
    try {
      for (; done < CYCLES; done++) {
        if (done % 100 === 0) {
          watch.sample();
          if (budget.over()) break;
        }
        const at = `cycle ${done}`;
        const lib = ok(cudart.cudaLibraryLoadData(bytes, null, null, 0, null, null, 0), `cudaLibraryLoadData (${at})`)[0];
        const kernel = ok(cudart.cudaLibraryGetKernel(lib, 'bytePattern'), `cudaLibraryGetKernel (${at})`)[0];
        if (done % LAUNCH_EVERY === 0) {
          const seed = (done / LAUNCH_EVERY) & 0xff;
          ok(
            cudart.cudaLaunchKernel(
              kernel,
              { x: N / 256, y: 1, z: 1 },
              { x: 256, y: 1, z: 1 },
              [cudart.ptr(out.ptr), cudart.i32(N), cudart.u32(seed)],
              0,
              null,
            ),
            `cudaLaunchKernel (${at})`,
          );
          out.copyTo(host);
          for (let i = 0; i < N; i++) if (host[i] !== patternByte(i, seed)) wrongBytes++;
          launches++;
        }
        ok(cudart.cudaLibraryUnload(lib), `cudaLibraryUnload (${at})`);
      }
    } finally {
      const elapsed = budget.elapsed;
      out.close();
      await settle();
      watch.finish();
      report('modules', {
        cycles: done,
        target: CYCLES,
        launches,
        wrongBytes,
        elapsedS: +elapsed.toFixed(2),
        usPerCycle: done ? +((elapsed * 1e6) / done).toFixed(1) : null,
        ...watch.figures(),
      });
    }
    if (done < CYCLES) budget.fail(done);
    expect({ launches, wrongBytes }).toEqual({ launches: CYCLES / LAUNCH_EVERY, wrongBytes: 0 });
    expectDeviceMemoryBack(watch);
    expectHostMemoryBack(watch);
  }, 200_000);
});
