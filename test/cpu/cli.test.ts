// The CLI without a driver (this machine, CI): each command's output and exit status.
import { main } from '../../src/cli/main';
import { cudart } from '../../src';

/** The CUDA version the bindings were generated from, as the CLI prints it (13000 → 13.0). */
const VERSION = `${Math.floor(cudart.CUDART_VERSION / 1000)}.${(cudart.CUDART_VERSION % 1000) / 10}`;

const hasDriver = cudart.cudaGetDeviceCount()[0] !== cudart.cudaError_t.cudaErrorInsufficientDriver;

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { log: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const NO_DRIVER = 'cuda-bindings: no NVIDIA driver found (cudaErrorInsufficientDriver): install the driver or check LD_LIBRARY_PATH';

(hasDriver ? describe.skip : describe)('without a driver', () => {
  test('info prints the runtime version and the libraries, then the reason, and exits 1', async () => {
    const r = await run();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(new RegExp(`^CUDA runtime ${VERSION.replace('.', '\\.')}\\nlibcudart: \\S*libcudart\\.so\\.13\\S*\\nlibcuda: {3}not found\\nlibnvrtc: {2}not found$`));
    expect(r.err).toBe(NO_DRIVER);
  });

  test('info --json gives the same as JSON with the error', async () => {
    const r = await run('info', '--json');
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.runtimeVersion).toBe(VERSION);
    expect(j.libraries.libcudart).toMatch(/libcudart\.so\.13/);
    expect(j.error).toEqual({ code: 35, name: 'cudaErrorInsufficientDriver', message: NO_DRIVER.replace('cuda-bindings: ', '') });
  });

  test.each(['bandwidth', 'latency'])('%s exits 1 with the reason', async (cmd) => {
    const r = await run(cmd);
    expect([r.code, r.out, r.err]).toEqual([1, '', NO_DRIVER]);
  });

  test('--device is checked after the driver', async () => {
    const r = await run('info', '--device', '3');
    expect(r.code).toBe(1);
  });
});

test('an unknown command is a usage error: exit 2 with the usage', async () => {
  const r = await run('bogus');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^cuda-bindings: unknown command 'bogus'\n\nusage: cuda-bindings \[command\]/);
});

test('an unknown option is a usage error naming it', async () => {
  const r = await run('bandwidth', '--fast');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^cuda-bindings: unknown option '--fast'\n\nusage: cuda-bindings bandwidth/);
});

test('--device needs a number', async () => {
  const r = await run('latency', '--device', 'one');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--device needs a device number, got "one"/);
});

test.each([['info'], ['bandwidth'], ['latency']])('%s --help prints its usage and exits 0', async (cmd) => {
  const r = await run(cmd, '--help');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(new RegExp(`^usage: cuda-bindings ${cmd} \\[--json\\] \\[--device N\\]`));
});

test('--help alone prints the commands', async () => {
  const r = await run('--help');
  expect([r.code, r.out.split('\n')[0]]).toEqual([0, 'usage: cuda-bindings [command] [--json] [--device N] [--help]']);
});
