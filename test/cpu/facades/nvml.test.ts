// NVML without a GPU: a fake libnvidia-ml built by gcc from test/cpu/fixtures/fake-nvml.c (two GPUs
// with fixed readings) drives the bindings, the core layer, `top`, `topo`, `info` and the exporter.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as nvml from '../../../src/nvml';
import * as core from '../../../src/core';
import { cudaDeviceProp } from '../../../src/runtime/structs.gen';
import { buildFakeNvml, buildFakeCudart, setFakeNvmlKnob, FAKE_GPUS } from '../helpers/fake-nvml';

/** The escape that starts a terminal colour. */
const ESC = '\x1b';
/**
 * A name any local user can give a process: it sets the terminal's title (OSC 0 … BEL), clears the
 * screen, colours it (by ESC [ and by the one-byte C1 CSI), breaks the line, and ends with DEL.
 */
const HOSTILE = 'evil\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x9b1m\nline\x7f';
/** HOSTILE as the CLI prints it on a terminal. */
const ESCAPED = 'evil\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\u009b1m\\x0aline\\x7f';
/** Whether text holds a control character other than the newlines between lines (C0, DEL, C1). */
const hasControl = (s: string) => /\p{Cc}/u.test(s.replace(/\n/g, ''));

const root = path.join(__dirname, '..', '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-nvml-'));
let lib = '';
const saved = process.env.CUDA_BINDINGS_NVML;

beforeAll(() => {
  lib = buildFakeNvml(tmp);
  process.env.CUDA_BINDINGS_NVML = lib;
}, 60_000);
afterAll(() => {
  core.shutdownNvml();
  if (saved === undefined) delete process.env.CUDA_BINDINGS_NVML;
  else process.env.CUDA_BINDINGS_NVML = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Runs a TypeScript file or the CLI in a child process with the fake NVML (and `env`). */
function child(args: string[], env: Record<string, string> = {}, timeout = 60_000) {
  return spawnSync(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout,
    env: { ...process.env, CUDA_BINDINGS_NVML: lib, NO_COLOR: '', ...env },
  });
}
const cli = path.join(root, 'src', 'cli', 'main.ts');

describe('the bindings', () => {
  let dev: nvml.nvmlDevice_t;
  beforeAll(() => {
    expect(nvml.nvmlInit()).toEqual([nvml.nvmlReturn_t.NVML_SUCCESS]);
    dev = nvml.nvmlDeviceGetHandleByIndex(0)[1]!;
  });
  afterAll(() => {
    expect(nvml.nvmlShutdown()).toEqual([nvml.nvmlReturn_t.NVML_SUCCESS]);
  });

  test('nvmlInit is bound to nvmlInit_v2, and both names are exported', () => {
    expect(nvml.nvmlInit_v2).toBe(nvml.nvmlInit);
    expect(nvml.nvmlDeviceGetComputeRunningProcesses_v3).toBe(nvml.nvmlDeviceGetComputeRunningProcesses);
  });

  test('calls return [status, ...outputs]: count, handle, strings', () => {
    expect(nvml.nvmlDeviceGetCount()).toEqual([0, 2]);
    expect(nvml.nvmlDeviceGetName(dev, 96)).toEqual([0, FAKE_GPUS[0].name]);
    expect(nvml.nvmlDeviceGetUUID(dev, 96)).toEqual([0, FAKE_GPUS[0].uuid]);
    expect(nvml.nvmlSystemGetDriverVersion(80)).toEqual([0, '580.65.06']);
    const [err, h] = nvml.nvmlDeviceGetHandleByUUID(FAKE_GPUS[1].uuid);
    expect([err, nvml.nvmlDeviceGetIndex(h!)]).toEqual([0, [0, 1]]);
  });

  test('a struct output is a struct class whose char arrays read as strings', () => {
    const [err, pci] = nvml.nvmlDeviceGetPciInfo(dev);
    expect(err).toBe(0);
    expect(pci).toBeInstanceOf(nvml.nvmlPciInfo_st);
    expect([pci!.busId, pci!.busIdLegacy, pci!.bus]).toEqual([FAKE_GPUS[0].busId, '0000:18:00.0', 0x18]);
  });

  test('a versioned struct starts with its version (sizeof | version << 24), which the call checks', () => {
    const m = new nvml.nvmlMemory_v2_t();
    expect(m.version).toBe(nvml.nvmlMemory_v2);
    expect(nvml.nvmlMemory_v2).toBe((nvml.nvmlMemory_v2_t.layout.size | (2 << 24)) >>> 0);
    const [err, out] = nvml.nvmlDeviceGetMemoryInfo_v2(dev);
    expect([err, out!.total, out!.reserved]).toEqual([0, 80n << 30n, 512n << 20n]);
    // The caller's struct is filled in place; a wrong version is NVML's to refuse.
    const mine = new nvml.nvmlMemory_v2_t();
    expect(nvml.nvmlDeviceGetMemoryInfo_v2(dev, mine)[1]).toBe(mine);
    expect(nvml.nvmlDeviceGetMemoryInfo_v2(dev, { version: 1 })[0]).toBe(nvml.nvmlReturn_t.NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  });

  test('a count too small comes back with NVML_ERROR_INSUFFICIENT_SIZE and the count needed', () => {
    expect(nvml.nvmlDeviceGetComputeRunningProcesses(dev, 0)).toEqual([nvml.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE, 1, null]);
    const [err, n, infos] = nvml.nvmlDeviceGetComputeRunningProcesses(dev, 4);
    expect([err, n, infos!.map((p) => [p.pid, p.usedGpuMemory])]).toEqual([0, 1, [[4242, 1n << 30n]]]);
  });

  test('an array of structs goes in and comes back filled (nvmlDeviceGetFieldValues)', () => {
    const [err, values] = nvml.nvmlDeviceGetFieldValues(dev, 2, [{ fieldId: nvml.NVML_FI_DEV_NVLINK_LINK_COUNT }, { fieldId: 1 }]);
    expect(err).toBe(0);
    expect(values!.map((v) => [v.fieldId, v.nvmlReturn, v.value.uiVal])).toEqual([
      [nvml.NVML_FI_DEV_NVLINK_LINK_COUNT, 0, 18],
      [1, nvml.nvmlReturn_t.NVML_ERROR_NOT_SUPPORTED, 0],
    ]);
  });

  test('an output array of a given size (CPU affinity bitmask)', () => {
    expect(nvml.nvmlDeviceGetCpuAffinity(dev, 2)).toEqual([0, [0xffffn, 0n]]);
  });

  test('nvmlErrorString and the #define aliases of the throttle reasons', () => {
    expect(nvml.nvmlErrorString(nvml.nvmlReturn_t.NVML_ERROR_NOT_SUPPORTED)).toEqual([0, 'Not Supported']);
    expect(nvml.nvmlClocksThrottleReasonSwPowerCap).toBe(nvml.nvmlClocksEventReasonSwPowerCap);
    expect(nvml.nvmlClocksEventReasonSwPowerCap).toBe(4);
  });

  test('a function the installed library does not export throws when called, naming the symbol', () => {
    expect(() => nvml.nvmlDeviceGetSramUniqueUncorrectedEccErrorCounts(dev)).toThrow(
      /^nvmlDeviceGetSramUniqueUncorrectedEccErrorCounts: libnvidia-ml at \S+ does not export nvmlDeviceGetSramUniqueUncorrectedEccErrorCounts/,
    );
  });

  test('libraryInfo names the file CUDA_BINDINGS_NVML chose, and the CUDA version its driver supports', () => {
    expect(nvml.libraryInfo()).toMatchObject({ path: fs.realpathSync(lib), version: 13000 });
  });
});

describe('bad input is refused before C runs, naming the function and the parameter', () => {
  const dev = () => nvml.nvmlDeviceGetHandleByIndex(0)[1]!;
  beforeAll(() => void nvml.nvmlInit());
  afterAll(() => void nvml.nvmlShutdown());

  test('a value of the wrong kind where a handle goes: TypeError', () => {
    expect(() => nvml.nvmlDeviceGetName('GPU-0' as never, 96)).toThrow(
      new TypeError('nvmlDeviceGetName: parameter \'device\' must be a handle (bigint) or null, got the string "GPU-0"'),
    );
    expect(() => nvml.nvmlDeviceGetUtilizationRates(new nvml.nvmlMemory_t() as never)).toThrow(TypeError);
    expect(() => nvml.nvmlDeviceGetUtilizationRates(new nvml.nvmlMemory_t() as never)).toThrow(
      /^nvmlDeviceGetUtilizationRates: parameter 'device'/,
    );
  });

  test('the wrong struct class for an in/out struct: TypeError', () => {
    expect(() => nvml.nvmlDeviceGetMemoryInfo_v2(dev(), new nvml.nvmlMemory_t() as never)).toThrow(
      new TypeError("nvmlDeviceGetMemoryInfo_v2: parameter 'memory' must be a nvmlMemory_v2_st, got an object (nvmlMemory_st)"),
    );
  });

  test('a string buffer of no bytes: RangeError; one too small: NVML says NVML_ERROR_INSUFFICIENT_SIZE', () => {
    expect(() => nvml.nvmlDeviceGetName(dev(), 0)).toThrow(
      new RangeError("nvmlDeviceGetName: parameter 'length' must be at least 1, got 0"),
    );
    expect(nvml.nvmlDeviceGetName(dev(), 4)).toEqual([nvml.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE, null]);
  });

  test('an enum value out of its C type: RangeError', () => {
    expect(() => nvml.nvmlDeviceGetTemperature(dev(), 2 ** 32)).toThrow(RangeError);
    expect(() => nvml.nvmlDeviceGetTemperature(dev(), 2 ** 32)).toThrow(/^nvmlDeviceGetTemperature: parameter 'sensorType'/);
    expect(() => nvml.nvmlDeviceGetClockInfo(dev(), 1.5 as nvml.nvmlClockType_t)).toThrow(/^nvmlDeviceGetClockInfo: parameter 'type'/);
  });

  test('a count the array does not have, and a negative one', () => {
    expect(() => nvml.nvmlDeviceGetFieldValues(dev(), 3, [{ fieldId: 1 }])).toThrow(/^nvmlDeviceGetFieldValues: parameter 'values'/);
    expect(() => nvml.nvmlDeviceGetFieldValues(dev(), -1, [])).toThrow(
      new RangeError("nvmlDeviceGetFieldValues: parameter 'valuesCount' must not be negative, got -1"),
    );
  });

  test('a buffer smaller than the size passed with it', () => {
    expect(() => nvml.nvmlVgpuTypeGetName(1, Buffer.alloc(4), 64)).toThrow(/^nvmlVgpuTypeGetName: parameter 'vgpuTypeName'/);
  });

  test('a size larger than the struct it describes', () => {
    expect(() => nvml.nvmlSystemGetDriverBranch(null, 1000)).toThrow(
      new RangeError("nvmlSystemGetDriverBranch: parameter 'length' is 1000 but branchInfo.branch holds 80 bytes"),
    );
  });
});

describe('the loader', () => {
  test('without libnvidia-ml: a LibraryLoadError that lists every path tried and why', () => {
    const r = child(
      ['-e', "const n = require('./src/nvml'); try { n.nvmlInit(); } catch (e) { console.log(e.name + '\\n' + e.message); }"],
      { CUDA_BINDINGS_NVML: path.join(tmp, 'absent.so') },
    );
    expect(r.stdout).toMatch(
      /^LibraryLoadError\nlibnvidia-ml: could not load the library\. Tried:\n {2}- variable: \S+absent\.so: no such file\nCUDA_BINDINGS_NVML names this file: point it at the library, or unset it to search the usual places\.\n$/,
    );
  });

  test("before nvmlInit, libraryInfo's version is 0: NVML says its version only once initialised", () => {
    const r = child(['-e', "const n = require('./src/nvml'); n.nvmlDeviceGetCount(); console.log(n.libraryInfo().version)"]);
    expect(r.stdout.trim()).toBe('0');
  });

  test('a library that is not NVML is refused, saying why', () => {
    const cudart = require('../../../src/runtime').libraryInfo().path as string;
    const r = child(['-e', "try { require('./src/nvml').nvmlInit(); } catch (e) { console.log(e.message.split('\\n')[1]); }"], {
      CUDA_BINDINGS_NVML: cudart,
    });
    expect(r.stdout.trim()).toBe(`- variable: ${cudart}: not an NVML library (no nvmlInit_v2)`);
  });

  // The namespace itself loads on first use in the published build (tools/lazy-root.cjs; checked on
  // the tarball by build/package.proof.test.ts); from the sources, the declarations still wait for the first call.
  test('importing cuda-bindings reads no NVML declarations; the first call reads them', () => {
    const script =
      "const m = require('./src'); const decls = () => Object.keys(require.cache).some((k) => /ffi[\\\\/]nvml\\.gen\\.ts$/.test(k)); const before = decls(); m.nvml.nvmlInit(); console.log(JSON.stringify([before, decls()]))";
    const r = child(['-e', script]);
    expect(r.stdout.trim()).toBe('[false,true]');
  });
});

describe('core', () => {
  test('NvmlDevice.all() in NVML order, found again by UUID and by PCI bus id', () => {
    const all = core.NvmlDevice.all();
    expect(all.map((d) => [d.index, d.name, d.uuid, d.pciBusId])).toEqual(FAKE_GPUS.map((g, i) => [i, g.name, g.uuid, g.busId]));
    expect(core.NvmlDevice.byUuid(FAKE_GPUS[1].uuid)).toBe(all[1]);
    expect(core.NvmlDevice.byPciBusId('0000:18:00.0')).toBe(all[0]);
    expect(core.NvmlDevice.byUuid('GPU-00000000-0000-0000-0000-000000000000')).toBeNull();
  });

  test('health() reads every field of a GPU that has them', () => {
    const h = core.NvmlDevice.get(0).health();
    expect(h).toEqual({
      index: 0,
      name: FAKE_GPUS[0].name,
      uuid: FAKE_GPUS[0].uuid,
      pciBusId: FAKE_GPUS[0].busId,
      utilization: { gpu: 37, memory: 12 },
      temperature: { current: 41, slowdown: 87, shutdown: 92 },
      power: { draw: 123.456, limit: 700 },
      clocks: { sm: 1755, memory: 2619, smMax: 1980, memoryMax: 2619 },
      fanSpeed: null,
      memory: { total: 80 * 2 ** 30, used: 2 ** 30, free: 80 * 2 ** 30 - 2 ** 30 - 512 * 2 ** 20, reserved: 512 * 2 ** 20 },
      pcie: { generation: 5, width: 16, maxGeneration: 5, maxWidth: 16, txKBps: 1000, rxKBps: 2000 },
      nvlink: Array.from({ length: 18 }, (_, link) => ({ link, active: link < 4, version: link < 4 ? 4 : null })),
      ecc: { correctedVolatile: 3, uncorrectedVolatile: 0, correctedAggregate: 7, uncorrectedAggregate: 0 },
      throttleReasons: ['SwPowerCap', 'HwSlowdown'],
      computeMode: 'Default',
      migMode: { current: false, pending: false },
      persistenceMode: true,
      performanceState: 'P0',
      processes: [{ pid: 4242, name: 'python3', usedMemory: 2 ** 30, type: 'compute' }],
      processesError: null,
    });
  });

  test('health(): what NVML says the GPU does not support is null, never an error or a number', () => {
    const h = core.NvmlDevice.get(1).health();
    expect([h.power.limit, h.nvlink, h.ecc, h.migMode, h.fanSpeed]).toEqual([null, null, null, null, 30]);
    expect([h.computeMode, h.persistenceMode, h.throttleReasons, h.processes]).toEqual(['Exclusive_Process', false, ['GpuIdle'], []]);
  });

  test("topology between the GPUs, and each one's CPU and NUMA affinity", () => {
    const [a, b] = core.NvmlDevice.all();
    expect(a.topology(b)).toEqual({
      kind: 'SYS',
      nvlinks: 0,
      nvlinkVersion: null,
      level: 'SYS',
      p2p: { read: true, write: true, atomics: true, nvlink: false },
    });
    expect(a.topology(a).kind).toBe('X');
    expect([core.formatCpuList(a.cpuAffinity()!), core.formatCpuList(b.cpuAffinity()!), a.numaNode(), b.numaNode()]).toEqual([
      '0-15',
      '16-31',
      null,
      1,
    ]);
    // An x86 H100 has no NUMA node of its own; its NUMA affinity is where its memory is nearest.
    expect([a.numaAffinity(), b.numaAffinity()]).toEqual([[0], [1]]);
  });

  test('processes that start faster than NVML lists them: processes() says so; health() and sample() report them unknown, with why, and the rest as ever', () => {
    const why =
      'NVML_ERROR_INSUFFICIENT_SIZE: the list of processes kept growing while it was read (5 tries) (in nvmlDeviceGetComputeRunningProcesses)';
    setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESS_CHURN', '1');
    try {
      const d = core.NvmlDevice.get(0);
      expect(() => d.processes()).toThrow(core.NvmlError);
      expect(() => d.processes()).toThrow(why);
      const h = d.health();
      expect([h.processes, h.processesError, h.temperature.current, h.memory?.used]).toEqual([null, why, 41, 2 ** 30]);
      const s = d.sample();
      expect([s.processes, s.processesError, s.utilization]).toEqual([null, why, { gpu: 37, memory: 12 }]);
    } finally {
      setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESS_CHURN', undefined);
    }
    expect(core.NvmlDevice.get(0).health().processesError).toBeNull();
  });

  test('NVML is initialised once and shut down once, at exit', () => {
    const report = path.join(tmp, 'balance.txt');
    const r = child(
      ['-e', "const { core } = require('./src'); core.NvmlDevice.all().map((d) => d.health()); core.NvmlDevice.get(1).sample();"],
      { FAKE_NVML_REPORT: report },
    );
    expect(r.status).toBe(0);
    expect(fs.readFileSync(report, 'utf8')).toBe('inits=1 shutdowns=1\n');
  });

  test('Device.nvml matches CUDA devices to NVML GPUs by UUID, not by index', () => {
    const cudart = buildFakeCudart(tmp, cudaDeviceProp.layout);
    const r = child(
      [
        '-e',
        "const { core } = require('./src'); console.log(JSON.stringify(core.Device.all().map((d) => [d.ordinal, d.nvml.index, d.health().name])))",
      ],
      { CUDA_BINDINGS_CUDART: cudart },
    );
    expect([r.stderr.replace(/^npm warn.*\n/gm, ''), JSON.parse(r.stdout)]).toEqual([
      '',
      [
        [0, 1, FAKE_GPUS[1].name],
        [1, 0, FAKE_GPUS[0].name],
      ],
    ]);
  });
});

describe('the CLI', () => {
  test('top --json --count 2: two NDJSON records of every GPU, and NVML shut down', () => {
    const report = path.join(tmp, 'top.txt');
    const r = child([cli, 'top', '--json', '--count', '2', '--interval', '50'], { FAKE_NVML_REPORT: report });
    expect(r.status).toBe(0);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.length).toBe(2);
    for (const rec of records) {
      expect(Number.isNaN(Date.parse(rec.time))).toBe(false);
      expect(rec.gpus.map((g: core.GpuSample) => [g.index, g.uuid, g.utilization?.gpu, g.temperature, g.power.draw, g.clocks.sm])).toEqual([
        [0, FAKE_GPUS[0].uuid, 37, 41, 123.456, 1755],
        [1, FAKE_GPUS[1].uuid, 5, 33, 16, 1200],
      ]);
    }
    // 4242 is not in this /proc: no user or command line, NVML's name only.
    expect(records[0].gpus[0].processes).toEqual([
      { pid: 4242, name: 'python3', usedMemory: 2 ** 30, type: 'compute', user: null, command: null },
    ]);
    expect(fs.readFileSync(report, 'utf8')).toBe('inits=1 shutdowns=1\n');
  });

  test("top: each process's user and command line from /proc, as nvitop shows them", () => {
    const r = child([cli, 'top', '--json', '--count', '1'], { FAKE_NVML_PROCESSES: `0:${process.pid}:100` });
    expect(r.status).toBe(0);
    const [p] = JSON.parse(r.stdout).gpus[0].processes;
    const cmdline = fs.readFileSync(`/proc/${process.pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    expect(p).toEqual({
      pid: process.pid,
      name: `proc${process.pid}`,
      usedMemory: 100 * 2 ** 20,
      type: 'compute',
      user: os.userInfo().username,
      command: cmdline.length > 200 ? `${cmdline.slice(0, 199)}…` : cmdline,
    });
  });

  test('top on a pipe prints NDJSON without --json', () => {
    const r = child([cli, 'top', '--count', '1']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).gpus.length).toBe(2);
  });

  test('the terminal view: a block per GPU with bars and processes, no colour with NO_COLOR', () => {
    const { render } = require('../../../src/cli/top') as typeof import('../../../src/cli/top');
    const text = render(
      { time: '2026-01-01T12:00:00.000Z', gpus: core.NvmlDevice.all().map((d) => d.sample()) },
      { color: false, width: 80, interval: 1000 },
    );
    expect(text).not.toContain(ESC);
    expect(text).toContain('GPU 0: Fake H100 80GB HBM3');
    expect(text).toMatch(/util \[\|{15} {25}\] {2}37%/);
    expect(text).toContain(`  ${'PID'.padStart(8)}  USER${' '.repeat(6)}      MEMORY  COMMAND\n`);
    expect(text).toContain(`  ${'4242'.padStart(8)}  ${'-'.padEnd(10)}  ${'1024 MiB'.padStart(10)}  python3\n`);
    expect(text).toContain('power 16 W / n/a');
    expect(
      render({ time: '2026-01-01T12:00:00.000Z', gpus: [core.NvmlDevice.get(0).sample()] }, { color: true, width: 80, interval: 1000 }),
    ).toMatch(new RegExp(`${ESC}\\[32m\\|+${ESC}\\[0m`));
  });

  test('on a terminal: the alternate screen, one frame per sample, q quits and restores the terminal', async () => {
    const { top } = require('../../../src/cli/top') as typeof import('../../../src/cli/top');
    const writes: string[] = [];
    let press: ((k: string) => void) | undefined;
    let restored = false;
    const term = {
      isTTY: true,
      columns: 80,
      write: (s: string) => {
        writes.push(s);
        // The second frame is drawn: the user presses q.
        if (writes.filter((w) => w.startsWith('\x1b[H\x1b[2J')).length === 2) setImmediate(() => press!('q'));
      },
      keys: (onKey: (k: string) => void) => {
        press = onKey;
        return () => void (restored = true);
      },
    };
    const started = Date.now();
    await top({ command: 'top', named: true, json: false, help: false, interval: 20 }, { log: () => {}, err: () => {} }, term);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(writes[0]).toBe('\x1b[?1049h\x1b[?25l');
    expect(writes.filter((w) => w.startsWith('\x1b[H\x1b[2J')).length).toBe(2);
    expect(writes[1]).toContain('GPU 1: Fake L4');
    // Each frame adds a sample to the utilization history: 37% and 5% as block characters.
    const frames = writes.filter((w) => w.startsWith('\x1b[H\x1b[2J')).map((w) => w.replace(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), ''));
    expect(frames[1]).toMatch(/util \[\|+ +\] {2}37% {2}▃▃\n/);
    expect(frames[1]).toMatch(/util \[\|* +\] {3}5% {2}▁▁\n/);
    expect([writes[writes.length - 1], restored]).toEqual(['\x1b[?25h\x1b[?1049l', true]);
  });

  test('the terminal view prints names from NVML with their control characters escaped', () => {
    const { render } = require('../../../src/cli/top') as typeof import('../../../src/cli/top');
    const gpu = {
      ...core.NvmlDevice.get(0).sample(),
      name: HOSTILE,
      uuid: HOSTILE,
      processes: [
        { pid: 7, name: HOSTILE, usedMemory: null, type: 'compute' as const },
        { pid: 8, name: 'x', usedMemory: null, type: 'compute' as const, user: 'u\x1b[2J', command: `${HOSTILE} --flag` },
      ],
    };
    for (const color of [false, true]) {
      const text = render({ time: '2026-01-01T12:00:00.000Z', gpus: [gpu] }, { color, width: 80, interval: 1000 });
      // The view's own colours are the only escapes left.
      expect(hasControl(text.replace(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), ''))).toBe(false);
      expect(text).toContain(`GPU 0: ${ESCAPED}`);
      expect(text).toContain(`  ${ESCAPED}\n`);
      // Cut to the terminal's width (80 columns leave 44 for the command).
      expect(text).toContain(`  ${'7'.padStart(8)}  ${'-'.padEnd(10)}  ${'n/a'.padStart(10)}  ${ESCAPED.slice(0, 43)}…\n`);
      // A user and a command line from /proc are escaped too (the command cut to the terminal's width).
      expect(text).toContain(`  ${'8'.padStart(8)}  ${'u\\x1b[2J'.padEnd(10)}  ${'n/a'.padStart(10)}  ${ESCAPED.slice(0, 43)}…\n`);
    }
  });

  test('top on a terminal escapes the process and GPU names NVML gives it', async () => {
    const { top } = require('../../../src/cli/top') as typeof import('../../../src/cli/top');
    core.shutdownNvml(); // a GPU's name is read once a session
    setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESS_NAME', HOSTILE);
    setFakeNvmlKnob(lib, 'FAKE_NVML_GPU0_NAME', HOSTILE);
    const writes: string[] = [];
    try {
      const term = { isTTY: true, columns: 80, write: (s: string) => void writes.push(s), keys: () => () => {} };
      await top({ command: 'top', named: true, json: false, help: false, count: 1 }, { log: () => {}, err: () => {} }, term);
    } finally {
      setFakeNvmlKnob(lib, 'FAKE_NVML_PROCESS_NAME', undefined);
      setFakeNvmlKnob(lib, 'FAKE_NVML_GPU0_NAME', undefined);
      core.shutdownNvml();
    }
    const frame = writes.find((w) => w.startsWith('\x1b[H\x1b[2J'))!.slice('\x1b[H\x1b[2J'.length);
    expect(hasControl(frame.replace(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), ''))).toBe(false);
    expect(frame).toContain(`GPU 0: ${ESCAPED}`);
    expect(frame).toContain(`  ${'4242'.padStart(8)}  ${'-'.padEnd(10)}  ${'1024 MiB'.padStart(10)}  ${ESCAPED.slice(0, 43)}…\n`);
  });

  test('top keeps reporting while processes start faster than NVML lists them: unknown, with why', () => {
    const r = child([cli, 'top', '--json', '--count', '1'], { FAKE_NVML_PROCESS_CHURN: '1' });
    expect([r.status, r.stderr]).toEqual([0, '']);
    const g = JSON.parse(r.stdout).gpus[0];
    expect([g.processes, g.processesError, g.temperature]).toEqual([
      null,
      'NVML_ERROR_INSUFFICIENT_SIZE: the list of processes kept growing while it was read (5 tries) (in nvmlDeviceGetComputeRunningProcesses)',
      41,
    ]);
    const { render } = require('../../../src/cli/top') as typeof import('../../../src/cli/top');
    expect(render({ time: '2026-01-01T12:00:00.000Z', gpus: [g] }, { color: false, width: 80, interval: 1000 })).toContain(
      '  processes: unknown (NVML_ERROR_INSUFFICIENT_SIZE: the list of processes kept growing while it was read (5 tries) (in nvmlDeviceGetComputeRunningProcesses))\n',
    );
  });

  test('topo --json: the matrix and the affinities', () => {
    const r = child([cli, 'topo', '--json']);
    expect(r.status).toBe(0);
    const t = JSON.parse(r.stdout);
    expect(
      t.gpus.map((g: { cpuAffinity: string; numaAffinity: string; numaNode: number }) => [g.cpuAffinity, g.numaAffinity, g.numaNode]),
    ).toEqual([
      ['0-15', '0', null],
      ['16-31', '1', 1],
    ]);
    expect(t.matrix.map((row: { kind: string }[]) => row.map((l) => l.kind))).toEqual([
      ['X', 'SYS'],
      ['SYS', 'X'],
    ]);
  });

  test('topo prints the nvidia-smi style matrix', () => {
    const r = child([cli, 'topo']);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      '      GPU0  GPU1  CPU Affinity  NUMA Affinity  GPU NUMA ID',
      'GPU0  X     SYS   0-15          0              N/A',
      'GPU1  SYS   X     16-31         1              1',
    ]);
  });

  test('info gains the live NVML section for each CUDA device, matched by UUID', () => {
    const cudart = buildFakeCudart(tmp, cudaDeviceProp.layout);
    const script =
      "const { info } = require('./src/cli/info'); const out = []; info({ command: 'info', named: true, json: false, help: false }, { log: (s) => out.push(s), err: () => {} }); console.log(out.join('\\n'))";
    const r = child(['-e', script], { CUDA_BINDINGS_CUDART: cudart });
    expect(r.stdout).toMatch(/Device 0: Fake L4\n(.|\n)*live \(NVML\) +value\n-+ +-+\nNVML index +1\n/);
    expect(r.stdout).toMatch(/processes +4242 python3 \(1024 MiB\)/);
    const json = child(['-e', script.replace('json: false', 'json: true')], { CUDA_BINDINGS_CUDART: cudart });
    const j = JSON.parse(json.stdout);
    expect([j.nvml, j.devices.map((d: { live: core.GpuHealth }) => [d.live.index, d.live.uuid, d.live.temperature.current])]).toEqual([
      { available: true, error: null },
      [
        [1, FAKE_GPUS[1].uuid, 33],
        [0, FAKE_GPUS[0].uuid, 41],
      ],
    ]);
    // Without NVML the CUDA part still prints, and the live section says why it is missing.
    const none = child(['-e', script], { CUDA_BINDINGS_CUDART: cudart, CUDA_BINDINGS_NVML: path.join(tmp, 'absent.so') });
    expect(none.stdout).toContain(
      'live (NVML): not available: libnvidia-ml: could not load the library. CUDA_BINDINGS_NVML names this file: point it at the library, or unset it to search the usual places.',
    );
  });

  test('topo prints GPU names with their control characters escaped; --json keeps them as NVML gave them', () => {
    const r = child([cli, 'topo'], { FAKE_NVML_GPU0_NAME: HOSTILE });
    expect(hasControl(r.stdout)).toBe(false);
    expect(r.stdout).toContain(`GPU0: ${ESCAPED} (${FAKE_GPUS[0].busId}, ${FAKE_GPUS[0].uuid})\n`);
    expect(JSON.parse(child([cli, 'topo', '--json'], { FAKE_NVML_GPU0_NAME: HOSTILE }).stdout).gpus[0].name).toBe(HOSTILE);
  });

  test('info prints device and process names with their control characters escaped; --json keeps them as they came', () => {
    const cudart = buildFakeCudart(tmp, cudaDeviceProp.layout, [HOSTILE, FAKE_GPUS[0].name]);
    const script =
      "const { info } = require('./src/cli/info'); const out = []; info({ command: 'info', named: true, json: false, help: false }, { log: (s) => out.push(s), err: () => {} }); console.log(out.join('\\n'))";
    const env = { CUDA_BINDINGS_CUDART: cudart, FAKE_NVML_PROCESS_NAME: HOSTILE };
    const r = child(['-e', script], env);
    expect(hasControl(r.stdout)).toBe(false);
    expect(r.stdout).toContain(`Device 0: ${ESCAPED}\n`);
    expect(r.stdout).toContain(`4242 ${ESCAPED} (1024 MiB)`);
    const j = JSON.parse(child(['-e', script.replace('json: false', 'json: true')], env).stdout);
    expect([j.devices[0].name, j.devices[1].live.processes[0].name]).toEqual([HOSTILE, HOSTILE]);
  });

  test('info says the processes are unknown, and why, while they start faster than NVML lists them', () => {
    const cudart = buildFakeCudart(tmp, cudaDeviceProp.layout);
    const script =
      "const { info } = require('./src/cli/info'); const out = []; info({ command: 'info', named: true, json: false, help: false }, { log: (s) => out.push(s), err: () => {} }); console.log(out.join('\\n'))";
    const r = child(['-e', script], { CUDA_BINDINGS_CUDART: cudart, FAKE_NVML_PROCESS_CHURN: '1' });
    expect(r.stdout).toMatch(
      /processes +unknown: NVML_ERROR_INSUFFICIENT_SIZE: the list of processes kept growing while it was read \(5 tries\) \(in nvmlDeviceGetComputeRunningProcesses\)\n/,
    );
    expect(r.stdout).toMatch(/temperature +41 °C/);
  });

  test('top, topo without NVML: exit 1 naming what is missing', () => {
    for (const cmd of ['top', 'topo']) {
      const r = child([cli, cmd, '--count', '1'], { CUDA_BINDINGS_NVML: path.join(tmp, 'absent.so') });
      expect([cmd, r.status]).toEqual([cmd, 1]);
      expect(r.stderr).toBe(
        `cuda-bindings ${cmd}: libnvidia-ml: could not load the library. CUDA_BINDINGS_NVML names this file: point it at the library, or unset it to search the usual places.\n`,
      );
    }
  });

  test('--help for top and topo; a bad --interval is a usage error', () => {
    expect(child([cli, 'top', '--help']).stdout).toMatch(/^usage: cuda-bindings top \[--interval MS\] \[--count N\] \[--json\]/);
    expect(child([cli, 'topo', '--help']).stdout).toMatch(/^usage: cuda-bindings topo \[--json\]/);
    const bad = child([cli, 'top', '--interval', 'soon']);
    expect([bad.status, bad.stderr.split('\n').find((l) => l.startsWith('cuda-bindings'))]).toEqual([
      1,
      'cuda-bindings top: --interval needs a positive whole number of milliseconds, got "soon" (see cuda-bindings top --help)',
    ]);
  });
});

describe('the exporter example', () => {
  test('serves /metrics in the Prometheus text format, with the values NVML read', async () => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'examples', 'gpuExporter.ts'), '--port', '0'], {
      cwd: root,
      env: { ...process.env, CUDA_BINDINGS_NVML: lib },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = '';
        p.stdout.on('data', (d) => {
          buf += d;
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(buf);
          if (m) resolve(m[1]);
        });
        p.once('exit', (code) => reject(new Error(`exporter exited with ${code}`)));
      });
      const get = (u: string) =>
        new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
          http
            .get(u, (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
            })
            .on('error', reject);
        });
      const r = await get(url);
      expect([r.status, r.type]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
      const lines = r.body.trimEnd().split('\n');
      // Every line is a comment (HELP/TYPE), a sample (name{labels} value, or name value) or the blank between metrics.
      const bad = lines.filter(
        (l) => l !== '' && !/^# (HELP|TYPE) \w+ .+$/.test(l) && !/^\w+(\{(\w+="(?:[^"\\]|\\.)*",?)+\})? -?[0-9.e+]+$/.test(l),
      );
      expect(bad).toEqual([]);
      const value = (name: string, labels: string) =>
        Number(
          lines
            .find((l) => l.startsWith(`${name}{${labels}`))
            ?.split(' ')
            .pop(),
        );
      // dcgm-exporter's names and labels (core.gpuCollectors).
      const gpu0 = `gpu="0",UUID="${FAKE_GPUS[0].uuid}",pci_bus_id="${FAKE_GPUS[0].busId}",device="nvidia0",modelName="${FAKE_GPUS[0].name}"`;
      expect([
        value('DCGM_FI_DEV_GPU_UTIL', gpu0),
        value('DCGM_FI_DEV_FB_USED', gpu0),
        value('DCGM_FI_DEV_POWER_USAGE', gpu0),
        value('DCGM_FI_DEV_GPU_TEMP', gpu0),
        value('DCGM_FI_DEV_SM_CLOCK', gpu0),
      ]).toEqual([37, 1024, 123.456, 41, 1755]);
      expect(
        lines.some(
          (l) => l.startsWith(`gpu_process_memory_used_bytes{${gpu0},`) && /pid="4242",user="",command="python3"\} 1073741824$/.test(l),
        ),
      ).toBe(true);
      // Not reported by GPU 1: left out, not made up.
      expect(lines.some((l) => l.startsWith('DCGM_FI_DEV_MEMORY_TEMP{gpu="1"'))).toBe(false);
      expect((await get(url.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      p.kill('SIGTERM');
    }
  }, 60_000);
});
