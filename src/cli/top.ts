// `cuda-bindings top`: every GPU, refreshed every second, as NVML reads it. On a terminal a block per
// GPU redrawn in place (q or Ctrl-C quits and restores the terminal), with a short history of its
// utilization and each process's user and command line (as nvitop shows them); on a pipe or with
// --json one JSON object per sample (NDJSON).
import { NvmlDevice, type GpuProcess, type GpuSample } from '../core/nvml/NvmlDevice';
import { hostProcess } from '../core/exporter/proc';
import type { Options } from './args';
import { printable, type Output } from './common';

/** A process as top shows it: NVML's view, and its user and command line from /proc (null where /proc does not have it). */
export type TopProcess = GpuProcess & {
  /** The user it runs as, or null. */
  user?: string | null;
  /** Its command line, or null. */
  command?: string | null;
};

/** A GPU as top shows it. */
export type TopGpu = Omit<GpuSample, 'processes'> & { processes: TopProcess[] | null };

/** One line of the NDJSON stream. */
export interface TopRecord {
  /** ISO 8601 time of the sample. */
  time: string;
  gpus: TopGpu[];
}

/** How many samples of utilization the terminal view's history shows. */
export const HISTORY = 30;
const SPARKS = '▁▂▃▄▅▆▇█';

/** A sample with each process's user and command line (as /proc gives them: the views escape them). */
function withHost(g: GpuSample): TopGpu {
  return {
    ...g,
    processes:
      g.processes &&
      g.processes.map((p) => {
        const h = hostProcess(p.pid, undefined, undefined, false);
        return { ...p, user: h.user, command: h.command };
      }),
  };
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
  const history = new Map<number, (number | null)[]>();
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
      const record: TopRecord = { time: new Date().toISOString(), gpus: devices.map((d) => withHost(d.sample())) };
      for (const g of record.gpus) {
        const h = history.get(g.index) ?? [];
        h.push(g.utilization?.gpu ?? null);
        if (h.length > HISTORY) h.shift();
        history.set(g.index, h);
      }
      if (live) term.write(`\x1b[H\x1b[2J${render(record, { color, width: term.columns, interval, history })}`);
      else out.log(JSON.stringify(record));
    }
  } finally {
    process.off('SIGINT', onSigint);
    restore();
  }
}

/** A history of percentages as a line of bars (one block character a sample; a gap where there was no reading). */
export function sparkline(values: readonly (number | null)[]): string {
  return values
    .map((v) => (v === null ? ' ' : SPARKS[Math.min(SPARKS.length - 1, Math.floor((Math.max(0, Math.min(100, v)) / 100) * SPARKS.length))]))
    .join('');
}

/**
 * The terminal view of one sample; names from NVML, users and command lines are printed with their
 * control characters escaped. `history` (by GPU index) adds the last samples' utilization to the util line.
 */
export function render(
  r: TopRecord,
  opts: { color: boolean; width: number; interval: number; history?: ReadonlyMap<number, readonly (number | null)[]> },
): string {
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
    const past = opts.history?.get(g.index);
    lines.push(`  util ${bar(g.utilization?.gpu ?? null)}${past && past.length ? `  ${c('36', sparkline(past))}` : ''}`);
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
      lines.push(`  ${'PID'.padStart(8)}  ${'USER'.padEnd(10)}  ${'MEMORY'.padStart(10)}  COMMAND`);
      // The command line where /proc has it (nvitop's view), else NVML's name; cut to the terminal's width.
      const room = Math.max(20, opts.width - 36);
      for (const p of g.processes) {
        const user = p.user ? printable(p.user) : '-';
        let command = p.command ? printable(p.command) : p.name === null ? '?' : printable(p.name);
        if (command.length > room) command = `${command.slice(0, room - 1)}…`;
        lines.push(
          `  ${String(p.pid).padStart(8)}  ${(user.length > 10 ? `${user.slice(0, 9)}…` : user).padEnd(10)}  ${(p.usedMemory === null ? 'n/a' : `${(p.usedMemory / 2 ** 20).toFixed(0)} MiB`).padStart(10)}  ${command}`,
        );
      }
    }
    lines.push('');
  }
  return lines.join('\n') + '\n';
}
