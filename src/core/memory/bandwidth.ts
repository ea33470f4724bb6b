// Copy bandwidth as CUDA's bandwidthTest measures it: host to device, device to host (pageable and
// pinned host memory) and device to device, over a range of sizes, timed with events on a stream.
// `cuda-bindings bandwidth` and examples/bandwidthTest.ts print what this measures.
import koffi from 'koffi';
import * as cudart from '../../runtime';
import { check } from '../base/errors';

/** One measurement of {@link measureBandwidth}: what was copied, how much, and the rate. */
export interface BandwidthRow {
  /** Host to device, device to host, or device to device. */
  direction: 'H2D' | 'D2H' | 'D2D';
  /** The host memory of the copy (`'device'` for a device-to-device copy). */
  memory: 'pageable' | 'pinned' | 'device';
  /** The size of each copy. */
  bytes: number;
  /** 10^9 bytes a second; a device-to-device copy counts the read and the write, as bandwidthTest does. */
  gbPerSecond: number;
}

/** The options of {@link measureBandwidth}. */
export interface BandwidthOptions {
  /** Called before each measurement with the one about to run, its place (from 1) and how many there are. */
  progress?: (next: Omit<BandwidthRow, 'gbPerSecond'>, step: number, steps: number) => void;
}

/** The sizes measured, from 64 KiB to 256 MiB. */
export const BANDWIDTH_SIZES: readonly number[] = [64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20];

const PLAN: readonly (readonly [BandwidthRow['direction'], BandwidthRow['memory']])[] = [
  ['H2D', 'pageable'],
  ['H2D', 'pinned'],
  ['D2H', 'pageable'],
  ['D2H', 'pinned'],
  ['D2D', 'device'],
];

/** GB/s of `reps` copies of `bytes`, timed with events on a stream (after one warm-up copy). */
function timeCopies(
  copy: () => cudart.cudaError_t,
  bytes: number,
  stream: cudart.cudaStream_t,
  start: cudart.cudaEvent_t,
  stop: cudart.cudaEvent_t,
) {
  const reps = Math.max(3, Math.min(100, Math.floor((1 << 30) / bytes)));
  check([copy()], 'cudaMemcpyAsync');
  check(cudart.cudaStreamSynchronize(stream), 'cudaStreamSynchronize');
  check(cudart.cudaEventRecord(start, stream), 'cudaEventRecord');
  for (let i = 0; i < reps; i++) check([copy()], 'cudaMemcpyAsync');
  check(cudart.cudaEventRecord(stop, stream), 'cudaEventRecord');
  check(cudart.cudaEventSynchronize(stop), 'cudaEventSynchronize');
  const ms = check(cudart.cudaEventElapsedTime(start, stop), 'cudaEventElapsedTime');
  return (bytes * reps) / (ms * 1e6);
}

/**
 * Measures copy bandwidth on `device` (it becomes the current device): each direction and host
 * memory at each of {@link BANDWIDTH_SIZES}. Throws a {@link CudaError} naming the call that failed;
 * whatever it allocated is freed however it ends.
 */
export function measureBandwidth(device: number, options: BandwidthOptions = {}): BandwidthRow[] {
  if (!Number.isInteger(device) || device < 0)
    throw new RangeError(`measureBandwidth: parameter 'device' must be a device number, got ${String(device)}`);
  check(cudart.cudaSetDevice(device), 'cudaSetDevice');
  const max = BANDWIDTH_SIZES[BANDWIDTH_SIZES.length - 1];
  const freeAll: (() => unknown)[] = [];
  const K = cudart.cudaMemcpyKind;
  const rows: BandwidthRow[] = [];
  try {
    const stream = check(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
    freeAll.push(() => cudart.cudaStreamDestroy(stream));
    const start = check(cudart.cudaEventCreate(), 'cudaEventCreate');
    freeAll.push(() => cudart.cudaEventDestroy(start));
    const stop = check(cudart.cudaEventCreate(), 'cudaEventCreate');
    freeAll.push(() => cudart.cudaEventDestroy(stop));
    const a = check(cudart.cudaMalloc(max), 'cudaMalloc');
    freeAll.push(() => cudart.cudaFree(a));
    const b = check(cudart.cudaMalloc(max), 'cudaMalloc');
    freeAll.push(() => cudart.cudaFree(b));
    const pinned = check(cudart.cudaMallocHost(max), 'cudaMallocHost');
    freeAll.push(() => cudart.cudaFreeHost(pinned));
    const pageable = Buffer.alloc(max, 1);
    new Uint8Array(koffi.view(pinned, max)).fill(1);
    const steps = PLAN.length * BANDWIDTH_SIZES.length;
    for (const [direction, memory] of PLAN) {
      for (const bytes of BANDWIDTH_SIZES) {
        options.progress?.({ direction, memory, bytes }, rows.length + 1, steps);
        const host = memory === 'pinned' ? pinned : pageable.subarray(0, bytes);
        // A pageable copy returns once its data is staged; the events on the stream still bracket it.
        const copy =
          direction === 'H2D'
            ? () => cudart.cudaMemcpyAsync(a, host, bytes, K.cudaMemcpyHostToDevice, stream)[0]
            : direction === 'D2H'
              ? () => cudart.cudaMemcpyAsync(host, a, bytes, K.cudaMemcpyDeviceToHost, stream)[0]
              : () => cudart.cudaMemcpyAsync(b, a, bytes, K.cudaMemcpyDeviceToDevice, stream)[0];
        const gb = timeCopies(copy, bytes, stream, start, stop) * (direction === 'D2D' ? 2 : 1);
        rows.push({ direction, memory, bytes, gbPerSecond: gb });
      }
    }
  } finally {
    for (const free of freeAll.reverse()) free();
  }
  return rows;
}
