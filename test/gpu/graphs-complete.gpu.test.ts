// Core's graphs as complete as cuda.core's, on a GPU: memory nodes (a graph that allocates,
// computes, copies out and frees, launched 10^4 times, device memory back where it started), a graph
// read back node by node equal to the one built (and captured and foreign graphs read the same way),
// node parameters changed on the executable graph (a kernel node's grid, and the result with it),
// memsets and copies on raw addresses, a C host function, instantiate options and DOT flags.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import koffi from 'koffi';
import { core, cudart } from '../../src';
import type * as coreTypes from '../../src/core';
import { describeGpu } from './helpers';

const { Device, Program, GraphBuilder, Graph, HostBuffer, KernelNode, i32, f32 } = core;

const SOURCE = `
extern "C" __global__ void fill(float *x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
extern "C" __global__ void axpb(float *y, const float *x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
extern "C" __global__ void countBlocks(int *counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1);
}
`;

const N = 1 << 16;
const CFG = { grid: N / 256, block: 256 };
const MiB = 2 ** 20;

describeGpu('core graphs, complete, on a GPU', () => {
  let mod: coreTypes.Module;
  let dev: coreTypes.Device;
  let s: coreTypes.Stream;
  let dir: string;
  beforeAll(() => {
    dev = Device.get(0);
    dev.makeCurrent();
    mod = Program.compile(SOURCE).load();
    s = dev.createStream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphs-complete-'));
  });
  afterAll(() => {
    s.close();
    mod.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a graph that allocates, computes, copies out and frees, launched 10^4 times: device memory back where it started', async () => {
    const bytes = 4 * N;
    const out = dev.allocate(bytes);
    const host = new Float32Array(N);
    await dev.synchronize();
    dev.trimGraphMemory();
    const start = { free: dev.memoryInfo().free, graph: dev.graphMemoryUsage() };
    expect(start.graph.used).toBe(0);

    const b = GraphBuilder.create(dev);
    const a = b.allocate(bytes);
    const t = b.allocate(bytes);
    const f = b.kernel(mod.kernel('fill'), CFG, [a, f32(1.5), i32(N)], { after: [a] });
    const k = b.kernel(mod.kernel('axpb'), CFG, [t, a, f32(2), f32(1), i32(N)], { after: [f, t] });
    const c = b.copy(out, t, undefined, { after: [k] });
    b.deallocate(a, { after: [k] });
    b.deallocate(t, { after: [c] });
    expect([a.ptr !== t.ptr, a.size, b.nodes().map((n) => n.type)]).toEqual([
      true,
      bytes,
      ['alloc', 'alloc', 'kernel', 'kernel', 'copy', 'free', 'free'],
    ]);
    const exec = b.instantiate();
    for (let i = 0; i < 10_000; i++) exec.launch(s);
    await s.synchronize();
    out.copyTo(host);
    expect(host.every((x) => x === 4)).toBe(true);
    const during = dev.graphMemoryUsage();
    // While the exec lives, its allocations' memory stays associated with it (reused at each launch).
    expect(during.used).toBeGreaterThanOrEqual(2 * bytes);
    expect(during.usedHigh).toBeGreaterThanOrEqual(during.used);
    expect(during.reserved).toBeGreaterThanOrEqual(during.used);
    exec.close();
    b.close();
    await dev.synchronize();
    dev.trimGraphMemory();
    const afterFirst = { free: dev.memoryInfo().free, graph: dev.graphMemoryUsage() };

    // A graph that keeps its allocation: freed by the next launch ({ autoFreeOnLaunch }), then by hand.
    const b2 = GraphBuilder.create(dev);
    const kept = b2.allocate(bytes);
    b2.kernel(mod.kernel('fill'), CFG, [kept, f32(3), i32(N)], { after: [kept] });
    const exec2 = b2.instantiate({ autoFreeOnLaunch: true });
    expect(exec2.flags.autoFreeOnLaunch).toBe(true);
    for (let i = 0; i < 100; i++) exec2.launch(s);
    await s.synchronize();
    expect(dev.graphMemoryUsage().used).toBeGreaterThanOrEqual(bytes);
    const peek = new Float32Array(4);
    cudart.cudaMemcpy(peek, kept.ptr, 16, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(Array.from(peek)).toEqual([3, 3, 3, 3]);
    expect(cudart.cudaFreeAsync(kept.ptr, s.handle)).toEqual([0]);
    await s.synchronize();
    exec2.close();
    b2.close();

    await dev.synchronize();
    dev.trimGraphMemory();
    const end = { free: dev.memoryInfo().free, graph: dev.graphMemoryUsage() };
    // The graph pool holds nothing; the device's free memory is back within less than one 32 MiB block
    // of the pool (the driver keeps a few MiB of its own for launches it has seen).
    const deltas = [afterFirst.free - start.free, end.free - start.free];
    console.log(`graph memory test: free memory after the graphs minus before: ${deltas.map((d) => (d / MiB).toFixed(1)).join(', ')} MiB`);
    expect([afterFirst.graph.used, afterFirst.graph.reserved, end.graph.used, end.graph.reserved]).toEqual([0, 0, 0, 0]);
    for (const d of deltas) expect(Math.abs(d)).toBeLessThan(32 * MiB);
    dev.resetGraphMemoryHighWatermarks();
    expect(dev.graphMemoryUsage()).toEqual({ used: 0, usedHigh: 0, reserved: 0, reservedHigh: 0 });
    out.close();
  });

  test('a graph read back node by node equals the one built; captured and foreign graphs read the same way', async () => {
    const buf = dev.allocate(4 * N),
      out = dev.allocate(4 * N);
    const ev = dev.createEvent();
    let ran = 0;
    const child = GraphBuilder.create(dev);
    child.kernel(mod.kernel('fill'), CFG, [out, f32(9), i32(N)]);
    const b = GraphBuilder.create(dev);
    const ms = b.memset(buf, 0, { elementSize: 4 });
    const k1 = b.kernel(mod.kernel('fill'), { grid: [N / 256, 1, 1], block: 256, sharedMem: 128 }, [buf, f32(2), i32(N)], { after: [ms] });
    const hn = b.hostFunction(() => void ran++, { after: [k1] });
    const cp = b.copy(out, buf, undefined, { after: [k1] });
    const er = b.recordEvent(ev, { after: [cp] });
    const em = b.empty({ after: [hn, er] });
    const ch = b.childGraph(child, { after: [em] });
    b.addEdge(ms, hn);
    const built = [ms, k1, hn, cp, er, em, ch];
    const edgesBuilt = [
      [0, 1],
      [1, 2],
      [1, 3],
      [3, 4],
      [2, 5],
      [4, 5],
      [5, 6],
      [0, 2],
    ];
    const sortPairs = (p: number[][]) => p.map((x) => x.join('>')).sort();

    // The builder's own reading gives back the very objects it returned.
    expect(b.nodes().every((n, i) => n === built[i] || built.includes(n))).toBe(true);
    expect([b.nodeCount, b.edgeCount]).toEqual([7, 8]);

    // A Graph over the same handle has its own node objects: compare them with the built ones, one by one.
    const view = Graph.fromHandle(b.handle, { device: dev });
    const read = view.nodes();
    const index = (n: coreTypes.GraphNode) => built.findIndex((x) => x.handle === n.handle);
    expect(read.map(index).sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const byBuilt = built.map((x) => read.find((n) => n.handle === x.handle)!);
    expect(byBuilt.map((n) => [n.constructor.name, n.type])).toEqual([
      ['MemsetNode', 'memset'],
      ['KernelNode', 'kernel'],
      ['HostNode', 'host'],
      ['CopyNode', 'copy'],
      ['EventNode', 'eventRecord'],
      ['GraphNode', 'empty'],
      ['ChildGraphNode', 'child'],
    ]);
    const [rms, rk, rhn, rcp, rer, , rch] = byBuilt as [
      coreTypes.MemsetNode,
      coreTypes.KernelNode,
      coreTypes.HostNode,
      coreTypes.CopyNode,
      coreTypes.EventNode,
      coreTypes.GraphNode,
      coreTypes.ChildGraphNode,
    ];
    expect([rms.dst, rms.value, rms.elementSize, rms.shape.width]).toEqual([buf.ptr, 0, 4, N]);
    expect([rk.grid, rk.block, rk.sharedMem, rk.func === k1.func]).toEqual([[N / 256, 1, 1], [256, 1, 1], 128, true]);
    expect([rk.grid, rk.block, rk.sharedMem]).toEqual([k1.grid, k1.block, k1.sharedMem]);
    expect([rhn.fn === hn.fn, rhn.fn !== 0n, rhn.jsFunction, hn.jsFunction !== null]).toEqual([true, true, null, true]);
    expect([rcp.dst, rcp.src, rcp.bytes]).toEqual([out.ptr, buf.ptr, 4 * N]);
    expect(rer.eventHandle).toBe(ev.handle);
    expect(rch.childGraph.nodes().map((n) => n.type)).toEqual(['kernel']);
    expect((rch.childGraph.nodes()[0] as coreTypes.KernelNode).grid).toEqual([N / 256, 1, 1]);
    expect(sortPairs(view.edges().map((e) => [index(e.from), index(e.to)]))).toEqual(sortPairs(edgesBuilt));
    for (const [i, n] of byBuilt.entries()) {
      expect(n.predecessors.map(index).sort()).toEqual(
        edgesBuilt
          .filter(([, to]) => to === i)
          .map(([f]) => f)
          .sort(),
      );
      expect(n.successors.map(index).sort()).toEqual(
        edgesBuilt
          .filter(([f]) => f === i)
          .map(([, to]) => to)
          .sort(),
      );
    }
    expect(view.rootNodes().map(index)).toEqual([0]);
    view.close();

    // It runs as built: the child graph's fill (9) comes after the copy (2).
    const exec = b.instantiate();
    exec.launch(s);
    await s.synchronize();
    expect([ran, out.copyTo(new Float32Array(2))[1]]).toEqual([1, 9]);
    exec.close();

    // A captured graph: its kernel and copy nodes, in order.
    const g = await s.capture((st) => {
      mod.kernel('fill').launch({ grid: N / 256, block: 256, stream: st }, buf, f32(5), i32(N));
      buf.copyTo(out, { stream: st });
    });
    const gn = g.nodes();
    expect(gn.map((n) => n.type)).toEqual(['kernel', 'copy']);
    expect((gn[0] as coreTypes.KernelNode).grid).toEqual([N / 256, 1, 1]);
    expect([(gn[1] as coreTypes.CopyNode).dst, (gn[1] as coreTypes.CopyNode).bytes]).toEqual([out.ptr, 4 * N]);
    expect(g.edges().map((e) => [gn.indexOf(e.from), gn.indexOf(e.to)])).toEqual([[0, 1]]);
    g.close();

    // A cudaGraph_t made with the runtime facade, borrowed.
    const [, raw] = cudart.cudaGraphCreate(0);
    const params = new cudart.cudaKernelNodeParams({
      func: mod.kernel('countBlocks').handle,
      gridDim: { x: 3, y: 2, z: 1 },
      blockDim: { x: 32, y: 1, z: 1 },
      kernelParams: [cudart.ptr(buf.ptr)],
    });
    const [err] = cudart.cudaGraphAddKernelNode(raw!, null, 0, params);
    expect(err).toBe(0);
    const foreign = Graph.fromHandle(raw!);
    const [fk] = foreign.nodes();
    expect(fk).toBeInstanceOf(KernelNode);
    expect([(fk as coreTypes.KernelNode).grid, (fk as coreTypes.KernelNode).block, (fk as coreTypes.KernelNode).kernel]).toEqual([
      [3, 2, 1],
      [32, 1, 1],
      null,
    ]);
    foreign.close();
    expect(cudart.cudaGraphGetNodes(raw!, 0)).toEqual([0, [], 1]);
    cudart.cudaGraphDestroy(raw!);

    b.close();
    child.close();
    for (const r of [buf, out, ev]) r.close();
  });

  test("a kernel node's grid changed on the executable graph changes the result, without instantiating again", async () => {
    const counter = dev.allocate(4),
      other = dev.allocate(4);
    const count = (buf: coreTypes.DeviceBuffer) => buf.copyTo(new Int32Array(1))[0];
    const b = GraphBuilder.create(dev);
    const zero = b.memset(counter, 0, { elementSize: 4 });
    const kn = b.kernel(mod.kernel('countBlocks'), { grid: 4, block: 64 }, [counter], { after: [zero] });
    const exec = b.instantiate();
    exec.launch(s);
    await s.synchronize();
    expect(count(counter)).toBe(4);

    exec.setKernelParams(kn, { grid: 10 });
    exec.launch(s);
    await s.synchronize();
    expect(count(counter)).toBe(10);
    expect(kn.grid).toEqual([4, 1, 1]); // the graph's node keeps its own

    exec.setKernelParams(kn, { grid: [3, 2], args: [other] });
    exec.setMemsetParams(zero, { dst: other });
    other.fill(0xff);
    counter.fill(0);
    exec.launch(s);
    await s.synchronize();
    expect([count(counter), count(other)]).toEqual([0, 6]);

    exec.setEnabled(kn, false);
    expect(exec.isEnabled(kn)).toBe(false);
    exec.launch(s);
    await s.synchronize();
    expect(count(other)).toBe(0);
    exec.setEnabled(kn, true);

    // The node changed itself: a new exec takes it, the old one keeps its own.
    kn.setParams({ grid: 7 });
    kn.setAttributes({ priority: -1 }); // lower is sooner; CUDA clamps to the device's stream priority range (-5 to 0 on an H100)
    expect([kn.grid, kn.attributes.priority]).toEqual([[7, 1, 1], -1]);
    exec.close();
    const exec2 = b.instantiate({ useNodePriority: true });
    expect(exec2.flags).toEqual({ autoFreeOnLaunch: false, deviceLaunch: false });
    exec2.launch(s);
    await s.synchronize();
    expect(count(counter)).toBe(7);
    exec2.close();
    b.close();
    counter.close();
    other.close();
  });

  test('memsets and copies on raw addresses (2D, pitched), a host node from a C function pointer with user data', async () => {
    const rows = 8,
      pitch = 256,
      width = 16; // 4-byte elements per row
    const pitched = dev.allocate(rows * pitch),
      packed = dev.allocate(rows * width * 4),
      copy = dev.allocate(rows * width * 4);
    // sem_post(userData) as the C host function: the semaphore counts the launches.
    const libc = koffi.load('libc.so.6');
    const dlsym = libc.func('uint64_t dlsym(uint64_t handle, const char *name)');
    const semInit = libc.func('int sem_init(uint64_t sem, int pshared, unsigned int value)');
    const semGetValue = libc.func('int sem_getvalue(uint64_t sem, _Out_ int *value)');
    const semPost = BigInt(dlsym(0, 'sem_post'));
    expect(semPost).not.toBe(0n);
    const sem = new HostBuffer(64);
    expect(semInit(sem.ptr, 0, 0)).toBe(0);

    const b = GraphBuilder.create(dev);
    const base = b.memset(pitched.ptr, 0x11, { width: pitch, height: rows }); // bytes: the padding too
    const m = b.memset(pitched.ptr, 0x3f800000, { elementSize: 4, width, height: rows, pitch, after: [base] }); // 1.0f
    const c2 = b.copy2D(packed.ptr, pitched.ptr, { width: width * 4, height: rows, srcPitch: pitch }, { after: [m] });
    const c1 = b.copy(copy.ptr, packed.ptr, rows * width * 4, { after: [c2] });
    const hn = b.hostFunction(semPost, { userData: sem.ptr, after: [c1] });
    expect([m.shape, m.elementSize, c2.pitch, c2.extent, c1.bytes, hn.fn === semPost, hn.userData === sem.ptr]).toEqual([
      { width, height: rows, pitch },
      4,
      { dst: width * 4, src: pitch },
      { width: width * 4, height: rows, depth: 1 },
      rows * width * 4,
      true,
      true,
    ]);
    const exec = b.instantiate();
    for (let i = 0; i < 5; i++) exec.launch(s);
    await s.synchronize();
    expect(copy.copyTo(new Float32Array(rows * width)).every((x) => x === 1)).toBe(true);
    const bytes = pitched.copyTo(new Uint8Array(rows * pitch));
    // Past each row's 16 elements, the padding keeps the first memset's bytes.
    expect(Array.from(bytes.subarray(width * 4, width * 4 + 4))).toEqual([0x11, 0x11, 0x11, 0x11]);
    const value = [0];
    expect(semGetValue(sem.ptr, value)).toBe(0);
    expect(value[0]).toBe(5);
    exec.close();
    b.close();
    for (const r of [pitched, packed, copy]) r.close();
  });

  test('instantiate options (upload on a stream, device launch, node priority), a refused graph naming the node, every DOT flag', async () => {
    const counter = dev.allocate(4);
    const b = GraphBuilder.create(dev);
    const zero = b.memset(counter, 0, { elementSize: 4 });
    b.kernel(mod.kernel('countBlocks'), { grid: 5, block: 32 }, [counter], { after: [zero] });
    const uploaded = b.instantiate({ upload: s });
    uploaded.launch(s);
    await s.synchronize();
    expect(counter.copyTo(new Int32Array(1))[0]).toBe(5);
    uploaded.close();
    const device = b.instantiate({ deviceLaunch: true, upload: s });
    expect(device.flags).toEqual({ autoFreeOnLaunch: false, deviceLaunch: true });
    device.launch(s);
    await s.synchronize();
    expect(counter.copyTo(new Int32Array(1))[0]).toBe(5);
    device.close();

    // CUDA refuses a host node in a device-launch graph, and points at it.
    const bad = GraphBuilder.create(dev);
    bad.kernel(mod.kernel('countBlocks'), { grid: 1, block: 32 }, [counter]);
    bad.hostFunction(() => undefined);
    expect(() => bad.instantiate({ deviceLaunch: true })).toThrow(
      /GraphBuilder\.instantiate \(cudaGraphInstantiateWithParams\)\).*CUDA points at a host node/,
    );
    bad.close();

    const dot = (options: coreTypes.DebugDotOptions) => {
      const f = path.join(dir, 'g.dot');
      b.debugDot(f, options);
      return fs.readFileSync(f, 'utf8');
    };
    const plain = dot({});
    expect(plain).toMatch(/^digraph/);
    for (const o of [
      'kernelParams',
      'kernelAttributes',
      'copyParams',
      'memsetParams',
      'hostParams',
      'eventParams',
      'extSemaphoreSignalParams',
      'extSemaphoreWaitParams',
      'conditionalParams',
      'handles',
    ] as const)
      expect(dot({ [o]: true })).toMatch(/^digraph/);
    expect(dot({ verbose: true }).length).toBeGreaterThan(plain.length);
    expect(dot({ handles: true })).toMatch(/0x[0-9a-f]+/);
    b.close();
    counter.close();
  });
});
