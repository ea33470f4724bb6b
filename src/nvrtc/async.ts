// The NVRTC compile off the JS thread: nvrtcCompileProgram runs on libuv's thread pool (it holds a
// pool thread for the compile's duration; a compile has nothing to poll). Bad arguments reject.
import { libnvrtc as L } from '../ffi/nvrtc-lib';
import * as X from '../structs/support';
import type { WaitOptions } from '../ffi/waits';
import type { nvrtcResult } from './enums.gen';
import type { nvrtcProgram } from './handles.gen';

export type { WaitOptions } from '../ffi/waits';

/**
 * nvrtcCompileProgram on the thread pool; resolves with `[status]`. `waitOptions.signal`/`timeout`
 * reject early with an AbortError/TimeoutError, but the compile runs to its end: destroy `prog`
 * only once the promise settled without giving up, or later.
 */
export async function nvrtcCompileProgram(
  prog: nvrtcProgram | null,
  numOptions: number,
  options: string[] | null,
  waitOptions?: WaitOptions,
): Promise<[nvrtcResult]> {
  return [(await compileProgram('async.nvrtcCompileProgram', prog, numOptions, options, waitOptions, () => {})) as nvrtcResult];
}

/** @internal nvrtcCompileProgram on the pool under the name `fn`; `after` runs once the compile itself returned (given up or not). */
export function compileProgram(
  fn: string,
  prog: nvrtcProgram | null,
  numOptions: number,
  options: string[] | null,
  waitOptions: WaitOptions | undefined,
  after: () => void,
): Promise<number> {
  return X.compileOnPool(fn, () => L.bind('nvrtcCompileProgram'), prog, numOptions, options, waitOptions, after);
}
