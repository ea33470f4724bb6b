// clusterLaunch: the launch options of compute capability 9.0. A thread-block cluster whose blocks
// read each other's shared memory (distributed shared memory), a cooperative kernel that sums an
// array with grid.sync() between its two phases, and a programmatic dependent launch whose second
// kernel starts while the first still runs; each result checked.
//   npx tsx examples/clusterLaunch.ts
// Exits with status 1, and one line on stderr saying why, when a device or NVRTC is missing; prints
// Result = WAIVED (status 0) on a device older than 9.0.
import * as path from 'node:path';
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { Program, i32, u64 } = core;

const SOURCE = `
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ unsigned long long now() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// cudaTriggerProgrammaticLaunchCompletion() and cudaGridDependencySynchronize() as the PTX they stand
// for: NVRTC does not declare those device runtime functions.
__device__ void pdlTrigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ void pdlWait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Each block of a cluster adds the block indices of the whole cluster, read from each block's shared memory.
extern "C" __global__ void clusterSum(int *out) {
  __shared__ int mine;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) mine = blockIdx.x;
  cluster.sync();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); r++) sum += *cluster.map_shared_rank(&mine, r);
    out[blockIdx.x] = sum;
  }
  cluster.sync();
}

// Phase 1: per-block partial sums; grid.sync(); phase 2: block 0 adds the partials.
extern "C" __global__ void cooperativeSum(const int *x, int n, int *partial, long long *total) {
  cg::grid_group grid = cg::this_grid();
  __shared__ long long acc;
  if (threadIdx.x == 0) acc = 0;
  __syncthreads();
  long long mine = 0;
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.num_threads()) mine += x[i];
  atomicAdd((unsigned long long *)&acc, (unsigned long long)mine);
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = (int)acc;
  grid.sync();
  if (grid.thread_rank() == 0) {
    long long t = 0;
    for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
    *total = t;
  }
}

extern "C" __global__ void producer(unsigned long long *stamps, volatile int *flag, unsigned long long ns) {
  unsigned long long t0 = now();
  pdlTrigger();
  while (now() - t0 < ns) {}
  *flag = 42;
  __threadfence();
  stamps[0] = now();
}

extern "C" __global__ void consumer(unsigned long long *stamps, const volatile int *flag, int *seen) {
  stamps[1] = now();            // the prologue, before the dependency
  pdlWait();
  *seen = *flag;
}
`;

async function main(): Promise<number> {
  const dev = firstDevice('clusterLaunch');
  if (dev === null) return 1;
  const [major, minor] = dev.computeCapability;
  console.log(`> Using CUDA Device [0]: ${dev.name} (compute capability ${major}.${minor})`);
  if (major < 9) {
    console.log('> thread-block clusters and programmatic dependent launch need compute capability 9.0');
    console.log('Result = WAIVED');
    return 0;
  }
  const include = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');
  let mod;
  try {
    mod = Program.compile(SOURCE, {
      name: 'clusterLaunch.cu',
      options: [`-I${include}`, `-I${path.join(include, 'cccl')}`, '-std=c++17'],
    }).load();
  } catch (e) {
    console.error(
      `clusterLaunch: could not compile (cooperative_groups.h is looked for in ${include}): ${(e as Error).message.split('\n')[0]}`,
    );
    return 1;
  }
  using m = mod;
  using stream = dev.createStream({ nonBlocking: true });
  let ok = true;

  // 1. Clusters: grid counts clusters, so 8 clusters of 4 blocks are 32 blocks.
  const clusterSum = m.kernel('clusterSum');
  console.log(`> clusterSum: up to ${clusterSum.occupancy.maxPotentialClusterSize({ block: 32 })} blocks per cluster`);
  using sums = dev.allocate(32 * 4);
  core.launch(stream, { grid: 8, cluster: 4, block: 32 }, clusterSum, sums);
  await stream.synchronize();
  const got = sums.copyTo(new Int32Array(32));
  const clusterOk = got.every((v, b) => v === 4 * (b - (b % 4)) + 6);
  console.log(`> 8 clusters of 4 blocks, each block summing its cluster's shared memory: ${clusterOk ? 'correct' : 'WRONG'}`);
  ok &&= clusterOk;

  // 2. A cooperative launch of as many blocks as the device holds at once.
  const coop = m.kernel('cooperativeSum');
  const blocks = coop.occupancy.maxCooperativeGrid(256);
  const n = 1 << 22;
  using x = dev.allocate(n * 4);
  x.copyFrom(Int32Array.from({ length: n }, (_, i) => i % 7));
  using partial = dev.allocate(blocks * 4);
  using total = dev.allocate(8);
  coop.launch({ grid: blocks, block: 256, cooperative: true, stream }, x, i32(n), partial, total);
  await stream.synchronize();
  let want = 0n;
  for (let i = 0; i < n; i++) want += BigInt(i % 7);
  const sum = total.copyTo(new BigInt64Array(1))[0];
  console.log(
    `> cooperative grid of ${blocks} blocks (the most this device holds at once): sum ${sum}, ${sum === want ? 'correct' : `WRONG (want ${want})`}`,
  );
  ok &&= sum === want;
  try {
    coop.launch({ grid: blocks + 1, block: 256, cooperative: true, stream }, x, i32(n), partial, total);
    console.log('> one block more was not refused: WRONG');
    ok = false;
  } catch (e) {
    console.log(`> one block more is refused before the launch: ${(e as Error).message.split(': ').slice(1).join(': ')}`);
  }

  // 3. Programmatic dependent launch: the consumer's prologue runs during the producer's 1 ms.
  using stamps = dev.allocate(16);
  using flag = dev.allocate(4);
  using seen = dev.allocate(4);
  flag.fill(0);
  m.kernel('producer').launch({ grid: 1, block: 1, stream }, stamps, flag, u64(1_000_000n));
  m.kernel('consumer').launch({ grid: 1, block: 1, stream, programmaticStreamSerialization: true }, stamps, flag, seen);
  await stream.synchronize();
  const [producerEnd, consumerStart] = stamps.copyTo(new BigUint64Array(2));
  const value = seen.copyTo(new Int32Array(1))[0];
  const early = producerEnd - consumerStart;
  console.log(
    `> PDL: the consumer started ${early > 0n ? `${early} ns before the producer ended` : 'after the producer ended'}; it read ${value} after griddepcontrol.wait (cudaGridDependencySynchronize)`,
  );
  ok &&= value === 42;

  console.log(`Result = ${ok ? 'PASS' : 'FAIL'}`);
  return ok ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`clusterLaunch: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
