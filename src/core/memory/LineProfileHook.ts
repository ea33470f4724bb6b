// CuPy's LineProfileHook, for JavaScript: bytes requested, summed by the call site that asked.
import { describe } from '../../ffi/checks';
import * as path from 'node:path';
import { MemoryHook, type MemoryEvent, type MemoryHookOptions } from './MemoryHook';
import { checkOptions } from '../base/options';

/** One call site's total. */
export interface LineProfileRow {
  /** `file:line:column` of the first frame outside cuda-bindings (or '<unknown>'). */
  site: string;
  /** Requests made from it. */
  count: number;
  /** Bytes requested (`size`). */
  bytes: number;
  /** Bytes the allocators really set aside (`memSize`). */
  memBytes: number;
}

// Frames inside this package (src/core, dist/core, …) are not call sites: the user's code is.
const packageRoot = path.resolve(__dirname, '..');

/**
 * Sums the memory requested through core's allocators by the JavaScript line that asked, while
 * installed; `rows()` gives the table, `print()` writes it.
 */
export class LineProfileHook extends MemoryHook {
  private readonly sites = new Map<string, LineProfileRow>();

  /** Makes the profiler and installs it (unless `install: false`); the table starts empty. */
  constructor(options: MemoryHookOptions = {}) {
    checkOptions('new LineProfileHook', options, { install: true });
    super(options);
  }

  /** Adds the request to the row of the JavaScript line that made it (the first stack frame outside cuda-bindings). */
  override mallocPre(e: MemoryEvent): void {
    const site = callSite();
    const row = this.sites.get(site);
    if (row) {
      row.count++;
      row.bytes += e.size;
      row.memBytes += e.memSize;
    } else this.sites.set(site, { site, count: 1, bytes: e.size, memBytes: e.memSize });
  }

  /** The call sites, most bytes first. */
  rows(): LineProfileRow[] {
    return [...this.sites.values()].map((r) => ({ ...r })).sort((a, b) => b.memBytes - a.memBytes || a.site.localeCompare(b.site));
  }

  /** Forgets what was summed so far. */
  reset(): void {
    this.sites.clear();
  }

  /** The table as text: one line per call site, then the total. */
  format(): string {
    const rows = this.rows();
    const total = rows.reduce((t, r) => ({ count: t.count + r.count, bytes: t.bytes + r.bytes, memBytes: t.memBytes + r.memBytes }), {
      count: 0,
      bytes: 0,
      memBytes: 0,
    });
    const lines = [
      ['call site', 'count', 'bytes', 'held'],
      ...rows.map((r) => [r.site, String(r.count), String(r.bytes), String(r.memBytes)]),
      ['total', String(total.count), String(total.bytes), String(total.memBytes)],
    ];
    const w = [0, 1, 2, 3].map((i) => Math.max(...lines.map((l) => l[i].length)));
    return lines.map((l) => [l[0].padEnd(w[0]), ...l.slice(1).map((c, i) => c.padStart(w[i + 1]))].join('  ')).join('\n') + '\n';
  }

  /** Writes format() (default: to process.stdout). */
  print(write: (text: string) => void = (t) => void process.stdout.write(t)): void {
    if (typeof write !== 'function')
      throw new TypeError(`LineProfileHook.print: parameter 'write' must be a function, got ${describe(write)}`);
    write(this.format());
  }
}

/** The first stack frame outside this package and Node's internals. */
function callSite(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  for (const line of stack.split('\n').slice(1)) {
    const m = /\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[1].replace(/^file:\/\//, '');
    if (file.startsWith('node:') || file.startsWith(packageRoot + path.sep)) continue;
    return `${file}:${m[2]}:${m[3]}`;
  }
  return '<unknown>';
}
