// simpleP2P: CUDA's sample of that name. Two GPUs that can access each other's memory enable peer
// access both ways; copies between them with cudaMemcpyPeer and, under unified addressing, with
// cudaMemcpy(cudaMemcpyDefault) are timed with events; then a kernel on the second GPU reads the
// first GPU's memory directly, and one on the first reads the second's. Every element is checked.
//   npx tsx examples/simpleP2P.ts
// Needs two GPUs with peer access: elsewhere it says why, prints `Result = WAIVED` and exits 0, as
// CUDA's sample waives. Exits with status 1, and one line on stderr saying why, when the driver or
// a device is missing.
import { cudart } from 'cuda-bindings';
import { blocksFor, CudaCallError, check, deviceLine, elapsedMs, launch, loadKernel, requireGpu, runExample, verify } from './lib/runtime';

const N = 1 << 24; // floats: 64 MiB a buffer
const BYTES = N * 4;
const COPIES = 100; // timed copies, back and forth
const THREADS = 512;
const { cudaMemcpyDefault: DEFAULT } = cudart.cudaMemcpyKind;

/** The first two GPUs that can access each other, or why there are none (printing what it finds). */
function findPeers(): [number, number] | string {
  const [count] = check(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount');
  console.log(`CUDA-capable device count: ${count}`);
  if (count < 2) return `this machine has ${count}`;
  console.log('Checking GPU(s) for support of peer to peer memory access...');
  const uva = (d: number) =>
    check(
      cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrUnifiedAddressing, d),
      `cudaDeviceGetAttribute(cudaDevAttrUnifiedAddressing, ${d})`,
    )[0];
  const can = (a: number, b: number) => check(cudart.cudaDeviceCanAccessPeer(a, b), `cudaDeviceCanAccessPeer(${a}, ${b})`)[0] !== 0;
  for (let a = 0; a < count; a++) {
    for (let b = a + 1; b < count; b++) {
      const ab = can(a, b);
      const ba = can(b, a);
      console.log(`> Peer access from GPU${a} -> GPU${b} : ${ab ? 'Yes' : 'No'}`);
      console.log(`> Peer access from GPU${b} -> GPU${a} : ${ba ? 'Yes' : 'No'}`);
      if (ab && ba && uva(a) && uva(b)) return [a, b];
    }
  }
  return `none of this machine's ${count} GPUs can access another's memory both ways with unified addressing`;
}

function runP2P(): void {
  if (!requireGpu('simpleP2P')) {
    process.exitCode = 1;
    return;
  }
  let peers: [number, number] | string;
  try {
    peers = findPeers();
  } catch (e) {
    if (!(e instanceof CudaCallError)) throw e;
    console.error(`simpleP2P: ${e.message}`);
    process.exitCode = 1;
    return;
  }
  if (typeof peers === 'string') {
    console.log(`simpleP2P: needs two GPUs with peer access; ${peers} — skipped`);
    console.log('Result = WAIVED');
    return;
  }
  const [gpu0, gpu1] = peers;

  runExample('simpleP2P', (r) => {
    console.log(deviceLine(gpu0));
    console.log(deviceLine(gpu1));
    const setDevice = (d: number) => check(cudart.cudaSetDevice(d), `cudaSetDevice(${d})`);

    console.log(`Enabling peer access between GPU${gpu0} and GPU${gpu1}...`);
    setDevice(gpu0);
    check(cudart.cudaDeviceEnablePeerAccess(gpu1, 0), `cudaDeviceEnablePeerAccess(${gpu1}) on GPU${gpu0}`);
    setDevice(gpu1);
    check(cudart.cudaDeviceEnablePeerAccess(gpu0, 0), `cudaDeviceEnablePeerAccess(${gpu0}) on GPU${gpu1}`);

    // A buffer on each GPU, freed with its device current.
    const mallocOn = (d: number) => {
      setDevice(d);
      const [p] = check(cudart.cudaMalloc(BYTES), `cudaMalloc(${BYTES}) on GPU${d}`);
      r.defer(() => {
        cudart.cudaSetDevice(d);
        cudart.cudaFree(p);
      });
      return p;
    };
    const g0 = mallocOn(gpu0);
    const g1 = mallocOn(gpu1);
    const h = r.pinnedFloats(N);
    for (let i = 0; i < N; i++) h.data[i] = i % 4096;
    const pattern = (i: number) => i % 4096;
    check(cudart.cudaMemcpy(g0, h.ptr, BYTES, DEFAULT), `cudaMemcpy(host -> GPU${gpu0}, cudaMemcpyDefault)`);

    // Back and forth an even number of times: both buffers end up holding the pattern.
    setDevice(gpu0);
    const start = r.event();
    const stop = r.event();
    const timeCopies = (what: string, copy: (i: number) => void) => {
      check(cudart.cudaEventRecord(start, null), 'cudaEventRecord(start)');
      for (let i = 0; i < COPIES; i++) copy(i);
      check(cudart.cudaEventRecord(stop, null), 'cudaEventRecord(stop)');
      check(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize(stop)');
      const ms = elapsedMs(start, stop);
      console.log(`${what} between GPU${gpu0} and GPU${gpu1}: ${((COPIES * BYTES) / (ms / 1000) / 1e9).toFixed(2)} GB/s`);
    };
    timeCopies('cudaMemcpyPeer', (i) => {
      const [dst, dstDev, src, srcDev] = i % 2 === 0 ? [g1, gpu1, g0, gpu0] : [g0, gpu0, g1, gpu1];
      check(cudart.cudaMemcpyPeer(dst, dstDev, src, srcDev, BYTES), `cudaMemcpyPeer(GPU${srcDev} -> GPU${dstDev})`);
    });
    timeCopies('cudaMemcpy (cudaMemcpyDefault)', (i) => {
      const [dst, src] = i % 2 === 0 ? [g1, g0] : [g0, g1];
      check(cudart.cudaMemcpy(dst, src, BYTES, DEFAULT), 'cudaMemcpy(peer, cudaMemcpyDefault)');
    });
    h.data.fill(-1);
    check(cudart.cudaMemcpy(h.ptr, g1, BYTES, DEFAULT), `cudaMemcpy(GPU${gpu1} -> host)`);
    const copiesOk = verify(`GPU${gpu1}'s buffer after the peer copies`, h.data, pattern);

    // Each GPU's kernel reads the other's memory over the peer mapping: g1 = g0 * 2, then g0 = g1 * 2.
    const scaleInto = loadKernel('samples.fatbin', 'scaleInto');
    const blocks = blocksFor(N, THREADS);
    setDevice(gpu1);
    console.log(`Run kernel on GPU${gpu1}, taking source data from GPU${gpu0} and writing to GPU${gpu1}...`);
    launch(scaleInto, blocks, THREADS, [cudart.ptr(g1), cudart.ptr(g0), cudart.f32(2), cudart.i32(N)]);
    check(cudart.cudaDeviceSynchronize(), `cudaDeviceSynchronize on GPU${gpu1}`);
    setDevice(gpu0);
    console.log(`Run kernel on GPU${gpu0}, taking source data from GPU${gpu1} and writing to GPU${gpu0}...`);
    launch(scaleInto, blocks, THREADS, [cudart.ptr(g0), cudart.ptr(g1), cudart.f32(2), cudart.i32(N)]);
    check(cudart.cudaDeviceSynchronize(), `cudaDeviceSynchronize on GPU${gpu0}`);

    console.log(`Copy data back to host from GPU${gpu1} and GPU${gpu0} and verify results...`);
    h.data.fill(-1);
    check(cudart.cudaMemcpy(h.ptr, g1, BYTES, DEFAULT), `cudaMemcpy(GPU${gpu1} -> host)`);
    const firstOk = verify(`GPU${gpu1}'s kernel (x * 2)`, h.data, (i) => pattern(i) * 2);
    h.data.fill(-1);
    check(cudart.cudaMemcpy(h.ptr, g0, BYTES, DEFAULT), `cudaMemcpy(GPU${gpu0} -> host)`);
    const secondOk = verify(`GPU${gpu0}'s kernel (x * 2 * 2)`, h.data, (i) => pattern(i) * 4);

    console.log('Disabling peer access...');
    setDevice(gpu0);
    check(cudart.cudaDeviceDisablePeerAccess(gpu1), `cudaDeviceDisablePeerAccess(${gpu1}) on GPU${gpu0}`);
    setDevice(gpu1);
    check(cudart.cudaDeviceDisablePeerAccess(gpu0), `cudaDeviceDisablePeerAccess(${gpu0}) on GPU${gpu1}`);
    console.log('Shutting down...');
    return copiesOk && firstOk && secondOk;
  });
}

runP2P();
