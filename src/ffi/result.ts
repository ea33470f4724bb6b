// The shape of every facade result, so that checking the status narrows the outputs.

/** `null` in place of each output of `T`: what a failed call returns. */
export type Nulls<T extends unknown[]> = { [K in keyof T]: null };

/**
 * A facade call's result: a success status (`Ok`) with every output, or another status (`Fail`)
 * with `null` outputs. `if (err === cudaError_t.cudaSuccess)` narrows the outputs to non-null.
 */
export type Result<Ok, Fail, T extends unknown[]> = [Ok, ...T] | [Fail, ...Nulls<T>];

/**
 * The outputs of result `R` in its branches whose status may be success (0 in every API): what a
 * helper that throws on any other status returns.
 */
export type OkOutputs<R> = R extends readonly [infer S, ...infer T extends unknown[]] ? (0 extends S ? T : never) : never;
