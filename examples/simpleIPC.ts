// simpleIPC: CUDA's sample of that name in spirit. The parent process allocates device memory on
// GPU 0, fills it with a byte pattern, creates an interprocess event (cudaEventInterprocess) and
// records it after the fill, and hands both IPC handles (cudaIpcGetMemHandle,
// cudaIpcGetEventHandle) to a child Node process, examples/lib/ipcChild.ts, as hex on its command
// line. The child opens them, on GPU 1 when there are two GPUs that can access each other and on
// GPU 0 otherwise, checks the parent's pattern byte for byte, writes its own with a kernel and
// records the event after it. The parent waits for the child, makes its copy back wait for the
// event and checks the child's pattern byte for byte.
//   npx tsx examples/simpleIPC.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cudart } from 'cuda-bindings';
import { CHILD_SEED, DATA_SIZE, handleToHex, PARENT_SEED, patternByte } from './lib/ipcChild';
import { check, deviceLine, runExample, verify } from './lib/runtime';

const CHILD_TIMEOUT_MS = 120_000;
const K = cudart.cudaMemcpyKind;
// The child runs as this process runs: the same node, with the same flags (under tsx, its loader).
const CHILD_SCRIPT = path.join(__dirname, 'lib', `ipcChild${path.extname(__filename)}`);

runExample('simpleIPC', (r) => {
  const device = 0;
  console.log(deviceLine(device));
  const [ipcEvents] = check(
    cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrIpcEventSupport, device),
    'cudaDeviceGetAttribute(cudaDevAttrIpcEventSupport)',
  );
  if (!ipcEvents) {
    console.error(`simpleIPC: device ${device} does not support IPC events (cudaDevAttrIpcEventSupport is 0)`);
    return false;
  }
  // The child's device: GPU 1 where it can map GPU 0's memory, else GPU 0 as well.
  const [count] = check(cudart.cudaGetDeviceCount(), 'cudaGetDeviceCount');
  let childDevice = device;
  if (count >= 2) {
    const [peer] = check(cudart.cudaDeviceCanAccessPeer(1, device), `cudaDeviceCanAccessPeer(1, ${device})`);
    if (peer) childDevice = 1;
    else console.log(`GPU1 cannot access GPU${device}'s memory: the child uses GPU${device} as well`);
  }

  check(cudart.cudaSetDevice(device), `cudaSetDevice(${device})`);
  const d = r.malloc(DATA_SIZE);
  const host = Buffer.alloc(DATA_SIZE);
  for (let i = 0; i < DATA_SIZE; i++) host[i] = patternByte(i, PARENT_SEED);
  check(cudart.cudaMemcpy(d, host, DATA_SIZE, K.cudaMemcpyHostToDevice), 'cudaMemcpy(H2D)');
  // Recorded after the copy, whose DMA from pageable memory may still be under way: the child waits for it.
  const [event] = check(
    cudart.cudaEventCreateWithFlags(cudart.cudaEventInterprocess | cudart.cudaEventDisableTiming),
    'cudaEventCreateWithFlags(cudaEventInterprocess | cudaEventDisableTiming)',
  );
  r.defer(() => cudart.cudaEventDestroy(event));
  check(cudart.cudaEventRecord(event, null), 'cudaEventRecord');
  const [memHandle] = check(cudart.cudaIpcGetMemHandle(d), 'cudaIpcGetMemHandle');
  const [eventHandle] = check(cudart.cudaIpcGetEventHandle(event), 'cudaIpcGetEventHandle');

  console.log(`Spawning a child process on GPU${childDevice} with the memory's and the event's IPC handles...`);
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, CHILD_SCRIPT, String(childDevice), handleToHex(memHandle), handleToHex(eventHandle)],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: CHILD_TIMEOUT_MS,
    },
  );
  if (child.error) {
    console.error(`simpleIPC: the child process could not run: ${child.error.message}`);
    return false;
  }
  if (child.status !== 0) {
    console.error(`simpleIPC: the child process ${child.signal ? `was ended by ${child.signal}` : `exited with status ${child.status}`}`);
    return false;
  }

  // The child recorded the event after its kernel: the copy back waits for it.
  check(cudart.cudaStreamWaitEvent(null, event, 0), 'cudaStreamWaitEvent');
  host.fill(0);
  check(cudart.cudaMemcpy(host, d, DATA_SIZE, K.cudaMemcpyDeviceToHost), 'cudaMemcpy(D2H)');
  console.log(`Parent: verifying the child's ${DATA_SIZE} bytes...`);
  return verify("the child's pattern", host, (i) => patternByte(i, CHILD_SEED));
});
