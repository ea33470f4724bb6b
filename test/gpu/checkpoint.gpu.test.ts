// The CUDA checkpoint API on a GPU: a child Node process holds device memory with known bytes; this
// process locks it, checkpoints it (its GPU memory moves to its host memory and the GPU is let go),
// restores it (once onto the GPUs it had, once with an explicit mapping of every GPU onto itself; on a
// machine of two GPUs, after a mapping that leaves one out is refused) and unlocks it; the child then
// reads its bytes back and says whether they are intact.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { core } from '../../src';
import { describeGpu } from './helpers';

const { CheckpointProcess, Device } = core;
const root = path.join(__dirname, '..', '..');

// The child: 64 MiB of device memory on each of `devices`, filled with a pattern; on each 'check' line
// it copies them back and answers 'ok' or how many words differ; 'exit' ends it.
const childCode = (devices: number[]) => `
  const { core } = require('./src');
  const n = 16 << 20;
  const want = new Uint32Array(n);
  for (let i = 0; i < n; i++) want[i] = (Math.imul(i, 2654435761) ^ 0x5eed) >>> 0;
  const bufs = ${JSON.stringify(devices)}.map((d) => core.Device.get(d).makeCurrent().allocate(n * 4).copyFrom(want));
  console.log('ready');
  require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'exit') process.exit(0);
    let bad = 0;
    for (const buf of bufs) {
      const got = buf.copyTo(new Uint32Array(n));
      for (let i = 0; i < n; i++) if (got[i] !== want[i]) bad++;
    }
    console.log(bad === 0 ? 'ok' : 'bad ' + bad);
  });`;

/** The child's next line of output. */
function nextLine(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (b: Buffer) => {
      text += b.toString();
      const i = text.indexOf('\n');
      if (i >= 0) {
        child.stdout.off('data', onData);
        resolve(text.slice(0, i));
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before answering`)));
  });
}

/** Runs `body` with a child holding memory on `devices`; the child is ended afterwards and its stderr goes into a failure. */
async function withChild(devices: number[], body: (c: ChildProcessWithoutNullStreams) => Promise<void>): Promise<void> {
  const c = spawn(process.execPath, ['--import', 'tsx', '-e', childCode(devices)], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  c.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    expect(await nextLine(c)).toBe('ready');
    await body(c);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nchild stderr:\n${stderr}`, { cause: e });
  } finally {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.stdin.write('exit\n');
      await gone;
    }
  }
}

/** Whether the child's memory is intact. */
async function check(c: ChildProcessWithoutNullStreams): Promise<string> {
  c.stdin.write('check\n');
  return nextLine(c);
}

describeGpu('CUDA checkpoint of another process', () => {
  test(
    'a child process is locked, checkpointed, restored and unlocked with its device memory intact',
    () =>
      withChild([0], async (c) => {
        const p = new CheckpointProcess(c.pid!);
        expect(p.state).toBe('running');
        p.lock(30_000);
        expect(p.state).toBe('locked');
        p.checkpoint();
        expect(p.state).toBe('checkpointed');
        p.restore();
        expect(p.state).toBe('locked');
        p.unlock();
        expect(p.state).toBe('running');
        expect(await check(c)).toBe('ok');
        // Again, with an explicit mapping: every GPU of the machine onto itself.
        const all = new Map(Array.from({ length: Device.count() }, (_, i) => [Device.get(i), Device.get(i)] as const));
        p.lock(30_000).checkpoint();
        if (all.size > 1) {
          // Driver r580 refuses a mapping that names only the GPU the process used, where it could see
          // more (H200 pair, 2026-11-27); the process stays checkpointed and a whole mapping restores it.
          const d = Device.get(0);
          expect(() => p.restore(new Map([[d, d]]))).toThrow(/a gpuMapping must name every GPU the process could see.*names 1/);
          expect(p.state).toBe('checkpointed');
        }
        p.restore(all).unlock();
        expect(await check(c)).toBe('ok');
        expect(() => p.unlock()).toThrow(/unlock\(\) needs the process locked; it is running/);
      }),
    120_000,
  );
});

describeGpu(
  'CUDA checkpoint of a process on two GPUs',
  () => {
    test(
      'memory on both GPUs comes back intact after checkpoint and restore',
      () =>
        withChild([0, 1], async (c) => {
          const p = new CheckpointProcess(c.pid!);
          p.lock(30_000).checkpoint().restore().unlock();
          expect(await check(c)).toBe('ok');
        }),
      120_000,
    );
  },
  2,
);
