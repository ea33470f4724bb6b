// NCCL's allReduce on one rank through the facade and through core's Communicator: the same two
// rows as bench/nccl.cu (4 B in ns per call; 256 MiB as algorithm bandwidth in GB/s).
//   node dist-bench/bench/nccl.js  ->  CSV lines facade|core,<operation>,<value>
import { core, cudart, nccl } from '../src';

process.env.NCCL_NVLS_ENABLE ??= '0';
const BIG = 256 << 20;

/** The median of 5 timed loops of n calls and a stream sync, in ns per call. */
function bench(f: () => void, n: number, stream: cudart.cudaStream_t): number {
  const r: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) f();
    cudart.cudaStreamSynchronize(stream);
    r.push(Number(process.hrtime.bigint() - t) / n);
  }
  return r.sort((x, y) => x - y)[2];
}

const dev = core.Device.get(0).makeCurrent();
const stream = dev.createStream({ nonBlocking: true });
const a = dev.allocate(BIG);
const b = dev.allocate(BIG);
const comm = core.Communicator.init({ rank: 0, nranks: 1, id: core.Communicator.uniqueId(), device: dev });
const h = comm.handle;
const s = stream.handle;
const F32 = nccl.ncclDataType_t.ncclFloat32;
const SUM = nccl.ncclRedOp_t.ncclSum;
for (let i = 0; i < 10; i++) nccl.ncclAllReduce(a.ptr, b.ptr, 1, F32, SUM, h, s);
const pa = a.ptr;
const pb = b.ptr;
const small = b.slice(0, 4);
const smallA = a.slice(0, 4);
console.log(`facade,ncclAllReduce_4B,${bench(() => nccl.ncclAllReduce(pa, pb, 1, F32, SUM, h, s), 10000, s).toFixed(1)}`);
console.log(`core,ncclAllReduce_4B,${bench(() => comm.allReduce(smallA, small, 'f32', { stream }), 10000, s).toFixed(1)}`);
console.log(
  `facade,ncclAllReduce_256MiB_algbw_GBps,${(BIG / bench(() => nccl.ncclAllReduce(pa, pb, BIG / 4, F32, SUM, h, s), 10, s)).toFixed(2)}`,
);
console.log(`core,ncclAllReduce_256MiB_algbw_GBps,${(BIG / bench(() => comm.allReduce(a, b, 'f32', { stream }), 10, s)).toFixed(2)}`);
[smallA, small, a, b].forEach((x) => x.close());
comm.close();
stream.close();
