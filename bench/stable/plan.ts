// What the stable benchmark (run.ts) and floor.ts time: each operation, how, and how often; and
// what they and launch-gpu.ts share (the kernels, fresh processes, pinning, options, where results
// go, the GPU's name, the median).
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';

/**
 * The implementations, in the order of a round's first turn. `core-b` is core from a second build
 * (run.ts `--core-b DIR`), served only when asked for: two versions of core in one run, beside the same floor.
 */
export const IMPLS = ['c', 'facade', 'core', 'cuda-python', 'cupy', 'koffi', 'core-b'] as const;
export type Impl = (typeof IMPLS)[number];

/**
 * How each operation is timed: a loop of n calls, or n calls enqueued in synchronised batches of 128.
 * `short`: one of the two shortest calls (29–50 ns in C), whose loops fall in two modes within a run
 * (issue #37): timed in `--short-loops` loops a round of n / 4 calls each (the same calls in all), every
 * loop kept, so that each implementation's two modes can be told apart (see twoModes).
 */
export const OPS: {
  op: string;
  kind: 'loop' | 'batch';
  n: number;
  base?: string;
  nFor?: Partial<Record<Impl, number>>;
  short?: true;
}[] = [
  { op: 'cudaGetDevice', kind: 'loop', n: 200_000, short: true },
  { op: 'cudaPeekAtLastError', kind: 'loop', n: 200_000, short: true },
  { op: 'cudaStreamQuery', kind: 'loop', n: 50_000 },
  { op: 'cudaEventQuery', kind: 'loop', n: 50_000 },
  { op: 'cudaEventRecord', kind: 'batch', n: 25_600 },
  // CuPy's getDeviceProperties builds a dict of every property (0.8 ms a call): fewer calls for it.
  { op: 'cudaGetDeviceProperties', kind: 'loop', n: 5_000, nFor: { cupy: 50 } },
  { op: 'cudaGetDeviceProperties+5fields', kind: 'loop', n: 5_000, nFor: { cupy: 50 } },
  // 2,000 pairs, about 3 ms a loop (with 500, cuda-python's samples in one H100 run spread over 1.6-7.2 µs a pair).
  { op: 'cudaMalloc+cudaFree_1MiB', kind: 'loop', n: 2_000 },
  { op: 'cudaMallocAsync+cudaFreeAsync_1MiB', kind: 'batch', n: 6_400 },
  // The call core's pool.allocate makes (the pool named, not the stream's current one): the floor of
  // the row above for core, where the floor and C call cudaMallocAsync (issue #37).
  { op: 'cudaMallocFromPoolAsync+cudaFreeAsync_1MiB', kind: 'batch', n: 6_400 },
  { op: 'cudaMemcpy_H2D_4B', kind: 'loop', n: 2_000 },
  { op: 'cudaMemcpy_D2H_4B', kind: 'loop', n: 2_000 },
  { op: 'cudaMemcpyAsync_H2D_4B_pinned', kind: 'batch', n: 6_400 },
  { op: 'cudaLaunchKernel_empty', kind: 'batch', n: 12_800 },
  { op: 'cudaLaunchKernel_8args', kind: 'batch', n: 12_800 },
  { op: 'cudaLaunchKernel_8args_typed', kind: 'batch', n: 12_800, base: 'cudaLaunchKernel_8args' },
  { op: 'cuLaunchKernel_empty', kind: 'batch', n: 12_800 },
  { op: 'cuLaunchKernel_8args', kind: 'batch', n: 12_800 },
  { op: 'cudaGraphLaunch_1kernel', kind: 'batch', n: 12_800 },
  { op: 'launch+sync_empty', kind: 'loop', n: 2_000 },
  { op: 'InOut_4MiB', kind: 'loop', n: 20 },
  { op: 'InOut_4MiB_manual', kind: 'loop', n: 20, base: 'InOut_4MiB' },
];

/** Two modes of a set of timings: each one's median and count, split where it best separates them. */
export interface Modes {
  /** The faster mode's median, and how many values fell in it. */
  fast: number;
  fastCount: number;
  /** The slower mode's median and count (the same as the fast one's when the values have one mode). */
  slow: number;
  slowCount: number;
  /** Where the split falls: values up to it are the fast mode's. */
  split: number;
  /** Whether there are two modes: each holds a tenth of the values at least and their medians are 10% apart or more. */
  two: boolean;
}

/**
 * Splits timings in two (Otsu's method on their logarithms: the split that leaves the least variance
 * within the two groups), and says whether the two are modes of their own (see Modes.two).
 */
export function twoModes(xs: number[]): Modes {
  const a = [...xs].sort((x, y) => x - y);
  const l = a.map(Math.log);
  const n = a.length;
  let best = n;
  let bestCost = Infinity;
  const prefix = [0];
  const prefix2 = [0];
  for (const v of l) {
    prefix.push(prefix[prefix.length - 1] + v);
    prefix2.push(prefix2[prefix2.length - 1] + v * v);
  }
  // Within-group sum of squares of [0, k) and [k, n).
  const ss = (i: number, j: number) => prefix2[j] - prefix2[i] - (prefix[j] - prefix[i]) ** 2 / (j - i);
  for (let k = 1; k < n; k++) {
    const cost = ss(0, k) + ss(k, n);
    if (cost < bestCost) [best, bestCost] = [k, cost];
  }
  const fastSet = a.slice(0, best);
  const slowSet = a.slice(best);
  const fast = median(fastSet);
  const slow = slowSet.length ? median(slowSet) : fast;
  const two = n >= 10 && Math.min(fastSet.length, slowSet.length) >= n / 10 && slow / fast >= 1.1;
  return two
    ? { fast, fastCount: fastSet.length, slow, slowCount: slowSet.length, split: a[best - 1], two }
    : { fast: median(a), fastCount: n, slow: median(a), slowCount: 0, split: a[n - 1], two };
}

/** The median of `xs` (the mean of the middle two when their number is even). */
export function median(xs: number[]): number {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

/**
 * Runs `node script --child …args` in `n` fresh processes one after another (pinned to `cpus` where
 * taskset is there) and returns what each printed as JSON on its last line of output.
 */
export function inFreshProcesses<T>(script: string, args: string[], n: number, cpus: string | null): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = Date.now();
    const argv = [process.execPath, script, '--child', ...args];
    const r = spawnSync(cpus ? 'taskset' : argv[0], cpus ? ['-c', cpus, ...argv] : argv.slice(1), {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (r.status !== 0) throw new Error(`process ${i + 1} failed (${r.status}): ${(r.stderr ?? '').slice(-1000)}`);
    out.push(JSON.parse(r.stdout.trim().split('\n').pop()!) as T);
    process.stderr.write(`process ${i + 1}/${n}: ${Date.now() - t0} ms\n`);
  }
  return out;
}

/** The CPUs to pin to (`--cpus`, 8 by default), or null where taskset is missing. */
export function pinTo(cpus: string): string | null {
  return spawnSync('taskset', ['--version']).status === 0 ? cpus : null;
}

/** The GPU's name and driver, as nvidia-smi gives them. */
export function gpuName(): string | undefined {
  return spawnSync('nvidia-smi', ['--query-gpu=name,driver_version', '--format=csv,noheader', '-i', '0'], {
    encoding: 'utf8',
  }).stdout?.trim();
}

/** Reads `--name value` options from `args`: the value after the name, or `dflt`. */
export function options(args: string[]): (name: string, dflt: string) => string {
  return (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : dflt;
  };
}

/** Compiles bench/kernels.cu for this machine's GPU into `dir` and returns the cubin's path. */
export function buildKernels(dir: string): string {
  const cubin = path.join(dir, 'kernels.cubin');
  execFileSync('nvcc', ['-O2', '-arch=native', '-cubin', '-o', cubin, 'bench/kernels.cu'], { stdio: 'inherit' });
  return cubin;
}

/** Where a run's samples go unless `--out` says: bench/results/<prefix>-<date and time>.json. */
export function resultsFile(prefix: string): string {
  return path.join('bench', 'results', `${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
}
