#!/usr/bin/env node
// `npx cuda-bindings [info|bandwidth|latency|top|topo|doctor|query|exporter] [--json] [--device N]`: probe a machine's GPUs.
// Exit status: 0 on success, 1 on any failure (a bad option, no driver or GPU, a CUDA error, anything
// unexpected), with one line on stderr (`cuda-bindings <command>: <message>`) and never a stack.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandNamed, parseArgs, UsageError, usage, type Command, type Options } from './args';
import { info } from './info';
import { bandwidth } from './bandwidth';
import { latency } from './latency';
import { top } from './top';
import { topo } from './topo';
import { doctor } from './doctor';
import { query } from './query';
import { exporter } from './exporter';
import { CommandError, oneLine, printable, version as versionText, type Output } from './common';
import { NvmlError } from '../core/nvml/NvmlDevice';
import * as cudart from '../runtime';

/** Each command; one that returns a number gives the exit status itself (doctor's 1 when CUDA cannot run). */
const commands: Record<Command, (o: Options, out: Output) => Promise<void | number> | void | number> = {
  info,
  bandwidth,
  latency,
  top,
  topo,
  doctor,
  query,
  exporter,
};

/** What --json prints for every failure, in one shape. */
export interface FailureJson {
  error: {
    /** The CUDA/NVML status's name (`cudaErrorInsufficientDriver`), or the error's class (`UsageError`). */
    name: string;
    /** The CUDA/NVML status, or null where there is none. */
    code: number | null;
    /** The one line also printed on stderr, without the `cuda-bindings <command>: ` prefix. */
    message: string;
  };
}

/** Any thrown value as the one shape the CLI reports, and what the command found before it stopped. */
function describeFailure(e: unknown): { error: FailureJson['error']; partial: Record<string, unknown> } {
  if (e instanceof CommandError) return { error: { name: e.codeName, code: e.code, message: oneLine(e.message) }, partial: e.partial };
  if (e instanceof NvmlError) {
    // NVML is there but cannot run: the driver is not loaded, no permission, a GPU fell off the bus.
    return { error: { name: e.codeName, code: e.code, message: oneLine(`NVML cannot read the GPUs: ${e.message}`) }, partial: {} };
  }
  const err = e instanceof Error ? e : new Error(String(e));
  // core's CudaError carries its status as code/codeName; anything else is reported by its class.
  const c = err as Error & { code?: unknown; codeName?: unknown };
  const cuda = typeof c.code === 'number' && typeof c.codeName === 'string';
  return {
    error: {
      name: cuda ? (c.codeName as string) : err.name || 'Error',
      code: cuda ? (c.code as number) : null,
      message: oneLine(err.message) || err.name,
    },
    partial: {},
  };
}

/** This package's version, from its package.json (beside src/ and dist/). */
export function packageVersion(): string {
  return JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')).version;
}

/** `--version`: the package's version and the loaded CUDA runtime's; a runtime that does not load is reported, not fatal. */
function printVersion(o: Options, out: Output): void {
  let runtime: string | null = null;
  let library: string | null = null;
  let why: string | null = null;
  try {
    const [err, v] = cudart.cudaRuntimeGetVersion();
    library = cudart.libraryInfo().path;
    if (err === 0) runtime = versionText(v!);
    else why = `cudaRuntimeGetVersion failed: ${cudart.cudaError_t[err] ?? err}`;
  } catch (e) {
    why = oneLine((e as Error).message);
  }
  if (o.json) {
    out.log(JSON.stringify({ version: packageVersion(), cudaRuntime: runtime, libcudart: library, error: why }, null, 2));
    return;
  }
  out.log(`cuda-bindings ${packageVersion()}`);
  out.log(
    runtime !== null ? `CUDA runtime ${runtime} (${printable(library ?? '')})` : `CUDA runtime: not loaded (${printable(why ?? '')})`,
  );
}

/** Runs the CLI with `argv` (without node and the script); returns the exit status. */
export async function main(argv: string[], out: Output = defaultOutput()): Promise<number> {
  let opts: Options | undefined;
  try {
    opts = parseArgs(argv);
    if (opts.help) {
      out.log(usage(opts.named ? opts.command : undefined));
      return 0;
    }
    if (opts.version) {
      printVersion(opts, out);
      return 0;
    }
    return (await commands[opts.command](opts, out)) ?? 0;
  } catch (e) {
    const { error, partial } = describeFailure(e);
    const command = e instanceof UsageError ? e.command : (opts?.command ?? commandNamed(argv) ?? 'info');
    const json = opts?.json ?? argv.includes('--json');
    if (json) out.log(JSON.stringify({ ...partial, error } satisfies FailureJson, null, 2));
    // The message may carry text from outside (a library's error, a path, an argument): escaped for the terminal.
    out.err(
      `cuda-bindings${command ? ` ${command}` : ''}: ${printable(error.message)}${e instanceof UsageError ? ` (see cuda-bindings${command ? ` ${command}` : ''} --help)` : ''}`,
    );
    return 1;
  }
}

function defaultOutput(): Output {
  return {
    log: (s) => process.stdout.write(s + '\n'),
    err: (s) => process.stderr.write(s + '\n'),
    progress: process.stderr.isTTY ? (s) => process.stderr.write(`\r\x1b[K${s}`) : undefined,
  };
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    // main catches everything; this is the last guard against a stack on the terminal.
    (e) => {
      process.stderr.write(`cuda-bindings: ${printable(oneLine(String((e as Error)?.message ?? e)))}\n`);
      process.exitCode = 1;
    },
  );
}
