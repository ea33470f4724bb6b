// checkpointProcess: the CUDA checkpoint API (cuda.core's checkpoint.Process). A child process puts
// 64 MiB of known data in device memory; this one locks it, checkpoints it (the child's GPU memory
// moves into its host memory and its device memory is released: the free memory before and after
// shows it), restores it and unlocks it; the child then checks its bytes.
//   npx tsx examples/checkpointProcess.ts
// Exits with status 1, and one line on stderr saying why, when a device is missing or the driver
// refuses (the message says what it needs: a Linux driver r570 or later, a process of this user).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { CheckpointProcess } = core;

const CHILD = `
  const { core } = require('cuda-bindings');
  const n = 16 << 20;
  const want = Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 0);
  const buf = core.Device.get(0).allocate(n * 4);
  buf.copyFrom(want);
  console.log('ready');
  require('readline').createInterface({ input: process.stdin }).on('line', () => {
    const got = buf.copyTo(new Uint32Array(n));
    console.log(got.every((v, i) => v === want[i]) ? 'intact' : 'CHANGED');
    process.exit(0);
  });`;

async function main(): Promise<number> {
  const dev = firstDevice('checkpointProcess');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name}`);
  // The child resolves 'cuda-bindings' as this script does (tsx, and the clone's paths or node_modules).
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => (await lines.next()).value as string | undefined;
  try {
    if ((await next()) !== 'ready') throw new Error('the child did not start');
    const p = new CheckpointProcess(child.pid!);
    const free = () => `${(dev.memoryInfo().free / 2 ** 20).toFixed(0)} MiB free`;
    console.log(`> child ${p.pid} holds 64 MiB of device memory (${p.state}; ${free()})`);
    p.lock(30_000);
    console.log(`> locked: its CUDA calls wait (${p.state})`);
    p.checkpoint();
    console.log(`> checkpointed: its GPU memory is in its host memory (${p.state}; ${free()})`);
    p.restore();
    console.log(`> restored (${p.state}; ${free()})`);
    p.unlock();
    console.log(`> unlocked (${p.state})`);
    child.stdin.write('check\n');
    const answer = await next();
    console.log(`> the child reads its 64 MiB back: ${answer}`);
    console.log(`Result = ${answer === 'intact' ? 'PASS' : 'FAIL'}`);
    return answer === 'intact' ? 0 : 1;
  } catch (e) {
    console.error(`checkpointProcess: ${(e as Error).message}`);
    child.kill();
    return 1;
  }
}

main().then((code) => (process.exitCode = code));
