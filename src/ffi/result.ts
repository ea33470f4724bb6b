// The shape of every facade result, so that checking the status narrows the outputs.

/**
 * Each output of `T`, or `null`: what a failed call's outputs are typed as. They are `null` when the
 * call fails; typed as the outputs or null (not as null alone) so that cuda-python's check helper,
 * written as `function check<T extends unknown[]>(r: readonly [cudaError_t, ...T]): T`, accepts
 * every result: TypeScript infers its `T` from both branches of the union, and these are the wider.
 */
export type Nulls<T extends unknown[]> = { [K in keyof T]: T[K] | null };

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
