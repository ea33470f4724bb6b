// CuPy's DebugPrintHook: one JSON line per hook call.
import { MemoryHook, type MemoryEvent, type MemoryHookOptions, type MemoryHookPhase } from './MemoryHook';
import { checkOptions } from './options';

export interface DebugPrintHookOptions extends MemoryHookOptions {
  /** Where the lines go (default: process.stdout). */
  write?: (line: string) => void;
  /** Print the `*Pre` calls too (default false: only `*Post`, whose events carry the address). */
  pre?: boolean;
}

/**
 * Prints every allocation and free while installed, one JSON line each:
 * `{"hook":"allocPost","allocator":"cudaMalloc","device":0,"size":100,"memSize":100,"ptr":"0x7f…"}`.
 */
export class DebugPrintHook extends MemoryHook {
  private readonly write: (line: string) => void;
  private readonly pre: boolean;

  constructor(options: DebugPrintHookOptions = {}) {
    checkOptions('new DebugPrintHook', options, { install: true, write: true, pre: true });
    if (options.write !== undefined && typeof options.write !== 'function') throw new TypeError(`DebugPrintHook: option 'write' must be a function, got ${String(options.write)}`);
    super({ install: false });
    this.write = options.write ?? ((line) => void process.stdout.write(line));
    this.pre = options.pre ?? false;
    if (options.install ?? true) this.install();
  }

  private print(hook: MemoryHookPhase, e: MemoryEvent): void {
    this.write(`${JSON.stringify({ hook, allocator: e.allocator, device: e.device, size: e.size, memSize: e.memSize, ptr: e.ptr === null ? null : `0x${e.ptr.toString(16)}` })}\n`);
  }

  override allocPre(e: MemoryEvent): void {
    if (this.pre) this.print('allocPre', e);
  }
  override allocPost(e: MemoryEvent): void {
    this.print('allocPost', e);
  }
  override mallocPre(e: MemoryEvent): void {
    if (this.pre) this.print('mallocPre', e);
  }
  override mallocPost(e: MemoryEvent): void {
    this.print('mallocPost', e);
  }
  override freePre(e: MemoryEvent): void {
    if (this.pre) this.print('freePre', e);
  }
  override freePost(e: MemoryEvent): void {
    this.print('freePost', e);
  }
}
