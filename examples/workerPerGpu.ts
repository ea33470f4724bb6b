// workerPerGpu: one worker_thread per GPU, through the core layer. Each worker makes its GPU its
// current device (the current device is per thread, so the workers do not disturb each other),
// compiles a kernel with core.Program (NVRTC, or nvcc; cached on disk), and runs y = a*x + y on 16 Mi
// floats on a stream of its own; the main thread checks every element each worker sends back.
//   npx tsx examples/workerPerGpu.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { core } from 'cuda-bindings';
import { requireGpu } from './lib/runtime';

const N = 1 << 24;
const SOURCE = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}
`;

interface Report {
  ordinal: number;
  name: string;
  /** The device the worker's thread had current at the end. */
  current: number;
  ms: number;
  y: Float32Array;
}

/** The worker: everything on `ordinal`, with its own stream. */
async function work(ordinal: number): Promise<Report> {
  const device = core.Device.get(ordinal).makeCurrent();
  const module = core.Program.compile(SOURCE, { name: 'saxpy.cu', arch: device }).load();
  const stream = device.createStream({ nonBlocking: true });
  const [start, stop] = [device.createEvent(), device.createEvent()];
  const x = device.allocate(N * 4);
  const y = device.allocate(N * 4);
  try {
    const hostX = Float32Array.from({ length: N }, (_, i) => i % 1000);
    const hostY = new Float32Array(N).fill(ordinal + 1);
    x.copyFrom(hostX, { stream });
    y.copyFrom(hostY, { stream });
    start.record(stream);
    module.kernel('saxpy').launch({ grid: device.properties.multiProcessorCount * 8, block: 256, stream }, core.f32(2), x, y, core.i64(N));
    stop.record(stream);
    y.copyTo(hostY, { stream });
    await stream.synchronize();
    return { ordinal, name: device.name, current: core.Device.current().ordinal, ms: stop.elapsedSince(start), y: hostY };
  } finally {
    for (const r of [y, x, stop, start, stream, module]) r.close();
  }
}

/** Runs this file again as a worker (through tsx when it is TypeScript source). */
function spawn(ordinal: number): Promise<Report> {
  const worker = __filename.endsWith('.ts')
    ? new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(__filename)});`, {
        eval: true,
        workerData: { ordinal },
      })
    : new Worker(__filename, { workerData: { ordinal } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`worker ${ordinal} exited with status ${code}`)));
  });
}

async function main(): Promise<boolean> {
  if (!requireGpu('workerPerGpu')) return false;
  const devices = core.Device.count();
  console.log(`${devices} GPU(s): one worker each`);
  const reports = await Promise.all(Array.from({ length: devices }, (_, i) => spawn(i)));
  let ok = true;
  for (const r of reports) {
    let wrong = 0;
    for (let i = 0; i < N; i++) if (r.y[i] !== 2 * (i % 1000) + r.ordinal + 1) wrong++;
    console.log(
      `GPU ${r.ordinal} (${r.name}): saxpy on ${N} floats in ${r.ms.toFixed(3)} ms, current device in its worker ${r.current}, ${wrong} wrong`,
    );
    ok &&= wrong === 0 && r.current === r.ordinal;
  }
  // The main thread's current device is its own: the workers did not move it.
  console.log(`main thread's current device: ${core.Device.current().ordinal}`);
  return ok && core.Device.current().ordinal === 0;
}

if (isMainThread) {
  main().then(
    (ok) => {
      console.log(`Result = ${ok ? 'PASS' : 'FAIL'}`);
      process.exitCode = ok ? 0 : 1;
    },
    (e) => {
      console.error(`workerPerGpu: ${(e as Error).stack ?? e}`);
      console.log('Result = FAIL');
      process.exitCode = 1;
    },
  );
} else {
  work((workerData as { ordinal: number }).ordinal).then((r) => parentPort!.postMessage(r, [r.y.buffer as ArrayBuffer]));
}
