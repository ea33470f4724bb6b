// ncclInitAll: one process drives every GPU of this machine: ncclCommInitAll makes one
// communicator per GPU, and one group launches an all-reduce on each; every GPU's sum is checked.
//   npx tsx examples/ncclInitAll.ts
// Exits with status 1, and one line on stderr saying why, when the driver, a device or NCCL is missing.
import { core } from 'cuda-bindings';
import { requireGpu } from './lib/runtime';

const COUNT = 1 << 20;

async function main(): Promise<number> {
  if (!requireGpu('ncclInitAll')) return 1;
  const devices = core.Device.all();
  console.log(
    `ncclInitAll: ${devices.length} GPU${devices.length > 1 ? 's' : ''} in one process${devices.length === 1 ? ' (one rank: the sum is its own data)' : ''}`,
  );
  const comms = core.Communicator.initAll(devices);
  const work = comms.map((comm) => {
    const dev = comm.device.makeCurrent();
    const stream = dev.createStream({ nonBlocking: true });
    const buf = dev.allocate(COUNT * 4).copyFrom(Float32Array.from({ length: COUNT }, (_, i) => (comm.rank + 1) * (i % 5)));
    return { comm, dev, stream, buf };
  });
  try {
    // Several communicators of one process: their collectives must be launched in one group.
    core.Communicator.group(() => {
      for (const w of work) w.comm.allReduce(w.buf, w.buf, 'f32', { stream: w.stream });
    });
    const n = comms.length;
    let ok = true;
    for (const w of work) {
      await w.stream.synchronize();
      w.dev.makeCurrent();
      const got = w.buf.copyTo(new Float32Array(COUNT));
      let bad = 0;
      for (let i = 0; i < COUNT; i++) if (got[i] !== ((n * (n + 1)) / 2) * (i % 5)) bad++;
      console.log(
        `GPU ${w.dev.ordinal} (${w.dev.name}), rank ${w.comm.rank} of ${w.comm.size}: ${bad === 0 ? 'every sum right' : `${bad} of ${COUNT} sums wrong`}`,
      );
      ok &&= bad === 0;
    }
    console.log(ok ? 'Result = PASS' : 'Result = FAIL');
    return ok ? 0 : 1;
  } finally {
    for (const w of work) {
      w.dev.makeCurrent();
      w.buf.close();
      w.stream.close();
      w.comm.close();
    }
  }
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`ncclInitAll: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
