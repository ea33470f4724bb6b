// Clusters, cooperative and programmatic dependent launches without a GPU: what reaches
// cudaLaunchKernelExC (and a graph's kernel node) through a fake libcudart
// (test/cpu/fixtures/fake-launch-ext.c, built with gcc here) that describes each launch, and the
// checks against the kernel's and the device's limits that refuse a launch before C.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
let dir: string;
let lib: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-launch-ext-'));
  lib = path.join(dir, 'libcudart-fake-launch-ext.so');
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', `-I${include}`, '-o', lib, path.join(__dirname, '..', 'fixtures', 'fake-launch-ext.c')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `body` (the inside of an async function with `core`, `fake` and `k` (a Kernel of a fake
 * module) in scope) on the fake; returns what it logs as JSON. A thrown error is logged as { error }.
 */
function onFake(body: string): unknown {
  const script = `
    const koffi = require('koffi');
    const { core } = require('./src');
    const { Kernel } = require('./src/core/launch/Kernel');
    const L = koffi.load(process.env.CUDA_BINDINGS_CUDART);
    const fake = { log: L.func('const char *fake_log(void)'), clear: L.func('void fake_clear_log(void)'),
      device: L.func('void fake_device(int, int, int, int, int)'), required: L.func('void fake_required_cluster(int, int, int)'),
      count: L.func('long fake_count(const char *)') };
    const k = new Kernel(0x42n, 'k', { isClosed: false });
    const out = (v) => console.log(JSON.stringify(v));
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib },
    timeout: 120_000,
  });
  if (run.stderr !== '' || run.status !== 0) throw new Error(`the child failed (status ${run.status}):\n${run.stderr}\n${run.stdout}`);
  return JSON.parse(run.stdout);
}

describe('extended launches (cudaLaunchKernelExC)', () => {
  test('a cluster: grid counts clusters, the node gets the cluster attribute; a plain launch stays on cudaLaunchKernel', () => {
    const r = onFake(`
      const s = core.Device.get(0).createStream();
      k.launch({ grid: [4, 2], cluster: [2, 1, 1], block: 128, sharedMem: 256, stream: s }, core.i32(7));
      k.launch({ grid: 3, block: 32 }, core.i32(1));
      out({ log: fake.log(), plain: fake.count('cudaLaunchKernel'), ex: fake.count('cudaLaunchKernelExC') });`);
    expect(r).toEqual({
      log: 'launch grid=8,2,1 block=128,1,1 smem=256 stream=set attrs=[ cluster=2,1,1 ] arg0=7\n',
      plain: 1,
      ex: 1,
    });
  });

  test('cooperative, programmatic stream serialization and both events go as attributes', () => {
    const r = onFake(`
      const d = core.Device.get(0);
      const e1 = d.createEvent({ timing: false }), e2 = d.createEvent({ timing: false });
      k.launch({ grid: 8, block: 256, cooperative: true }, core.i32(1));
      k.launch({ grid: 2, block: 64, programmaticStreamSerialization: true, programmaticEvent: { event: e1, triggerAtBlockStart: true }, launchCompletionEvent: e2 });
      // Options set to false ask for nothing: a plain launch.
      k.launch({ grid: 2, block: 64, cooperative: false, programmaticStreamSerialization: false });
      out({ log: fake.log().split('\\n'), plain: fake.count('cudaLaunchKernel') });`);
    expect(r).toEqual({
      log: [
        'launch grid=8,1,1 block=256,1,1 smem=0 stream=null attrs=[ cooperative=1 ] arg0=1',
        'launch grid=2,1,1 block=64,1,1 smem=0 stream=null attrs=[ pss=1 programmaticEvent=set,atStart=1 completionEvent=set ]',
        '',
      ],
      plain: 1,
    });
  });

  test('a cluster larger than the kernel may have is refused before C, with the limit and the way to raise it', () => {
    const r = onFake(`
      const a = err(() => k.launch({ grid: 1, cluster: [4, 4], block: 128 }));
      k.setAttribute('NonPortableClusterSizeAllowed', 1);
      const b = err(() => k.launch({ grid: 1, cluster: [4, 4], block: 128 }));
      const c = err(() => k.launch({ grid: 1, cluster: [4, 8], block: 128 }));
      out({ a, b, c, launches: fake.count('cudaLaunchKernelExC') });`);
    expect(r).toEqual({
      a: "RangeError: Kernel.launch(k): a cluster of 16 blocks ([4, 4, 1]) is more than the 8 this kernel can have on device 0 with blocks of 128 threads and 0 bytes of dynamic shared memory; kernel.setAttribute('NonPortableClusterSizeAllowed', 1) allows more where the device can",
      b: 'no error',
      c: 'RangeError: Kernel.launch(k): a cluster of 32 blocks ([4, 8, 1]) is more than the 16 this kernel can have on device 0 with blocks of 128 threads and 0 bytes of dynamic shared memory',
      launches: 1,
    });
  });

  test("a kernel's compile-time cluster dims must be matched; a device without clusters is named with its compute capability", () => {
    const r = onFake(`
      fake.required(2, 1, 1);
      const a = err(() => k.launch({ grid: 1, cluster: 4, block: 32 }));
      const b = err(() => k.launch({ grid: 1, cluster: 2, block: 32 }));
      const attrs = k.attributes();
      const k2 = new Kernel(0x43n, 'old', { isClosed: false });
      fake.device(0, 1, 4, 8, 0);
      const c = err(() => k2.launch({ grid: 1, cluster: 2, block: 32 }));
      out({ a, b, c, required: attrs.requiredClusterDim, mustBeSet: attrs.clusterDimMustBeSet });`);
    expect(r).toEqual({
      a: "RangeError: Kernel.launch(k): 'config.cluster' is [4, 1, 1] but the kernel was compiled with __cluster_dims__(2, 1, 1); give that, or no cluster",
      b: 'no error',
      c: "Error: Kernel.launch(old): 'config.cluster' needs thread-block clusters (compute capability 9.0 or later); device 0 is 8.0",
      required: [2, 1, 1],
      mustBeSet: true,
    });
  });

  test('a cooperative grid larger than the device holds at once is refused with the number it allows', () => {
    const r = onFake(`
      // 2048 / 256 = 8 blocks per multiprocessor, 4 multiprocessors: 32 blocks at once.
      const ok = err(() => k.launch({ grid: 32, block: 256, cooperative: true }));
      const big = err(() => k.launch({ grid: [11, 3], block: 256, cooperative: true }));
      const max = k.occupancy.maxCooperativeGrid(256);
      fake.device(1, 0, 4, 9, 0);
      const k2 = new Kernel(0x44n, 'k2', { isClosed: false });
      const none = err(() => k2.launch({ grid: 1, block: 32, cooperative: true }));
      out({ ok, big, max, none });`);
    expect(r).toEqual({
      ok: 'no error',
      big: 'RangeError: Kernel.launch(k): a cooperative grid of 33 blocks is more than device 0 can hold at once: 32 (8 blocks of 256 threads with 0 bytes of dynamic shared memory per multiprocessor × 4 multiprocessors)',
      max: 32,
      none: "Error: Kernel.launch(k2): 'config.cooperative' needs a device that supports cooperative launches; device 0 does not",
    });
  });

  test('the limits are asked once per device and shape, and again after setAttribute', () => {
    const r = onFake(`
      for (let i = 0; i < 5; i++) k.launch({ grid: 1, cluster: 2, block: 64 });
      const first = fake.count('cudaOccupancyMaxPotentialClusterSize');
      k.launch({ grid: 1, cluster: 2, block: 128 });
      k.setAttribute('NonPortableClusterSizeAllowed', 1);
      k.launch({ grid: 1, cluster: 2, block: 128 });
      out({ first, after: fake.count('cudaOccupancyMaxPotentialClusterSize'), launches: fake.count('cudaLaunchKernelExC') });`);
    expect(r).toEqual({ first: 1, after: 3, launches: 7 });
  });

  test('bad values are refused naming the config key', () => {
    const r = onFake(`
      const d = core.Device.get(0);
      const e = d.createEvent({ timing: false }); e.close();
      out([
        err(() => k.launch({ grid: 1, block: 1, cluster: 0 })),
        err(() => k.launch({ grid: 1, block: 1, cooperative: 1 })),
        err(() => k.launch({ grid: 1, block: 1, programmaticStreamSerialization: 'yes' })),
        err(() => k.launch({ grid: 1, block: 1, launchCompletionEvent: e })),
        err(() => k.launch({ grid: 1, block: 1, programmaticEvent: {} })),
        err(() => k.launch({ grid: 2 ** 31, block: 1, cluster: 2 })),
        err(() => k.launch({ grid: 1, block: 1, clusters: 2 })),
      ]);`);
    expect(r).toEqual([
      "RangeError: Kernel.launch(k): 'config.cluster' must be a positive integer or [x, y, z] of them, got 0",
      "TypeError: Kernel.launch(k): 'config.cooperative' must be true or false, got 1",
      'TypeError: Kernel.launch(k): \'config.programmaticStreamSerialization\' must be true or false, got the string "yes"',
      "Error: Kernel.launch(k): 'config.launchCompletionEvent' is an Event that was closed",
      "TypeError: Kernel.launch(k): 'config.programmaticEvent.event' must be an Event, got undefined",
      "RangeError: Kernel.launch(k): 'config.grid' counts clusters when 'config.cluster' is set, and 2147483648 clusters of 2 blocks along x make 4294967296 blocks, more than 2^32 - 1",
      "TypeError: Kernel.launch(k): unknown option 'clusters' in 'config' (did you mean 'cluster'?); the options are grid, block, sharedMem, stream, cluster, cooperative, programmaticStreamSerialization, programmaticEvent, launchCompletionEvent",
    ]);
  });

  test('prepared launches: a plain config stays on the fast path, one with extended keys goes through cudaLaunchKernelExC', () => {
    const r = onFake(`
      const f = k.prepare(['i32']);
      const plain = { grid: 1, block: 32 };
      const clustered = { grid: 2, cluster: 2, block: 32, cooperative: false };
      f(plain, 5); f(plain, 6);
      f(clustered, 9);
      clustered.cooperative = true; // a value changed in place is seen
      f(clustered, 10);
      out({ plain: fake.count('cudaLaunchKernel'), log: fake.log().split('\\n') });`);
    expect(r).toEqual({
      plain: 2,
      log: [
        'launch grid=4,1,1 block=32,1,1 smem=0 stream=null attrs=[ cluster=2,1,1 ] arg0=9',
        'launch grid=4,1,1 block=32,1,1 smem=0 stream=null attrs=[ cluster=2,1,1 cooperative=1 ] arg0=10',
        '',
      ],
    });
  });

  test('core.launch: on a stream, and as a graph kernel node with a cluster; a node refuses programmatic options', () => {
    const r = onFake(`
      const d = core.Device.get(0);
      const s = d.createStream();
      core.launch(s, { grid: 2, cluster: 2, block: 64 }, k, core.i32(3));
      const b = core.GraphBuilder.create(d);
      const node = core.launch(b, { grid: 3, cluster: [1, 2], block: 32, cooperative: true }, k, core.i32(4));
      const pss = err(() => core.launch(b, { grid: 1, block: 1, programmaticStreamSerialization: true }, k));
      const withStream = err(() => core.launch(s, { grid: 1, block: 1, stream: s }, k));
      const notTarget = err(() => core.launch({}, { grid: 1, block: 1 }, k));
      out({ log: fake.log().split('\\n'), kind: node.kind, pss, withStream, notTarget });`);
    expect(r).toEqual({
      log: [
        'launch grid=4,1,1 block=64,1,1 smem=0 stream=set attrs=[ cluster=2,1,1 ] arg0=3',
        'node0 grid=3,2,1 block=32,1,1 smem=0',
        'node0 cluster=1,2,1',
        'node0 cooperative=1',
        '',
      ],
      kind: 'kernel',
      pss: "TypeError: GraphBuilder.kernel(k): a graph's kernel node takes 'cluster' and 'cooperative' but not programmatic or event options; capture a stream launched with them instead (the capture makes the programmatic edges)",
      withStream: "TypeError: launch(k): 'config.stream' is not taken here; the stream is the first parameter",
      notTarget: "TypeError: launch(k): parameter 'target' must be a Stream or a GraphBuilder, got an object (Object)",
    });
  });

  test('Kernel.attributes and Kernel.occupancy', () => {
    const r = onFake(`
      const a = k.attributes();
      const o = k.occupancy;
      out({
        a: { numRegs: a.numRegs, maxThreadsPerBlock: a.maxThreadsPerBlock, sharedSizeBytes: a.sharedSizeBytes, requiredClusterDim: a.requiredClusterDim,
             nonPortableClusterSizeAllowed: a.nonPortableClusterSizeAllowed, preferredSharedMemoryCarveout: a.preferredSharedMemoryCarveout },
        same: o === k.occupancy,
        active: o.maxActiveBlocksPerMultiprocessor(512),
        cluster: o.maxPotentialClusterSize({ block: 128 }),
        clusters: o.maxActiveClusters({ cluster: 2, block: 128 }),
        smem: o.availableDynamicSharedMemoryPerBlock(2, 128),
        bad: err(() => o.maxActiveBlocksPerMultiprocessor(0)),
        noCluster: err(() => o.maxActiveClusters({ block: 128 })),
      });`);
    expect(r).toEqual({
      a: {
        numRegs: 32,
        maxThreadsPerBlock: 1024,
        sharedSizeBytes: 4096,
        requiredClusterDim: null,
        nonPortableClusterSizeAllowed: false,
        preferredSharedMemoryCarveout: -1,
      },
      same: true,
      active: 4,
      cluster: 8,
      clusters: 4,
      smem: 116736,
      bad: "RangeError: Kernel.occupancy.maxActiveBlocksPerMultiprocessor(k): 'blockSize' must be a positive integer or [x, y, z] of them, got 0",
      noCluster: "TypeError: Kernel.occupancy.maxActiveClusters(k): parameter 'query' must have a 'cluster' size",
    });
  });
});
