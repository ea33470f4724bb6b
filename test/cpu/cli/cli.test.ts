// The CLI without a driver (this machine, CI): each command's output and exit status; every failure is
// one line and exit 1 (a fake libcudart stands in for a CUDA call that fails mid-command).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../../src/cli/main';
import { cudart } from '../../../src';
import { buildFailingMallocHostCudart, fakeDir } from '../helpers/fake-cudart-cli';

/** The CUDA version the bindings were generated from, as the CLI prints it (13000 → 13.0). */
const VERSION = `${Math.floor(cudart.CUDART_VERSION / 1000)}.${(cudart.CUDART_VERSION % 1000) / 10}`;

const hasDriver = cudart.cudaGetDeviceCount()[0] !== cudart.cudaError_t.cudaErrorInsufficientDriver;

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { log: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const REASON = 'no NVIDIA driver found (cudaErrorInsufficientDriver): install the driver or check LD_LIBRARY_PATH';
const NO_DRIVER = `cuda-bindings info: ${REASON}`;

(hasDriver ? describe.skip : describe)('without a driver', () => {
  test('info prints the runtime version and the libraries, then the reason, and exits 1', async () => {
    const r = await run();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      new RegExp(
        `^CUDA runtime ${VERSION.replace('.', '\\.')}\\nlibcudart: \\S*libcudart\\.so\\.13\\S*\\nlibcuda: {3}not found\\nlibnvrtc: {2}not found$`,
      ),
    );
    expect(r.err).toBe(NO_DRIVER);
  });

  test('info --json gives the same as JSON with the error', async () => {
    const r = await run('info', '--json');
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.runtimeVersion).toBe(VERSION);
    expect(j.libraries.libcudart).toMatch(/libcudart\.so\.13/);
    expect(j.error).toEqual({ name: 'cudaErrorInsufficientDriver', code: 35, message: REASON });
    // The keys a success has are there, null where unknown.
    expect([j.driverVersion, j.deviceCount, j.devices, j.nvml]).toEqual([null, null, null, null]);
  });

  test.each(['bandwidth', 'latency'])('%s exits 1 with the reason', async (cmd) => {
    const r = await run(cmd);
    expect([r.code, r.out, r.err]).toEqual([1, '', `cuda-bindings ${cmd}: ${REASON}`]);
  });

  test('--device is checked after the driver', async () => {
    const r = await run('info', '--device', '3');
    expect(r.code).toBe(1);
  });
});

test('an unknown command is one line and exit 1', async () => {
  const r = await run('bogus');
  expect([r.code, r.out, r.err]).toEqual([1, '', "cuda-bindings: unknown command 'bogus' (see cuda-bindings --help)"]);
});

test('the one line on stderr prints control characters escaped: a message may carry text from outside', async () => {
  const r = await run('\x1b]0;pwned\x07\x9b2J');
  expect([r.code, r.err]).toEqual([1, "cuda-bindings: unknown command '\\x1b]0;pwned\\x07\\u009b2J' (see cuda-bindings --help)"]);
});

test('an unknown option is one line naming it, exit 1 (parseArgs, strict)', async () => {
  const r = await run('bandwidth', '--fast');
  expect([r.code, r.out, r.err]).toEqual([1, '', "cuda-bindings bandwidth: unknown option '--fast' (see cuda-bindings bandwidth --help)"]);
  expect((await run('info', '-x')).err).toBe("cuda-bindings info: unknown option '-x' (see cuda-bindings info --help)");
});

test('an option without its value, or a value for a flag, names the option', async () => {
  expect((await run('latency', '--device')).err).toBe('cuda-bindings latency: --device needs a value (see cuda-bindings latency --help)');
  expect((await run('info', '--json=yes')).err).toBe('cuda-bindings info: --json takes no value (see cuda-bindings info --help)');
  expect((await run('info', 'extra', '--json')).code).toBe(1);
});

test('--device needs a number', async () => {
  const r = await run('latency', '--device', 'one');
  expect(r.code).toBe(1);
  expect(r.err).toBe('cuda-bindings latency: --device needs a device number, got "one" (see cuda-bindings latency --help)');
  expect((await run('latency', '--device=2', '--help')).code).toBe(0);
});

test('with --json every failure prints { error: { name, code, message } }: a bad option too', async () => {
  const r = await run('topo', '--json', '--colour');
  expect(r.code).toBe(1);
  expect(JSON.parse(r.out)).toEqual({ error: { name: 'UsageError', code: null, message: "unknown option '--colour'" } });
});

test('an unexpected exception is one line without a stack, exit 1, and the same JSON shape', async () => {
  const err: string[] = [];
  const boom = () => {
    throw new TypeError('the terminal went away');
  };
  const code = await main(['info', '--help'], { log: boom, err: (s) => err.push(s) });
  expect([code, err]).toEqual([1, ['cuda-bindings info: the terminal went away']]);
  const out: string[] = [];
  let first = true;
  const code2 = await main(['topo', '--help', '--json'], {
    log: (s) => {
      if (first) {
        first = false;
        boom();
      }
      out.push(s);
    },
    err: () => undefined,
  });
  expect([code2, JSON.parse(out.join('\n'))]).toEqual([1, { error: { name: 'TypeError', code: null, message: 'the terminal went away' } }]);
});

test('--version prints the package version and the runtime it loads, without a driver, exit 0', async () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const r = await run('--version');
  expect(r.code).toBe(0);
  const [first, second, ...more] = r.out.split('\n');
  expect([first, more]).toEqual([`cuda-bindings ${pkg.version}`, []]);
  expect(second).toMatch(/^CUDA runtime 13\.0 \(\S*libcudart\.so\.13\S*\)$/);
  const j = JSON.parse((await run('-V', '--json')).out);
  expect(j).toEqual({ version: pkg.version, cudaRuntime: '13.0', libcudart: expect.stringMatching(/libcudart/), error: null });
});

test('--version when libcudart does not load: says so and still exits 0', async () => {
  let result: { code: number; out: string[] } | undefined;
  await jest.isolateModulesAsync(async () => {
    jest.doMock('../../../src/runtime', () => ({
      ...jest.requireActual('../../../src/runtime'),
      cudaRuntimeGetVersion: () => {
        throw new Error('libcudart: could not load the library. Tried:\n  - libcudart.so.13: not found\nInstall the CUDA 13 runtime');
      },
    }));
    const { main: isolated } = require('../../../src/cli/main') as typeof import('../../../src/cli/main');
    const out: string[] = [];
    result = { code: await isolated(['--version'], { log: (s) => out.push(s), err: () => undefined }), out };
  });
  jest.dontMock('../../../src/runtime');
  expect(result!.code).toBe(0);
  expect(result!.out[1]).toBe('CUDA runtime: not loaded (libcudart: could not load the library. Install the CUDA 13 runtime)');
});

describe('a CUDA call that fails mid-command (a fake libcudart whose cudaMallocHost fails)', () => {
  let dir = '';
  let lib = '';
  beforeAll(() => {
    dir = fakeDir();
    lib = buildFailingMallocHostCudart(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const script = `
    const { main } = require('./src/cli/main');
    main(process.argv.slice(1)).then((code) => {
      const count = require('koffi').load(process.env.CUDA_BINDINGS_CUDART).func('int fake_count(const char *)');
      const n = Object.fromEntries(['cudaMalloc', 'cudaFree', 'cudaMallocHost', 'cudaFreeHost', 'cudaEventCreate', 'cudaEventDestroy', 'cudaStreamCreateWithFlags', 'cudaStreamDestroy'].map((f) => [f, count(f)]));
      process.stdout.write('COUNTS ' + JSON.stringify(n) + '\\n');
      process.exitCode = code;
    });`;
  const cli = (...argv: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', '-e', script, '--', ...argv], {
      cwd: path.join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
      env: { ...process.env, CUDA_BINDINGS_CUDART: lib, FAKE_FAIL_MALLOC_HOST: '1' },
      timeout: 60_000,
    });

  test('bandwidth: one line on stderr, no stack, exit 1, and the device buffers, events and stream allocated before it are freed', () => {
    const r = cli('bandwidth');
    expect(r.stderr).toBe('cuda-bindings bandwidth: cudaErrorMemoryAllocation: out of memory (in cudaMallocHost)\n');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.status).toBe(1);
    const n = JSON.parse(/COUNTS (.*)/.exec(r.stdout)![1]);
    expect(n).toEqual({
      cudaMalloc: 2,
      cudaFree: 2,
      cudaMallocHost: 1,
      cudaFreeHost: 0,
      cudaEventCreate: 2,
      cudaEventDestroy: 2,
      cudaStreamCreateWithFlags: 1,
      cudaStreamDestroy: 1,
    });
  });

  test('bandwidth --json: the error in the one JSON shape on stdout', () => {
    const r = cli('bandwidth', '--json');
    expect(r.status).toBe(1);
    const json = r.stdout.slice(0, r.stdout.indexOf('COUNTS'));
    expect(JSON.parse(json)).toEqual({
      error: { name: 'cudaErrorMemoryAllocation', code: 2, message: 'cudaErrorMemoryAllocation: out of memory (in cudaMallocHost)' },
    });
  });

  test('the built bin prints the same one line: nothing reaches the terminal as a stack', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts'), 'bandwidth'],
      {
        encoding: 'utf8',
        env: { ...process.env, CUDA_BINDINGS_CUDART: lib, FAKE_FAIL_MALLOC_HOST: '1' },
        timeout: 60_000,
      },
    );
    expect([r.status, r.stderr]).toEqual([1, 'cuda-bindings bandwidth: cudaErrorMemoryAllocation: out of memory (in cudaMallocHost)\n']);
  });
});

test.each([['info'], ['bandwidth'], ['latency']])('%s --help prints its usage and exits 0', async (cmd) => {
  const r = await run(cmd, '--help');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(new RegExp(`^usage: cuda-bindings ${cmd} \\[--json\\] \\[--device N\\]`));
});

test('--help alone prints the commands', async () => {
  const r = await run('--help');
  expect([r.code, r.out.split('\n')[0]]).toEqual([0, 'usage: cuda-bindings [command] [--json] [--device N] [--help] [--version]']);
});

describe('--json has a stable shape on success: numbers as numbers, null where a value is absent (the fake, every call succeeding)', () => {
  let dir = '';
  let lib = '';
  beforeAll(() => {
    dir = fakeDir();
    lib = buildFailingMallocHostCudart(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const json = (...argv: string[]) => {
    const script = `require('./src/cli/main').main(process.argv.slice(1)).then((code) => {
      const count = require('koffi').load(process.env.CUDA_BINDINGS_CUDART).func('int fake_count(const char *)');
      process.stderr.write(JSON.stringify({ code, malloc: count('cudaMalloc'), free: count('cudaFree'), mallocHost: count('cudaMallocHost'), freeHost: count('cudaFreeHost') }));
    });`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script, '--', ...argv, '--json'], {
      cwd: path.join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, CUDA_BINDINGS_CUDART: lib, CUDA_BINDINGS_NVML: path.join(dir, 'absent.so') },
    });
    return { out: JSON.parse(r.stdout), end: JSON.parse(r.stderr) };
  };

  test('bandwidth --json: every row has numbers, and what it allocated is freed', () => {
    const { out, end } = json('bandwidth');
    expect(end).toEqual({ code: 0, malloc: 2, free: 2, mallocHost: 1, freeHost: 1 });
    expect(out.device).toBe(0);
    expect(out.rows).toHaveLength(25);
    for (const r of out.rows)
      expect([typeof r.bytes, typeof r.gbPerSecond, Number.isFinite(r.gbPerSecond)]).toEqual(['number', 'number', true]);
  }, 120_000);

  test("bandwidth prints the device's name with its control characters escaped", () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts'), 'bandwidth'],
      {
        encoding: 'utf8',
        env: { ...process.env, CUDA_BINDINGS_CUDART: lib, FAKE_DEVICE_NAME: 'GPU\x1b[2J\x1b]0;pwned\x07\x9b31m' },
        timeout: 120_000,
      },
    );
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(
      'Device 0: GPU\\x1b[2J\\x1b]0;pwned\\x07\\u009b31m  (GB/s = 10^9 bytes a second; device-to-device counts the read and the write)',
    );
  }, 120_000);

  test('info --json without NVML: the same keys as ever, live null on each device and the reason in nvml.error', () => {
    const { out, end } = json('info');
    expect(end.code).toBe(0);
    expect(Object.keys(out)).toEqual([
      'driverVersion',
      'runtimeVersion',
      'libraries',
      'deviceCount',
      'devices',
      'nvml',
      'driverTooOld',
      'error',
    ]);
    expect([out.deviceCount, out.error, out.nvml.available, typeof out.nvml.error, out.driverTooOld]).toEqual([
      1,
      null,
      false,
      'string',
      null,
    ]);
    const d = out.devices[0];
    expect([d.name, d.live, typeof d.memoryTotalBytes, typeof d.clockMHz, d.peerAccess]).toEqual([
      'Fake GPU',
      null,
      'number',
      'number',
      [],
    ]);
  }, 120_000);
});
