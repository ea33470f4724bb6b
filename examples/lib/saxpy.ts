// The work of examples/gpuService.ts, shared with its clients (the example's own check and
// bench/service-load.ts): the inputs, the request, and how a response is checked. Every value is a
// small integer, so y = a * x + y is exact in float32 and a result is checked with ===.
import * as http from 'node:http';

/** Elements per request: two 1 MiB Float32Arrays in, one out. */
export const N = 1 << 18;
/** Input pairs the service keeps (request parameter k). */
export const INPUTS = 16;
/** Elements of an impossible request: 16 TiB of floats per buffer, more than any GPU holds. */
export const IMPOSSIBLE_N = 2 ** 42;
/** Results the service sends back, spread over the output (the client checks each). */
export const SAMPLES = 64;

/** The saxpy kernel (y = a * x + y), as the service compiles it and bench/service.cu has it. */
export const SAXPY_SOURCE = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`;

/** Input x of pair k at element i. */
export const inputX = (k: number, i: number): number => (i * 7 + k) % 1024;
/** Input y of pair k at element i. */
export const inputY = (k: number, i: number): number => (i * 13 + 3 * k) % 512;

/** Pair k's inputs, N elements each. */
export function makeInputs(k: number): [Float32Array, Float32Array] {
  const x = new Float32Array(N);
  const y = new Float32Array(N);
  for (let i = 0; i < N; i++) [x[i], y[i]] = [inputX(k, i), inputY(k, i)];
  return [x, y];
}

/** The output element that sample j reads. */
export const sampleIndex = (j: number): number => j * (N / SAMPLES) + (j % 7);

/** How many of a response's samples are wrong for pair k and factor a (a whole response of the wrong size counts all). */
export function wrongSamples(k: number, a: number, samples: Float32Array): number {
  if (samples.length !== SAMPLES) return SAMPLES;
  let wrong = 0;
  for (let j = 0; j < SAMPLES; j++) {
    const i = sampleIndex(j);
    if (samples[j] !== a * inputX(k, i) + inputY(k, i)) wrong++;
  }
  return wrong;
}

/** One request's parameters: pair k, factor a (1 to 4), and the element count n. */
export interface SaxpyRequest {
  k: number;
  a: number;
  n: number;
}

/** The `seq`-th request of a client: every 50th asks for an impossible size, the others vary k and a. */
export function requestFor(seq: number): SaxpyRequest {
  return { k: seq % INPUTS, a: 1 + (seq % 4), n: seq % 50 === 49 ? IMPOSSIBLE_N : N };
}

/** What came back: the status, the wrong samples (200 only), and the milliseconds it took. */
export interface SaxpyOutcome {
  status: number;
  wrong: number;
  ms: number;
}

/** Sends one request to the service at `base` through `agent` and checks the answer. */
export function send(agent: http.Agent, base: URL, r: SaxpyRequest): Promise<SaxpyOutcome> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(`/saxpy?k=${r.k}&a=${r.a}&n=${r.n}`, base), { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = res.statusCode ?? 0;
        const aligned = new Uint8Array(body); // a copy: the body's offset in Node's pool may not be a multiple of 4
        const samples = new Float32Array(aligned.buffer, 0, aligned.byteLength === 4 * SAMPLES ? SAMPLES : 0);
        const wrong = status === 200 ? wrongSamples(r.k, r.a, samples) : 0;
        resolve({ status, wrong, ms: performance.now() - start });
      });
    });
    req.on('error', reject);
  });
}
