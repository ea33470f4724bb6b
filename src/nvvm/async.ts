// The NVVM compile off the JS thread: nvvmCompileProgram runs on libuv's thread pool (it holds a
// pool thread for the compile's duration; a compile has nothing to poll). Bad arguments reject.
import { libnvvm as L } from '../ffi/nvvm-lib';
import * as X from '../structs/support';
import type { WaitOptions } from '../ffi/waits';
import type { nvvmResult } from './enums.gen';
import type { nvvmProgram } from './handles.gen';

export type { WaitOptions } from '../ffi/waits';

/**
 * nvvmCompileProgram on the thread pool; resolves with `[status]`. `waitOptions.signal`/`timeout`
 * reject early with an AbortError/TimeoutError, but the compile runs to its end: destroy `prog`
 * only once the promise settled without giving up, or later.
 */
export async function nvvmCompileProgram(
  prog: nvvmProgram | null,
  numOptions: number,
  options: string[] | null,
  waitOptions?: WaitOptions,
): Promise<[nvvmResult]> {
  return [(await compileProgram('async.nvvmCompileProgram', prog, numOptions, options, waitOptions, () => {})) as nvvmResult];
}

/** @internal nvvmCompileProgram on the pool under the name `fn`; `after` runs once the compile itself returned (given up or not). */
export function compileProgram(
  fn: string,
  prog: nvvmProgram | null,
  numOptions: number,
  options: string[] | null,
  waitOptions: WaitOptions | undefined,
  after: () => void,
): Promise<number> {
  return X.compileOnPool(fn, () => L.bind('nvvmCompileProgram'), prog, numOptions, options, waitOptions, after);
}
