// GraphBuilder without a GPU: what each node method asks CUDA for, read back from a fake libcudart
// (test/cpu/fixtures/fake-cudart-*.c) whose cudaGraphDebugDotPrint writes every node it was given.
import * as fs from 'node:fs';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';
import { STALE_HANDLE_TRACER } from '../helpers/stale-handles';

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

test('every node kind, dependencies, conditional bodies, capture into the builder, debugDot and instantiate', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { GraphBuilder, i32, u64 } = core;
    const d = core.Device.get(0);
    const b = GraphBuilder.create(d);
    const buf = d.allocate(64), buf2 = d.allocate(64);
    const k = kernel(0x103n, 'k3');
    const memset = b.memset(buf, 7, { elementSize: 4 });
    const kn = b.kernel(k, { grid: [2, 3], block: 32, sharedMem: 16 }, [buf, i32(5), u64(9n)], { after: [memset] });
    const cp = b.copy(buf2, buf, 32, { after: [kn] });
    let ran = 0;
    const hn = b.hostFunction(() => { ran++; }, { after: [cp] });
    const ev = d.createEvent();
    b.recordEvent(ev, { after: [hn] });
    b.waitEvent(ev);
    const child = GraphBuilder.create(d);
    child.empty();
    child.empty();
    b.childGraph(child, { after: [kn, cp] });
    const h = b.conditionalHandle({ default: 1 });
    const ifNode = b.if(h, { after: [cp], else: true });
    ifNode.then.kernel(k, { grid: 1, block: 1 }, [h, i32(1), u64(2)]);
    ifNode.else.empty();
    const hw = b.conditionalHandle();
    const w = b.while(hw);
    w.body.kernel(k, { grid: 1, block: 1 }, [hw, i32(0), u64(0)]);
    const sw = b.switch(h, 3);
    const s = d.createStream();
    const leaves = await b.capture(s, (st) => { kernel(4n, 'e').launch({ grid: 7, block: 1, stream: st }); kernel(4n, 'e').launch({ grid: 8, block: 1, stream: st }); }, { after: [ifNode.node] });
    b.empty({ after: leaves });
    const dot = require('node:path').join(${JSON.stringify(fake.dir)}, 'g.dot');
    b.debugDot(dot, { verbose: true });
    const exec = b.instantiate();
    console.log(JSON.stringify({
      dot: require('node:fs').readFileSync(dot, 'utf8').replaceAll(String(buf.ptr), 'BUF').replaceAll(String(buf2.ptr), 'BUF2').split('\\n'),
      ran, nodeCount: b.nodeCount, kinds: [memset.kind, kn.kind, ifNode.node.kind, w.node.kind, sw.node.kind, leaves.map((l) => l.kind)], cases: sw.cases.length,
      handles: [typeof h.handle, h.defaultValue, hw.defaultValue], exec: exec.constructor.name, bodyParent: ifNode.then.parent === b,
    }));`,
  );
  expect(r).toEqual({
    dot: [
      'flags=1',
      'n0 memset dst=BUF value=7 elementSize=4 width=16 height=1 after []',
      'n1 kernel func=259 grid=2,3,1 block=32,1,1 shared=16 args=[ BUF 5 9 ] after [0]',
      'n2 copy dst=BUF2 src=BUF bytes=32 kind=4 after [1]',
      'n3 host fn=set after [2]',
      'n4 eventRecord after [3]',
      'n5 eventWait after []',
      'n6 child nodes=2 after [1,2]',
      'handle 1280 default=1 flags=1',
      'n7 conditional type=0 size=2 handle=1280 after [2]',
      '  body 0:',
      '    n0 kernel func=259 grid=1,1,1 block=1,1,1 shared=0 args=[ 1280 1 2 ] after []',
      '  body 1:',
      '    n0 empty after []',
      'handle 1281 default=0 flags=0',
      'n8 conditional type=1 size=1 handle=1281 after []',
      '  body 0:',
      '    n0 kernel func=259 grid=1,1,1 block=1,1,1 shared=0 args=[ 1281 0 0 ] after []',
      'n9 conditional type=2 size=3 handle=1280 after []',
      '  body 0:',
      '  body 1:',
      '  body 2:',
      'capture begins after 1 nodes, mode=0',
      'n10 captured kernel func=4 grid=7 after [7]',
      'n11 captured kernel func=4 grid=8 after [10]',
      'n12 empty after [11]',
      '',
    ],
    ran: 1,
    nodeCount: 13,
    kinds: ['memset', 'kernel', 'if', 'while', 'switch', ['captured']],
    cases: 3,
    handles: ['bigint', 1, null],
    exec: 'GraphExec',
    bodyParent: true,
  });
});

test('each node method checks its arguments and liveness, naming the method and the parameter', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { GraphBuilder, i32 } = core;
    const d = core.Device.get(0);
    const b = GraphBuilder.create(d), other = GraphBuilder.create(d);
    const k = kernel(0x101n, 'k1');
    const buf = d.allocate(64);
    const errors = [];
    const t = (f) => { try { f(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    t(() => b.empty({ after: [other.empty()] }));
    t(() => b.empty({ after: [42] }));
    t(() => b.memset(buf, 256));
    t(() => b.memset(buf, 1, { elementSize: 3 }));
    t(() => b.kernel(k, { grid: 1, block: 1 }, [1]));
    t(() => b.kernel(k, { grid: 0, block: 1 }, [i32(1)]));
    t(() => b.kernel(k, { grid: 1, block: 1 }, [core.In(new Float32Array(1))]));
    t(() => b.kernel({}, { grid: 1, block: 1 }));
    t(() => b.copy(buf, new Float32Array(4)));
    t(() => b.copy(buf, buf, 65));
    t(() => b.hostFunction('nope'));
    t(() => b.switch(b.conditionalHandle(), 0));
    t(() => b.if({ handle: 1n }));
    t(() => b.conditionalHandle({ default: -1 }));
    t(() => b.childGraph(b));
    const body = b.while(b.conditionalHandle()).body;
    t(() => body.instantiate());
    const closedBuf = d.allocate(4); closedBuf.close();
    t(() => b.kernel(k, { grid: 1, block: 1 }, [closedBuf]));
    b.close();
    t(() => body.empty());
    t(() => b.empty());
    t(() => other.childGraph(b));
    t(() => b.debugDot('/tmp/x.dot'));
    console.log(JSON.stringify(errors));`,
  );
  expect(r).toEqual([
    "Error: GraphBuilder.empty: option 'after[0]' is a node of another graph; a node can only follow nodes of its own graph (or body)",
    "TypeError: GraphBuilder.empty: option 'after[0]' must be a GraphNode, got 42",
    "RangeError: GraphBuilder.memset: parameter 'value' must be an integer within [0, 255] for 1-byte elements, got 256",
    "RangeError: GraphBuilder.memset: option 'elementSize' must be 1, 2 or 4, got 3",
    'TypeError: GraphBuilder.kernel(k1): argument 0 is a plain number (1); say its C type: i32(n), u32(n), f32(x), f64(x), …',
    "RangeError: GraphBuilder.kernel(k1): 'config.grid' must be a positive integer or [x, y, z] of them, got 0",
    'TypeError: GraphBuilder.kernel(k1): argument 0 is an In/Out/InOut host array, which only Kernel.launch and launchAsync copy in and back; elsewhere pass a DeviceBuffer (in a graph, with copy nodes around the kernel)',
    "TypeError: GraphBuilder.kernel: parameter 'kernel' must be a Kernel, got an object (Object)",
    "TypeError: GraphBuilder.copy: parameter 'src' must be a DeviceBuffer, a HostBuffer (pinned memory: a graph copies at each launch, long after this call), a graph allocation (builder.allocate()) or a device address (bigint), got a Float32Array",
    "RangeError: GraphBuilder.copy: 65 bytes do not fit in the source's 64",
    'TypeError: GraphBuilder.hostFunction: parameter \'fn\' must be a function or a C function pointer (a non-zero bigint), got the string "nope"',
    "RangeError: GraphBuilder.switch: parameter 'cases' must be a positive integer, got 0",
    "TypeError: GraphBuilder.if: parameter 'handle' must be a ConditionalHandle (builder.conditionalHandle()), got an object (Object)",
    "RangeError: GraphBuilder.conditionalHandle: option 'default' must be an unsigned 32-bit integer, got -1",
    'Error: GraphBuilder.childGraph: a graph cannot contain itself',
    'Error: GraphBuilder.instantiate: this is the body of a conditional node; instantiate the graph it belongs to',
    'Error: GraphBuilder.kernel(k1): argument 0 is a DeviceBuffer that was closed',
    'Error: GraphBuilder.empty: the graph this conditional body belongs to was closed',
    'Error: GraphBuilder.empty: the GraphBuilder was closed',
    "Error: GraphBuilder.childGraph: parameter 'graph' is a GraphBuilder that was closed",
    'Error: GraphBuilder.debugDot: the GraphBuilder was closed',
  ]);
});

test("stream.captureInto(builder, work) records the stream's work into the builder after the given nodes", () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const b = core.GraphBuilder.create(d);
    const first = b.empty();
    const s = d.createStream();
    const leaves = await s.captureInto(b, (st) => kernel(4n, 'e').launch({ grid: 3, block: 1, stream: st }), { after: [first], mode: 'relaxed' });
    const dot = require('node:path').join(${JSON.stringify(fake.dir)}, 'c.dot');
    b.debugDot(dot);
    let wrong = '';
    try { await s.captureInto({}, () => 0); } catch (e) { wrong = e.message; }
    s.close();
    let closed = '';
    try { await s.captureInto(b, () => 0); } catch (e) { closed = e.message; }
    console.log(JSON.stringify({ dot: require('node:fs').readFileSync(dot, 'utf8').split('\\n'), leaves: leaves.map((l) => l.kind), wrong, closed }));`,
  );
  expect(r).toEqual({
    dot: ['flags=0', 'n0 empty after []', 'capture begins after 1 nodes, mode=2', 'n1 captured kernel func=4 grid=3 after [0]', ''],
    leaves: ['captured'],
    wrong: "Stream.captureInto: parameter 'builder' must be a GraphBuilder, got a Object",
    closed: 'Stream.captureInto: the Stream was closed',
  });
});

test('a GraphExec keeps what its nodes use: their close() waits for it, and a launch never copies through freed memory', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const pinnedFreed = L.func('long fake_pinned_freed(void)');
    const collect = async () => { for (let i = 0; i < 3; i++) { global.gc(); await new Promise((r) => setTimeout(r, 5)); } };
    const src = d.allocate(16).copyFrom(Float32Array.from([1, 2, 3, 4]));
    const whole = d.allocate(32), dst = whole.slice(16);
    let pinned = new core.HostBuffer(16);
    const b = core.GraphBuilder.create(d);
    const first = b.copy(dst, src);
    b.copy(pinned, dst, undefined, { after: [first] });
    const exec = b.instantiate();
    const live = fake.live(), pinnedBefore = pinnedFreed();
    // Everything the graph uses is closed (the copy's destination through the allocation it is a view of), and the builder too.
    for (const x of [src, whole, pinned, b]) x.close();
    pinned = null;
    await collect();
    const closed = [src.isClosed, dst.isClosed, b.isClosed];
    const freedWhileHeld = [live - fake.live(), pinnedFreed() - pinnedBefore];
    let launched = 'launched';
    try { exec.launch(); } catch (e) { launched = e.message; }
    exec.close();
    await collect();
    console.log(JSON.stringify({ closed, freedWhileHeld, launched, freedAfter: [live - fake.live(), pinnedFreed() - pinnedBefore] }));`,
    ['--expose-gc'],
  );
  expect(r).toEqual({ closed: [true, true, true], freedWhileHeld: [0, 0], launched: 'launched', freedAfter: [2, 1] });
});

test('instantiate() refuses a graph that uses something closed since its node was added, naming what and which node', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const errors = [];
    const t = (f) => { try { f(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    const a = d.allocate(8), c = d.allocate(8), e = d.createEvent();
    const b = core.GraphBuilder.create(d);
    b.copy(a, c);
    a.close();
    t(() => b.instantiate());
    const b2 = core.GraphBuilder.create(d);
    const body = b2.if(b2.conditionalHandle({ default: 1 })).then;
    body.recordEvent(e);
    e.close();
    t(() => b2.instantiate());
    const k = kernel(0x101n, 'k1'), arg = d.allocate(8);
    const child = core.GraphBuilder.create(d);
    child.kernel(k, { grid: 1, block: 1 }, [arg]);
    const b3 = core.GraphBuilder.create(d);
    b3.childGraph(child);
    arg.close();
    t(() => b3.instantiate());
    console.log(JSON.stringify(errors));`,
  );
  expect(r).toEqual([
    'Error: GraphBuilder.instantiate: a copy node uses a DeviceBuffer that was closed; close what a graph uses after the GraphExec (which keeps it alive), not before instantiate()',
    'Error: GraphBuilder.instantiate: an eventRecord node uses an Event that was closed; close what a graph uses after the GraphExec (which keeps it alive), not before instantiate()',
    'Error: GraphBuilder.instantiate: a kernel node uses a DeviceBuffer that was closed; close what a graph uses after the GraphExec (which keeps it alive), not before instantiate()',
  ]);
});

test('builder.capture holds the stream and the graph until the capture has ended: closed during the work, neither handle reaches C destroyed', () => {
  const r = runWithFake(
    fake.lib,
    `${STALE_HANDLE_TRACER}
    const d = core.Device.get(0);
    const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
    const queue = (st) => kernel(4n, 'e').launch({ grid: 1, block: 1, stream: st });
    const outcome = (p) => p.then((nodes) => nodes.map((n) => n.kind), (e) => e.constructor.name + ': ' + e.message);
    // The calls of the capture that take its stream or graph, in order.
    const callsSince = (at) => tracer.calls.slice(at).filter((c) => /Capture|GetNodes|Destroy/.test(c));
    const results = {}, calls = {};
    let at = tracer.calls.length;
    const s1 = d.createStream();
    results.streamClosedByWork = await outcome(core.GraphBuilder.create(d).capture(s1, async (st) => { queue(st); await tick(); st.close(); }));
    calls.streamClosedByWork = callsSince(at);
    const s2 = d.createStream();
    const pending = core.GraphBuilder.create(d).capture(s2, async (st) => { queue(st); await tick(); });
    s2.close();
    results.streamClosedByOther = await outcome(pending);
    const b3 = core.GraphBuilder.create(d), s3 = d.createStream();
    at = tracer.calls.length;
    const abandoned = b3.capture(s3, async (st) => { queue(st); await tick(); });
    b3.close();
    const closedAt = b3.isClosed;
    results.builderClosed = await outcome(abandoned);
    calls.builderClosed = callsSince(at);
    // The stream is not left capturing: it captures again.
    results.streamAfter = await outcome(core.GraphBuilder.create(d).capture(s3, queue));
    const top = core.GraphBuilder.create(d);
    const body = top.while(top.conditionalHandle({ default: 0 })).body;
    at = tracer.calls.length;
    const inBody = body.capture(s3, async (st) => { queue(st); await tick(); });
    top.close();
    results.topOfBodyClosed = await outcome(inBody);
    calls.topOfBodyClosed = callsSince(at);
    console.log(JSON.stringify({ results, calls, closedAt, stale: tracer.stale }));`,
  );
  expect(r).toEqual({
    results: {
      streamClosedByWork: ['captured'],
      streamClosedByOther: ['captured'],
      builderClosed:
        'Error: GraphBuilder.capture: the GraphBuilder was closed while the work ran; the capture was ended and the graph destroyed',
      streamAfter: ['captured'],
      topOfBodyClosed:
        'Error: GraphBuilder.capture: the graph this conditional body belongs to was closed while the work ran; the capture was ended and the graph destroyed',
    },
    calls: {
      // The stream closed by the work is destroyed once the capture ended and its nodes were read.
      streamClosedByWork: [
        'cudaStreamBeginCaptureToGraph',
        'cudaStreamGetCaptureInfo',
        'cudaStreamEndCapture',
        'cudaGraphGetNodes',
        'cudaGraphGetNodes',
        'cudaStreamDestroy',
      ],
      // The builder closed during the work: the capture ends, then the graph is destroyed and nothing reads it.
      builderClosed: ['cudaStreamBeginCaptureToGraph', 'cudaStreamGetCaptureInfo', 'cudaStreamEndCapture', 'cudaGraphDestroy'],
      topOfBodyClosed: ['cudaStreamBeginCaptureToGraph', 'cudaStreamGetCaptureInfo', 'cudaStreamEndCapture', 'cudaGraphDestroy'],
    },
    closedAt: true,
    stale: [],
  });
});

test("a conditional body's ConditionalHandle reports closed with the graph the body belongs to, and every use refuses it then (if, while, switch)", () => {
  const r = runWithFake(
    fake.lib,
    `
    const { GraphBuilder } = core;
    const d = core.Device.get(0);
    const k = kernel(0x101n, 'setter');
    const cfg = { grid: 1, block: 1 };
    const errors = [];
    const t = (f) => { try { f(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    const top = GraphBuilder.create(d);
    const h0 = top.conditionalHandle({ default: 1 });
    const bodies = [top.if(h0).then, top.while(h0).body, top.switch(h0, 2).cases[1]];
    // And a body of a body.
    bodies.push(bodies[1].if(bodies[1].conditionalHandle({ default: 1 })).then);
    const handles = bodies.map((b) => b.conditionalHandle({ default: 0 }));
    const before = handles.map((h) => h.isClosed);
    top.close();
    const after = handles.map((h) => h.isClosed);
    const other = GraphBuilder.create(d);
    const prepared = k.prepare(['u64']);
    const launches = fake.launches();
    for (const h of handles) t(() => k.launch(cfg, h));
    t(() => prepared(cfg, handles[1]));
    t(() => other.kernel(k, cfg, [handles[2]]));
    t(() => other.while(handles[3]));
    console.log(JSON.stringify({ before, after, errors, launched: fake.launches() - launches, otherNodes: other.nodeCount }));`,
  );
  const closed = 'is a ConditionalHandle of a graph that was closed';
  expect(r).toEqual({
    before: [false, false, false, false],
    after: [true, true, true, true],
    errors: [
      `Error: Kernel.launch(setter): argument 0 ${closed}`,
      `Error: Kernel.launch(setter): argument 0 ${closed}`,
      `Error: Kernel.launch(setter): argument 0 ${closed}`,
      `Error: Kernel.launch(setter): argument 0 ${closed}`,
      `Error: PreparedLaunch(setter): argument 0 ${closed}`,
      `Error: GraphBuilder.kernel(setter): argument 0 ${closed}`,
      "Error: GraphBuilder.while: parameter 'handle' belongs to a graph that was closed",
    ],
    launched: 0,
    otherNodes: 0,
  });
});
