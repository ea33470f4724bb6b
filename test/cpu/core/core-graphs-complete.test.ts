// Core's graphs as complete as cuda.core's, without a GPU: memory nodes and the graph memory pool,
// graphs read back (nodes, edges, types, neighbours; captured and borrowed graphs too), node
// parameters read and changed (on the node and on the executable graph), copies and memsets on raw
// addresses, C host functions, instantiate options and every DOT flag. The fake libcudart
// (test/cpu/fixtures/fake-cudart.c, kernels variant) keeps each node's type, parameters and edges,
// and logs what is done to executable graphs (fake_exec_log).
import * as fs from 'node:fs';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

/** Script lines: `dotOf(builder, options)` (the fake's DOT log, addresses named), `execLog()`, `t(f)` (the error f throws, as text). */
const HELPERS = (dir: string) => `
  const path = require('node:path'), fsm = require('node:fs');
  const names = new Map();
  const name = (p, n) => names.set(String(p), n);
  const named = (text) => { for (const [p, n] of names) text = text.replaceAll(p, n); return text; };
  const dotOf = (g, options) => { const f = path.join(${JSON.stringify(dir)}, 'g' + Math.random() + '.dot'); g.debugDot(f, options); const t = fsm.readFileSync(f, 'utf8'); fsm.rmSync(f); return named(t).split('\\n').filter((l) => l); };
  const execLogRaw = L.func('const char *fake_exec_log(void)');
  let execSeen = 0;
  const execLog = () => { const all = named(execLogRaw()); const lines = all.slice(execSeen).split('\\n').filter((l) => l); execSeen = all.length; return lines; };
  const t = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
`;

test('memory nodes: allocate, use the address in kernel, memset and copy nodes, free; the graph memory pool', () => {
  const r = runWithFake(
    fake.lib,
    `${HELPERS(fake.dir)}
    const { GraphBuilder, i32 } = core;
    const d = core.Device.get(0);
    const b = GraphBuilder.create(d);
    const out = d.allocate(64);
    name(out.ptr, 'OUT');
    const a = b.allocate(64);
    name(a.ptr, 'ALLOC');
    const set = b.memset(a, 7, { elementSize: 4, after: [a] });
    const run = b.kernel(kernel(0x102n, 'k2'), { grid: 1, block: 16 }, [a, i32(16)], { after: [set] });
    const cp = b.copy(out, a, undefined, { after: [run] });
    const fr = b.deallocate(a, { after: [cp] });
    const read = { alloc: [a.constructor.name, a.kind, a.type, a.size, typeof a.ptr], free: [fr.constructor.name, fr.type, fr.ptr === a.ptr], same: b.nodes()[0] === a };
    const dot = dotOf(b);
    const before = d.graphMemoryUsage();
    const exec = b.instantiate();
    exec.launch(); exec.launch();
    const freedEachLaunch = d.graphMemoryUsage();
    // A graph that does not free its allocation, instantiated to free it at the next launch.
    const b2 = GraphBuilder.create(d);
    const kept = b2.allocate(128);
    b2.memset(kept, 0, { after: [kept] });
    const exec2 = b2.instantiate({ autoFreeOnLaunch: true });
    exec2.launch();
    const once = d.graphMemoryUsage();
    exec2.launch();
    const twice = d.graphMemoryUsage();
    d.trimGraphMemory();
    const trimmed = d.graphMemoryUsage();
    d.resetGraphMemoryHighWatermarks();
    const reset = d.graphMemoryUsage();
    const errors = [
      t(() => b.allocate(0)),
      t(() => b.allocate(1.5)),
      t(() => b.deallocate('ALLOC')),
      t(() => b.memset(a, 1, { width: 65 })),
      t(() => b.copy(out, b2.allocate(32), 64)),
      t(() => b.kernel(kernel(0x101n, 'k1'), { grid: 1, block: 1 }, [kept])),
    ];
    b2.close();
    errors.push(t(() => b.memset(kept, 1)), t(() => kernel(0x101n, 'k1').launch({ grid: 1, block: 1 }, kept)));
    console.log(JSON.stringify({ read, dot, before, freedEachLaunch, once, twice, trimmed, reset, execLog: execLog(), errors }));`,
  );
  expect(r).toEqual({
    read: { alloc: ['MemAllocNode', 'alloc', 'alloc', 64, 'bigint'], free: ['MemFreeNode', 'free', true], same: true },
    dot: [
      'flags=0',
      'n0 alloc bytes=64 type=1 location=1,0 after []',
      'n1 memset dst=ALLOC value=7 elementSize=4 width=16 height=1 after [0]',
      'n2 kernel func=258 grid=1,1,1 block=16,1,1 shared=0 args=[ ALLOC 16 ] after [1]',
      'n3 copy dst=OUT src=ALLOC bytes=64 kind=4 after [2]',
      'n4 free ptr=set after [3]',
    ],
    before: { used: 0, usedHigh: 0, reserved: 0, reservedHigh: 0 },
    freedEachLaunch: { used: 0, usedHigh: 0, reserved: 64, reservedHigh: 64 },
    once: { used: 128, usedHigh: 128, reserved: 192, reservedHigh: 192 },
    twice: { used: 128, usedHigh: 128, reserved: 192, reservedHigh: 192 },
    trimmed: { used: 128, usedHigh: 128, reserved: 128, reservedHigh: 192 },
    reset: { used: 128, usedHigh: 0, reserved: 128, reservedHigh: 0 },
    execLog: ['instantiate flags=1 upload=null', 'trim'],
    errors: [
      "RangeError: GraphBuilder.allocate: parameter 'size' must be a positive integer (bytes), got 0",
      "RangeError: GraphBuilder.allocate: parameter 'size' must be a positive integer (bytes), got 1.5",
      'TypeError: GraphBuilder.deallocate: parameter \'allocation\' must be a MemAllocNode (builder.allocate()) or its address (bigint), got the string "ALLOC"',
      'RangeError: GraphBuilder.memset: 1 rows of 65 1-byte elements, 65 bytes apart, need 65 bytes; the destination has 64',
      "RangeError: GraphBuilder.copy: 64 bytes do not fit in the source's 32",
      'no error',
      "Error: GraphBuilder.memset: parameter 'dst' is the allocation of a graph that cannot be used (the GraphBuilder was closed)",
      'Error: Kernel.launch(k1): argument 0 is the allocation of a graph that was closed',
    ],
  });
});

test('a graph reads back: nodes (the same objects), edges, roots, types, predecessors and successors; edges added and removed', () => {
  const r = runWithFake(
    fake.lib,
    `${HELPERS(fake.dir)}
    const { GraphBuilder, i32 } = core;
    const d = core.Device.get(0);
    const b = GraphBuilder.create(d), other = GraphBuilder.create(d);
    const e1 = b.empty();
    const k1 = b.kernel(kernel(0x101n, 'k1'), { grid: [2, 3], block: 32, sharedMem: 8 }, [i32(1)], { after: [e1] });
    const e2 = b.empty();
    b.addEdge(e2, k1);
    const nodes = b.nodes();
    const at = (n) => nodes.indexOf(n);
    const read = {
      same: [nodes[0] === e1, nodes[1] === k1, nodes[2] === e2],
      types: nodes.map((n) => [n.constructor.name, n.kind, n.type]),
      edges: b.edges().map((e) => [at(e.from), at(e.to), e.type]),
      roots: b.rootNodes().map(at),
      predecessors: k1.predecessors.map(at),
      successors: [e1.successors.map(at), k1.successors.map(at)],
      counts: [b.nodeCount, b.edgeCount],
      builder: [k1.builder === b, k1.graph === b],
    };
    b.removeEdge(e1, k1);
    read.afterRemove = [b.edgeCount, k1.predecessors.map(at), b.rootNodes().map(at)];
    const errors = [
      t(() => b.addEdge(k1, k1)),
      t(() => b.addEdge(e1, other.empty())),
      t(() => b.addEdge(e1, 'n2')),
      t(() => b.addEdge(e2, k1)),
      t(() => b.removeEdge(e1, k1)),
    ];
    // A graph recorded by stream.capture reads the same way.
    const s = d.createStream();
    const g = await s.capture((st) => {
      kernel(4n, 'e').launch({ grid: 5, block: 1, stream: st });
      kernel(4n, 'e').launch({ grid: 6, block: 1, stream: st });
    });
    const gn = g.nodes();
    const captured = { nodes: gn.map((n) => [n.constructor.name, n.kind, n.type, n.grid, n.kernel, n.builder]), edges: g.edges().map((e) => [gn.indexOf(e.from), gn.indexOf(e.to)]), roots: g.rootNodes().length };
    // A cudaGraph_t of another library, borrowed: read, and left alive at close().
    const destroyed = L.func('long fake_graphs_destroyed(void)');
    const [, raw] = cudart.cudaGraphCreate(0);
    const [, rawNode] = cudart.cudaGraphAddEmptyNode(raw, null, 0);
    cudart.cudaGraphAddMemsetNode(raw, [rawNode], 1, new cudart.cudaMemsetParams({ dst: 0x1000n, value: 3, elementSize: 1, width: 8, height: 1 }));
    const borrowed = core.Graph.fromHandle(raw);
    const bn = borrowed.nodes();
    const borrowedRead = { nodes: bn.map((n) => [n.constructor.name, n.type]), value: bn[1].value, preds: bn[1].predecessors.map((p) => p === bn[0]) };
    const before = destroyed();
    borrowed.close();
    Object.assign(borrowedRead, { keptAlive: destroyed() === before, afterClose: t(() => borrowed.nodes()), nodeAfterClose: t(() => bn[1].value) });
    const owned = core.Graph.fromHandle(cudart.cudaGraphCreate(0)[1], { owned: true, device: d });
    owned.close();
    borrowedRead.ownedDestroyed = destroyed() - before;
    borrowedRead.errors = [t(() => core.Graph.fromHandle(0n)), t(() => core.Graph.fromHandle(raw, { own: true }))];
    // A child graph node's graph.
    const parent = GraphBuilder.create(d);
    const ch = parent.childGraph(b);
    const cg = ch.childGraph;
    const child = { cls: [ch.constructor.name, cg.constructor.name, cg === ch.childGraph], nodes: cg.nodes().map((n) => n.type), edges: cg.edgeCount };
    cg.close();
    child.afterClose = parent.nodeCount;
    const ch2 = parent.childGraph(b);
    const cg2 = ch2.childGraph;
    parent.close();
    child.parentClosed = t(() => cg2.nodes());
    b.close();
    const closed = [t(() => k1.grid), t(() => k1.predecessors), t(() => b.nodes()), t(() => e1.type)];
    console.log(JSON.stringify({ read, errors, captured, borrowedRead, child, closed }));`,
  );
  expect(r).toEqual({
    read: {
      same: [true, true, true],
      types: [
        ['GraphNode', 'empty', 'empty'],
        ['KernelNode', 'kernel', 'kernel'],
        ['GraphNode', 'empty', 'empty'],
      ],
      edges: [
        [0, 1, 'default'],
        [2, 1, 'default'],
      ],
      roots: [0, 2],
      predecessors: [0, 2],
      successors: [[1], []],
      counts: [3, 2],
      builder: [true, true],
      afterRemove: [1, [2], [0, 2]],
    },
    errors: [
      "Error: GraphBuilder.addEdge: parameters 'from' and 'to' are the same node (the kernel node of k1); a node cannot wait for itself",
      "Error: GraphBuilder.addEdge: parameter 'to' is an empty node of another graph (or body)",
      'TypeError: GraphBuilder.addEdge: parameter \'to\' must be a GraphNode, got the string "n2"',
      'CudaError: cudaErrorInvalidValue: fake error (in GraphBuilder.addEdge (cudaGraphAddDependencies))',
      'CudaError: cudaErrorInvalidValue: fake error (in GraphBuilder.removeEdge (cudaGraphRemoveDependencies))',
    ],
    captured: {
      nodes: [
        ['KernelNode', 'kernel', 'kernel', [5, 1, 1], null, null],
        ['KernelNode', 'kernel', 'kernel', [6, 1, 1], null, null],
      ],
      edges: [[0, 1]],
      roots: 1,
    },
    borrowedRead: {
      nodes: [
        ['GraphNode', 'empty'],
        ['MemsetNode', 'memset'],
      ],
      value: 3,
      preds: [true],
      keptAlive: true,
      afterClose: 'Error: Graph.nodes: the Graph was closed',
      nodeAfterClose: 'Error: MemsetNode.value: the Graph was closed',
      ownedDestroyed: 1,
      errors: [
        "TypeError: Graph.fromHandle: parameter 'handle' must be a cudaGraph_t (a non-zero bigint), got 0n",
        "TypeError: Graph.fromHandle: unknown option 'own' (did you mean 'owned'?); the options are device, owned",
      ],
    },
    child: {
      cls: ['ChildGraphNode', 'Graph', true],
      nodes: ['empty', 'kernel', 'empty'],
      edges: 1,
      afterClose: 1,
      parentClosed: 'Error: Graph.nodes: the graph whose child node it is cannot be used (the GraphBuilder was closed)',
    },
    closed: [
      'Error: KernelNode.grid: the GraphBuilder was closed',
      'Error: KernelNode.predecessors: the GraphBuilder was closed',
      'Error: GraphBuilder.nodes: the GraphBuilder was closed',
      'Error: GraphNode.type: the GraphBuilder was closed',
    ],
  });
});

test('node parameters read back, changed on the node and on the executable graph (cudaGraphExec*SetParams), errors naming the node and the parameter', () => {
  const r = runWithFake(
    fake.lib,
    `${HELPERS(fake.dir)}
    const { GraphBuilder, i32 } = core;
    const d = core.Device.get(0);
    const hostFn = BigInt(L.func('uint64_t fake_host_fn(void)')()), hostCalls = L.func('long fake_host_calls(void)'), hostUser = () => Number(L.func('uint64_t fake_host_user(void)')());
    const b = GraphBuilder.create(d);
    const buf = d.allocate(64), buf2 = d.allocate(64);
    name(buf.ptr, 'BUF'); name(buf2.ptr, 'BUF2');
    const k = kernel(0x102n, 'k2');
    const kn = b.kernel(k, { grid: [2, 3], block: [32, 2], sharedMem: 16 }, [buf, i32(5)]);
    const attrs0 = kn.attributes;
    kn.setAttributes({ priority: 3, cooperative: true, clusterDim: [2, 1, 1], memSyncDomain: 'remote' });
    const ms = b.memset(buf2, 9, { elementSize: 4 });
    const cp = b.copy(buf2, buf, 32);
    let jsRan = 0;
    const hn = b.hostFunction(() => { jsRan++; });
    const cn = b.hostFunction(hostFn, { userData: 0x1234n });
    const ev = d.createEvent(), ev2 = d.createEvent();
    const er = b.recordEvent(ev), ew = b.waitEvent(ev);
    const child = GraphBuilder.create(d);
    child.empty();
    const ch = b.childGraph(child);
    const h = b.conditionalHandle({ default: 1 });
    const w = b.while(h);
    const read = {
      kernel: [kn.kernel === k, Number(kn.func), kn.grid, kn.block, kn.sharedMem, attrs0, kn.attributes],
      memset: [ms.dst === buf2.ptr, ms.value, ms.elementSize, ms.shape],
      copy: [cp.dst === buf2.ptr, cp.src === buf.ptr, cp.bytes, cp.extent, cp.pitch],
      host: [typeof hn.jsFunction, hn.fn !== 0n, cn.fn === hostFn, Number(cn.userData), cn.jsFunction, hostCalls(), hostUser()],
      event: [er.event === ev, er.eventHandle === ev.handle, ew.eventHandle === ev.handle, ew.type, er.constructor.name],
      child: [ch.childGraph.nodeCount],
      conditional: [w.node.constructor.name, w.node.conditionalHandle === h, w.node.conditionalType, w.node.bodies[0] === w.body, w.node.type],
    };
    kn.setParams({ grid: 7, args: [buf2, i32(9)] });
    read.afterSet = [kn.grid, kn.block];
    const exec = b.instantiate();
    exec.setKernelParams(kn, { grid: [4, 4], block: 64, sharedMem: 0 });
    exec.setKernelParams(kn, { args: [buf, i32(11)] });
    exec.setMemsetParams(ms, { value: 3 });
    exec.setCopyParams(cp, { dst: buf, src: buf2 });
    exec.setHostFunction(hn, () => { jsRan += 10; });
    exec.setHostFunction(cn, hostFn, 0x99n);
    exec.setEvent(er, ev2);
    exec.setEvent(ew, ev2);
    exec.setChildGraph(ch, child);
    exec.setEnabled(kn, false);
    const enabled = [exec.isEnabled(kn), exec.isEnabled(ms)];
    exec.setEnabled(kn, true);
    enabled.push(exec.isEnabled(kn));
    const other = GraphBuilder.create(d);
    const otherNode = other.kernel(k, { grid: 1, block: 1 }, [buf, i32(0)]);
    const errors = [
      t(() => exec.setKernelParams(ms, { grid: 1 })),
      t(() => exec.setKernelParams(otherNode, { grid: 1 })),
      t(() => exec.setKernelParams(kn, { gird: 1 })),
      t(() => exec.setKernelParams(kn, { grid: 0 })),
      t(() => exec.setKernelParams(kn, { args: [5] })),
      t(() => exec.setMemsetParams(ms, { value: 2 ** 32 })),
      t(() => exec.setCopyParams(cp, { dst: 'x' })),
      t(() => exec.setHostFunction(hn, 'f')),
      t(() => exec.setHostFunction(hn, () => 0, 1n)),
      t(() => exec.setEvent(er, ev2.close() ?? ev2)),
      t(() => exec.setEnabled(hn, false)),
      t(() => exec.setEnabled(kn, 0)),
      t(() => kn.setAttributes({ priority: 1.5 })),
      t(() => kn.setAttributes({ memSyncDomain: 'far' })),
      t(() => kn.setAttributes({ priorty: 1 })),
    ];
    console.log(JSON.stringify({ read, dot: dotOf(b).filter((l) => l.startsWith('set')), execLog: execLog(), jsRan, hostCalls: hostCalls(), hostUser: hostUser(), enabled, errors }));`,
  );
  const res = r as Record<string, unknown>;
  expect(res).toEqual({
    read: {
      kernel: [
        true,
        258,
        [2, 3, 1],
        [32, 2, 1],
        16,
        { priority: 0, cooperative: false, clusterDim: [0, 0, 0], memSyncDomain: 'default' },
        { priority: 3, cooperative: true, clusterDim: [2, 1, 1], memSyncDomain: 'remote' },
      ],
      memset: [true, 9, 4, { width: 16, height: 1, pitch: 0 }],
      copy: [true, true, 32, { width: 32, height: 1, depth: 1 }, { dst: 32, src: 32 }],
      host: ['function', true, true, 4660, null, 1, 4660],
      event: [true, true, true, 'eventWait', 'EventNode'],
      child: [1],
      conditional: ['ConditionalNode', true, 'while', true, 'conditional'],
      afterSet: [
        [7, 1, 1],
        [32, 2, 1],
      ],
    },
    dot: ['set n0 kernel func=258 grid=7,1,1 block=32,2,1 shared=16 args=[ BUF2 9 ]'],
    execLog: [
      'exec n0 kernel func=258 grid=4,4,1 block=64,1,1 shared=0 args=[ BUF2 9 ]',
      'exec n0 kernel func=258 grid=7,1,1 block=32,2,1 shared=16 args=[ BUF 11 ]',
      'exec n1 memset dst=BUF2 value=3 elementSize=4 width=16',
      'exec n2 copy dst=BUF src=BUF2 width=32',
      'exec n3 host fn=set',
      'exec n4 host fn=set',
      'exec n5 eventRecord',
      'exec n6 eventWait',
      'exec n7 child nodes=1',
    ],
    jsRan: 11,
    hostCalls: 2,
    hostUser: 153,
    enabled: [false, true, true],
    errors: [
      "TypeError: GraphExec.setKernelParams(kernel): parameter 'node' is a memset node, not a kernel node",
      "Error: GraphExec.setKernelParams(k2): parameter 'node' is the kernel node of k2 of another graph than the one this GraphExec was made from",
      "TypeError: GraphExec.setKernelParams(k2): unknown option 'gird' in 'changes' (did you mean 'grid'?); the options are kernel, grid, block, sharedMem, args",
      "RangeError: GraphExec.setKernelParams(k2): 'changes.grid' must be a positive integer or [x, y, z] of them, got 0",
      'TypeError: GraphExec.setKernelParams(k2): argument 0 is a plain number (5); say its C type: i32(n), u32(n), f32(x), f64(x), …',
      "RangeError: GraphExec.setMemsetParams: 'changes.value' must be an integer within [0, 4294967295] for 4-byte elements, got 4294967296",
      'TypeError: GraphExec.setCopyParams: \'changes.dst\' must be a DeviceBuffer, a graph allocation (MemAllocNode) or a device address (bigint), got the string "x"',
      'TypeError: GraphExec.setHostFunction: parameter \'fn\' must be a function or a C function pointer (a non-zero bigint), got the string "f"',
      "TypeError: GraphExec.setHostFunction: 'userData' is for a C function pointer; a JS function takes its data from its closure",
      "Error: GraphExec.setEvent: parameter 'event' is an Event that was closed",
      'CudaError: cudaErrorInvalidValue: fake error (in GraphExec.setEnabled (cudaGraphNodeSetEnabled, a host node))',
      "TypeError: GraphExec.setEnabled: parameter 'enabled' must be a boolean, got 0",
      "RangeError: KernelNode.setAttributes(k2): attribute 'priority' must be a 32-bit integer, got 1.5",
      "RangeError: KernelNode.setAttributes(k2): attribute 'memSyncDomain' must be 'default' or 'remote', got the string \"far\"",
      "TypeError: KernelNode.setAttributes(k2): unknown option 'priorty' in 'attributes' (did you mean 'priority'?); the options are priority, cooperative, clusterDim, memSyncDomain",
    ],
  });
});

test('memsets and copies on raw device addresses (width, height, pitch, element size), 2D copies, and their checks', () => {
  const r = runWithFake(
    fake.lib,
    `${HELPERS(fake.dir)}
    const d = core.Device.get(0);
    const b = core.GraphBuilder.create(d);
    const buf = d.allocate(256), host = new core.HostBuffer(64);
    const p = buf.ptr;
    name(p + 16n, 'P+16'); name(p + 128n, 'P+128'); name(host.ptr, 'HOST'); name(p, 'P');
    const m2d = b.memset(p + 16n, 0xab, { width: 8, height: 4, pitch: 32 });
    b.memset(p, 1, { elementSize: 2, width: 10 });
    const c = b.copy(p + 128n, p, 64);
    const c2 = b.copy2D(buf, p, { width: 16, height: 4, srcPitch: 32, dstPitch: 64 });
    b.copy2D(host, p, { width: 16, height: 4 });
    const read = { memset: [m2d.dst === p + 16n, m2d.shape], copy: [c.bytes, c2.extent, c2.pitch, c2.bytes] };
    const errors = [
      t(() => b.memset(p, 1)),
      t(() => b.memset(p, 1, { height: 2 })),
      t(() => b.memset(buf, 1, { width: 10, height: 2, pitch: 5 })),
      t(() => b.memset(buf, 1, { width: 10, height: 30, pitch: 10 })),
      t(() => b.memset(0n, 1, { width: 1 })),
      t(() => b.memset(host, 1)),
      t(() => b.copy(p, p + 8n)),
      t(() => b.copy(p, p + 8n, 0)),
      t(() => b.copy2D(buf, buf, { width: 64, height: 5, dstPitch: 64 })),
      t(() => b.copy2D(buf, p, { width: 16, height: 2, srcPitch: 8 })),
      t(() => b.copy2D(buf, p, { width: 16 })),
      t(() => b.copy2D(buf, p, { width: 16, height: 1, pitch: 16 })),
    ];
    console.log(JSON.stringify({ dot: dotOf(b), read, errors }));`,
  );
  expect(r).toEqual({
    dot: [
      'flags=0',
      'n0 memset dst=P+16 value=171 elementSize=1 width=8 height=4 pitch=32 after []',
      'n1 memset dst=P value=1 elementSize=2 width=10 height=1 after []',
      'n2 copy dst=P+128 src=P bytes=64 kind=4 after []',
      'n3 copy3D dst=P src=P extent=16,4,1 dstPitch=64 srcPitch=32 kind=4 after []',
      'n4 copy3D dst=HOST src=P extent=16,4,1 dstPitch=16 srcPitch=16 kind=4 after []',
    ],
    read: {
      memset: [true, { width: 8, height: 4, pitch: 32 }],
      copy: [64, { width: 16, height: 4, depth: 1 }, { dst: 64, src: 32 }, 64],
    },
    errors: [
      "TypeError: GraphBuilder.memset: option 'width' is needed when 'dst' is an address (its size is unknown)",
      "TypeError: GraphBuilder.memset: option 'width' is needed when 'dst' is an address (its size is unknown)",
      "RangeError: GraphBuilder.memset: option 'pitch' must be an integer of at least width × elementSize (10), got 5",
      'RangeError: GraphBuilder.memset: 30 rows of 10 1-byte elements, 10 bytes apart, need 300 bytes; the destination has 256',
      "RangeError: GraphBuilder.memset: parameter 'dst' must be a device address (a non-zero 64-bit bigint), got 0n",
      "TypeError: GraphBuilder.memset: parameter 'dst' must be a DeviceBuffer, a graph allocation (builder.allocate()) or a device address (bigint), got an object (HostBuffer)",
      "TypeError: GraphBuilder.copy: parameter 'bytes' is needed when both 'dst' and 'src' are addresses (their sizes are unknown)",
      "RangeError: GraphBuilder.copy: parameter 'bytes' must be a positive integer, got 0",
      'RangeError: GraphBuilder.copy2D: 5 rows of 64 bytes, 64 bytes apart, need 320 bytes; the source has 256',
      "RangeError: GraphBuilder.copy2D: 'shape.srcPitch' must be an integer of at least 16, got 8",
      "RangeError: GraphBuilder.copy2D: 'shape.height' must be an integer of at least 1, got undefined",
      "TypeError: GraphBuilder.copy2D: unknown option 'pitch' in 'shape'; the options are width, height, dstPitch, srcPitch",
    ],
  });
});

test('instantiate options (auto-free, node priority, upload on a stream, device launch), a refused graph naming the node, and every DOT flag', () => {
  const r = runWithFake(
    fake.lib,
    `${HELPERS(fake.dir)}
    const { GraphBuilder, i32 } = core;
    const d = core.Device.get(0);
    const b = GraphBuilder.create(d);
    b.kernel(kernel(0x101n, 'k1'), { grid: 1, block: 1 }, [i32(1)]);
    const s = d.createStream();
    const flags = [
      b.instantiate({ autoFreeOnLaunch: true, useNodePriority: true }).flags,
      b.instantiate({ upload: s, deviceLaunch: true }).flags,
      b.instantiate().flags,
    ];
    const g = await s.capture((st) => kernel(4n, 'e').launch({ grid: 2, block: 1, stream: st }));
    flags.push(g.instantiate({ useNodePriority: true }).flags);
    const bad = GraphBuilder.create(d);
    bad.empty();
    bad.kernel(kernel(0x1ffn, 'broken'), { grid: 1, block: 1 });
    const closed = d.createStream();
    closed.close();
    const errors = [
      t(() => b.instantiate({ autoFreeOnLunch: true })),
      t(() => b.instantiate({ upload: closed })),
      t(() => b.instantiate({ deviceLaunch: 1 })),
      t(() => bad.instantiate({ useNodePriority: true })),
      t(() => b.debugDot('x.dot', { verbose: 1 })),
      t(() => b.debugDot('x.dot', { kernelParam: true })),
    ];
    const options = ['verbose', 'kernelParams', 'kernelAttributes', 'copyParams', 'memsetParams', 'hostParams', 'eventParams', 'extSemaphoreSignalParams', 'extSemaphoreWaitParams', 'conditionalParams', 'handles'];
    const dots = Object.fromEntries(options.map((o) => [o, dotOf(b, { [o]: true })[0]]));
    dots.all = dotOf(g, Object.fromEntries(options.map((o) => [o, true])))[0];
    dots.off = dotOf(b, { verbose: false })[0];
    console.log(JSON.stringify({ flags, execLog: execLog(), errors, dots }));`,
  );
  const none = { autoFreeOnLaunch: false, deviceLaunch: false };
  expect(r).toEqual({
    flags: [{ ...none, autoFreeOnLaunch: true }, { ...none, deviceLaunch: true }, none, none],
    execLog: [
      'instantiate flags=9 upload=null',
      'instantiate flags=6 upload=stream',
      'instantiate flags=8 upload=null',
      'instantiate flags=8 upload=null',
    ],
    errors: [
      "TypeError: GraphBuilder.instantiate: unknown option 'autoFreeOnLunch' (did you mean 'autoFreeOnLaunch'?); the options are autoFreeOnLaunch, useNodePriority, upload, deviceLaunch",
      "Error: GraphBuilder.instantiate: parameter 'options.upload' is a Stream that was closed",
      "TypeError: GraphBuilder.instantiate: option 'deviceLaunch' must be a boolean, got 1",
      'CudaError: cudaErrorInvalidValue: fake error (in GraphBuilder.instantiate (cudaGraphInstantiateWithParams)): the graph is not a valid structure (a cycle, or a node CUDA refuses where it is); CUDA points at the kernel node of broken',
      "TypeError: GraphBuilder.debugDot: option 'verbose' must be a boolean, got 1",
      "TypeError: GraphBuilder.debugDot: unknown option 'kernelParam' (did you mean 'kernelParams'?); the options are verbose, kernelParams, kernelAttributes, copyParams, memsetParams, hostParams, eventParams, extSemaphoreSignalParams, extSemaphoreWaitParams, conditionalParams, handles",
    ],
    dots: {
      verbose: 'flags=1',
      kernelParams: 'flags=4',
      kernelAttributes: 'flags=512',
      copyParams: 'flags=8',
      memsetParams: 'flags=16',
      hostParams: 'flags=32',
      eventParams: 'flags=64',
      extSemaphoreSignalParams: 'flags=128',
      extSemaphoreWaitParams: 'flags=256',
      conditionalParams: 'flags=32768',
      handles: 'flags=1024',
      all: 'flags=34813',
      off: 'flags=0',
    },
  });
});
