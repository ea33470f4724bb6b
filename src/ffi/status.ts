// cuda-python's check idiom (`stream = checkCudaErrors(cudaStreamCreate())`) for every facade: each
// facade's generated checkCudaErrors (src/<id>/check.gen.ts) calls checkResult with its library's
// statuses. A failed result does not say which call made it, so the generated facade functions mark
// the arrays they return on failure (failed); the check names the call when it gets that very array.
import type { OkOutputs } from './result';
import { StatusError, statusText } from './errors';

/** What a check returns for result `R`: nothing for `[status]`, the output for one, the outputs as a tuple for several. */
export type Checked<R> = OkOutputs<R> extends infer T ? (T extends [] ? void : T extends [infer A] ? A : T) : never;

/** How a facade's check reads its library's statuses (one per facade, in its check.gen.ts). */
export interface StatusNames {
  /** The library that gives the statuses, by its label (`'libcudart'`). */
  library: string;
  /** The status enum: its reverse names (`cudaError_t[35]`). */
  names: Readonly<Record<number, string>>;
  /** The status enum's C name, for a status it does not list: `cudaError_t 9999`. */
  enumName: string;
  /** The statuses with which a call returns its outputs (success, and NCCL's ncclInProgress). */
  ok: readonly number[];
  /** The library's text for a status (cudaGetErrorString), where it has such a call. */
  text?: (code: number) => string | null | undefined;
  /** What a call is named when the check cannot tell which call it was: `'a CUDA runtime API call'`. */
  anyCall: string;
}

let lastFailed: readonly unknown[] | undefined;
let lastFailedFn = '';

/** Marks `result`, a failed call's result, as made by `fn` (for a check to name it), and returns it. */
export function failed<R extends readonly unknown[]>(fn: string, result: R): R {
  lastFailed = result;
  lastFailedFn = fn;
  return result;
}

/** The call that made `result`, where it is the last failed result a facade function returned. */
export function failedCall(result: readonly unknown[]): string | undefined {
  return result === lastFailed ? lastFailedFn : undefined;
}

/**
 * The outputs of `result` (nothing, the one output, or the outputs as an array) when its status is one
 * of `lib.ok`; otherwise throws a StatusError naming the status and the call (`fn`, else the call
 * that returned this result, else `lib.anyCall`).
 */
export function checkResult(result: readonly unknown[], lib: StatusNames, fn?: string): unknown {
  const status = result[0];
  if (status === 0 || lib.ok.includes(status as number)) {
    // The common shapes without a copy: the check wraps calls on hot paths.
    if (result.length === 1) return undefined;
    if (result.length === 2) return result[1];
    return result.slice(1);
  }
  throw statusError(result, lib, fn);
}

/** The StatusError of a failed result: `codeName: the library's text (in fn)`. */
function statusError(result: readonly unknown[], lib: StatusNames, fn: string | undefined): StatusError {
  const code = result[0] as number;
  const codeName = lib.names[code] ?? `${lib.enumName} ${String(code)}`;
  const text = lib.text;
  const explanation = text ? statusText(() => text(code), 'unknown error') : 'failed';
  return new StatusError(code, codeName, fn ?? failedCall(result) ?? lib.anyCall, explanation, lib.library);
}
