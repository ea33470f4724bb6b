// ncclAllReduce: an all-reduce of a known pattern across ranks, one process per GPU, as
// nccl-tests' all_reduce_perf does it: every rank checks the sum, and rank 0 prints the bus
// bandwidth computed the way nccl-tests computes it (busbw = algbw * 2 (n - 1) / n).
//   npx tsx examples/ncclAllReduce.ts [--bytes N] [--iters K]
//       forks one process per GPU of this machine (one rank on one GPU, and says so); the unique id
//       goes to the children in their environment (the plain form)
//   npx tsx examples/ncclAllReduce.ts --rank R --nranks N --master host:port [--device D]
//       one rank of a job across hosts: rank 0 listens on host:port and the others fetch the
//       unique id from it (core.rendezvous, as torchrun's MASTER_ADDR/MASTER_PORT); off loopback,
//       every rank needs the same CUDA_BINDINGS_RENDEZVOUS_SECRET in its environment
// Exits with status 1, and one line on stderr saying why, when the driver, a device or NCCL is missing.
import { fork } from 'node:child_process';
import { core, nccl } from 'cuda-bindings';
import { requireGpu } from './lib/runtime';

const { Communicator, Device } = core;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const BYTES = Number(arg('bytes') ?? 64 << 20);
const ITERS = Number(arg('iters') ?? 20);
const ID_ENV = 'NCCL_ALLREDUCE_UNIQUE_ID';

/** Element i of rank r: (r + 1) * (i % 7 + 1), small integers that f32 sums exactly. */
const value = (r: number, i: number) => (r + 1) * ((i % 7) + 1);

/** One rank: init, all-reduce, check every element, time ITERS all-reduces. */
async function rank(r: number, n: number, id: core.CommunicatorInit['id'], device: number): Promise<boolean> {
  const dev = Device.get(device).makeCurrent();
  const comm = Communicator.init({ rank: r, nranks: n, id, device: dev });
  const stream = dev.createStream({ nonBlocking: true });
  const count = Math.floor(BYTES / 4);
  const send = dev.allocate(count * 4);
  const recv = dev.allocate(count * 4);
  try {
    send.copyFrom(Float32Array.from({ length: count }, (_, i) => value(r, i)));
    comm.allReduce(send, recv, 'f32', { stream });
    await stream.synchronize();
    const got = recv.copyTo(new Float32Array(count));
    const ranks = (n * (n + 1)) / 2;
    let bad = 0;
    for (let i = 0; i < count; i++) if (got[i] !== ranks * ((i % 7) + 1)) bad++;
    console.log(`rank ${r} of ${n} on GPU ${device} (${dev.name}): ${bad === 0 ? 'every' : `${count - bad} of`} ${count} sums right`);
    // Timed as nccl-tests does: the mean of ITERS back-to-back all-reduces after a warm-up.
    for (let i = 0; i < 5; i++) comm.allReduce(send, recv, 'f32', { stream });
    await stream.synchronize();
    const t0 = performance.now();
    for (let i = 0; i < ITERS; i++) comm.allReduce(send, recv, 'f32', { stream });
    await stream.synchronize();
    const sec = (performance.now() - t0) / 1000 / ITERS;
    const algbw = (count * 4) / sec / 1e9;
    const busbw = (algbw * 2 * (n - 1)) / n;
    if (r === 0) {
      console.log(
        `${'size (B)'.padStart(12)} ${'count'.padStart(11)} type  redop ${'time (us)'.padStart(10)} ${'algbw (GB/s)'.padStart(13)} ${'busbw (GB/s)'.padStart(13)}`,
      );
      console.log(
        `${String(count * 4).padStart(12)} ${String(count).padStart(11)} float sum   ${(sec * 1e6).toFixed(1).padStart(10)} ${algbw.toFixed(2).padStart(13)} ${busbw.toFixed(2).padStart(13)}`,
      );
      if (n === 1) console.log("(one rank moves nothing between GPUs: its bus bandwidth is 0 by nccl-tests' formula)");
    }
    return bad === 0;
  } finally {
    send.close();
    recv.close();
    stream.close();
    comm.close();
  }
}

async function main(): Promise<number> {
  if (!requireGpu('ncclAllReduce')) return 1;
  const r = arg('rank');
  if (r !== undefined) {
    // A rank: forked by the launcher below (id in the environment), or started by hand across hosts.
    const n = Number(arg('nranks'));
    const device = Number(arg('device') ?? Number(r) % Device.count());
    const id = process.env[ID_ENV] ?? (await core.rendezvous({ rank: Number(r), nranks: n, master: arg('master') ?? '127.0.0.1:29500' }));
    const ok = await rank(Number(r), n, id, device);
    if (arg('master') !== undefined && Number(r) === 0) console.log(ok ? 'Result = PASS' : 'Result = FAIL');
    return ok ? 0 : 1;
  }
  // The launcher: one process per GPU of this machine.
  const n = Device.count();
  console.log(
    n === 1 ? 'ncclAllReduce: one GPU, so one rank (the sum of one rank is its own data)' : `ncclAllReduce: ${n} GPUs, one process each`,
  );
  const id = core.Communicator.uniqueId();
  const env = { ...process.env, [ID_ENV]: nccl.uniqueIdToBase64(id) };
  const codes = await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<number>((resolve) => {
          const child = fork(
            __filename,
            ['--rank', String(i), '--nranks', String(n), '--device', String(i), '--bytes', String(BYTES), '--iters', String(ITERS)],
            { env },
          );
          child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
        }),
    ),
  );
  const ok = codes.every((c) => c === 0);
  if (!ok) console.log(`ranks exited with ${codes.join(', ')}`);
  console.log(ok ? 'Result = PASS' : 'Result = FAIL');
  return ok ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`ncclAllReduce: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
