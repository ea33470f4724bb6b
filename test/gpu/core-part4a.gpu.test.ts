// Core, part 4 (first half) against the real driver: device attributes compared with
// cuDeviceGetAttribute, streams over foreign handles and the stream protocol, the current stream of
// stream.use(fn) proven by where the work runs, events, kernel parameters (cuKernelGetParamInfo) and
// occupancy (cuOccupancyMaxPotentialBlockSize), module globals, host registration, f16, the
// stream-captured graph builder and updating an executable graph from a node-built one.
import { core, cudart, cuda } from '../../src';
import { DEVICE_ATTRIBUTE_ENUMS } from '../../src/core/device/DeviceAttributes';
import { describeGpu } from './helpers';

const { Device, Program, Stream, HostBuffer, StreamGraphBuilder, GraphBuilder, check, i32, f16 } = core;

const SOURCE = `
extern "C" __global__ void params(float *p, float3 v, int n, double d) { if (n < 0) p[0] = v.x + d; }
extern "C" __global__ void addTo(int *x, int by) { atomicAdd(x, by); }
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(int *x) { if (x == nullptr) return; }
extern "C" __global__ void halfBits(unsigned short h, int *out) { *out = h; }
extern "C" __global__ void useShared(int *x) { extern __shared__ int s[]; s[threadIdx.x] = threadIdx.x; __syncthreads(); if (x == nullptr) x[0] = s[0]; }
__device__ int counter = 5;
__constant__ int coef[4];
extern "C" __global__ void readCoef(int *out) { out[threadIdx.x] = coef[threadIdx.x] + counter; }
extern "C" __global__ void writeMapped(int *host) { host[threadIdx.x] = 100 + threadIdx.x; }
`;

/** Unwraps a driver tuple, or fails naming the call. */
function drv<T>(r: readonly [number, T | null, ...unknown[]], what: string): T {
  if (r[0] !== 0 || r[1] === null) throw new Error(`${what} returned CUresult ${r[0]}`);
  return r[1];
}

describeGpu('core part 4a on a GPU', () => {
  const d = Device.get(0);
  let module: core.Module;
  // About 50 ms of clock cycles at an H100's ~1.98 GHz: long enough to still run when a query follows.
  const SPIN = 100_000_000n;
  beforeAll(() => {
    module = Program.compile(SOURCE).load();
  });
  afterAll(() => module.close());

  test('every attribute equals what cuDeviceGetAttribute says (0 or false where the driver does not know it); arch, compare, fromPciBusId', () => {
    const a = d.attributes as unknown as Record<string, number | boolean>;
    expect(d.primaryContext).not.toBeNull(); // the driver initialised and a context current
    const mismatches: string[] = [];
    for (const [name, attr] of Object.entries(DEVICE_ATTRIBUTE_ENUMS)) {
      const [err, v] = cuda.cuDeviceGetAttribute(attr, d.ordinal);
      const want = err === cuda.CUresult.CUDA_ERROR_INVALID_VALUE ? 0 : v;
      if (err !== 0 && err !== cuda.CUresult.CUDA_ERROR_INVALID_VALUE) mismatches.push(`${name}: cuDeviceGetAttribute returned ${err}`);
      const got = a[name];
      if (typeof got === 'boolean' ? got !== (want !== 0) : got !== want) mismatches.push(`${name}: ${String(got)} vs ${String(want)}`);
    }
    expect(mismatches).toEqual([]);
    // The runtime's view of the attributes both APIs have agrees too.
    const A = cudart.cudaDeviceAttr;
    expect(d.attributes.maxThreadsPerBlock).toBe(d.attribute(A.cudaDevAttrMaxThreadsPerBlock));
    expect(d.attributes.multiprocessorCount).toBe(d.attribute(A.cudaDevAttrMultiProcessorCount));
    expect(d.attributes.concurrentManagedAccess).toBe(d.attribute(A.cudaDevAttrConcurrentManagedAccess) !== 0);
    expect(typeof d.attributes.virtualMemoryManagementSupported).toBe('boolean');
    expect(typeof d.attributes.mempoolSupportedHandleTypes).toBe('number');
    const [major, minor] = d.computeCapability;
    expect(d.arch).toBe(`${major}${minor}`);
    expect(Device.fromPciBusId(d.pciBusId)).toBe(d);
    expect(
      Device.all()
        .sort(Device.compare)
        .map((x) => x.ordinal),
    ).toEqual(Array.from({ length: Device.count() }, (_, i) => i));
  });

  test('streams: priority and flags as created, the context, equal wrappers of one handle that destroy nothing, default streams, the stream protocol', async () => {
    const [, greatest] = check(cudart.cudaDeviceGetStreamPriorityRange());
    using s = d.createStream({ priority: greatest, nonBlocking: true });
    expect([s.priority, s.isNonBlocking]).toEqual([greatest, true]);
    using plain = d.createStream();
    expect(plain.isNonBlocking).toBe(false);
    expect(BigInt(s.context.handle)).toBe(BigInt(d.primaryContext));
    const w = Stream.fromHandle(s.handle);
    expect([w.equals(s), w.key === s.key, plain.equals(s)]).toEqual([true, true, false]);
    w.close();
    // The wrapper destroyed nothing: the stream still takes work.
    const x = d.allocate(4).fill(0);
    module.kernel('addTo').launch({ grid: 1, block: 1, stream: s }, x, i32(3));
    await s.synchronize();
    expect(x.copyTo(new Int32Array(1))[0]).toBe(3);
    for (const def of [Stream.null, Stream.perThread, d.defaultStream]) {
      module.kernel('addTo').launch({ grid: 1, block: 1, stream: def }, x, i32(1));
      await def.synchronize();
    }
    expect(x.copyTo(new Int32Array(1))[0]).toBe(6);
    expect([Stream.null === d.defaultStream, Stream.fromHandle(0).equals(Stream.null), Stream.perThread.equals(Stream.null)]).toEqual([
      true,
      true,
      false,
    ]);
    // Another library's stream through the protocol: a raw runtime stream that core does not own.
    const raw = check(cudart.cudaStreamCreate());
    const offered = { __cuda_stream__: (): [number, bigint] => [0, BigInt(raw)] };
    const p = d.createStream(offered);
    expect([p.owned, p.equals(Stream.fromHandle(raw))]).toEqual([false, true]);
    module.kernel('addTo').launch({ grid: 1, block: 1, stream: p }, x, i32(10));
    await p.synchronize();
    p.close();
    expect(cudart.cudaStreamQuery(raw)[0]).toBe(cudart.cudaError_t.cudaSuccess); // still alive
    cudart.cudaStreamDestroy(raw);
    expect(x.copyTo(new Int32Array(1))[0]).toBe(16);
    x.close();
  });

  test('stream.use(fn): a launch given no stream runs on the current stream, across await; concurrent scopes each use their own', async () => {
    using a = d.createStream({ nonBlocking: true });
    using b = d.createStream({ nonBlocking: true });
    const spin = module.kernel('spin');
    await a.use(async () => {
      await new Promise((r) => setTimeout(r, 1));
      spin.launch({ grid: 1, block: 1 }, core.i64(SPIN));
      // On `a`, not the legacy default stream: `a` is busy right after the launch.
      expect(a.query()).toBe(false);
      expect(Stream.current).toBe(a);
      await a.synchronize();
    });
    const busy = await Promise.all(
      [a, b].map((s, i) =>
        s.use(async () => {
          await new Promise((r) => setTimeout(r, 5 * (2 - i)));
          if (i === 0) spin.launch({ grid: 1, block: 1 }, core.i64(SPIN));
          return [Stream.current === s, s.query()];
        }),
      ),
    );
    expect(busy).toEqual([
      [true, false],
      [true, true],
    ]);
    await a.synchronize();
    // Copies, fills and pool allocations given no stream are ordered on it too, and their data is right.
    const out = await a.use(async () => {
      using buf = d.memoryPool.allocate(16);
      buf.fill(0);
      buf.copyFrom(Int32Array.of(1, 2, 3, 4));
      return buf.copyTo(new Int32Array(4));
    });
    expect(Array.from(out)).toEqual([1, 2, 3, 4]);
    await a.synchronize();
  });

  test('events: isSyncBusyWaited; elapsedSince names the event never recorded', async () => {
    using spin = d.createEvent();
    using blocking = d.createEvent({ blockingSync: true });
    expect([spin.isSyncBusyWaited, blocking.isSyncBusyWaited, blocking.blockingSync]).toEqual([true, false, true]);
    using s = d.createStream();
    blocking.record(s);
    await blocking.synchronize();
    expect(() => blocking.elapsedSince(spin)).toThrow(/the start event \(parameter 'start'\) was never recorded/);
    spin.record(s);
    blocking.record(s);
    await blocking.synchronize();
    expect(blocking.elapsedSince(spin)).toBeGreaterThanOrEqual(0);
  });

  test('kernel parameters as cuKernelGetParamInfo gives them; cluster attributes; maxPotentialBlockSize as cuOccupancyMaxPotentialBlockSize computes it', () => {
    const k = module.kernel('params');
    const driver = Array.from({ length: 4 }, (_, i) => {
      const [err, offset, size] = cuda.cuKernelGetParamInfo(cuda.CUkernel(BigInt(k.handle)), i);
      expect(err).toBe(cuda.CUresult.CUDA_SUCCESS);
      return { offset, size };
    });
    expect(k.argumentsInfo).toEqual(driver);
    expect(k.argumentsInfo).toEqual([
      { offset: 0, size: 8 },
      { offset: 8, size: 12 },
      { offset: 20, size: 4 },
      { offset: 24, size: 8 },
    ]);
    expect(k.numArguments).toBe(4);
    const c = module.kernel('clustered').attributes(d);
    expect([c.requiredClusterWidth, c.requiredClusterHeight, c.requiredClusterDepth, c.clusterDimMustBeSet]).toEqual([2, 1, 1, true]);
    // The same search as the driver's, for a constant amount of shared memory and a limit.
    const shared = module.kernel('useShared');
    expect(d.primaryContext).not.toBeNull();
    const fn = drv(cuda.cuKernelGetFunction(cuda.CUkernel(BigInt(shared.handle))), 'cuKernelGetFunction');
    for (const [smem, limit] of [
      [0, 0],
      [4096, 0],
      [40000, 0],
      [0, 200],
      [8192, 96],
    ]) {
      const [err, minGrid, blockSize] = cuda.cuOccupancyMaxPotentialBlockSize(fn, null, smem, limit);
      expect(err).toBe(cuda.CUresult.CUDA_SUCCESS);
      expect(shared.occupancy.maxPotentialBlockSize(smem, limit, d)).toEqual({ minGridSize: minGrid, maxBlockSize: blockSize });
    }
    // A function of the block size: the best is checked against each block size's own occupancy.
    const perThread = (b: number) => b * 48;
    const best = shared.occupancy.maxPotentialBlockSize(perThread, 0, d);
    const threads = (b: number) => b * shared.occupancy.maxActiveBlocksPerMultiprocessor(b, perThread(b), d);
    for (let b = 32; b <= 1024; b += 32) expect(threads(b)).toBeLessThanOrEqual(threads(best.maxBlockSize));
    expect(best.minGridSize).toBe(
      shared.occupancy.maxActiveBlocksPerMultiprocessor(best.maxBlockSize, perThread(best.maxBlockSize), d) *
        d.attributes.multiprocessorCount,
    );
  });

  test('module.global: a __device__ and a __constant__ variable as DeviceBuffers of their size, closed with the module', async () => {
    const m = Program.compile(SOURCE).load();
    const counter = m.global('counter');
    const coef = m.global('coef');
    expect([counter.size, coef.size]).toEqual([4, 16]);
    expect(counter.copyTo(new Int32Array(1))[0]).toBe(5);
    coef.copyFrom(Int32Array.of(10, 20, 30, 40));
    using out = d.allocate(16);
    m.kernel('readCoef').launch({ grid: 1, block: 4 }, out);
    expect(Array.from(out.copyTo(new Int32Array(4)))).toEqual([15, 25, 35, 45]);
    expect(() => m.global('nothing')).toThrow("Module.global: no __device__ or __constant__ variable 'nothing' in this module");
    m.close();
    expect([counter.isClosed, coef.isClosed]).toEqual([true, true]);
  });

  test('HostBuffer.register page-locks an existing array: copies from it, a mapped one written by a kernel, unregistered at close', async () => {
    const data = Float32Array.from({ length: 1 << 20 }, (_, i) => i);
    const pinned = HostBuffer.register(data);
    using s = d.createStream();
    using buf = d.allocate(data.byteLength);
    buf.copyFrom(pinned.as(Float32Array), { stream: s });
    await s.synchronize();
    expect(buf.copyTo(new Float32Array(data.length)).every((x, i) => x === i)).toBe(true);
    // CUDA sees the caller's memory as page-locked host memory while it is registered, and as unregistered after.
    expect(check(cudart.cudaPointerGetAttributes(pinned.ptr)).type).toBe(cudart.cudaMemoryType.cudaMemoryTypeHost);
    const address = pinned.ptr;
    pinned.close();
    expect(check(cudart.cudaPointerGetAttributes(address)).type).toBe(cudart.cudaMemoryType.cudaMemoryTypeUnregistered);
    const ints = new Int32Array(4096);
    const mapped = HostBuffer.register(ints, { mapped: true });
    module.kernel('writeMapped').launch({ grid: 1, block: 4 }, mapped);
    await d.synchronize();
    expect(Array.from(ints.subarray(0, 4))).toEqual([100, 101, 102, 103]);
    mapped.close();
  });

  test('f16(0.78) reaches a kernel as the half 0x3a3d, in plain and prepared launches; f16.bits keeps raw bits', async () => {
    using out = d.allocate(4);
    const k = module.kernel('halfBits');
    k.launch({ grid: 1, block: 1 }, f16(0.78), out);
    expect(out.copyTo(new Int32Array(1))[0]).toBe(0x3a3d);
    k.launch({ grid: 1, block: 1 }, f16.bits(0x3c00), out);
    expect(out.copyTo(new Int32Array(1))[0]).toBe(0x3c00);
    const p = k.prepare('void halfBits(half h, int *out)');
    p({ grid: 1, block: 1 }, 0.78, out);
    await d.synchronize();
    expect(out.copyTo(new Int32Array(1))[0]).toBe(0x3a3d);
  });

  test('StreamGraphBuilder: split work captured on two streams, joined, completed with autoFreeOnLaunch, launched twice', async () => {
    using x = d.allocate(8).fill(0);
    const add = module.kernel('addTo');
    using b = d.createGraphBuilder().beginBuilding();
    const [left, right] = b.split(2);
    add.launch({ grid: 1, block: 1, stream: left.stream }, x.slice(0, 4), i32(1));
    add.launch({ grid: 1, block: 1, stream: right.stream }, x.slice(4, 4), i32(2));
    expect(() => b.endBuilding()).toThrow(/1 builder split off this one is not joined back yet/);
    StreamGraphBuilder.join(left, right).endBuilding();
    expect(b.graph.nodes()).toHaveLength(2);
    using exec = b.complete({ autoFreeOnLaunch: true });
    expect(exec.flags.autoFreeOnLaunch).toBe(true);
    using s = d.createStream();
    exec.launch(s);
    exec.launch(s);
    await s.synchronize();
    expect(Array.from(x.copyTo(new Int32Array(2)))).toEqual([2, 4]);
    expect(() => b.beginBuilding()).toThrow(
      'StreamGraphBuilder.beginBuilding: building has ended, and a builder cannot resume; make another',
    );
  });

  test('GraphExec.update takes a node-built graph of the same shape (cudaGraphExecUpdate)', async () => {
    using x = d.allocate(4).fill(0);
    const add = module.kernel('addTo');
    using first = GraphBuilder.create(d);
    first.kernel(add, { grid: 1, block: 1 }, [x, i32(1)]);
    using exec = first.instantiate();
    using second = GraphBuilder.create(d);
    second.kernel(add, { grid: 1, block: 1 }, [x, i32(5)]);
    exec.update(second);
    using s = d.createStream();
    exec.launch(s);
    await s.synchronize();
    expect(x.copyTo(new Int32Array(1))[0]).toBe(5);
    using other = GraphBuilder.create(d);
    other.kernel(add, { grid: 1, block: 1 }, [x, i32(1)]);
    other.kernel(add, { grid: 1, block: 1 }, [x, i32(1)]);
    expect(() => exec.update(other)).toThrow(/cudaGraphExecUpdate/);
  });
});
