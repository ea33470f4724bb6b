// Command-line parsing and usage texts.

export type Command = 'info' | 'bandwidth' | 'latency' | 'top' | 'topo';

export interface Options {
  command: Command;
  /** Whether the command was named (`--help` alone shows every command). */
  named: boolean;
  json: boolean;
  help: boolean;
  /** The device to probe; undefined means all (info) or 0 (bandwidth, latency). */
  device?: number;
  /** top: milliseconds between samples. */
  interval?: number;
  /** top: stop after this many samples. */
  count?: number;
}

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message);
  }
}

const COMMANDS: Command[] = ['info', 'bandwidth', 'latency', 'top', 'topo'];

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
    } else if (a === '--interval' || a === '--count' || a.startsWith('--interval=') || a.startsWith('--count=')) {
      const name = a.replace(/=.*$/, '');
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined || !/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${name} needs a positive whole number${name === '--interval' ? ' of milliseconds' : ''}, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`, opts.command);
      if (name === '--interval') opts.interval = Number(v);
      else opts.count = Number(v);
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
  top         a live view of every GPU: utilization, memory, temperature, power, processes
  topo        how the GPUs connect (NVLink, PCIe) and their CPU and NUMA affinity

options:
  --json      print JSON for scripts instead of tables
  --device N  probe device N only
  --help      show help for a command: cuda-bindings bandwidth --help`,
  info: `usage: cuda-bindings info [--json] [--device N]

Prints the driver and runtime versions, the CUDA libraries loaded and, for every device (or
device N), what deviceQuery prints: name, UUID, PCI bus id, compute capability, memory total and
free, SMs, clocks, L2, shared memory, thread limits, and peer access between devices; then what
NVML reads now (as nvidia-smi does): utilization, temperature, power, clocks, fan, memory, PCIe,
NVLink, ECC errors, throttle reasons, compute/MIG/persistence modes and processes. Without NVML the
live section says why it is missing.`,
  top: `usage: cuda-bindings top [--interval MS] [--count N] [--json]

A live view of every GPU (NVML's numbering, as nvidia-smi), refreshed every --interval ms (default
1000): utilization and memory bars, temperature, power, SM and memory clocks, and the processes
using each GPU. On a terminal it redraws in place; q or Ctrl-C quits. On a pipe, or with --json,
it prints one JSON object per sample (NDJSON). --count N stops after N samples. NO_COLOR turns
colours off. Needs the NVIDIA driver (libnvidia-ml); exits 1 without it.`,
  topo: `usage: cuda-bindings topo [--json]

How each pair of GPUs connects, as \`nvidia-smi topo -m\` prints it: NV<n> (n NVLinks), PIX, PXB,
PHB, NODE or SYS (the PCIe path), with peer-to-peer support, and each GPU's CPU and NUMA affinity.
Needs the NVIDIA driver (libnvidia-ml); exits 1 without it.`,
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
