// What the commands share: output, tables, and the check that a driver and a GPU are there.
import * as cudart from '../runtime';
import { CudaBindingsError } from '../core/base/errors';

export interface Output {
  log(s: string): void;
  err(s: string): void;
  /** Rewrites a progress line on a terminal; absent when stderr is not one. */
  progress?: (s: string) => void;
}

/** A failure a command expects (a CUDA call that failed): one line, and its CUDA error's name and code. */
export class CommandError extends CudaBindingsError {
  /** The CUDA (or NVML) status, or null where there is none. */
  declare readonly code: number | null;
  /** The status's name (`cudaErrorMemoryAllocation`). */
  declare readonly codeName: string;

  /** Makes the error: the status and its name, the one-line message, and what the command found. */
  constructor(
    code: number | null,
    codeName: string,
    message: string,
    /** What the command found before it stopped (versions, libraries), for --json. */
    readonly partial: Record<string, unknown> = {},
  ) {
    super(message, { code, codeName });
    this.name = 'CommandError';
  }
}

/** No driver or no device: the CLI exits with status 1 and this one-line reason. */
export class NoGpu extends CommandError {
  constructor(code: number, codeName: string, message: string, partial: Record<string, unknown> = {}) {
    super(code, codeName, message, partial);
    this.name = 'NoGpu';
  }
}

/** Control characters: C0 (ESC, BEL, newline, …), DEL and C1 (\u009b is a CSI on its own). */
const CONTROL = /\p{Cc}/gu;

/**
 * Text that came from outside (a process or device name from NVML or the driver, a library's
 * message, a path) as it may reach a terminal: each control character written as `\x1b` (C0, DEL)
 * or `\u009b` (C1), so that a name cannot retitle, clear or colour the screen, or forge a line.
 */
export function printable(s: string): string {
  return s.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    const hex = code.toString(16).padStart(2, '0');
    return code < 0x80 ? `\\x${hex}` : `\\u00${hex}`;
  });
}

/** One line of an error's message: a multi-line one (a library that did not load) keeps its first and last lines. */
export function oneLine(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length <= 1) return lines[0] ?? '';
  return `${lines[0].replace(/ Tried:$/, '')} ${lines[lines.length - 1]}`;
}

/** Throws NoGpu with a reason and what to do when the driver or the devices are missing. */
export function requireGpu(partial: Record<string, unknown> = {}, device?: number): number {
  const [err, count] = cudart.cudaGetDeviceCount();
  const name = cudart.cudaError_t[err] ?? String(err);
  if (err === cudart.cudaError_t.cudaErrorInsufficientDriver) {
    throw new NoGpu(err, name, `no NVIDIA driver found (${name}): install the driver or check LD_LIBRARY_PATH`, partial);
  }
  if (err === cudart.cudaError_t.cudaErrorNoDevice || (err === 0 && count === 0)) {
    throw new NoGpu(
      err,
      name || 'cudaErrorNoDevice',
      `no CUDA device found (${name || 'cudaErrorNoDevice'}): check that the GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES)`,
      partial,
    );
  }
  if (err !== 0) throw new NoGpu(err, name, `cannot use the GPU (${name}): ${cudart.cudaGetErrorString(err)[1]}`, partial);
  if (device !== undefined && device >= count) {
    throw new NoGpu(
      cudart.cudaError_t.cudaErrorInvalidDevice,
      'cudaErrorInvalidDevice',
      `no device ${device}: this machine has ${count} (0 to ${count - 1})`,
      partial,
    );
  }
  return count;
}

/** Unwraps a facade tuple or throws with the function's name and the CUDA error. */
export function ok<R extends readonly [number, ...unknown[]]>(r: R, what: string): cudart.OkOutputs<R> {
  if (r[0] !== 0) {
    const name = cudart.cudaError_t[r[0]] ?? `cudaError ${r[0]}`;
    throw new CommandError(r[0], name, `${what} failed: ${name}`);
  }
  return r.slice(1) as cudart.OkOutputs<R>;
}

/** Aligned columns; numbers right-aligned. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number'));
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/** `13000` -> `13.0`. */
export function version(v: number): string {
  return `${Math.floor(v / 1000)}.${(v % 1000) / 10}`;
}

/** `65536` -> `64 KiB`. */
export function bytesText(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1 && n % 1024 === 0) {
    n /= 1024;
    i++;
  }
  return `${n} ${units[i]}`;
}
