// `cuda-bindings bandwidth`: bandwidthTest — H→D, D→H and D→D for pageable and pinned memory.
import koffi from 'koffi';
import * as cudart from '../runtime';
import type { Options } from './args';
import { bytesText, ok, requireGpu, table, type Output } from './common';

export interface BandwidthRow {
  direction: 'H2D' | 'D2H' | 'D2D';
  memory: 'pageable' | 'pinned' | 'device';
  bytes: number;
  gbPerSecond: number;
}

const SIZES = [64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20];

/** GB/s of `reps` copies of `bytes`, timed with events on a stream (after one warm-up copy). */
function measure(copy: () => number, bytes: number, stream: cudart.cudaStream_t, start: cudart.cudaEvent_t, stop: cudart.cudaEvent_t): number {
  const reps = Math.max(3, Math.min(100, Math.floor((1 << 30) / bytes)));
  ok([copy()] as [number], 'copy');
  ok(cudart.cudaStreamSynchronize(stream) as [number], 'cudaStreamSynchronize');
  ok(cudart.cudaEventRecord(start, stream) as [number], 'cudaEventRecord');
  for (let i = 0; i < reps; i++) ok([copy()] as [number], 'copy');
  ok(cudart.cudaEventRecord(stop, stream) as [number], 'cudaEventRecord');
  ok(cudart.cudaEventSynchronize(stop) as [number], 'cudaEventSynchronize');
  const [ms] = ok(cudart.cudaEventElapsedTime(start, stop), 'cudaEventElapsedTime');
  return (bytes * reps) / (ms * 1e6);
}

export function bandwidthRows(device: number, progress?: (s: string) => void): BandwidthRow[] {
  ok(cudart.cudaSetDevice(device) as [number], 'cudaSetDevice');
  const max = SIZES[SIZES.length - 1];
  const [stream] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
  const [start] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
  const [stop] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
  const [dA] = ok(cudart.cudaMalloc(max), 'cudaMalloc');
  const [dB] = ok(cudart.cudaMalloc(max), 'cudaMalloc');
  const [pinned] = ok(cudart.cudaMallocHost(max), 'cudaMallocHost');
  const pageable = Buffer.alloc(max, 1);
  const pinnedView = new Uint8Array(koffi.view(pinned, max));
  pinnedView.fill(1);
  const K = cudart.cudaMemcpyKind;
  const rows: BandwidthRow[] = [];
  try {
    const plan: [BandwidthRow['direction'], BandwidthRow['memory']][] = [
      ['H2D', 'pageable'], ['H2D', 'pinned'], ['D2H', 'pageable'], ['D2H', 'pinned'], ['D2D', 'device'],
    ];
    let step = 0;
    for (const [direction, memory] of plan) {
      for (const bytes of SIZES) {
        progress?.(`measuring ${direction} ${memory} ${bytesText(bytes)} (${++step}/${plan.length * SIZES.length})`);
        const host = memory === 'pinned' ? pinned : pageable.subarray(0, bytes);
        // A pageable copy returns once its data is staged; the events on the stream still bracket it.
        const copy =
          direction === 'H2D'
            ? () => cudart.cudaMemcpyAsync(dA, host, bytes, K.cudaMemcpyHostToDevice, stream)[0]
            : direction === 'D2H'
              ? () => cudart.cudaMemcpyAsync(host, dA, bytes, K.cudaMemcpyDeviceToHost, stream)[0]
              : () => cudart.cudaMemcpyAsync(dB, dA, bytes, K.cudaMemcpyDeviceToDevice, stream)[0];
        // A device-to-device copy reads and writes each byte: bandwidthTest counts both.
        const gb = measure(copy, bytes, stream, start, stop) * (direction === 'D2D' ? 2 : 1);
        rows.push({ direction, memory, bytes, gbPerSecond: gb });
      }
    }
  } finally {
    progress?.('');
    cudart.cudaFreeHost(pinned);
    cudart.cudaFree(dA);
    cudart.cudaFree(dB);
    cudart.cudaEventDestroy(start);
    cudart.cudaEventDestroy(stop);
    cudart.cudaStreamDestroy(stream);
  }
  return rows;
}

export function bandwidth(o: Options, out: Output): void {
  requireGpu({}, o.device);
  const device = o.device ?? 0;
  const rows = bandwidthRows(device, out.progress);
  if (o.json) {
    out.log(JSON.stringify({ device, unit: 'GB/s (1e9 bytes per second)', rows }, null, 2));
    return;
  }
  const [, p] = cudart.cudaGetDeviceProperties(device);
  out.log(`Device ${device}: ${p!.name}  (GB/s = 10^9 bytes a second; device-to-device counts the read and the write)`);
  out.log(table(['direction', 'host memory', 'size', 'GB/s'], rows.map((r) => [r.direction, r.memory, bytesText(r.bytes), Number(r.gbPerSecond.toFixed(2))])));
}
