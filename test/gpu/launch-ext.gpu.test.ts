// Clusters, cooperative and programmatic dependent launches on a GPU (compute capability 9.0+):
// a cluster kernel that reads its neighbour's shared memory (distributed shared memory), a
// cooperative kernel whose grid.sync() makes other blocks' writes visible, and a PDL pair whose
// overlap is measured with %globaltimer stamps that both kernels write.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { core } from '../../src';
import { describeGpu, gpu } from './helpers';

const { Device, Program, GraphBuilder, u64 } = core;

const SRC = `
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ unsigned long long now() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// cudaTriggerProgrammaticLaunchCompletion() and cudaGridDependencySynchronize() as the PTX they stand
// for: NVRTC does not declare those device runtime functions.
__device__ void pdlTrigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ void pdlWait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Each block puts a value in its own shared memory; after a cluster barrier, each reads its
// partner's (block rank ^ 1) through the cluster's distributed shared memory.
extern "C" __global__ void clusterSwap(int *out) {
  __shared__ int mine;
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0) mine = 1000 * (blockIdx.x + 1);
  cluster.sync();
  int *theirs = cluster.map_shared_rank(&mine, rank ^ 1);
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = *theirs; out[2 * blockIdx.x + 1] = (int)cluster.num_blocks(); }
  cluster.sync(); // the partner's shared memory lives until both have read
}

// Every thread writes its slot, then (after grid.sync) reads the slot of the mirror thread, which
// is in another block: without the grid-wide barrier some reads would see 0.
extern "C" __global__ void mirror(int *data, int *out) {
  cg::grid_group grid = cg::this_grid();
  unsigned long long n = grid.num_threads(), i = grid.thread_rank();
  data[i] = (int)(i + 1);
  grid.sync();
  out[i] = data[n - 1 - i];
}

// The primary lets its dependent start at once, then works for ns nanoseconds and writes the flag.
extern "C" __global__ void primary(unsigned long long *stamps, volatile int *flag, unsigned long long ns) {
  unsigned long long t0 = now();
  stamps[0] = t0;
  pdlTrigger();
  while (now() - t0 < ns) {}
  *flag = 7;
  __threadfence();
  stamps[1] = now();
}

// The secondary stamps its prologue, waits for the primary's grid, then stamps again and reads the flag.
extern "C" __global__ void secondary(unsigned long long *stamps, const volatile int *flag) {
  stamps[2] = now();
  pdlWait();
  stamps[3] = now();
  stamps[4] = (unsigned long long)*flag;
}
`;

const include = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');
const cc = gpu.count ? Device.get(0).computeCapability[0] : 0;
// Clusters and PDL need compute capability 9.0: on an older device the suite is skipped, saying so.
const describeHopper =
  gpu.count && cc < 9 ? (t: string, fn: () => void) => describe.skip(`${t}: skipped, device 0 is ${cc}.x`, fn) : describeGpu;

describeHopper('clusters, cooperative and dependent launches (compute capability 9.0+)', () => {
  let mod: ReturnType<ReturnType<typeof Program.compile>['load']>;
  beforeAll(() => {
    if (!fs.existsSync(path.join(include, 'cooperative_groups.h'))) throw new Error(`no cooperative_groups.h in ${include}`);
    mod = Program.compile(SRC, {
      name: 'launch-ext.cu',
      options: [`-I${include}`, `-I${path.join(include, 'cccl')}`, '-std=c++17'],
      cache: false,
    }).load();
  });
  afterAll(() => mod?.close());

  test('a cluster kernel reads its partner block through distributed shared memory; grid counts clusters', async () => {
    const d = Device.get(0);
    using s = d.createStream();
    const k = mod.kernel('clusterSwap');
    expect(k.occupancy.maxPotentialClusterSize({ block: 32 })).toBeGreaterThanOrEqual(2);
    using out = d.allocate(8 * 2 * 4);
    out.fill(0);
    // 4 clusters of 2 blocks: 8 blocks.
    core.launch(s, { grid: 4, cluster: 2, block: 32 }, k, out);
    await s.synchronize();
    const got = out.copyTo(new Int32Array(16));
    const want = Array.from({ length: 8 }, (_, b) => [1000 * ((b ^ 1) + 1), 2]).flat();
    expect(Array.from(got)).toEqual(want);
    // The same through a graph's kernel node with the cluster attribute.
    out.fill(0);
    using builder = GraphBuilder.create(d);
    core.launch(builder, { grid: 4, cluster: 2, block: 32 }, k, out);
    using exec = builder.instantiate();
    exec.launch(s);
    await s.synchronize();
    expect(Array.from(out.copyTo(new Int32Array(16)))).toEqual(want);
  });

  test('a cluster beyond the limit is refused before C with the limit', () => {
    const k = mod.kernel('clusterSwap');
    const max = k.occupancy.maxPotentialClusterSize({ block: 32 });
    expect(() => k.launch({ grid: 1, cluster: max * 2, block: 32 })).toThrow(
      new RegExp(
        `^Kernel\\.launch\\(clusterSwap\\): a cluster of ${max * 2} blocks .* is more than the ${max} this kernel can have on device 0`,
      ),
    );
  });

  test('a cooperative kernel with grid.sync() sees every block’s writes; a grid too large is refused with the number allowed', async () => {
    const d = Device.get(0);
    using s = d.createStream();
    const k = mod.kernel('mirror');
    const blocks = k.occupancy.maxCooperativeGrid(128);
    expect(blocks).toBeGreaterThanOrEqual(d.properties.multiProcessorCount);
    const n = blocks * 128;
    using data = d.allocate(n * 4);
    using out = d.allocate(n * 4);
    data.fill(0);
    k.launch({ grid: blocks, block: 128, cooperative: true, stream: s }, data, out);
    await s.synchronize();
    const got = out.copyTo(new Int32Array(n));
    let wrong = 0;
    for (let i = 0; i < n; i++) if (got[i] !== n - i) wrong++;
    expect(wrong).toBe(0);
    expect(() => k.launch({ grid: blocks + 1, block: 128, cooperative: true, stream: s }, data, out)).toThrow(
      `a cooperative grid of ${blocks + 1} blocks is more than device 0 can hold at once: ${blocks} (`,
    );
  });

  test("programmatic dependent launch: the secondary's prologue runs while the primary still works (measured)", async () => {
    const d = Device.get(0);
    using s = d.createStream({ nonBlocking: true });
    const primary = mod.kernel('primary');
    const secondary = mod.kernel('secondary');
    using stamps = d.allocate(8 * 8);
    using flag = d.allocate(4);
    const run = async (pdl: boolean) => {
      stamps.fill(0);
      flag.fill(0);
      primary.launch({ grid: 1, block: 1, stream: s }, stamps, flag, u64(2_000_000n));
      secondary.launch({ grid: 1, block: 1, stream: s, programmaticStreamSerialization: pdl }, stamps, flag);
      await s.synchronize();
      const [pStart, pEnd, sPrologue, sAfterSync, seen] = stamps.copyTo(new BigUint64Array(5));
      return { pStart, pEnd, sPrologue, sAfterSync, seen };
    };
    const serial = await run(false);
    const pdl = await run(true);
    // Without PDL the secondary starts after the primary has ended.
    expect(serial.sPrologue >= serial.pEnd).toBe(true);
    // With it, its prologue starts while the primary spins (2 ms), and the dependency sync still
    // waits for the primary's end and sees its write.
    expect(pdl.sPrologue < pdl.pEnd).toBe(true);
    expect(pdl.sPrologue - pdl.pStart < 1_000_000n).toBe(true);
    expect(pdl.sAfterSync >= pdl.pEnd).toBe(true);
    expect([serial.seen, pdl.seen]).toEqual([7n, 7n]);
  });

  test('Kernel.attributes reports the cluster fields', () => {
    const a = mod.kernel('clusterSwap').attributes();
    expect(a.requiredClusterDim).toBeNull();
    expect(a.nonPortableClusterSizeAllowed).toBe(false);
    expect(a.sharedSizeBytes).toBeGreaterThanOrEqual(4);
    expect(typeof a.clusterSchedulingPolicyPreference).toBe('number');
  });
});
