// What the soak tests share: the GPU probe, the time budget, memory figures, garbage collection, the
// count of resources the core layer's finalizer freed, and the report (console and SOAK_REPORT).
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { core, cudart } from '../../src';

export const MiB = 1 << 20;
/** Device memory allowed not to come back: the driver keeps some of what it had, in 2 MiB granules. */
export const FREE_TOLERANCE = 64 * MiB;

/** Whether device 0 can be used, and the suite title (saying why not when it cannot). */
export function probeGpu(what: string): { gpu: boolean; title: string } {
  try {
    const [err, count] = cudart.cudaGetDeviceCount();
    if (err !== cudart.cudaError_t.cudaSuccess)
      return { gpu: false, title: `${what}: skipped, no CUDA device (${cudart.cudaError_t[err]})` };
    if (!count) return { gpu: false, title: `${what}: skipped, cudaGetDeviceCount found 0 devices` };
    return { gpu: true, title: what };
  } catch (e) {
    return { gpu: false, title: `${what}: skipped, no CUDA runtime (${(e as Error).message.split('\n')[0]})` };
  }
}

/** Free device memory of the current device in bytes (cudaMemGetInfo). */
export function deviceFree(): number {
  const [err, free] = cudart.cudaMemGetInfo();
  if (err !== cudart.cudaError_t.cudaSuccess) throw new Error(`cudaMemGetInfo returned ${cudart.cudaError_t[err]} (${err})`);
  return free;
}

export function rss(): number {
  return process.memoryUsage.rss();
}

const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;

/** A full garbage collection: global.gc under --expose-gc (tools/run-soak.cjs), else one exposed now. */
export function gc(): void {
  let f = (globalThis as { gc?: () => void }).gc;
  if (!f) {
    v8.setFlagsFromString('--expose-gc');
    f = vm.runInNewContext('gc') as () => void;
  }
  f();
}

const turn = (ms = 10) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Collects garbage over a second of event-loop turns: finalizers run, and V8 gives the pages it
 * freed back to the system (it does that in the background, so RSS right after a gc() is still high).
 */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    gc();
    await turn(50);
  }
}

/**
 * Collects garbage and lets the event loop turn (finalizers run as tasks of their own) until `done`
 * holds or `ms` pass; then a few more turns. Returns whether `done` held.
 */
export async function collectUntil(done: () => boolean, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) {
    gc();
    await turn();
  }
  for (let i = 0; i < 3; i++) await turn();
  return done();
}

/**
 * Counts the core layer's "a X was not closed; the garbage collector freed it" lines (its finalizer
 * writes one right before it frees the resource, with core.warnOnLeaks(true)) and keeps them off
 * the terminal. stop() restores stderr and warnOnLeaks(false).
 */
export function countFinalized(): { counts: Record<string, number>; stop(): void } {
  const counts: Record<string, number> = {};
  const stderr = process.stderr;
  const write = stderr.write;
  stderr.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString() : '';
    let kept = '';
    for (const line of text.split(/(?<=\n)/)) {
      const m = /^cuda-bindings: a (\w+) was not closed; the garbage collector freed it\n?$/.exec(line);
      if (m) counts[m[1]] = (counts[m[1]] ?? 0) + 1;
      else kept += line;
    }
    return kept ? (write as (...a: unknown[]) => boolean).call(this, kept, ...rest) : true;
  } as typeof stderr.write;
  core.warnOnLeaks(true);
  return {
    counts,
    stop() {
      core.warnOnLeaks(false);
      stderr.write = write;
    },
  };
}

/**
 * A loop's share of time: `check(i)` (cheap) says whether the loop must stop; `fail(i)` throws,
 * saying how many of the cycles ran. A loop that runs out never passes with fewer cycles.
 */
export class Budget {
  private readonly start = performance.now();

  constructor(
    readonly what: string,
    readonly cycles: number,
    readonly seconds: number,
  ) {}

  get elapsed(): number {
    return (performance.now() - this.start) / 1000;
  }

  over(): boolean {
    return this.elapsed > this.seconds;
  }

  fail(done: number): never {
    throw new Error(
      `${this.what}: ran ${done} of ${this.cycles} cycles, then its budget of ${this.seconds} s ran out (${this.elapsed.toFixed(1)} s)`,
    );
  }
}

/**
 * Free device memory, RSS and the JS heap in use before a loop, RSS at its peak (sample() it now and
 * then), and the same after it (settle() first).
 */
export class Watch {
  readonly freeBefore = deviceFree();
  readonly rssBefore = rss();
  readonly heapBefore = process.memoryUsage().heapUsed;
  rssPeak = this.rssBefore;
  freeAfter = NaN;
  rssAfter = NaN;
  heapAfter = NaN;

  sample(): void {
    const r = rss();
    if (r > this.rssPeak) this.rssPeak = r;
  }

  /** Takes the "after" figures (collect garbage first where that matters). */
  finish(): this {
    this.sample();
    this.freeAfter = deviceFree();
    this.rssAfter = rss();
    this.heapAfter = process.memoryUsage().heapUsed;
    this.sample();
    return this;
  }

  /** Bytes of device memory not back (negative: more free than before). */
  get freeLost(): number {
    return this.freeBefore - this.freeAfter;
  }

  get rssGrowthPeak(): number {
    return this.rssPeak - this.rssBefore;
  }

  get rssGrowth(): number {
    return this.rssAfter - this.rssBefore;
  }

  get heapGrowth(): number {
    return this.heapAfter - this.heapBefore;
  }

  figures(): Record<string, number> {
    return {
      freeBeforeBytes: this.freeBefore,
      freeAfterBytes: this.freeAfter,
      freeLostBytes: this.freeLost,
      freeBeforeMiB: mib(this.freeBefore),
      freeAfterMiB: mib(this.freeAfter),
      rssBeforeMiB: mib(this.rssBefore),
      rssPeakMiB: mib(this.rssPeak),
      rssAfterMiB: mib(this.rssAfter),
      heapUsedBeforeMiB: mib(this.heapBefore),
      heapUsedAfterMiB: mib(this.heapAfter),
    };
  }
}

/**
 * Prints a test's figures and appends them as one JSON line to the file SOAK_REPORT names, if set.
 * Call it before the assertions, so a failing run reports too.
 */
export function report(test: string, figures: Record<string, unknown>): void {
  const line = { test, at: new Date().toISOString(), ...figures };
  console.log(`soak ${test}: ${JSON.stringify(figures)}`);
  const file = process.env.SOAK_REPORT;
  if (file) fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/**
 * Host memory came back after the loop (settle() first): RSS within 200 MiB of where it was, the JS
 * heap within 32 MiB. In between, RSS may peak well above that without a leak: an object registered
 * with a FinalizationRegistry (every core resource) survives young-generation collections, so closed
 * objects pile up until a full collection; the peak must stay under 1 GiB.
 */
export function expectHostMemoryBack(watch: Watch): void {
  expect(mib(watch.rssGrowth)).toBeLessThan(200);
  expect(mib(watch.heapGrowth)).toBeLessThan(32);
  expect(mib(watch.rssGrowthPeak)).toBeLessThan(1024);
}

/** Device memory came back: free memory within FREE_TOLERANCE of where it was. */
export function expectDeviceMemoryBack(watch: Watch): void {
  expect(watch.freeLost).toBeLessThanOrEqual(FREE_TOLERANCE);
}
