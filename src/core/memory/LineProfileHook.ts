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

/** One frame of the call tree (`_root` at the top): the bytes asked for under it and those taken from CUDA. */
export interface LineProfileNode {
  /** `file:line:function` (the root: '_root'). */
  site: string;
  /** Bytes the allocators handed out under this frame (`memSize` of each request, CuPy's used bytes). */
  usedBytes: number;
  /** Bytes taken from CUDA under it (`memSize` of each fresh allocation, CuPy's acquired bytes). */
  acquiredBytes: number;
  /** The frames it called that allocated, in the order first seen. */
  children: LineProfileNode[];
}

/** How a {@link LineProfileHook} is made. */
export interface LineProfileHookOptions extends MemoryHookOptions {
  /** How many levels of callers the call tree keeps below its root, outermost first (0, the default: all). */
  maxDepth?: number;
}

// Frames inside this package (src/core, dist/core, …) are not call sites: the user's code is.
const packageRoot = path.resolve(__dirname, '..');

/**
 * Sums the memory requested through core's allocators by the JavaScript line that asked, while
 * installed; `rows()` gives the table, `print()` writes it.
 */
export class LineProfileHook extends MemoryHook {
  private readonly sites = new Map<string, LineProfileRow>();
  private root: LineProfileNode = { site: '_root', usedBytes: 0, acquiredBytes: 0, children: [] };
  /** The levels of callers the tree keeps (0: all). */
  readonly maxDepth: number;

  /** Makes the profiler and installs it (unless `install: false`); the table and tree start empty. */
  constructor(options: LineProfileHookOptions = {}) {
    checkOptions('new LineProfileHook', options, { install: true, maxDepth: true });
    const depth = options.maxDepth ?? 0;
    if (!Number.isSafeInteger(depth) || depth < 0)
      throw new RangeError(
        `new LineProfileHook: option 'maxDepth' must be a non-negative integer (0: no limit), got ${describe(options.maxDepth)}`,
      );
    super({ install: options.install });
    this.maxDepth = depth;
  }

  /** Adds the request to the row of the JavaScript line that made it (the first stack frame outside cuda-bindings), and to the call tree. */
  override mallocPre(e: MemoryEvent): void {
    const frames = userFrames();
    const site = frames.length ? frames[0].site : '<unknown>';
    const row = this.sites.get(site);
    if (row) {
      row.count++;
      row.bytes += e.size;
      row.memBytes += e.memSize;
    } else this.sites.set(site, { site, count: 1, bytes: e.size, memBytes: e.memSize });
    this.grow(frames, e.memSize, 0);
  }

  /** Adds memory taken from CUDA to the call tree's acquired bytes. */
  override allocPre(e: MemoryEvent): void {
    this.grow(userFrames(), 0, e.memSize);
  }

  /** The call tree (a copy): `_root`, then each caller outermost first, down to `maxDepth` levels. */
  tree(): LineProfileNode {
    const copy = (n: LineProfileNode): LineProfileNode => ({ ...n, children: n.children.map(copy) });
    return copy(this.root);
  }

  /** The call tree as text, as CuPy's print_report: one line per frame, `site (used, acquired)`, indented two spaces a level. */
  formatTree(): string {
    const lines: string[] = [];
    const visit = (n: LineProfileNode, depth: number) => {
      lines.push(`${' '.repeat(depth * 2)}${n.site} (${humanBytes(n.usedBytes)}, ${humanBytes(n.acquiredBytes)})`);
      for (const c of n.children) visit(c, depth + 1);
    };
    visit(this.root, 0);
    return lines.join('\n') + '\n';
  }

  /** Adds bytes along the path of `frames` (innermost first), from the root down. */
  private grow(frames: readonly { label: string }[], used: number, acquired: number): void {
    let node = this.root;
    node.usedBytes += used;
    node.acquiredBytes += acquired;
    const path = frames.slice().reverse();
    const depth = this.maxDepth > 0 ? Math.min(this.maxDepth, path.length) : path.length;
    for (let i = 0; i < depth; i++) {
      let child = node.children.find((c) => c.site === path[i].label);
      if (!child) node.children.push((child = { site: path[i].label, usedBytes: 0, acquiredBytes: 0, children: [] }));
      child.usedBytes += used;
      child.acquiredBytes += acquired;
      node = child;
    }
  }

  /** The call sites, most bytes first. */
  rows(): LineProfileRow[] {
    return [...this.sites.values()].map((r) => ({ ...r })).sort((a, b) => b.memBytes - a.memBytes || a.site.localeCompare(b.site));
  }

  /** Forgets what was summed so far (the table and the tree). */
  reset(): void {
    this.sites.clear();
    this.root = { site: '_root', usedBytes: 0, acquiredBytes: 0, children: [] };
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

/** The stack frames outside this package and Node's internals, innermost first: `file:line:column` (the table's) and `file:line:function` (the tree's). */
function userFrames(): { site: string; label: string }[] {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const frames: { site: string; label: string }[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const m = /^\s*at (?:(.*?) \()?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[2].replace(/^file:\/\//, '');
    if (file.startsWith('node:') || file.startsWith(packageRoot + path.sep)) continue;
    frames.push({ site: `${file}:${m[3]}:${m[4]}`, label: `${file}:${m[3]}:${m[1] ?? '<anonymous>'}` });
  }
  return frames;
}

/** Bytes as CuPy's report writes them: '512B', '4.00KB', '1.50MB'. */
function humanBytes(n: number): string {
  const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
  if (n < 1024) return `${n}B`;
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(2)}${units[u]}`;
}
