// Every example in examples/ run as its user runs it (`node --import tsx examples/<name>.ts`, from the
// repo root), in a child process: it must exit 0 and print `Result = PASS`. vectorAdd also runs
// with 10,000,000 elements, each checked by the example. An example that needs two GPUs passes
// where there are two; on one it must exit 0, say why it is skipped and print `Result = WAIVED`.
// Without a device the suite is skipped, and its title says why.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cudart } from '../../src';

const root = path.join(__dirname, '..', '..');
// NVLink multicast (NVLS) stays off in every NCCL process these examples start, children included.
process.env.NCCL_NVLS_ENABLE = '0';
/** Examples that need two GPUs with peer access: they pass where there are two and are waived on one. */
const NEEDS_TWO_GPUS = new Set<string>(['simpleP2P']);
const TIMEOUT_MS = 170_000;

function probe(): { count: number; title: string } {
  try {
    const [err, count] = cudart.cudaGetDeviceCount();
    if (err !== cudart.cudaError_t.cudaSuccess)
      return { count: 0, title: `no CUDA device: cudaGetDeviceCount returned ${cudart.cudaGetErrorName(err)[1]}` };
    if (!count) return { count: 0, title: 'no CUDA device: cudaGetDeviceCount returned 0 devices' };
    return { count, title: `the examples on ${count} device(s)` };
  } catch (e) {
    return { count: 0, title: `no CUDA runtime: ${(e as Error).message.split('\n')[0]}` };
  }
}

const gpu = probe();
const examples = fs
  .readdirSync(path.join(root, 'examples'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
// A server runs until stopped: test/gpu/nvml.gpu.test.ts starts gpuExporter, scrapes it and stops it.
const SERVERS = new Set(['gpuExporter']);
const runnable = examples.filter((e) => !SERVERS.has(e) && (!NEEDS_TWO_GPUS.has(e) || gpu.count >= 2));
const waived = examples.filter((e) => NEEDS_TWO_GPUS.has(e) && gpu.count === 1);

function run(name: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join('examples', `${name}.ts`), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    maxBuffer: 1 << 26,
  });
  console.log(
    `== examples/${[`${name}.ts`, ...args].join(' ')}: exit ${r.status}${r.signal ? ` (${r.signal})` : ''}\n${r.stdout}${r.stderr}`,
  );
  // The whole of stderr and the end of stdout show in the diff when it fails.
  return {
    status: r.status,
    signal: r.signal,
    passed: /^Result = PASS$/m.test(r.stdout ?? ''),
    stdoutTail: (r.stdout ?? '').split('\n').slice(-15).join('\n'),
    stderr: r.stderr ?? '',
  };
}

const expected = { status: 0, signal: null, passed: true, stdoutTail: expect.any(String), stderr: expect.any(String) };

(gpu.count > 0 ? describe : describe.skip)(gpu.title, () => {
  test('the examples are all here', () => {
    for (const e of [
      'deviceQuery',
      'vectorAddDrv',
      'jitProgram',
      'vectorAdd',
      'bandwidthTest',
      'streamsAndEvents',
      'simpleCudaGraphs',
      'graphMemoryNodes',
      'hostCallback',
      'zeroCopy',
      'streamOrderedAllocation',
      'clock',
      'simpleCubemapTexture',
      'simpleP2P',
      'simpleIPC',
      'ltoLink',
      'nvvmKernel',
      'clusterLaunch',
      'managedMemory',
      'nvtxRanges',
      'checkpointProcess',
      'precompiledHeaders',
      'gpuService',
      'ncclAllReduce',
      'ncclInitAll',
    ]) {
      expect(examples).toContain(e);
    }
  });

  test.each(runnable)(
    'examples/%s.ts exits 0 and prints Result = PASS',
    (name) => {
      expect(run(name)).toEqual(expected);
    },
    TIMEOUT_MS + 10_000,
  );

  // test.each refuses an empty table: only where there is one GPU.
  if (waived.length > 0) {
    test.each(waived)(
      'examples/%s.ts on one GPU: exits 0, says why it is skipped and prints Result = WAIVED',
      (name) => {
        const r = run(name);
        expect({ ...r, waived: /^Result = WAIVED$/m.test(r.stdoutTail) }).toEqual({
          ...expected,
          passed: false,
          waived: true,
          stdoutTail: expect.stringMatching(new RegExp(`^${name}: needs two GPUs[^\\n]*; this machine has 1 — skipped$`, 'm')),
        });
      },
      TIMEOUT_MS + 10_000,
    );
  }

  test(
    'examples/vectorAdd.ts 10000000: ten million elements, each checked',
    () => {
      const r = run('vectorAdd', '10000000');
      expect(r).toEqual(expected);
      expect(r.stdoutTail).toContain('[Vector addition of 10000000 elements]');
    },
    TIMEOUT_MS + 10_000,
  );

  test(
    'examples/ncclAllReduce.ts says how many ranks it runs: one on one GPU, one process per GPU on more',
    () => {
      const r = run('ncclAllReduce', '--bytes', String(1 << 20));
      expect(r).toEqual(expected);
      expect(r.stdoutTail).toMatch(
        gpu.count === 1 ? /^ncclAllReduce: one GPU, so one rank/m : new RegExp(`^ncclAllReduce: ${gpu.count} GPUs, one process each`, 'm'),
      );
      expect(r.stdoutTail).toMatch(/^rank 0 of \d+ on GPU 0 .*: every \d+ sums right$/m);
    },
    TIMEOUT_MS + 10_000,
  );

  test(
    'examples/ncclAllReduce.ts --rank 0 --nranks 1 --master 127.0.0.1:PORT: one rank through the TCP rendezvous',
    () => {
      const r = run(
        'ncclAllReduce',
        '--rank',
        '0',
        '--nranks',
        '1',
        '--master',
        `127.0.0.1:${29600 + (process.pid % 300)}`,
        '--bytes',
        String(1 << 20),
      );
      expect(r).toEqual(expected);
    },
    TIMEOUT_MS + 10_000,
  );

  (gpu.count >= 2 ? test : test.skip)(
    `examples/ncclAllReduce.ts as two processes started by hand, meeting through the TCP rendezvous on loopback${gpu.count >= 2 ? '' : ` (skipped: needs two GPUs, this machine has ${gpu.count})`}`,
    async () => {
      const { spawn } = await import('node:child_process');
      const master = `127.0.0.1:${29900 + (process.pid % 90)}`;
      const results = await Promise.all(
        [0, 1].map(
          (rank) =>
            new Promise<{ code: number | null; out: string }>((resolve) => {
              const p = spawn(
                process.execPath,
                [
                  '--import',
                  'tsx',
                  path.join('examples', 'ncclAllReduce.ts'),
                  '--rank',
                  String(rank),
                  '--nranks',
                  '2',
                  '--master',
                  master,
                  '--device',
                  String(rank),
                  '--bytes',
                  String(64 << 20),
                ],
                { cwd: root, env: { ...process.env, NCCL_NVLS_ENABLE: '0' } },
              );
              let out = '';
              p.stdout.on('data', (d) => (out += d));
              p.stderr.on('data', (d) => (out += d));
              const t = setTimeout(() => p.kill('SIGKILL'), TIMEOUT_MS);
              p.on('close', (code) => {
                clearTimeout(t);
                console.log(`== rank ${rank}: exit ${code}\n${out}`);
                resolve({ code, out });
              });
            }),
        ),
      );
      expect(results.map((x) => x.code)).toEqual([0, 0]);
      expect(results[0].out).toMatch(/^Result = PASS$/m);
      expect(results[1].out).toMatch(/^rank 1 of 2 on GPU 1 .*: every \d+ sums right$/m);
    },
    TIMEOUT_MS + 10_000,
  );
});
