// Command-line parsing (node:util parseArgs, strict) and usage texts.
import { parseArgs as nodeParseArgs } from 'node:util';
import { CudaBindingsError } from '../core/base/errors';
import { DEFAULT_MAX_CONNECTIONS, IDLE_TIMEOUT_MS, MAX_PIPELINED, REQUEST_WAIT_MS } from './exporter-connection';

export type Command = 'info' | 'bandwidth' | 'latency' | 'top' | 'topo' | 'doctor' | 'query' | 'exporter';

export interface Options {
  command: Command;
  /** Whether the command was named (`--help` alone shows every command). */
  named: boolean;
  json: boolean;
  help: boolean;
  /** --version: print the package's version and the CUDA runtime's. */
  version?: boolean;
  /** The device to probe; undefined means all (info) or 0 (bandwidth, latency). */
  device?: number;
  /** top, exporter: milliseconds between samples. */
  interval?: number;
  /** top: stop after this many samples. */
  count?: number;
  /** doctor: false with --no-launch (no allocation, no kernel). */
  launch?: boolean;
  /** doctor: where the device files are (default /dev). */
  devDir?: string;
  /** query: nvidia-smi's --query-gpu list of fields. */
  queryGpu?: string;
  /** query: nvidia-smi's --format (csv, noheader, nounits). */
  format?: string;
  /** exporter: the TCP port to listen on (0: any free one). */
  port?: number;
  /** exporter: the address to listen on. */
  host?: string;
  /** exporter: false with --no-processes (no process metrics: no pids, users or command lines on the page). */
  processes?: boolean;
  /** exporter: the most connections served at once. */
  maxConnections?: number;
}

/** A bad command line: the CLI prints one line naming what was wrong and exits 1. */
export class UsageError extends CudaBindingsError {
  /** Makes the error: what was wrong, and the command named, if any. */
  constructor(
    message: string,
    /** The command named on the command line, if any. */
    readonly command?: Command,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

const COMMANDS: Command[] = ['info', 'bandwidth', 'latency', 'top', 'topo', 'doctor', 'query', 'exporter'];

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  device: { type: 'string', short: 'd' },
  interval: { type: 'string' },
  count: { type: 'string' },
  'no-launch': { type: 'boolean' },
  'dev-dir': { type: 'string' },
  'query-gpu': { type: 'string' },
  format: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'no-processes': { type: 'boolean' },
  'max-connections': { type: 'string' },
} as const;

/** The command named on the command line, if any: for the prefix of an error met while parsing. */
export function commandNamed(argv: readonly string[]): Command | undefined {
  return argv.find((a): a is Command => (COMMANDS as string[]).includes(a));
}

/** parseArgs's own errors, rewritten as one line naming the option. */
function usageErrorOf(e: unknown, command: Command | undefined): UsageError {
  const code = (e as { code?: string }).code;
  const message = (e as Error).message;
  const option = /'(-[^']*)'/
    .exec(message)?.[1]
    ?.replace(/^-[a-zA-Z], /, '')
    .replace(/ <value>$/, '');
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option '${option}'`, command);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new UsageError(/does not take an argument/.test(message) ? `${option} takes no value` : `${option} needs a value`, command);
  }
  return new UsageError(message.split('\n')[0], command);
}

/** A whole number of at least `min` from an option's text, or a UsageError naming the option. */
function whole(name: string, text: string, min: number, what: string, command: Command | undefined): number {
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`--${name} needs ${what}, got ${JSON.stringify(text)}`, command);
  return Number(text);
}

/** Parses the command line (without node and the script) with node:util's strict parseArgs. */
export function parseArgs(argv: string[]): Options {
  let command = commandNamed(argv);
  let parsed: ReturnType<typeof nodeParseArgs<{ args: string[]; options: typeof OPTIONS; strict: true; allowPositionals: true }>>;
  try {
    parsed = nodeParseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (e) {
    throw usageErrorOf(e, command);
  }
  const { values, positionals } = parsed;
  const words = positionals.filter((p) => p !== 'help');
  if (words.length > 0) {
    if (!(COMMANDS as string[]).includes(words[0])) throw new UsageError(`unknown command '${words[0]}'`);
    command = words[0] as Command;
    if (words.length > 1) throw new UsageError(`unexpected argument '${words[1]}'`, command);
  }
  const opts: Options = {
    command: command ?? 'info',
    named: command !== undefined,
    json: !!values.json,
    help: !!values.help || positionals.includes('help'),
    version: !!values.version,
  };
  if (values.device !== undefined) opts.device = whole('device', values.device, 0, 'a device number', command);
  if (values.interval !== undefined)
    opts.interval = whole('interval', values.interval, 1, 'a positive whole number of milliseconds', command);
  if (values.count !== undefined) opts.count = whole('count', values.count, 1, 'a positive whole number', command);
  if (values['no-launch']) opts.launch = false;
  if (values['dev-dir'] !== undefined) opts.devDir = values['dev-dir'];
  if (values['query-gpu'] !== undefined) opts.queryGpu = values['query-gpu'];
  if (values.format !== undefined) opts.format = values.format;
  if (values.port !== undefined) {
    opts.port = whole('port', values.port, 0, 'a TCP port (0 to 65535)', command);
    if (opts.port > 65535) throw new UsageError(`--port needs a TCP port (0 to 65535), got ${JSON.stringify(values.port)}`, command);
  }
  if (values['no-processes']) opts.processes = false;
  if (values['max-connections'] !== undefined)
    opts.maxConnections = whole('max-connections', values['max-connections'], 1, 'a positive whole number', command);
  if (values.host !== undefined) {
    if (values.host === '') throw new UsageError('--host needs an address, got ""', command);
    opts.host = values.host;
  }
  return opts;
}

const TEXT: Record<Command | 'main', string> = {
  main: `usage: cuda-bindings [command] [--json] [--device N] [--help] [--version]

commands:
  info        driver and runtime versions, the libraries loaded, every device (the default)
  bandwidth   host-device copy bandwidth, pageable and pinned, over a range of sizes
  latency     the cost of common calls through this library, in ns
  top         a live view of every GPU: utilization, memory, temperature, power, processes
  topo        how the GPUs connect (NVLink, PCIe) and their CPU and NUMA affinity
  doctor      why CUDA works here or not: driver, devices, container, libraries, GPUs, a kernel
  query       nvidia-smi --query-gpu from NVML alone: --query-gpu=FIELDS --format=csv
  exporter    a Prometheus exporter of the GPUs under dcgm-exporter's metric names (/metrics, /healthz)

options:
  --json      print JSON for scripts instead of tables
  --device N  probe device N only
  --help      show help for a command: cuda-bindings bandwidth --help
  --version   print this package's version and the CUDA runtime's

Exit status: 0 on success, 1 on any failure (a bad option, no driver or GPU, a CUDA error), with
one line on stderr saying why; with --json, stdout also gets { "error": { "name", "code", "message" } }.`,
  info: `usage: cuda-bindings info [--json] [--device N]

Prints the driver and runtime versions, the CUDA libraries loaded and, for every device (or
device N), what deviceQuery prints: name, UUID, PCI bus id, compute capability, memory total and
free, SMs, clocks, L2, shared memory, thread limits, and peer access between devices; then what
NVML reads now (as nvidia-smi does): utilization, temperature, power, clocks, fan, memory, PCIe,
NVLink, ECC errors, throttle reasons, compute/MIG/persistence modes and processes. Without NVML the
live section says why it is missing.`,
  top: `usage: cuda-bindings top [--interval MS] [--count N] [--json]

A live view of every GPU (NVML's numbering, as nvidia-smi), refreshed every --interval ms (default
1000): utilization and memory bars with the last 30 samples' utilization beside, temperature,
power, SM and memory clocks, and the processes using each GPU with their user and command line (as
nvitop shows them; names and command lines printed with control characters escaped). On a terminal
it redraws in place; q or Ctrl-C quits. On a pipe, or with --json, it prints one JSON object per
sample (NDJSON). --count N stops after N samples. NO_COLOR turns colours off. Needs the NVIDIA
driver (libnvidia-ml); exits 1 without it.`,
  topo: `usage: cuda-bindings topo [--json]

How each pair of GPUs connects, as \`nvidia-smi topo -m\` prints it: NV<n> (n NVLinks), PIX, PXB,
PHB, NODE or SYS (the PCIe path), with peer-to-peer support, and each GPU's CPU and NUMA affinity.
Needs the NVIDIA driver (libnvidia-ml); exits 1 without it.`,
  doctor: `usage: cuda-bindings doctor [--json] [--no-launch] [--dev-dir DIR]

Checks what CUDA needs, each item ok, warn or fail with why and what to do: the driver and the CUDA
version it runs (these bindings need CUDA 13: R580 or newer); /dev/nvidia* present and usable; in a
container, NVIDIA_VISIBLE_DEVICES and the GPUs passed in; each of the eight libraries, where and how
it was found and its version; each GPU's compute capability against NVRTC's targets; MIG and
persistence modes; an allocation and a kernel on each GPU (--no-launch skips them). --dev-dir reads
the device files elsewhere. Exit status 0 when CUDA works, 1 when it cannot, the reason on the last
line. --json prints the report of core.diagnose() (see the README).`,
  query: `usage: cuda-bindings query --query-gpu=FIELDS --format=csv[,noheader][,nounits] [--device N]

What \`nvidia-smi --query-gpu=FIELDS --format=...\` prints, read from NVML alone (libnvidia-ml, no
nvidia-smi binary): nvidia-smi's field names and aliases (see nvidia-smi --help-query-gpu), its
headers with units (memory.total [MiB]), values (81559 MiB, 69.52 W, 1980 MHz, 0 %, Enabled, P0) and
[N/A] where the GPU lacks a field, one line per GPU in NVML's order (--device N: NVML's GPU N).
Needs the NVIDIA driver (libnvidia-ml); exits 1 without it or on an unknown field.`,
  exporter: `usage: cuda-bindings exporter [--port 9400] [--host 127.0.0.1] [--interval MS] [--device N] [--no-processes]
                              [--max-connections ${DEFAULT_MAX_CONNECTIONS}]

Serves the GPUs' metrics for Prometheus at http://HOST:PORT/metrics (the text format, or OpenMetrics
when the scraper's Accept header prefers it) and a health check at /healthz (200 while samples are
fresh, 503 otherwise). The metrics are dcgm-exporter's default counters that NVML reads, under
dcgm-exporter's names, types and labels (its Grafana dashboard works unchanged), the ECC totals, each
process's GPU memory with its user, command, resident memory and CPU time, clock event (throttle)
reasons, XIDs and other NVML events, and the exporter's own health. NVML is read every --interval ms
(default 1000) on a worker thread: a scrape is served from memory and never waits on a GPU.
Listens on 127.0.0.1 (this machine only) unless --host says otherwise (--host 0.0.0.0: every
interface); --port 0 picks a free port. --device N serves NVML's GPU N only. --no-processes leaves
the processes out (their pids, users and command lines). At most --max-connections connections
(default ${DEFAULT_MAX_CONNECTIONS}) are served at once, more are closed as they arrive; a connection is closed when it
sends no request within ${REQUEST_WAIT_MS / 1000} s, has no traffic for ${IDLE_TIMEOUT_MS / 1000} s, or has more than ${MAX_PIPELINED} requests waiting for their
answers (a client that pipelines and does not read). Runs until SIGINT or SIGTERM. Needs the NVIDIA
driver (libnvidia-ml); exits 1 without it.`,
  bandwidth: `usage: cuda-bindings bandwidth [--json] [--device N]

Measures host-to-device, device-to-host and device-to-device copies on device N (default 0), from
pageable and pinned host memory, for sizes from 64 KiB to 256 MiB, in GB/s (10^9 bytes a second).`,
  latency: `usage: cuda-bindings latency [--json] [--device N]

Measures the per-call cost of a few common calls through this library on device N (default 0),
in ns: the median of repeated timed loops.`,
};

/** The usage text of a command, or of the CLI as a whole. */
export function usage(command?: Command): string {
  return TEXT[command ?? 'main'];
}
