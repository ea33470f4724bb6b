// Command-line parsing and usage texts.

export type Command = 'info' | 'bandwidth' | 'latency';

export interface Options {
  command: Command;
  /** Whether the command was named (`--help` alone shows every command). */
  named: boolean;
  json: boolean;
  help: boolean;
  /** The device to probe; undefined means all (info) or 0 (bandwidth, latency). */
  device?: number;
}

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message);
  }
}

const COMMANDS: Command[] = ['info', 'bandwidth', 'latency'];

export function parseArgs(argv: string[]): Options {
  const opts: Options = { command: 'info', named: false, json: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') opts.json = true;
    else if (a === '--help' || a === '-h') opts.help = true;
    else if (a === '--device' || a === '-d' || a.startsWith('--device=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined || !/^\d+$/.test(v)) throw new UsageError(`--device needs a device number, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`, opts.command);
      opts.device = Number(v);
    } else if (a === 'help') opts.help = true;
    else if (!a.startsWith('-') && !opts.named && (COMMANDS as string[]).includes(a)) {
      opts.command = a as Command;
      opts.named = true;
    } else if (!a.startsWith('-') && !opts.named) throw new UsageError(`unknown command '${a}'`);
    else throw new UsageError(`unknown option '${a}'`, opts.command);
  }
  return opts;
}

const TEXT: Record<Command | 'main', string> = {
  main: `usage: cuda-bindings [command] [--json] [--device N] [--help]

commands:
  info        driver and runtime versions, the libraries loaded, every device (the default)
  bandwidth   host-device copy bandwidth, pageable and pinned, over a range of sizes
  latency     the cost of common calls through this library, in ns

options:
  --json      print JSON for scripts instead of tables
  --device N  probe device N only
  --help      show help for a command: cuda-bindings bandwidth --help`,
  info: `usage: cuda-bindings info [--json] [--device N]

Prints the driver and runtime versions, the CUDA libraries loaded and, for every device (or
device N), what deviceQuery prints: name, UUID, PCI bus id, compute capability, memory total and
free, SMs, clocks, L2, shared memory, thread limits, and peer access between devices.`,
  bandwidth: `usage: cuda-bindings bandwidth [--json] [--device N]

Measures host-to-device, device-to-host and device-to-device copies on device N (default 0), from
pageable and pinned host memory, for sizes from 64 KiB to 256 MiB, in GB/s (10^9 bytes a second).`,
  latency: `usage: cuda-bindings latency [--json] [--device N]

Measures the per-call cost of a few common calls through this library on device N (default 0),
in ns: the median of repeated timed loops.`,
};

export function usage(command?: Command): string {
  return TEXT[command ?? 'main'];
}
