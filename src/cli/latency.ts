// `cuda-bindings latency`: what common calls cost through this library, in ns.
import * as cudart from '../runtime';
import type { Options } from './args';
import { ok, requireGpu, table, type Output } from './common';

export interface LatencyRow {
  call: string;
  nsPerCall: number;
}

/** Median over `reps` timed loops of n calls, in ns per call (the benchmarks use it too). */
export function time(fn: () => unknown, n: number, reps = 5): number {
  const r: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    r.push(Number(process.hrtime.bigint() - t) / n);
  }
  return r.sort((a, b) => a - b)[reps >> 1];
}

/** Times each call on `device`; the stream, event and buffer it made are freed however it ends. */
export function latencyRows(device: number, progress?: (s: string) => void): LatencyRow[] {
  ok(cudart.cudaSetDevice(device) as [number], 'cudaSetDevice');
  let s: cudart.cudaStream_t | null = null;
  let ev: cudart.cudaEvent_t | null = null;
  let d: ReturnType<typeof cudart.cudaMalloc>[1] = null;
  const rows: LatencyRow[] = [];
  try {
    [s] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
    [ev] = ok(cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming), 'cudaEventCreateWithFlags');
    [d] = ok(cudart.cudaMalloc(1 << 20), 'cudaMalloc');
    timeCases(device, s!, ev!, d!, rows, progress);
  } finally {
    progress?.('');
    if (d !== null) cudart.cudaFree(d);
    if (ev !== null) cudart.cudaEventDestroy(ev);
    if (s !== null) cudart.cudaStreamDestroy(s);
  }
  return rows;
}

/** Times every call of the list into `rows`. */
function timeCases(
  device: number,
  s: cudart.cudaStream_t,
  ev: cudart.cudaEvent_t,
  d: NonNullable<ReturnType<typeof cudart.cudaMalloc>[1]>,
  rows: LatencyRow[],
  progress?: (s: string) => void,
): void {
  const host = new Int32Array(1);
  const K = cudart.cudaMemcpyKind;
  const cases: [string, () => unknown, number][] = [
    ['cudaGetDevice', () => cudart.cudaGetDevice(), 200_000],
    ['cudaPeekAtLastError', () => cudart.cudaPeekAtLastError(), 200_000],
    ['cudaStreamQuery', () => cudart.cudaStreamQuery(s), 100_000],
    ['cudaEventRecord', () => cudart.cudaEventRecord(ev, s), 100_000],
    ['cudaEventQuery', () => cudart.cudaEventQuery(ev), 100_000],
    ['cudaGetDeviceProperties', () => cudart.cudaGetDeviceProperties(device), 2_000],
    ['cudaMalloc + cudaFree (1 MiB)', () => cudart.cudaFree(cudart.cudaMalloc(1 << 20)[1]), 2_000],
    ['cudaMallocAsync + cudaFreeAsync (1 MiB)', () => cudart.cudaFreeAsync(cudart.cudaMallocAsync(1 << 20, s)[1], s), 10_000],
    ['cudaMemcpy 4 B host to device', () => cudart.cudaMemcpy(d, host, 4, K.cudaMemcpyHostToDevice), 10_000],
    ['cudaMemcpy 4 B device to host', () => cudart.cudaMemcpy(host, d, 4, K.cudaMemcpyDeviceToHost), 10_000],
  ];
  cases.forEach(([call, fn, n], i) => {
    progress?.(`timing ${call} (${i + 1}/${cases.length})`);
    fn();
    rows.push({ call, nsPerCall: time(fn, n) });
    cudart.cudaStreamSynchronize(s);
  });
}

/** Runs `cuda-bindings latency`: the table, or --json. */
export function latency(o: Options, out: Output): void {
  requireGpu({}, o.device);
  const device = o.device ?? 0;
  const rows = latencyRows(device, out.progress);
  if (o.json) {
    out.log(JSON.stringify({ device, unit: 'ns per call (median of 5 loops)', rows }, null, 2));
    return;
  }
  out.log(`Device ${device}: per-call cost through cuda-bindings (median of 5 loops)`);
  out.log(
    table(
      ['call', 'ns'],
      rows.map((r) => [r.call, Math.round(r.nsPerCall)]),
    ),
  );
}
