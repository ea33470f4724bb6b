// Promise forms of the waits: they settle with the same statuses as the blocking calls.
import { cudart } from '../../../src';

const hasDriver = cudart.cudaGetDeviceCount()[0] !== cudart.cudaError_t.cudaErrorInsufficientDriver;

(hasDriver ? describe.skip : describe)('without a driver', () => {
  test('each wait resolves with the status the blocking call returns', async () => {
    const s = cudart.cudaStream_t(0x10);
    expect(await cudart.async.cudaStreamSynchronize(s)).toEqual(cudart.cudaStreamSynchronize(s));
    expect(await cudart.async.cudaStreamSynchronize(null)).toEqual(cudart.cudaStreamSynchronize(null));
    expect(await cudart.async.cudaStreamSynchronize(cudart.cudaStreamPerThread)).toEqual([cudart.cudaError_t.cudaErrorInsufficientDriver]);
    expect(await cudart.async.cudaEventSynchronize(cudart.cudaEvent_t(0x20))).toEqual(
      cudart.cudaEventSynchronize(cudart.cudaEvent_t(0x20)),
    );
    expect(await cudart.async.cudaDeviceSynchronize()).toEqual(cudart.cudaDeviceSynchronize());
  });
});

test("every async function reports a bad argument one way: it rejects, with the blocking call's message", async () => {
  const calls: [string, () => Promise<unknown>][] = [
    ['cudaStreamSynchronize', () => cudart.async.cudaStreamSynchronize(3 as any)],
    ['cudaEventSynchronize', () => cudart.async.cudaEventSynchronize('e' as any)],
    ['cudaMemcpy', () => cudart.async.cudaMemcpy(new Uint8Array(4), 0x1000n, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost)],
    ['cudaMemcpy', () => cudart.async.cudaMemcpy(0x1000n, 'text' as never, 4, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)],
    ['memcpyHost', () => cudart.async.memcpyHost(new Uint8Array(2), new Uint8Array(4), 4)],
  ];
  for (const [name, call] of calls) {
    let promise: Promise<unknown> | undefined;
    expect(() => (promise = call())).not.toThrow();
    await expect(promise).rejects.toThrow(new RegExp(`^async\\.${name}: parameter '`));
  }
  // The same words as the blocking calls, with 'async.' before the name.
  const blocking = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return `async.${(e as Error).message}`;
    }
  };
  await expect(cudart.async.cudaStreamSynchronize(3 as any)).rejects.toThrow(blocking(() => cudart.cudaStreamSynchronize(3 as any)));
  await expect(cudart.async.cudaMemcpy(new Uint8Array(4), 0x1000n, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost)).rejects.toThrow(
    blocking(() => cudart.cudaMemcpy(new Uint8Array(4), 0x1000n, 8, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost)),
  );
});

test('async.cudaMemcpy: host extents checked before the pool call; the status as the blocking call gives it', async () => {
  const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;
  await expect(cudart.async.cudaMemcpy(new Uint8Array(4), 0x1000n, 8, D2H)).rejects.toThrow(
    new RangeError("async.cudaMemcpy: parameter 'dst' holds 4 bytes but count needs 8"),
  );
  await expect(cudart.async.cudaMemcpy(0x1000n, 'text' as never, 4, D2H)).rejects.toThrow(TypeError);
  expect(await cudart.async.cudaMemcpy(new Uint8Array(8), 0x1000n, 8, D2H)).toEqual(cudart.cudaMemcpy(new Uint8Array(8), 0x1000n, 8, D2H));
});

test('async.memcpyHost copies host memory on the thread pool, several at once; extents checked', async () => {
  const src = Buffer.from(Array.from({ length: 1 << 20 }, (_, i) => i & 0xff));
  const dst = Buffer.alloc(1 << 20);
  const q = 1 << 18;
  await Promise.all([0, 1, 2, 3].map((k) => cudart.async.memcpyHost(dst.subarray(k * q), src.subarray(k * q, (k + 1) * q), q)));
  expect(dst.equals(src)).toBe(true);
  await expect(cudart.async.memcpyHost(new Uint8Array(2), src, 4)).rejects.toThrow(
    new RangeError("async.memcpyHost: parameter 'dst' holds 2 bytes but count needs 4"),
  );
  await expect(cudart.async.memcpyHost(null, src, 4)).rejects.toThrow(TypeError);
});
