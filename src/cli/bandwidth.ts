// `cuda-bindings bandwidth`: bandwidthTest — H→D, D→H and D→D for pageable and pinned memory.
import koffi from 'koffi';
import * as cudart from '../runtime';
import type { Options } from './args';
import { bytesText, ok, printable, requireGpu, table, type Output } from './common';

export interface BandwidthRow {
  direction: 'H2D' | 'D2H' | 'D2D';
  memory: 'pageable' | 'pinned' | 'device';
  bytes: number;
  gbPerSecond: number;
}

const SIZES = [64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20];

/** GB/s of `reps` copies of `bytes`, timed with events on a stream (after one warm-up copy). */
function measure(
  copy: () => number,
  bytes: number,
  stream: cudart.cudaStream_t,
  start: cudart.cudaEvent_t,
  stop: cudart.cudaEvent_t,
): number {
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

/** Measures every direction and size on `device`; whatever it allocated is freed however it ends. */
export function bandwidthRows(device: number, progress?: (s: string) => void): BandwidthRow[] {
  ok(cudart.cudaSetDevice(device) as [number], 'cudaSetDevice');
  const max = SIZES[SIZES.length - 1];
  let stream: cudart.cudaStream_t | null = null;
  let start: cudart.cudaEvent_t | null = null;
  let stop: cudart.cudaEvent_t | null = null;
  let dA: ReturnType<typeof cudart.cudaMalloc>[1] = null;
  let dB: ReturnType<typeof cudart.cudaMalloc>[1] = null;
  let pinned: ReturnType<typeof cudart.cudaMallocHost>[1] = null;
  const K = cudart.cudaMemcpyKind;
  const rows: BandwidthRow[] = [];
  try {
    [stream] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
    [start] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
    [stop] = ok(cudart.cudaEventCreate(), 'cudaEventCreate');
    [dA] = ok(cudart.cudaMalloc(max), 'cudaMalloc');
    [dB] = ok(cudart.cudaMalloc(max), 'cudaMalloc');
    [pinned] = ok(cudart.cudaMallocHost(max), 'cudaMallocHost');
    const pageable = Buffer.alloc(max, 1);
    new Uint8Array(koffi.view(pinned!, max)).fill(1);
    const plan: [BandwidthRow['direction'], BandwidthRow['memory']][] = [
      ['H2D', 'pageable'],
      ['H2D', 'pinned'],
      ['D2H', 'pageable'],
      ['D2H', 'pinned'],
      ['D2D', 'device'],
    ];
    let step = 0;
    for (const [direction, memory] of plan) {
      for (const bytes of SIZES) {
        progress?.(`measuring ${direction} ${memory} ${bytesText(bytes)} (${++step}/${plan.length * SIZES.length})`);
        const host = memory === 'pinned' ? pinned! : pageable.subarray(0, bytes);
        const [a, b, s] = [dA!, dB!, stream!];
        // A pageable copy returns once its data is staged; the events on the stream still bracket it.
        const copy =
          direction === 'H2D'
            ? () => cudart.cudaMemcpyAsync(a, host, bytes, K.cudaMemcpyHostToDevice, s)[0]
            : direction === 'D2H'
              ? () => cudart.cudaMemcpyAsync(host, a, bytes, K.cudaMemcpyDeviceToHost, s)[0]
              : () => cudart.cudaMemcpyAsync(b, a, bytes, K.cudaMemcpyDeviceToDevice, s)[0];
        // A device-to-device copy reads and writes each byte: bandwidthTest counts both.
        const gb = measure(copy, bytes, s, start!, stop!) * (direction === 'D2D' ? 2 : 1);
        rows.push({ direction, memory, bytes, gbPerSecond: gb });
      }
    }
  } finally {
    progress?.('');
    if (pinned !== null) cudart.cudaFreeHost(pinned);
    if (dA !== null) cudart.cudaFree(dA);
    if (dB !== null) cudart.cudaFree(dB);
    if (start !== null) cudart.cudaEventDestroy(start);
    if (stop !== null) cudart.cudaEventDestroy(stop);
    if (stream !== null) cudart.cudaStreamDestroy(stream);
  }
  return rows;
}

/** Runs `cuda-bindings bandwidth`: the table, or --json. */
export function bandwidth(o: Options, out: Output): void {
  requireGpu({}, o.device);
  const device = o.device ?? 0;
  const rows = bandwidthRows(device, out.progress);
  if (o.json) {
    out.log(JSON.stringify({ device, unit: 'GB/s (1e9 bytes per second)', rows }, null, 2));
    return;
  }
  const [, p] = cudart.cudaGetDeviceProperties(device);
  out.log(`Device ${device}: ${printable(p!.name)}  (GB/s = 10^9 bytes a second; device-to-device counts the read and the write)`);
  out.log(
    table(
      ['direction', 'host memory', 'size', 'GB/s'],
      rows.map((r) => [r.direction, r.memory, bytesText(r.bytes), Number(r.gbPerSecond.toFixed(2))]),
    ),
  );
}
