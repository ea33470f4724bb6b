// CuPy's DebugPrintHook: one JSON line per hook call.
import { describe } from '../../ffi/checks';
import { MemoryHook, type MemoryEvent, type MemoryHookOptions, type MemoryHookPhase } from './MemoryHook';
import { checkOptions } from '../base/options';

/** Where and what a {@link DebugPrintHook} prints. */
export interface DebugPrintHookOptions extends MemoryHookOptions {
  /** Where the lines go (default: process.stdout). */
  write?: (line: string) => void;
  /** Print the `*Pre` calls too (default false: only `*Post`, whose events carry the address). */
  pre?: boolean;
}

/**
 * Prints every allocation and free while installed, one JSON line each:
 * `{"hook":"allocPost","allocator":"cudaMalloc","device":0,"size":100,"memSize":100,"ptr":"0x7f…"}`
 * (sizes in bytes, the address in hex). Installed from construction until close().
 *
 * @example
 * ```ts
 * {
 *   using hook = new DebugPrintHook({ write: (line) => lines.push(line) });
 *   Device.get(0).allocate(100).close();   // a mallocPost/allocPost line, then freePost lines
 * }
 * ```
 */
export class DebugPrintHook extends MemoryHook {
  private readonly write: (line: string) => void;
  private readonly pre: boolean;

  /** Makes the hook and installs it (unless `install: false`); throws TypeError when `options` or `write` has the wrong type. */
  constructor(options: DebugPrintHookOptions = {}) {
    checkOptions('new DebugPrintHook', options, { install: true, write: true, pre: true });
    if (options.write !== undefined && typeof options.write !== 'function')
      throw new TypeError(`DebugPrintHook: option 'write' must be a function, got ${describe(options.write)}`);
    super({ install: false });
    this.write = options.write ?? ((line) => void process.stdout.write(line));
    this.pre = options.pre ?? false;
    if (options.install ?? true) this.install();
  }

  private print(hook: MemoryHookPhase, e: MemoryEvent): void {
    this.write(
      `${JSON.stringify({ hook, allocator: e.allocator, device: e.device, size: e.size, memSize: e.memSize, ptr: e.ptr === null ? null : `0x${e.ptr.toString(16)}` })}\n`,
    );
  }

  /** Prints a `allocPre` line (only with `pre: true`). */
  override allocPre(e: MemoryEvent): void {
    if (this.pre) this.print('allocPre', e);
  }
  /** Prints a `allocPost` line. */
  override allocPost(e: MemoryEvent): void {
    this.print('allocPost', e);
  }
  /** Prints a `mallocPre` line (only with `pre: true`). */
  override mallocPre(e: MemoryEvent): void {
    if (this.pre) this.print('mallocPre', e);
  }
  /** Prints a `mallocPost` line. */
  override mallocPost(e: MemoryEvent): void {
    this.print('mallocPost', e);
  }
  /** Prints a `freePre` line (only with `pre: true`). */
  override freePre(e: MemoryEvent): void {
    if (this.pre) this.print('freePre', e);
  }
  /** Prints a `freePost` line. */
  override freePost(e: MemoryEvent): void {
    this.print('freePost', e);
  }
}
