// The CUDA checkpoint API on a GPU: a child Node process holds device memory with known bytes; this
// process locks it, checkpoints it (its GPU memory moves to its host memory and the GPU is let go),
// restores it (once onto the GPUs it had, once with an explicit mapping of device 0 onto itself) and
// unlocks it; the child then reads its bytes back and says whether they are intact.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { core } from '../../src';
import { describeGpu } from './helpers';

const { CheckpointProcess, Device } = core;
const root = path.join(__dirname, '..', '..');

// The child: 64 MiB of device memory filled with a pattern; on each 'check' line it copies it back
// and answers 'ok' or how many words differ; 'exit' ends it.
const CHILD = `
  const { core } = require('./src');
  const d = core.Device.get(0);
  const n = 16 << 20;
  const want = new Uint32Array(n);
  for (let i = 0; i < n; i++) want[i] = (Math.imul(i, 2654435761) ^ 0x5eed) >>> 0;
  const buf = d.allocate(n * 4);
  buf.copyFrom(want);
  console.log('ready');
  require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'exit') process.exit(0);
    const got = buf.copyTo(new Uint32Array(n));
    let bad = 0;
    for (let i = 0; i < n; i++) if (got[i] !== want[i]) bad++;
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

describeGpu('CUDA checkpoint of another process', () => {
  test('a child process is locked, checkpointed, restored and unlocked with its device memory intact', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', CHILD], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      expect(await nextLine(child)).toBe('ready');
      const p = new CheckpointProcess(child.pid!);
      expect(p.state).toBe('running');
      p.lock(30_000);
      expect(p.state).toBe('locked');
      p.checkpoint();
      expect(p.state).toBe('checkpointed');
      p.restore();
      expect(p.state).toBe('locked');
      p.unlock();
      expect(p.state).toBe('running');
      child.stdin.write('check\n');
      expect(await nextLine(child)).toBe('ok');
      // Again, restoring device 0's memory onto device 0 named explicitly.
      const d = Device.get(0);
      p.lock(30_000)
        .checkpoint()
        .restore(new Map([[d, d]]))
        .unlock();
      child.stdin.write('check\n');
      expect(await nextLine(child)).toBe('ok');
      expect(() => p.unlock()).toThrow(/unlock\(\) needs the process locked; it is running/);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nchild stderr:\n${stderr}`, { cause: e });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.stdin.write('exit\n');
        await gone;
      }
    }
  }, 120_000);
});
