// Helpers the GPU suites share: one probe for a device, describeGpu, and the tuple unwrappers.
import { cudart } from '../../src';

// A global read in a loop (Math.imul) is about 20 times slower in jest's sandbox than a module's
// own constant: 2.6 s rather than 0.14 s for 64 MiB.
const imul = Math.imul;
import type { OkOutputs } from '../../src';

/** A deterministic pattern of 32-bit words. */
export function fillPattern(a: Uint32Array, seed: number): void {
  for (let i = 0; i < a.length; i++) a[i] = (imul(i, 2654435761) ^ seed) >>> 0;
}

/** How many words differ from the pattern (0 when all match). */
export function patternMismatches(a: Uint32Array, seed: number): number {
  let bad = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== (imul(i, 2654435761) ^ seed) >>> 0) bad++;
  return bad;
}

/** The outputs of result `R` when it succeeded, none of them null. */
export type NonNull<R> = { [K in keyof OkOutputs<R>]: NonNullable<OkOutputs<R>[K]> };

/**
 * An `ok` for one API: checks that a call returned `success` and gives back its outputs, known
 * non-null; a failure names the call and the status by name.
 */
export function okFor<S extends number>(success: NoInfer<S>, names: Record<number, string>) {
  return <R extends readonly [S, ...unknown[]]>(r: R, what: string): NonNull<R> => {
    const [err, ...rest] = r;
    if (err !== success) throw new Error(`${what} returned ${names[err] ?? 'an unknown error'} (${err})`);
    for (const [i, v] of rest.entries()) if (v === null) throw new Error(`${what} returned ${names[success]} but output ${i} is null`);
    return rest as NonNull<R>;
  };
}

/** What this machine has: its CUDA device count, and when it has none, why (probed once per test file). */
export interface GpuProbe {
  count: number;
  why: string | null;
}

function probeGpu(): GpuProbe {
  let r: ReturnType<typeof cudart.cudaGetDeviceCount>;
  try {
    r = cudart.cudaGetDeviceCount();
  } catch (e) {
    return { count: 0, why: `no CUDA runtime: ${(e as Error).message.split('\n')[0]}` };
  }
  const [err, count] = r;
  if (err !== cudart.cudaError_t.cudaSuccess)
    return { count: 0, why: `no CUDA device: cudaGetDeviceCount returned ${cudart.cudaError_t[err] ?? err}` };
  if (!count) return { count: 0, why: 'no CUDA device: cudaGetDeviceCount returned 0 devices' };
  return { count, why: null };
}

/** The GPU probe: `gpu.count` devices, or `gpu.why` there are none. */
export const gpu: GpuProbe = probeGpu();

/** A suite that needs `devices` CUDA devices: it runs when the machine has them, else it is skipped with a title that says why. */
export function describeGpu(title: string, fn: () => void, devices = 1): void {
  const why = gpu.why ?? (gpu.count < devices ? `needs ${devices} GPUs, this machine has ${gpu.count}` : null);
  if (why === null) describe(title, fn);
  else describe.skip(`${title}: skipped, ${why}`, fn);
}

/** `ok` for the runtime: the outputs of a call that returned cudaSuccess, or an error naming the call and its status. */
export const rtOk = okFor<cudart.cudaError_t>(cudart.cudaError_t.cudaSuccess, cudart.cudaError_t);
