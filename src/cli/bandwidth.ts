// `cuda-bindings bandwidth`: bandwidthTest — H→D, D→H and D→D for pageable and pinned memory (core's measureBandwidth).
import { measureBandwidth } from '../core/memory/bandwidth';
import * as cudart from '../runtime';
import type { Options } from './args';
import { bytesText, printable, requireGpu, table, type Output } from './common';

/** Runs `cuda-bindings bandwidth`: the table, or --json. */
export function bandwidth(o: Options, out: Output): void {
  requireGpu({}, o.device);
  const device = o.device ?? 0;
  let rows;
  try {
    rows = measureBandwidth(device, {
      progress: (next, step, steps) =>
        out.progress?.(`measuring ${next.direction} ${next.memory} ${bytesText(next.bytes)} (${step}/${steps})`),
    });
  } finally {
    out.progress?.('');
  }
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
