// The child process of examples/simpleIPC.ts, and the byte patterns that both processes check.
// simpleIPC runs it with the node and loader flags it runs under itself:
//   ipcChild.ts <device> <memory handle> <event handle>      (each handle as 128 hex digits)
// It opens the parent's device memory (cudaIpcOpenMemHandle) and event (cudaIpcOpenEventHandle) on
// <device>, waits on the GPU for the event that the parent recorded after filling the memory,
// checks the parent's pattern byte for byte, writes its own pattern into the memory with a kernel,
// records the event after it, waits for its stream and closes the handles. Exits 0 when all of that went
// right; otherwise it prints why to stderr and exits 1.
import { cudart } from 'cuda-bindings';
import { blocksFor, CudaCallError, check, deviceLine, launch, loadKernel, requireGpu, Resources, verify } from './runtime';

/** Bytes of device memory the two processes share. */
export const DATA_SIZE = 1 << 24;
/** The parent fills the memory with the pattern of this seed, the child with the pattern of the other. */
export const PARENT_SEED = 0x5a;
export const CHILD_SEED = 0xa5;
const THREADS = 256;
const K = cudart.cudaMemcpyKind;

/** Byte i of the pattern of `seed`, as the bytePattern kernel (kernels/samples.cu) writes it. */
export function patternByte(i: number, seed: number): number {
  return (Math.imul(i, 31) + (i >>> 8) + seed) & 0xff;
}

/** An IPC handle's 64 bytes as hex, for the child's command line. */
export function handleToHex(handle: cudart.cudaIpcMemHandle_t | cudart.cudaIpcEventHandle_t): string {
  return Buffer.from(handle.reserved).toString('hex');
}

function handleBytes(hex: string, what: string): Buffer {
  if (!/^[0-9a-f]{128}$/i.test(hex ?? '')) throw new RangeError(`the ${what} handle must be 128 hex digits, got ${JSON.stringify(hex)}`);
  return Buffer.from(hex, 'hex');
}

/** The child's work; true when the parent's pattern was there and the child's own is written. */
function child(r: Resources, device: number, memHex: string, eventHex: string): boolean {
  const me = `Process ${process.pid}`;
  check(cudart.cudaSetDevice(device), `cudaSetDevice(${device})`);
  console.log(`${me}: starting on ${deviceLine(device)}`);
  // The memory and the event are opened in this device's context; memory of another GPU is mapped
  // through peer access, which cudaIpcMemLazyEnablePeerAccess enables.
  const memHandle = new cudart.cudaIpcMemHandle_t({ reserved: handleBytes(memHex, 'memory') });
  const [ptr] = check(cudart.cudaIpcOpenMemHandle(memHandle, cudart.cudaIpcMemLazyEnablePeerAccess), 'cudaIpcOpenMemHandle');
  const eventHandle = new cudart.cudaIpcEventHandle_t({ reserved: handleBytes(eventHex, 'event') });
  const [event] = check(cudart.cudaIpcOpenEventHandle(eventHandle), 'cudaIpcOpenEventHandle');
  r.defer(() => cudart.cudaEventDestroy(event));
  const stream = r.stream(cudart.cudaStreamNonBlocking);

  // The parent recorded the event after its copy into the memory: the stream waits for it on the GPU.
  check(cudart.cudaStreamWaitEvent(stream, event, 0), 'cudaStreamWaitEvent');
  const host = Buffer.alloc(DATA_SIZE);
  check(cudart.cudaMemcpyAsync(host, ptr, DATA_SIZE, K.cudaMemcpyDeviceToHost, stream), 'cudaMemcpyAsync(D2H)');
  check(cudart.cudaStreamSynchronize(stream), 'cudaStreamSynchronize');
  console.log(`${me}: verifying the parent's ${DATA_SIZE} bytes...`);
  if (!verify(`${me}: the parent's pattern`, host, (i) => patternByte(i, PARENT_SEED))) return false;

  console.log(`${me}: writing its own pattern into the parent's memory with a kernel`);
  launch(
    loadKernel('samples.fatbin', 'bytePattern'),
    blocksFor(DATA_SIZE, THREADS),
    THREADS,
    [cudart.ptr(ptr), cudart.i32(DATA_SIZE), cudart.u32(CHILD_SEED)],
    stream,
  );
  // The parent's copy back waits for this record; this process waits for its stream before it ends.
  check(cudart.cudaEventRecord(event, stream), 'cudaEventRecord');
  check(cudart.cudaStreamSynchronize(stream), 'cudaStreamSynchronize');
  check(cudart.cudaIpcCloseMemHandle(ptr), 'cudaIpcCloseMemHandle');
  console.log(`${me}: complete`);
  return true;
}

async function main(): Promise<void> {
  const [deviceArg, memHex, eventHex] = process.argv.slice(2);
  const device = Number(deviceArg);
  if (!Number.isInteger(device) || device < 0 || memHex === undefined || eventHex === undefined) {
    console.error('simpleIPC child: usage: ipcChild.ts <device> <memory handle as hex> <event handle as hex>');
    process.exitCode = 1;
    return;
  }
  if (!requireGpu('simpleIPC child')) {
    process.exitCode = 1;
    return;
  }
  const r = new Resources();
  let passed = false;
  try {
    passed = child(r, device, memHex, eventHex);
  } finally {
    await r.release();
  }
  process.exitCode = passed ? 0 : 1;
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(
      e instanceof CudaCallError || e instanceof RangeError
        ? `simpleIPC child: ${e.message}`
        : e instanceof Error
          ? (e.stack ?? e.message)
          : String(e),
    );
    process.exitCode = 1;
  });
}
