// graphMemoryNodes: CUDA's sample of that name in spirit, through core's GraphBuilder. A graph
// allocates its scratch memory itself (allocation and free nodes), fills it, computes from it and
// copies the result out; it is read back node by node, launched many times, and updated on the
// executable graph (a kernel argument changed without instantiating again). The device's graph
// memory pool is shown before, during and after, and trimmed back to nothing.
//   npx tsx examples/graphMemoryNodes.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { GraphBuilder, Program, f32, i32 } = core;
const N = 1 << 20;
const LAUNCHES = 1000;

const SOURCE = `
extern "C" __global__ void axpb(float *y, const float *x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}`;

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

async function main(): Promise<number> {
  const dev = firstDevice('graphMemoryNodes');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name} (compute capability ${dev.computeCapability.join('.')})`);
  const mod = Program.compile(SOURCE).load();
  const stream = dev.createStream({ nonBlocking: true });
  const out = dev.allocate(4 * N);
  const usage = (when: string) => {
    const u = dev.graphMemoryUsage();
    console.log(
      `> graph memory ${when}: used ${mib(u.used)} (high ${mib(u.usedHigh)}), reserved ${mib(u.reserved)} (high ${mib(u.reservedHigh)})`,
    );
    return u;
  };
  dev.trimGraphMemory();
  usage('before');

  // The graph: allocate x and y, x = 1.0f (a 4-byte memset), y = a * x + b, copy y out, free both.
  const b = GraphBuilder.create(dev);
  const x = b.allocate(4 * N);
  const y = b.allocate(4 * N);
  const fill = b.memset(x, 0x3f800000, { elementSize: 4, after: [x] });
  const grid = Math.ceil(N / 256);
  const run = b.kernel(mod.kernel('axpb'), { grid, block: 256 }, [y, x, f32(2), f32(1), i32(N)], { after: [fill, y] });
  const copy = b.copy(out, y, undefined, { after: [run] });
  b.deallocate(x, { after: [run] });
  b.deallocate(y, { after: [copy] });

  // Read back: every node with what it waits for.
  const nodes = b.nodes();
  for (const [i, n] of nodes.entries())
    console.log(`  node ${i}: ${n.type.padEnd(6)} after [${n.predecessors.map((p) => nodes.indexOf(p)).join(', ')}]`);
  console.log(`> ${b.nodeCount} nodes, ${b.edgeCount} edges; the kernel node: grid ${run.grid.join('×')}, block ${run.block.join('×')}`);

  const exec = b.instantiate({ upload: stream });
  for (let i = 0; i < LAUNCHES; i++) exec.launch(stream);
  await stream.synchronize();
  const during = usage(`after ${LAUNCHES} launches`);
  const first = out.copyTo(new Float32Array(N)).every((v) => v === 3);
  console.log(`> y = 2 * 1 + 1 everywhere: ${first ? 'yes' : 'no'}`);

  // Updated in place: the kernel's a and b change on the executable graph only.
  exec.setKernelParams(run, { args: [y, x, f32(5), f32(-1), i32(N)] });
  exec.launch(stream);
  await stream.synchronize();
  const second = out.copyTo(new Float32Array(N)).every((v) => v === 4);
  console.log(`> after exec.setKernelParams, y = 5 * 1 - 1 everywhere: ${second ? 'yes' : 'no'}`);

  exec.close();
  b.close();
  dev.trimGraphMemory();
  const after = usage('after trimming');
  for (const r of [out, stream, mod]) r.close();
  // While the exec lives its allocations' memory stays associated with it; closed and trimmed, none is left.
  const passed = first && second && during.used >= 8 * N && after.used === 0 && after.reserved === 0;
  console.log(`Result = ${passed ? 'PASS' : 'FAIL'}`);
  return passed ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    console.log('Result = FAIL');
    process.exitCode = 1;
  },
);
