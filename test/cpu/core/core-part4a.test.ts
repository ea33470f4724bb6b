// Core, part 4 (first half) without a GPU, on a fake libcudart + libcuda
// (test/cpu/fixtures/fake-core4a.c, built with gcc here and loaded as both): device attributes and
// ordering, streams over foreign handles and the stream protocol, the current stream of
// stream.use(fn), events, kernel parameters and occupancy, module globals, host registration, and
// the stream-captured graph builder's state checks.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
let dir: string;
let lib: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-core4a-'));
  lib = path.join(dir, 'libcuda-fake-core4a.so');
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', `-I${include}`, '-o', lib, path.join(__dirname, '..', 'fixtures', 'fake-core4a.c')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `body` (the inside of an async function with `core`, `d` (device 0), `fake` (log, clear),
 * `k` (a Kernel of handle 0x42), `out(value)` and `err(fn)` in scope) on the fake; returns what it
 * outputs as JSON.
 */
function onFake(body: string): Record<string, unknown> {
  const script = `
    const koffi = require('koffi');
    const { core } = require('./src');
    const { Kernel } = require('./src/core/launch/Kernel');
    const L = koffi.load(process.env.CUDA_BINDINGS_CUDART);
    const fake = { log: L.func('const char *fake_log(void)'), clear: L.func('void fake_clear_log(void)') };
    const d = core.Device.get(0);
    const k = new Kernel(0x42n, 'k', { isClosed: false });
    const out = (v) => console.log(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) + 'n' : x)));
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib, CUDA_BINDINGS_CUDA: lib },
    timeout: 120_000,
  });
  if (run.stderr !== '' || run.status !== 0) throw new Error(`the child failed (status ${run.status}):\n${run.stderr}\n${run.stdout}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

test('device attributes come from cuDeviceGetAttribute typed as cuda.core types them, kept except the changing ones; arch, compare, fromPciBusId', () => {
  const r = onFake(`
    const a = d.attributes;
    fake.clear();
    const values = { maxThreadsPerBlock: a.maxThreadsPerBlock, again: a.maxThreadsPerBlock, multiGpuBoard: a.multiGpuBoard,
      vmm: a.virtualMemoryManagementSupported, dmaBuf: a.dmaBufSupported, tex3dAlt: [a.maximumTexture3dWidthAlternate, a.maximumTexture3dHeightAlternate, a.maximumTexture3dDepthAlternate],
      unknownToDriver: a.onlyPartialHostNativeAtomicSupported, clock: [a.clockRate, a.clockRate], mempool: a.mempoolSupportedHandleTypes,
      nor: a.canUseStreamWaitValueNor, ops64: a.canUse64BitStreamMemOps, hostNumaVmm: a.hostNumaVirtualMemoryManagementSupported };
    const log = fake.log();
    const all = a.toJSON();
    out({ values, log, names: Object.keys(all).length, sameObject: d.attributes === a, booleans: Object.values(all).filter((v) => typeof v === 'boolean').length,
      arch: d.arch, sorted: [d, d].sort(core.Device.compare).length, cmp: core.Device.compare(d, d),
      badCompare: err(() => core.Device.compare(d, 0)), byBus: core.Device.fromPciBusId('0000:1b:00.0') === d,
      badBus: err(() => core.Device.fromPciBusId('bus one')), noBus: err(() => core.Device.fromPciBusId('0000:99:00.0')) });`);
  expect(r.values).toEqual({
    maxThreadsPerBlock: 1001,
    again: 1001,
    multiGpuBoard: false,
    vmm: true,
    dmaBuf: true,
    tex3dAlt: [1047, 1048, 1049],
    unknownToDriver: false,
    clock: [1013, 1013],
    mempool: 1119,
    nor: true,
    ops64: true,
    hostNumaVmm: true,
  });
  // Kept attributes are asked once, the clock rate (which changes) every time.
  expect((r.log as string).match(/cuDeviceGetAttribute 1\n/g)).toHaveLength(1);
  expect((r.log as string).match(/cuDeviceGetAttribute 13\n/g)).toHaveLength(2);
  expect(r).toMatchObject({ names: 143, sameObject: true, arch: '90', sorted: 2, cmp: 0, byBus: true });
  // cuda.core's DeviceProperties: 55 of its 143 are booleans.
  expect(r.booleans).toBe(55);
  expect(r.badCompare).toBe("TypeError: Device.compare: parameters 'a' and 'b' must be Devices, got an object (Device) and 0");
  expect(r.badBus).toMatch(
    /^TypeError: Device.fromPciBusId: parameter 'pciBusId' must be a PCI address such as '0000:1B:00.0', got the string "bus one"/,
  );
  expect(r.noBus).toMatch(/^CudaError: cudaErrorInvalidDevice: .*cudaDeviceGetByPCIBusId\(0000:99:00.0\)/);
});

test('streams: priority, isNonBlocking, context; wrappers of one handle are equal and keyed alike and never destroy it; default streams; the stream protocol', () => {
  const r = onFake(`
    const s = d.createStream({ priority: -1, nonBlocking: true });
    const w = core.Stream.fromHandle(s.handle);
    const plain = d.createStream();
    fake.clear();
    w.close();
    const afterWrapperClose = fake.log();
    const S = core.Stream;
    const other = { __cuda_stream__: () => [0, 0x777n] };
    const p = d.createStream(other);
    out({ priority: s.priority, nonBlocking: s.isNonBlocking, plainNonBlocking: plain.isNonBlocking, equal: w.equals(s), sameKey: w.key === s.key,
      notEqual: plain.equals(s), afterWrapperClose, context: String(s.context.handle), contextKind: s.context.kind,
      nullKey: S.null.key, perThreadKey: S.perThread.key, nullIsDefault: S.null === d.defaultStream, zeroIsLegacy: S.fromHandle(0).equals(S.null),
      perThreadNotLegacy: S.perThread.equals(S.null), nullStays: (S.null.close(), S.null.isClosed), protocol: s.__cuda_stream__()[0],
      protocolHandle: s.__cuda_stream__()[1] === BigInt(s.handle), wrapped: [p.key, p.owned, p.device === d],
      badVersion: err(() => d.createStream({ __cuda_stream__: () => [3, 1n] })),
      badShape: err(() => d.createStream({ __cuda_stream__: () => 42 })),
      badHandle: err(() => d.createStream({ __cuda_stream__: () => [0, -1] })),
      currentOutside: S.current === S.null });`);
  expect(r).toEqual({
    priority: -1,
    nonBlocking: true,
    plainNonBlocking: false,
    equal: true,
    sameKey: true,
    notEqual: false,
    afterWrapperClose: '',
    context: '192',
    contextKind: 'borrowed',
    nullKey: 'legacy@0',
    perThreadKey: 'perThread@0',
    nullIsDefault: true,
    zeroIsLegacy: true,
    perThreadNotLegacy: false,
    nullStays: false,
    protocol: 0,
    protocolHandle: true,
    wrapped: ['0x777', false, true],
    badVersion:
      "RangeError: Device.createStream: the object's __cuda_stream__() speaks version 3 of the protocol; this layer reads version 0",
    badShape: "TypeError: Device.createStream: the object's __cuda_stream__() must return [version, handle], got 42",
    badHandle:
      "TypeError: Device.createStream: parameter '__cuda_stream__()[1]' must be a handle or address (a bigint, or a non-negative integer), got -1",
    currentOutside: true,
  });
});

test('stream.use(fn): launches, prepared launches, copies, fills, event records and allocations given no stream go to the current stream across await; concurrent scopes see their own', () => {
  const r = onFake(`
    const S = core.Stream;
    const s = d.createStream();
    const other = d.createStream();
    const buf = d.allocate(16);
    const ev = d.createEvent();
    const p = k.prepare(['i32']);
    const h = (x) => '0x' + BigInt(x.handle).toString(16);
    fake.clear();
    k.launch({ grid: 1, block: 1 });
    const inside = await s.use(async (me) => {
      k.launch({ grid: 1, block: 1 });
      await new Promise((res) => setTimeout(res, 5));
      p({ grid: 1, block: 1 }, 5);
      buf.copyFrom(new Uint8Array(16));
      buf.fill(0);
      ev.record();
      k.launch({ grid: 1, block: 1, stream: other });
      return [me === s, S.current === s];
    });
    k.launch({ grid: 1, block: 1 });
    const log = fake.log();
    const a = d.createStream(), b = d.createStream();
    const seen = await Promise.all([a, b, a].map((x, i) => x.use(async () => {
      await new Promise((res) => setTimeout(res, 10 - 3 * i));
      return S.current === x;
    })));
    const nested = s.use(() => other.use(() => S.current === other) && S.current === s);
    const gone = d.createStream();
    const closedCurrent = gone.use(() => { gone.close(); return [err(() => k.launch({ grid: 1, block: 1 })), err(() => S.current)]; });
    out({ log, inside, seen, nested, closedCurrent, s: h(s), other: h(other), badFn: err(() => s.use(42)) });`);
  const s = r.s as string;
  const other = r.other as string;
  const lines = (r.log as string).split('\n');
  expect(lines[0]).toBe('launch 0x42 on 0x0');
  expect(lines.slice(1, 7)).toEqual([
    `launch 0x42 on ${s}`,
    `launch 0x42 on ${s}`,
    `memcpyAsync 16 on ${s}`,
    `sync ${s}`,
    `memsetAsync 16 on ${s}`,
    `sync ${s}`,
  ]);
  expect(lines[7]).toMatch(new RegExp(`^record 0x[0-9a-f]+ on ${s}$`));
  expect(lines.slice(8)).toEqual([`launch 0x42 on ${other}`, 'launch 0x42 on 0x0', '']);
  expect(r).toMatchObject({
    inside: [true, true],
    seen: [true, true, true],
    nested: true,
    closedCurrent: [
      'Error: Kernel.launch(k): the current stream (put in effect by stream.use) was closed',
      'Error: Stream.current: the current stream (put in effect by stream.use) was closed',
    ],
    badFn: "TypeError: Stream.use: parameter 'fn' must be a function, got number",
  });
});

test('a launch config object reused inside stream.use() goes to the current stream, though the launch fast path learned it outside', () => {
  const r = onFake(`
    const s = d.createStream();
    const cfg = { grid: 1, block: 1 };
    fake.clear();
    k.launch(cfg); // the general path, which the fast path learns from
    k.launch(cfg); // the fast path
    s.use(() => k.launch(cfg));
    k.launch(cfg);
    out({ log: fake.log(), s: '0x' + BigInt(s.handle).toString(16) });`);
  expect((r.log as string).split('\n')).toEqual([
    'launch 0x42 on 0x0',
    'launch 0x42 on 0x0',
    `launch 0x42 on ${r.s as string}`,
    'launch 0x42 on 0x0',
    '',
  ]);
});

test('events: isSyncBusyWaited and blockingSync; elapsedSince names the event that was never recorded', () => {
  const r = onFake(`
    const spin = d.createEvent(), block = d.createEvent({ blockingSync: true }), third = d.createEvent();
    block.record();
    const startMissing = err(() => block.elapsedSince(spin));
    const both = err(() => third.elapsedSince(spin));
    spin.record();
    const endMissing = err(() => third.elapsedSince(spin));
    const foreign = core.Event.fromHandle(0x999n, { blockingSync: true });
    out({ spin: [spin.isSyncBusyWaited, spin.blockingSync], block: [block.isSyncBusyWaited, block.blockingSync], foreign: foreign.isSyncBusyWaited,
      startMissing, both, endMissing, ms: block.elapsedSince(spin), badOption: err(() => core.Event.fromHandle(1n, { blockingSync: 1 })) });`);
  expect(r).toEqual({
    spin: [true, false],
    block: [false, true],
    foreign: false,
    startMissing:
      "CudaError: cudaErrorInvalidResourceHandle: fake error (in Event.elapsedSince (cudaEventElapsedTime)): the start event (parameter 'start') was never recorded here; record both (event.record(stream)) before timing",
    both: "CudaError: cudaErrorInvalidResourceHandle: fake error (in Event.elapsedSince (cudaEventElapsedTime)): the start event (parameter 'start') and the end event (this one) were never recorded here; record both (event.record(stream)) before timing",
    endMissing:
      'CudaError: cudaErrorInvalidResourceHandle: fake error (in Event.elapsedSince (cudaEventElapsedTime)): the end event (this one) was never recorded here; record both (event.record(stream)) before timing',
    ms: 1.5,
    badOption: "TypeError: Event.fromHandle: option 'blockingSync' must be a boolean, got 1",
  });
});

test('kernels: numArguments and argumentsInfo, required cluster sizes, maxPotentialBlockSize with a shared-memory function and a limit', () => {
  const r = onFake(`
    const none = new Kernel(0x43n, 'none', { isClosed: false });
    const o = k.occupancy;
    const a = k.attributes();
    out({ n: k.numArguments, info: k.argumentsInfo, none: none.numArguments, cluster: [a.requiredClusterWidth, a.requiredClusterHeight, a.requiredClusterDepth],
      plain: o.maxPotentialBlockSize(), perBlock: o.maxPotentialBlockSize((b) => b * 64), limited: o.maxPotentialBlockSize(0, 100),
      constant: o.maxPotentialBlockSize(16384),
      badLimit: err(() => o.maxPotentialBlockSize(0, -1)), badFn: err(() => o.maxPotentialBlockSize(() => -5)), badSmem: err(() => o.maxPotentialBlockSize('x')) });`);
  expect(r).toEqual({
    n: 3,
    info: [
      { offset: 0, size: 8 },
      { offset: 8, size: 12 },
      { offset: 20, size: 4 },
    ],
    none: 0,
    cluster: [2, 1, 1],
    // Blocks of up to 256 threads: 2048 / size resident; the kernel allows 768; the first to fill 2048 threads wins.
    plain: { minGridSize: 8 * 132, maxBlockSize: 256 },
    // 64 bytes per thread: 256 threads lose a block to shared memory, 128 threads fill the multiprocessor.
    perBlock: { minGridSize: 16 * 132, maxBlockSize: 128 },
    // Limited to 100 threads: 100 (20 blocks), 96 (21), 64 (32 blocks, 2048 threads).
    limited: { minGridSize: 32 * 132, maxBlockSize: 64 },
    // 16 KiB each costs a block: 32 threads make 63 blocks (2016 threads), more than any larger block size.
    constant: { minGridSize: 63 * 132, maxBlockSize: 32 },
    badLimit:
      "RangeError: Kernel.occupancy.maxPotentialBlockSize(k): parameter 'blockSizeLimit' must be a non-negative integer (0: no limit), got -1",
    badFn: "RangeError: Kernel.occupancy.maxPotentialBlockSize(k): 'dynamicSharedMemory(768)' must be a byte count, got -5",
    badSmem: 'RangeError: Kernel.occupancy.maxPotentialBlockSize(k): \'dynamicSharedMemory\' must be a byte count, got the string "x"',
  });
});

test("maxPotentialBlockSize: a dynamicSharedMemory function that closes the kernel's module ends the search with an Error, and C sees the kernel no more", () => {
  const r = onFake(`
    const module = core.Module.load(new TextEncoder().encode('.version 8.0'));
    const kernel = module.kernel('k');
    fake.clear();
    let calls = 0;
    const error = err(() => kernel.occupancy.maxPotentialBlockSize((blockSize) => {
      if (++calls === 2) module.close();
      return 0;
    }));
    const unload = 'unload 0x' + module.handle.toString(16);
    const log = fake.log().split('\\n').filter((l) => l.startsWith('occupancy') || l === unload).map((l) => (l === unload ? 'unload' : l));
    out({ error, calls, log });`);
  expect(r).toEqual({
    error: 'Error: Kernel.occupancy.maxPotentialBlockSize(k): the Module the kernel belongs to was closed',
    calls: 2,
    // The search starts at the kernel's 768 threads and goes down a warp at a time: the module unloads
    // inside the second block size's function, which is the last that reaches C.
    log: ['occupancy 768 0', 'unload'],
  });
});

test('module.global gives a DeviceBuffer of the variable, closed with its module; HostBuffer.register page-locks memory the caller has and unregisters at close', () => {
  const r = onFake(`
    const m = core.Module.fromHandle(0x99n);
    const g = m.global('counter');
    const size = g.size, kind = g.kind;
    const missing = err(() => m.global('nope'));
    const badName = err(() => m.global(''));
    m.close();
    const arr = new Float32Array(8);
    fake.clear();
    const hb = core.HostBuffer.register(arr, { mapped: true, readOnly: true });
    hb.as(Float32Array)[2] = 3;
    const parent = new Uint8Array(64);
    const part = core.HostBuffer.register(parent.subarray(8, 24));
    part.bytes[0] = 7;
    const shares = [arr[2], parent[8], hb.size, part.size, hb.devicePtr !== null, part.devicePtr];
    hb.close();
    part.close();
    out({ size, kind, missing, badName, closedWithModule: g.isClosed, shares, log: fake.log(),
      notMemory: err(() => core.HostBuffer.register('text')), empty: err(() => core.HostBuffer.register(new Uint8Array(0))),
      badOption: err(() => core.HostBuffer.register(arr, { pinned: true })) });`);
  expect(r).toEqual({
    size: 4,
    kind: 'foreign',
    missing: "Error: Module.global: no __device__ or __constant__ variable 'nope' in this module",
    badName: "TypeError: Module.global: parameter 'name' must be a variable's name, got the string \"\"",
    closedWithModule: true,
    shares: [3, 7, 32, 16, true, null],
    log: 'register 32 flags=10\nregister 16 flags=0\nunregister\nunregister\n',
    notMemory:
      'TypeError: HostBuffer.register: parameter \'data\' must be a TypedArray, DataView, Buffer or ArrayBuffer, got the string "text"',
    empty: "RangeError: HostBuffer.register: parameter 'data' is empty",
    badOption: expect.stringMatching(/^TypeError: HostBuffer.register: .*'pinned'/),
  });
});

test('StreamGraphBuilder: state checks (begin twice, complete before end, resume after end), split/join counts, join required before end, completion options', () => {
  const r = onFake(`
    const G = core.StreamGraphBuilder;
    const b = d.createGraphBuilder();
    const steps = [err(() => b.endBuilding()), err(() => b.complete()), err(() => b.split(2)), err(() => b.beginBuilding('loose'))];
    b.beginBuilding();
    steps.push(err(() => b.beginBuilding()), err(() => b.complete()), err(() => b.split(1)), err(() => b.split(2.5)));
    const [first, y, z] = b.split(3);
    steps.push(first === b, y.isJoinRequired, b.isJoinRequired, y.isBuilding, err(() => y.endBuilding()), err(() => b.endBuilding()),
      err(() => G.join(y)), err(() => G.join(y, {})));
    const joined = G.join(y, b);
    steps.push(joined === b, y.isBuilding, err(() => G.join(y, z)), err(() => b.endBuilding()));
    G.join(z, b);
    fake.clear();
    b.endBuilding();
    const endLog = fake.log();
    steps.push(err(() => b.beginBuilding()), b.isBuilding);
    fake.clear();
    const exec = b.complete({ autoFreeOnLaunch: true });
    const completeLog = fake.log();
    steps.push(err(() => exec.update({})));
    fake.clear();
    exec.close();
    b.close();
    out({ steps, endLog, completeLog, closeLog: fake.log() });`);
  expect(r.steps).toEqual([
    'Error: StreamGraphBuilder.endBuilding: building has not begun (call beginBuilding() first)',
    'Error: StreamGraphBuilder.complete: building has not begun (call beginBuilding() first)',
    'Error: StreamGraphBuilder.split: building has not begun (call beginBuilding() first)',
    expect.stringMatching(/^(Type|Range)Error: StreamGraphBuilder.beginBuilding: parameter 'mode' /),
    'Error: StreamGraphBuilder.beginBuilding: it is building already',
    'Error: StreamGraphBuilder.complete: building has not ended (call endBuilding() first)',
    "RangeError: StreamGraphBuilder.split: parameter 'count' must be an integer of at least 2, got 1",
    "RangeError: StreamGraphBuilder.split: parameter 'count' must be an integer of at least 2, got 2.5",
    true,
    true,
    false,
    true,
    'Error: StreamGraphBuilder.endBuilding: this builder was split off another; join it back (StreamGraphBuilder.join) and end the one join() returns',
    'Error: StreamGraphBuilder.endBuilding: 2 builders split off this one are not joined back yet (StreamGraphBuilder.join)',
    'RangeError: StreamGraphBuilder.join: takes at least 2 builders, got 1',
    'TypeError: StreamGraphBuilder.join: argument 1 must be a StreamGraphBuilder, got an object (Object)',
    true,
    false,
    'Error: StreamGraphBuilder.join: it was joined into another builder (use the one join() returned)',
    'Error: StreamGraphBuilder.endBuilding: 1 builder split off this one is not joined back yet (StreamGraphBuilder.join)',
    'Error: StreamGraphBuilder.beginBuilding: building has ended, and a builder cannot resume; make another',
    false,
    "TypeError: GraphExec.update: parameter 'graph' must be a Graph or a GraphBuilder, got an object (Object)",
  ]);
  // The capture ends on the builder's stream, then the two streams split off are destroyed.
  expect(r.endLog).toMatch(/^end capture 0x[0-9a-f]+\ndestroy stream 0x[0-9a-f]+\ndestroy stream 0x[0-9a-f]+\n$/);
  expect(r.completeLog).toMatch(/^instantiate 0x[0-9a-f]+ flags=1\n$/);
  // close(): the graph, then the stream device.createGraphBuilder() made.
  expect(r.closeLog).toMatch(/^destroy graph 0x[0-9a-f]+\ndestroy stream 0x[0-9a-f]+\n$/);
});

/** Script lines: `named(log, { S: stream, … })` writes each object's handle in a fake log as its name. */
const NAMED = `const named = (log, names) => Object.entries(names).reduce((l, [n, o]) => l.replaceAll('0x' + BigInt(o.handle).toString(16), n), log);
  const tick = () => new Promise((resolve) => setTimeout(resolve, 5));`;

test('stream.capture holds its stream until the capture has ended: closed during the work, it is destroyed after cudaStreamEndCapture, and the graph comes back', () => {
  const r = onFake(`${NAMED}
    const s1 = d.createStream();
    fake.clear();
    const g1 = await s1.capture(async (st) => { await tick(); st.close(); });
    const byWork = named(fake.log(), { S: s1 });
    const s2 = d.createStream();
    fake.clear();
    const pending = s2.capture(async () => { await tick(); });
    s2.close();
    const atClose = [s2.isClosed, fake.log()];
    const g2 = await pending;
    out({ byWork, atClose, byOther: named(fake.log(), { S: s2 }), graphs: [g1.constructor.name, g2.constructor.name],
      again: err(() => s2.query()) });`);
  expect(r).toEqual({
    byWork: 'begin capture S mode=0\nend capture S\ndestroy stream S\n',
    // close() marks the stream closed at once; CUDA's handle is destroyed only once the capture is over.
    atClose: [true, expect.stringMatching(/^begin capture 0x[0-9a-f]+ mode=0\n$/)],
    byOther: 'begin capture S mode=0\nend capture S\ndestroy stream S\n',
    graphs: ['Graph', 'Graph'],
    again: 'Error: Stream.query: the Stream was closed',
  });
});

test('StreamGraphBuilder refuses a closed stream before CUDA sees it, and holds the streams of a capture until it has ended', () => {
  const r = onFake(`${NAMED}
    const G = core.StreamGraphBuilder;
    const steps = [], logs = {};
    // Closed before building: nothing reaches C.
    const s1 = d.createStream(), b1 = s1.createGraphBuilder();
    s1.close();
    fake.clear();
    steps.push(err(() => b1.beginBuilding()), b1.isBuilding);
    logs.closedBefore = fake.log();
    b1.close();
    // Closed while building: no new work on it, but endBuilding() ends the capture, then it is destroyed.
    const s2 = d.createStream(), b2 = s2.createGraphBuilder().beginBuilding();
    fake.clear();
    s2.close();
    logs.closedWhileBuilding = fake.log();
    steps.push(s2.isClosed, err(() => b2.split(2)));
    b2.endBuilding();
    logs.end = named(fake.log(), { S: s2 });
    steps.push(b2.graph.constructor.name);
    b2.close();
    // Closed while building, then the builder's close(): the capture is abandoned, then the stream destroyed.
    const s3 = d.createStream(), b3 = s3.createGraphBuilder().beginBuilding();
    s3.close();
    fake.clear();
    b3.close();
    logs.abandoned = named(fake.log(), { S: s3 });
    // A stream split off and closed by its user: join() refuses it; the builder's close() ends the capture, then destroys it.
    const s4 = d.createStream(), b4 = s4.createGraphBuilder().beginBuilding();
    const [, left, right] = b4.split(3);
    fake.clear();
    left.stream.close();
    steps.push(err(() => G.join(b4, left, right)));
    logs.joinRefused = fake.log();
    G.join(b4, right);
    fake.clear();
    b4.close();
    logs.splitAbandoned = named(fake.log(), { S: s4, L: left.stream, R: right.stream });
    out({ steps, logs });`);
  expect(r.steps).toEqual([
    "Error: StreamGraphBuilder.beginBuilding: the builder's stream is a Stream that was closed",
    false,
    true,
    "Error: StreamGraphBuilder.split: the builder's stream is a Stream that was closed",
    'Graph',
    "Error: StreamGraphBuilder.join: argument 1's stream is a Stream that was closed",
  ]);
  expect(r.logs).toEqual({
    closedBefore: '',
    closedWhileBuilding: '',
    end: 'end capture S\ndestroy stream S\n',
    abandoned: expect.stringMatching(/^end capture S\ndestroy graph 0x[0-9a-f]+\ndestroy stream S\n$/),
    joinRefused: '',
    // The user's own stream (s4) is left to them; the builder's split-off streams go after the capture.
    splitAbandoned: expect.stringMatching(/^end capture S\ndestroy graph 0x[0-9a-f]+\ndestroy stream L\ndestroy stream R\n$/),
  });
});

test("closing a device's StreamGraphBuilder while it builds ends the capture, then destroys the stream it made", () => {
  const r = onFake(`${NAMED}
    const b = d.createGraphBuilder().beginBuilding();
    fake.clear();
    b.close();
    out({ log: named(fake.log(), { S: b.stream }), closed: b.stream.isClosed });`);
  expect(r).toEqual({ log: expect.stringMatching(/^end capture S\ndestroy graph 0x[0-9a-f]+\ndestroy stream S\n$/), closed: true });
});

test('an unclosed StreamGraphBuilder is collected: its finalizer ends the capture, then destroys the stream it made', () => {
  const r = onFake(`${NAMED}
    require('v8').setFlagsFromString('--expose-gc');
    const gc = require('vm').runInNewContext('gc');
    let s;
    // Made and dropped while capturing: only the stream is kept here (it does not keep the builder).
    (() => { s = d.createGraphBuilder().beginBuilding().stream; })();
    fake.clear();
    for (let i = 0; i < 100 && !fake.log().includes('destroy stream'); i++) { gc(); await new Promise((res) => setTimeout(res, 10)); }
    out({ log: named(fake.log(), { S: s }), closed: s.isClosed });`);
  expect(r).toEqual({ log: expect.stringMatching(/^end capture S\ndestroy graph 0x[0-9a-f]+\ndestroy stream S\n$/), closed: true });
});
