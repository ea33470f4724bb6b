// hostCallback: CUDA's simpleCallback in spirit. Each of several streams copies its chunk to the
// device and runs two kernels, copying the intermediate and the final result back; a JS host
// function (cudaLaunchHostFunc) after each copy checks it while the stream waits. The JS thread
// awaits the streams with cudart.async.cudaStreamSynchronize, so it stays free to run the host
// functions (a blocking wait here would never return).
//   npx tsx examples/hostCallback.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { at, blocksFor, check, deviceLine, launch, loadKernel, runExample, verify } from './lib/runtime';

const N_STREAMS = 4;
const N = 1 << 20; // floats a stream
const THREADS = 256;
const K = cudart.cudaMemcpyKind;
// data = data * mul + add, twice; the values stay small integers, exact in floats.
const STEPS = [
  { mul: 2, add: 1, what: 'after the first kernel (x * 2 + 1)' },
  { mul: 3, add: -5, what: 'after the second kernel ((x * 2 + 1) * 3 - 5)' },
];

runExample('hostCallback', async (r) => {
  console.log('Starting hostCallback');
  console.log(deviceLine());
  const kernel = loadKernel('samples.fatbin', 'affine');
  const hIn = r.pinnedFloats(N_STREAMS * N);
  const results = STEPS.map(() => r.pinnedFloats(N_STREAMS * N)); // one host buffer a step
  for (let i = 0; i < N_STREAMS * N; i++) hIn.data[i] = i % 10000;
  for (const h of results) h.data.fill(-1);
  const d = r.malloc(N_STREAMS * N * 4);
  const streams = Array.from({ length: N_STREAMS }, () => r.stream(cudart.cudaStreamNonBlocking));

  /** What step s gives for input x. */
  const expected = (s: number, x: number) => {
    let v = x;
    for (let k = 0; k <= s; k++) v = v * STEPS[k].mul + STEPS[k].add;
    return v;
  };
  let ran = 0;
  let wrong = 0;

  console.log(
    `> ${N_STREAMS} streams, ${N} floats each: copy in, then for each of ${STEPS.length} steps a kernel, a copy back and a JS host function`,
  );
  for (let c = 0; c < N_STREAMS; c++) {
    const stream = streams[c];
    const dChunk = d + BigInt(c * N * 4);
    check(cudart.cudaMemcpyAsync(dChunk, at(hIn, c * N), N * 4, K.cudaMemcpyHostToDevice, stream), `cudaMemcpyAsync(H2D, stream ${c})`);
    STEPS.forEach(({ mul, add, what }, s) => {
      launch(kernel, blocksFor(N, THREADS), THREADS, [dChunk, cudart.f32(mul), cudart.f32(add), cudart.i32(N)], stream);
      check(
        cudart.cudaMemcpyAsync(at(results[s], c * N), dChunk, N * 4, K.cudaMemcpyDeviceToHost, stream),
        `cudaMemcpyAsync(D2H, stream ${c})`,
      );
      // Runs on the JS thread once the copy before it is done; the stream waits for it to return.
      const hostFn = (userData: bigint) => {
        const chunk = Number(userData);
        const base = chunk * N;
        const got = results[s].data.subarray(base, base + N);
        const right = verify(`stream ${chunk}, ${what}`, got, (i) => expected(s, hIn.data[base + i]));
        ran++;
        if (!right) wrong++;
        console.log(`  host function on stream ${chunk}: ${what}: ${right ? `all ${N} right` : 'WRONG'}`);
      };
      check(cudart.cudaLaunchHostFunc(stream, hostFn, BigInt(c)), `cudaLaunchHostFunc(stream ${c})`);
    });
  }
  console.log(`> queued; ${cudart.pendingHostFunctions()} host functions pending, awaiting the streams`);

  const waits = await Promise.all(streams.map((s) => cudart.async.cudaStreamSynchronize(s)));
  waits.forEach((w, c) => check(w, `async.cudaStreamSynchronize(stream ${c})`));
  console.log(`> all streams done: ${ran} of ${N_STREAMS * STEPS.length} host functions ran, ${wrong} found wrong results`);

  const final = verify('final results', results[STEPS.length - 1].data, (i) => expected(STEPS.length - 1, hIn.data[i]));
  return ran === N_STREAMS * STEPS.length && wrong === 0 && final;
});
