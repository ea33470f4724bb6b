// The seams on a GPU: JS host functions captured into graphs and set on host nodes run at every
// launch; a cached block freed on a stream with a slow kernel is not handed to another stream
// until the kernel is done; a kernel of a closed module and a closed stream never reach CUDA.
import { core, cudart } from '../../src';
import * as HC from '../../src/ffi/host-callbacks';
import { describeGpu } from './helpers';

const { Device, Program, CachingAllocator, i32, i64 } = core;

// Spins for about `cycles` clock cycles, then writes `value` to out[0..n).
const SLOW = `
extern "C" __global__ void slowFill(int *out, int value, int n, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) { }
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = value;
}`;

describeGpu('seams on a GPU', () => {
  test('a JS host function captured by stream.capture runs at every launch, is pending only from a launch until it ran, and is released with the graph', async () => {
    const d = Device.get(0);
    const s = d.createStream({ nonBlocking: true });
    let runs = 0;
    const graph = await s.capture((st) => st.onComplete(() => runs++));
    expect(cudart.pendingHostFunctions()).toBe(0);
    expect(cudart.cudaDeviceSynchronize()).toEqual([0]); // no longer refused: nothing is pending
    const exec = graph.instantiate();
    for (let i = 0; i < 3; i++) exec.launch(s);
    // From a core launch until they ran, they are pending: a blocking wait is refused, not a deadlock.
    expect(cudart.pendingHostFunctions()).toBe(3);
    expect(() => cudart.cudaStreamSynchronize(s.handle)).toThrow(/^cudaStreamSynchronize: 3 JS host functions are still pending/);
    await s.synchronize();
    expect([runs, cudart.pendingHostFunctions()]).toEqual([3, 0]);
    graph.close();
    exec.launch(s);
    await s.synchronize();
    expect(runs).toBe(4);
    const kept = HC.graphHostFunctions();
    exec.close();
    expect(HC.graphHostFunctions()).toBe(kept - 1);
    s.close();
  });

  test('graph host nodes: 9,000 params with JS functions, then a node that runs at every launch with its userData, and cudaLaunchHostFunc still works', async () => {
    const params = Array.from({ length: 9000 }, (_, i) => new cudart.cudaHostNodeParams({ fn: () => i }));
    expect(params).toHaveLength(9000);
    const seen: bigint[] = [];
    const [, g] = cudart.cudaGraphCreate(0);
    expect(cudart.cudaGraphAddHostNode(g, null, 0, { fn: (u: bigint) => seen.push(u), userData: 0x42n })[0]).toBe(0);
    const [, exec] = cudart.cudaGraphInstantiate(g, 0);
    const [, s] = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking);
    for (let i = 0; i < 3; i++) expect(cudart.cudaGraphLaunch(exec, s)).toEqual([0]);
    let ran = false;
    expect(cudart.cudaLaunchHostFunc(s, () => (ran = true), null)).toEqual([0]);
    expect(await cudart.async.cudaStreamSynchronize(s)).toEqual([0]);
    expect([seen, ran]).toEqual([[0x42n, 0x42n, 0x42n], true]);
    cudart.cudaGraphExecDestroy(exec);
    cudart.cudaGraphDestroy(g);
    cudart.cudaStreamDestroy(s);
  });

  test('CachingAllocator with shareAcrossStreams: a block freed on a stream with a slow kernel goes to another stream only once the kernel is done', async () => {
    const d = Device.get(0);
    const kernel = Program.compile(SLOW).load().kernel('slowFill');
    const alloc = new CachingAllocator({ shareAcrossStreams: true });
    core.setAllocator(alloc);
    const s1 = d.createStream({ nonBlocking: true }),
      s2 = d.createStream({ nonBlocking: true });
    try {
      const n = 256;
      const a = d.allocate(n * 4, { stream: s1 });
      const first = a.ptr;
      // About 0.2 s at 2 GHz: long enough for the allocations below to happen while it runs.
      kernel.launch({ grid: 1, block: 256, stream: s1 }, a, i32(0x0bad), i32(n), i64(400_000_000n));
      a.close();
      const b = d.allocate(n * 4, { stream: s2 });
      expect(s1.query()).toBe(false); // the kernel still runs
      expect(b.ptr).not.toBe(first);
      b.fill(1, { stream: s2 });
      const c = d.allocate(n * 4, { stream: s1 });
      expect(c.ptr).toBe(first); // on its own stream, at once: later work there runs after the kernel
      c.close();
      await s1.synchronize();
      await s2.synchronize();
      const out = new Int32Array(n);
      b.copyTo(out);
      expect(out.every((x) => x === 0x01010101)).toBe(true); // the slow kernel wrote elsewhere
      const e = d.allocate(n * 4, { stream: s2 });
      expect(e.ptr).toBe(first); // the kernel is done: any stream may have it now
      b.close();
      e.close();
    } finally {
      core.setAllocator(null);
      alloc.freeAllBlocks();
      s1.close();
      s2.close();
    }
  });

  test('a kernel of a closed module and a closed stream are refused before CUDA sees them', async () => {
    const d = Device.get(0);
    const mod = Program.compile(SLOW).load();
    const k = mod.kernel('slowFill');
    const s = d.createStream();
    const exec = (await s.capture(() => undefined)).instantiate();
    mod.close();
    for (const [what, call] of [
      ['attributes', () => k.attributes()],
      ['setAttribute', () => k.setAttribute('MaxDynamicSharedMemorySize', 1024)],
      ['maxActiveBlocksPerMultiprocessor', () => k.maxActiveBlocksPerMultiprocessor(128)],
      ['suggestedBlockSize', () => k.suggestedBlockSize()],
    ] as const) {
      expect(call).toThrow(`Kernel.${what}(slowFill): the Module it belongs to was closed`);
    }
    s.close();
    expect(() => exec.launch(s)).toThrow("GraphExec.launch: parameter 'stream' is a Stream that was closed");
    expect(() => exec.upload(s)).toThrow("GraphExec.upload: parameter 'stream' is a Stream that was closed");
    exec.close();
  });
});
