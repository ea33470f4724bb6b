#!/usr/bin/env node
// `npx cuda-bindings [info|bandwidth|latency|top|topo] [--json] [--device N]`: probe a machine's GPUs.
// Exit status: 0 on success, 1 when no driver or no GPU is found, 2 on a usage error.
import { parseArgs, UsageError, usage, type Options } from './args';
import { info } from './info';
import { bandwidth } from './bandwidth';
import { latency } from './latency';
import { top } from './top';
import { topo } from './topo';
import { NoGpu, type Output } from './common';
import { NvmlError } from '../core/nvml';

const commands: Record<string, (o: Options, out: Output) => Promise<void> | void> = { info, bandwidth, latency, top, topo };

/** Runs the CLI with `argv` (without node and the script); returns the exit status. */
export async function main(argv: string[], out: Output = defaultOutput()): Promise<number> {
  let opts: Options;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    out.err(`cuda-bindings: ${e.message}\n\n${usage(e.command)}`);
    return 2;
  }
  if (opts.help) {
    out.log(usage(opts.named ? opts.command : undefined));
    return 0;
  }
  try {
    await commands[opts.command](opts, out);
    return 0;
  } catch (e) {
    if (e instanceof NoGpu) {
      if (opts.json) out.log(JSON.stringify({ ...e.partial, error: { code: e.code, name: e.codeName, message: e.message } }, null, 2));
      out.err(`cuda-bindings: ${e.message}`);
      return 1;
    }
    if (e instanceof NvmlError) {
      // NVML is there but cannot run: the driver is not loaded, no permission, a GPU fell off the bus.
      const message = `NVML cannot read the GPUs: ${e.message}`;
      if (opts.json) out.log(JSON.stringify({ error: { code: e.code, name: e.codeName, message } }, null, 2));
      out.err(`cuda-bindings: ${message}`);
      return 1;
    }
    if ((e as Error).name === 'LibraryLoadError') {
      if (opts.json) out.log(JSON.stringify({ error: { name: 'LibraryLoadError', message: (e as Error).message } }, null, 2));
      out.err(`cuda-bindings: ${(e as Error).message}`);
      return 1;
    }
    throw e;
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
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
