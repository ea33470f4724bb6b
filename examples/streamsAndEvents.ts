// streamsAndEvents: CUDA's simpleStreams in spirit. The same work (copy a chunk to the device,
// run a kernel on it, copy it back; for every chunk) is done on one stream, then with each chunk
// on its own stream, so that one chunk's copies overlap another's kernel. Both are timed with
// events and every element of both results is checked.
//   npx tsx examples/streamsAndEvents.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { at, blocksFor, check, deviceLine, elapsedMs, launch, loadKernel, runExample, verify } from './lib/runtime';

const N_STREAMS = 4;
const N = 16 << 20; // floats: 64 MiB
const CHUNK = N / N_STREAMS;
const CHUNK_BYTES = CHUNK * 4;
const THREADS = 256;
const SCALE = 3;
const CALIBRATION_ITERATIONS = 1024;
const K = cudart.cudaMemcpyKind;

runExample('streamsAndEvents', (r) => {
  console.log(`[streamsAndEvents] ${deviceLine()}`);
  const [prop] = check(cudart.cudaGetDeviceProperties(0), 'cudaGetDeviceProperties');
  console.log(`> ${prop.asyncEngineCount} copy engine(s): copies ${prop.asyncEngineCount > 0 ? 'can' : 'cannot'} overlap kernels`);
  console.log(`> ${N_STREAMS} streams, ${N} floats (${N >> 18} MiB) in chunks of ${CHUNK} (${CHUNK_BYTES >> 20} MiB)`);

  const kernel = loadKernel('samples.fatbin', 'busyScale');
  const hIn = r.pinnedFloats(N);
  const hOut = r.pinnedFloats(N);
  for (let i = 0; i < N; i++) hIn.data[i] = i % 4096;
  const d = r.malloc(N * 4);
  // Blocking streams: events recorded on the legacy default stream (null) bracket the work of all.
  const streams = Array.from({ length: N_STREAMS }, () => r.stream(cudart.cudaStreamDefault));
  const start = r.event();
  const stop = r.event();
  const done = streams.map(() => r.event());
  const dChunk = (c: number) => d + BigInt(c * CHUNK_BYTES);

  const kernelOn = (c: number, iterations: number, stream: cudart.cudaStream_t) =>
    launch(
      kernel,
      blocksFor(CHUNK, THREADS),
      THREADS,
      [dChunk(c), cudart.i32(CHUNK), cudart.f32(SCALE), cudart.f32(1), cudart.f32(0), cudart.i32(iterations)],
      stream,
    );

  // Calibration on one chunk (twice: the first run loads the kernel): the kernel's iterations are
  // chosen so that it takes about as long as the chunk's copy to the device.
  const s0 = streams[0];
  let copyMs = 0;
  let kernelMs = 0;
  for (let rep = 0; rep < 2; rep++) {
    check(cudart.cudaEventRecord(start, s0), 'cudaEventRecord');
    check(cudart.cudaMemcpyAsync(dChunk(0), hIn.ptr, CHUNK_BYTES, K.cudaMemcpyHostToDevice, s0), 'cudaMemcpyAsync(H2D)');
    check(cudart.cudaEventRecord(done[0], s0), 'cudaEventRecord');
    kernelOn(0, CALIBRATION_ITERATIONS, s0);
    check(cudart.cudaEventRecord(stop, s0), 'cudaEventRecord');
    check(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize');
    copyMs = elapsedMs(start, done[0]);
    kernelMs = elapsedMs(done[0], stop);
  }
  const iterations = Math.max(1, Math.min(1 << 16, Math.round((CALIBRATION_ITERATIONS * copyMs) / kernelMs)));
  console.log(
    `> a chunk's copy to the device takes ${copyMs.toFixed(3)} ms; busyScale runs ${iterations} iterations to take about as long`,
  );

  /** The whole work, chunk c on streamOf(c); its time, when each chunk was done, and whether every element is right. */
  const run = (label: string, streamOf: (c: number) => cudart.cudaStream_t): { ms: number; passed: boolean } => {
    hOut.data.fill(-1);
    check(cudart.cudaEventRecord(start, null), 'cudaEventRecord(start)');
    for (let c = 0; c < N_STREAMS; c++) {
      const s = streamOf(c);
      check(
        cudart.cudaMemcpyAsync(dChunk(c), at(hIn, c * CHUNK), CHUNK_BYTES, K.cudaMemcpyHostToDevice, s),
        `cudaMemcpyAsync(H2D, chunk ${c})`,
      );
      kernelOn(c, iterations, s);
      check(
        cudart.cudaMemcpyAsync(at(hOut, c * CHUNK), dChunk(c), CHUNK_BYTES, K.cudaMemcpyDeviceToHost, s),
        `cudaMemcpyAsync(D2H, chunk ${c})`,
      );
      check(cudart.cudaEventRecord(done[c], s), `cudaEventRecord(chunk ${c})`);
    }
    check(cudart.cudaEventRecord(stop, null), 'cudaEventRecord(stop)');
    check(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize(stop)');
    const ms = elapsedMs(start, stop);
    const finished = done.map((e) => elapsedMs(start, e).toFixed(2)).join(', ');
    console.log(`${label.padEnd(58)}${ms.toFixed(2).padStart(8)} ms  (chunks done at ${finished} ms)`);
    return { ms, passed: verify(label, hOut.data, (i) => hIn.data[i] * SCALE) };
  };

  const one = run('one stream: copy in, kernel, copy out, chunk after chunk:', () => s0);
  const many = run(`${N_STREAMS} streams: each a chunk's copy in, kernel, copy out:`, (c) => streams[c]);
  console.log(
    `overlap: ${N_STREAMS} streams took ${((100 * many.ms) / one.ms).toFixed(0)}% of the time of one stream (${(one.ms / many.ms).toFixed(2)}x as fast)`,
  );
  return one.passed && many.passed;
});
