// Helpers the GPU suites share.

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
