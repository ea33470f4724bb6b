// The service benchmark's arithmetic and its table (bench/service.ts): percentiles, the arguments,
// the targets of issue #34 and the markdown it prints. No I/O here, so the CPU tests check it.

/** Latency or delay figures, in milliseconds. */
export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

/** One row of the table: a C run or a run of the service at one concurrency. */
export interface Row {
  name: string;
  concurrency: number;
  requests: number;
  seconds: number;
  latencyMs: Spread;
  /** The service's event-loop delay (absent for C). */
  loopDelayMs?: Spread;
  wrong: number;
  /** Requests for an impossible size answered 400, and how many were sent. */
  bad400: number;
  badSent: number;
  /** Answers that were neither the expected 200 nor the expected 400, and failed requests. */
  unexpected: number;
}

/** Device memory and RSS of the service, after a trim, before and after the runs. */
export interface Memory {
  deviceBefore: number;
  deviceAfter: number;
  rssBefore: number;
  rssAfter: number;
}

/** The benchmark's settings. */
export interface Settings {
  seconds: number;
  concurrency: number[];
  cThreads: number;
  short: boolean;
  /** Also run the service with its results handed over (--handover-results), shown, not judged. */
  handover: boolean;
}

/** The value at fraction `p` (0 to 1) of `sorted` (ascending), nearest rank; NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** p50, p99 and max of `values` (in any order; not changed). */
export function spread(values: ArrayLike<number>): Spread {
  const sorted = Float64Array.from(values).sort();
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.length ? sorted[sorted.length - 1] : NaN };
}

/** Requests per second of a row. */
export const rate = (r: Row): number => r.requests / r.seconds;

/** Reads `--seconds S`, `--concurrency 16,64,256`, `--c-threads 8`, `--short` (2 s, concurrency 16 and 64) and `--handover`; throws on anything else. */
export function parseArgs(argv: readonly string[]): Settings {
  const s: Settings = { seconds: 15, concurrency: [16, 64, 256], cThreads: 8, short: false, handover: false };
  let seconds: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--short') s.short = true;
    else if (a === '--handover') s.handover = true;
    else if (a === '--seconds') seconds = positive(Number(value()), a);
    else if (a === '--concurrency')
      s.concurrency = value()
        .split(',')
        .map((c) => positiveInt(Number(c), a));
    else if (a === '--c-threads') s.cThreads = positiveInt(Number(value()), a);
    else
      throw new Error(`unknown argument ${a} (the arguments are --seconds S, --concurrency 16,64,256, --c-threads 8, --short, --handover)`);
  }
  if (s.short) {
    s.seconds = 2;
    if (!argv.includes('--concurrency')) s.concurrency = [16, 64];
  }
  if (seconds !== undefined) s.seconds = seconds;
  return s;
}

function positive(v: number, name: string): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(`${name} must be a positive number, got ${v}`);
  return v;
}

function positiveInt(v: number, name: string): number {
  if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`${name} must be positive integers, got ${v}`);
  return v;
}

/** One target of issue #34: what it asks, what was measured, and whether it holds. */
export interface Verdict {
  target: string;
  measured: string;
  pass: boolean;
}

const MiB = 1 << 20;

/**
 * The targets, judged on the service's rows (`js`, by concurrency), the sequential C row and the
 * memory figures: at concurrency 64 ≥ 1.5× C's req/s, loop delay p99 ≤ 5 ms and latency p99 ≤ 10×
 * p50; in every run 0 wrong and every impossible request a 400; memory back after the trim; at 256
 * no request over 1 s. A target whose run is missing fails, saying so.
 */
export function judge(js: readonly Row[], cSequential: Row | undefined, memory: Memory): Verdict[] {
  const at = (c: number) => js.find((r) => r.concurrency === c);
  const v: Verdict[] = [];
  const c64 = at(64);
  const missing = (what: string, target: string) => v.push({ target, measured: `${what} was not run`, pass: false });
  if (c64 && cSequential) {
    const ratio = rate(c64) / rate(cSequential);
    v.push({
      target: 'c=64: ≥ 1.5× sequential C req/s',
      measured: `${ratio.toFixed(2)}× (${fmt(rate(c64))} / ${fmt(rate(cSequential))})`,
      pass: ratio >= 1.5,
    });
  } else missing(c64 ? 'sequential C' : 'concurrency 64', 'c=64: ≥ 1.5× sequential C req/s');
  if (c64) {
    const loop = c64.loopDelayMs?.p99 ?? NaN;
    v.push({ target: 'c=64: event-loop delay p99 ≤ 5 ms', measured: `${loop.toFixed(2)} ms`, pass: loop <= 5 });
    const { p50, p99 } = c64.latencyMs;
    v.push({
      target: 'c=64: latency p99 ≤ 10× p50',
      measured: `${(p99 / p50).toFixed(1)}× (${p99.toFixed(1)} / ${p50.toFixed(1)} ms)`,
      pass: p99 <= 10 * p50,
    });
  } else {
    missing('concurrency 64', 'c=64: event-loop delay p99 ≤ 5 ms');
    missing('concurrency 64', 'c=64: latency p99 ≤ 10× p50');
  }
  const all = cSequential ? [...js, cSequential] : [...js];
  const wrong = all.reduce((n, r) => n + r.wrong, 0);
  v.push({ target: '0 wrong results', measured: String(wrong), pass: wrong === 0 && all.length > 0 });
  const bad = js.reduce((n, r) => n + r.bad400, 0);
  const sent = js.reduce((n, r) => n + r.badSent, 0);
  const unexpected = js.reduce((n, r) => n + r.unexpected, 0);
  v.push({
    target: 'every impossible request answered 400, nothing else failed',
    measured: `${bad} of ${sent}; ${unexpected} other answers`,
    pass: bad === sent && sent > 0 && unexpected === 0,
  });
  const device = memory.deviceAfter - memory.deviceBefore;
  v.push({
    target: 'device memory within 2 MiB after trim',
    measured: `${(device / MiB).toFixed(2)} MiB`,
    pass: Math.abs(device) <= 2 * MiB,
  });
  const rss = (memory.rssAfter - memory.rssBefore) / memory.rssBefore;
  v.push({
    target: 'RSS within 10% after trim',
    measured: `${(100 * rss).toFixed(1)}% (${(memory.rssBefore / MiB).toFixed(0)} → ${(memory.rssAfter / MiB).toFixed(0)} MiB)`,
    pass: Math.abs(rss) <= 0.1,
  });
  const c256 = at(256);
  if (c256)
    v.push({
      target: 'c=256: no request waits > 1 s',
      measured: `max ${c256.latencyMs.max.toFixed(0)} ms`,
      pass: c256.latencyMs.max <= 1000,
    });
  else missing('concurrency 256', 'c=256: no request waits > 1 s');
  return v;
}

function fmt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n);
}

const ms = (x: number | undefined) => (x === undefined ? '–' : x < 10 ? x.toFixed(2) : x.toFixed(1));

/** The runs as a markdown table. */
export function renderRuns(rows: readonly Row[]): string {
  const lines = [
    '| run | concurrency | req/s | latency p50 / p99 / max (ms) | event-loop delay p50 / p99 / max (ms) | wrong | 400s (sent) | other |',
    '|---|---:|---:|---|---|---:|---:|---:|',
    ...rows.map((r) => {
      const l = r.loopDelayMs;
      return `| ${r.name} | ${r.concurrency} | ${fmt(rate(r))} | ${ms(r.latencyMs.p50)} / ${ms(r.latencyMs.p99)} / ${ms(r.latencyMs.max)} | ${l ? `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}` : '–'} | ${r.wrong} | ${r.bad400} (${r.badSent}) | ${r.unexpected} |`;
    }),
  ];
  return lines.join('\n');
}

/** The runs and the targets as two markdown tables. */
export function renderTables(rows: readonly Row[], verdicts: readonly Verdict[]): string {
  const lines = [
    renderRuns(rows),
    '',
    '| target | measured | pass |',
    '|---|---|---|',
    ...verdicts.map((v) => `| ${v.target} | ${v.measured} | ${v.pass ? 'pass' : '**fail**'} |`),
  ];
  return lines.join('\n');
}

/** Collections of one kind in a `--trace-gc` log: how many, their pauses (ms), and why V8 started them. */
export interface GcKind {
  count: number;
  totalMs: number;
  maxMs: number;
  /** Pauses over 3 ms. */
  over3ms: number;
  reasons: Record<string, number>;
}

/** What a `--trace-gc` log says: the collections by kind, and the bytes allocated between them. */
export interface GcSummary {
  kinds: Record<string, GcKind>;
  /** Bytes allocated on V8's heap over the log: each collection's heap before it less the heap after the one before. */
  allocatedBytes: number;
}

// [pid:isolate]  1234 ms: Scavenge 10.2 (12.5) -> 9.8 (13.5) MB, 1.23 / 0.00 ms  (average mu = …) allocation failure;
const GC_LINE =
  /\d+ ms: ([A-Za-z -]+?(?: \(reduce\))?) ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms.*\) ([^;()]+?)(?:;.*)?$/;

/** Reads the collections out of the lines of a `--trace-gc` log (other lines are skipped). */
export function gcSummary(log: string): GcSummary {
  const kinds: Record<string, GcKind> = {};
  let allocated = 0;
  let after: number | undefined;
  for (const line of log.split('\n')) {
    const m = GC_LINE.exec(line.trim());
    if (!m) continue;
    const [, kind, beforeMb, afterMb, pauseMs, reason] = m;
    const k = (kinds[kind] ??= { count: 0, totalMs: 0, maxMs: 0, over3ms: 0, reasons: {} });
    const pause = Number(pauseMs);
    k.count++;
    k.totalMs += pause;
    k.maxMs = Math.max(k.maxMs, pause);
    if (pause > 3) k.over3ms++;
    k.reasons[reason.trim()] = (k.reasons[reason.trim()] ?? 0) + 1;
    if (after !== undefined) allocated += Math.max(0, Number(beforeMb) - after) * 2 ** 20; // V8 prints MiB as MB
    after = Number(afterMb);
  }
  return { kinds, allocatedBytes: allocated };
}
