// JS host functions on a real GPU: order, 10,000 in a row, exceptions, the deadlock guard, exit.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cudart } from '../../src';
import { describeGpu } from './helpers';

describeGpu('host functions on a GPU', () => {
  let s: cudart.cudaStream_t;
  beforeAll(() => {
    cudart.cudaSetDevice(0);
    s = cudart.cudaStreamCreate()[1]!;
  });
  afterAll(() => void cudart.cudaStreamDestroy(s));

  test('10,000 host functions in a row run in stream order on the JS thread', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 10_000; i++) expect(cudart.cudaLaunchHostFunc(s, () => seen.push(i), null)).toEqual([0]);
    expect(await cudart.async.cudaStreamSynchronize(s)).toEqual([0]);
    expect(seen.length).toBe(10_000);
    expect(seen.every((v, i) => v === i)).toBe(true);
    expect(cudart.pendingHostFunctions()).toBe(0);
  }, 60_000);

  test('a stream callback gets its stream, the status and its user data', async () => {
    const got: unknown[] = [];
    const tag = Buffer.from('tag');
    cudart.cudaStreamAddCallback(s, (stream, status, user) => got.push(stream, status, user), tag, 0);
    await cudart.async.cudaStreamSynchronize(s);
    expect(got).toEqual([s, 0, tag]);
  });

  test('an exception in a host function is reported; later ones still run', async () => {
    const errors: string[] = [];
    const onError = (e: Error) => errors.push(e.message);
    cudart.hostCallbacks.on('error', onError);
    let after = false;
    cudart.cudaLaunchHostFunc(
      s,
      () => {
        throw new Error('boom');
      },
      null,
    );
    cudart.cudaLaunchHostFunc(
      s,
      () => {
        after = true;
      },
      null,
    );
    await cudart.async.cudaStreamSynchronize(s);
    cudart.hostCallbacks.off('error', onError);
    expect([errors, after]).toEqual([['boom'], true]);
  });

  test('a blocking cudaStreamSynchronize with a host function pending is refused, not a deadlock', async () => {
    // The host function cannot run while this synchronous code holds the JS thread, so it is
    // pending at the check whatever the GPU has done.
    let ran = false;
    cudart.cudaLaunchHostFunc(
      s,
      () => {
        ran = true;
      },
      null,
    );
    expect(() => cudart.cudaStreamSynchronize(s)).toThrow(/cudaStreamSynchronize: 1 JS host function is still pending/);
    expect(() => cudart.cudaDeviceSynchronize()).toThrow(/cudaDeviceSynchronize: 1 JS host function is still pending/);
    expect(await cudart.async.cudaStreamSynchronize(s)).toEqual([0]);
    expect(ran).toBe(true);
    expect(cudart.cudaStreamSynchronize(s)).toEqual([0]);
  });

  test('a script that ends with host functions pending runs them and exits 0', () => {
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `
      const { cudart } = require('./src');
      const [, s] = cudart.cudaStreamCreate();
      for (let i = 0; i < 100; i++) cudart.cudaLaunchHostFunc(s, () => { if (i === 99) console.log('last ran'); }, null);`,
      ],
      { encoding: 'utf8', cwd: path.join(__dirname, '..', '..'), timeout: 60_000 },
    );
    expect([r.status, r.signal, r.stdout.trim()]).toEqual([0, null, 'last ran']);
  }, 60_000);
});
