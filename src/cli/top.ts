// `cuda-bindings top`: every GPU, refreshed every second, as NVML reads it. On a terminal a block per
// GPU redrawn in place (q or Ctrl-C quits and restores the terminal); on a pipe or with --json one
// JSON object per sample (NDJSON).
import { NvmlDevice, type GpuSample } from '../core/nvml/NvmlDevice';
import type { Options } from './args';
import { printable, type Output } from './common';

/** One line of the NDJSON stream. */
export interface TopRecord {
  /** ISO 8601 time of the sample. */
  time: string;
  gpus: GpuSample[];
}

/** Where a terminal view draws and reads keys; the process's stdio by default. */
export interface Terminal {
  isTTY: boolean;
  write(s: string): void;
  columns: number;
  /** Calls `onKey` for each key; returns a function that restores the terminal. */
  keys(onKey: (key: string) => void): () => void;
}

function processTerminal(): Terminal {
  return {
    isTTY: !!process.stdout.isTTY,
    write: (s) => void process.stdout.write(s),
    columns: process.stdout.columns || 100,
    keys(onKey) {
      const stdin = process.stdin;
      const raw = stdin.isTTY && typeof stdin.setRawMode === 'function';
      if (raw) stdin.setRawMode(true);
      stdin.resume();
      stdin.setEncoding('utf8');
      const listener = (k: string) => onKey(k);
      stdin.on('data', listener);
      return () => {
        stdin.off('data', listener);
        if (raw) stdin.setRawMode(false);
        stdin.pause();
      };
    },
  };
}

/** Runs `cuda-bindings top` until --count samples are taken, q or Ctrl-C on a terminal, or SIGINT. */
export async function top(o: Options, out: Output, term: Terminal = processTerminal()): Promise<void> {
  const interval = o.interval ?? 1000;
  const devices = o.device === undefined ? NvmlDevice.all() : [NvmlDevice.get(o.device)];
  const live = term.isTTY && !o.json;
  const color = live && !process.env.NO_COLOR;
  let stop = false;
  let wake: (() => void) | undefined;
  const quit = () => {
    stop = true;
    wake?.();
  };
  let restore = () => {};
  const onSigint = () => quit();
  process.on('SIGINT', onSigint);
  if (live) {
    // The alternate screen, cursor hidden: restored however the loop ends.
    term.write('\x1b[?1049h\x1b[?25l');
    const keys = term.keys((k) => {
      if (k === 'q' || k === 'Q' || k === '\x03') quit();
    });
    restore = () => {
      keys();
      term.write('\x1b[?25h\x1b[?1049l');
    };
  }
  try {
    for (let n = 0; !stop && (o.count === undefined || n < o.count); n++) {
      if (n > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, interval);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        if (stop) break;
      }
      const record: TopRecord = { time: new Date().toISOString(), gpus: devices.map((d) => d.sample()) };
      if (live) term.write(`\x1b[H\x1b[2J${render(record, { color, width: term.columns, interval })}`);
      else out.log(JSON.stringify(record));
    }
  } finally {
    process.off('SIGINT', onSigint);
    restore();
  }
}

/** The terminal view of one sample; names from NVML are printed with their control characters escaped. */
export function render(r: TopRecord, opts: { color: boolean; width: number; interval: number }): string {
  const c = (code: string, s: string) => (opts.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const barWidth = Math.max(10, Math.min(40, opts.width - 40));
  const bar = (pct: number | null) => {
    if (pct === null) return `[${' '.repeat(barWidth)}]   n/a`;
    const filled = Math.round((Math.min(100, Math.max(0, pct)) / 100) * barWidth);
    const colour = pct >= 90 ? '31' : pct >= 60 ? '33' : '32';
    return `[${c(colour, '|'.repeat(filled))}${' '.repeat(barWidth - filled)}] ${pct.toFixed(0).padStart(3)}%`;
  };
  const val = (v: number | null, unit: string, digits = 0) => (v === null ? 'n/a' : `${v.toFixed(digits)} ${unit}`);
  const GiB = 1024 ** 3;
  const lines = [c('1', `cuda-bindings top — ${r.time.slice(11, 19)} — every ${opts.interval} ms — q quits`), ''];
  for (const g of r.gpus) {
    lines.push(c('1', `GPU ${g.index}: ${printable(g.name)}`) + `  ${printable(g.uuid)}`);
    lines.push(`  util ${bar(g.utilization?.gpu ?? null)}`);
    const memPct = g.memory ? (100 * g.memory.used) / g.memory.total : null;
    lines.push(
      `  mem  ${bar(memPct)}  ${g.memory ? `${(g.memory.used / GiB).toFixed(1)} / ${(g.memory.total / GiB).toFixed(1)} GiB` : ''}`,
    );
    lines.push(
      `  temp ${val(g.temperature, '°C')}   power ${val(g.power.draw, 'W')} / ${val(g.power.limit, 'W')}   ` +
        `SM ${val(g.clocks.sm, 'MHz')}   mem ${val(g.clocks.memory, 'MHz')}   fan ${val(g.fanSpeed, '%')}`,
    );
    if (g.processes === null) lines.push(g.processesError ? `  processes: unknown (${printable(g.processesError)})` : '  processes: n/a');
    else if (g.processes.length === 0) lines.push('  no processes');
    else {
      lines.push(`  ${'PID'.padStart(8)}  ${'MEMORY'.padStart(10)}  NAME`);
      for (const p of g.processes)
        lines.push(
          `  ${String(p.pid).padStart(8)}  ${(p.usedMemory === null ? 'n/a' : `${(p.usedMemory / 2 ** 20).toFixed(0)} MiB`).padStart(10)}  ${p.name === null ? '?' : printable(p.name)}`,
        );
    }
    lines.push('');
  }
  return lines.join('\n') + '\n';
}
