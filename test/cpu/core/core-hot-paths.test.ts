// Core's hot paths call CUDA directly (issue #37): a launch like the kernel's last one, host copies,
// Event.record, GraphExec.launch, and a resource told to the finalizer only if it outlives its task.
// Each still passes the right values and refuses what the general path refuses, in the same words.
import * as fs from 'node:fs';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

/** Reads the fake's record of the last launch's n arguments as [u32, f64 bits, …]: the first 8 bytes of each. */
const READ_ARGS = `
  const argBytes = (n) => { const b = Buffer.alloc(16 * 32); fake.last(b); return Array.from({ length: n }, (_, i) => b.readBigUInt64LE(16 * i).toString()); };`;

// Where code cannot be made from a string, the fast path fills the arguments with a loop instead: each
// launch test runs both ways.
const BOTH_FILLS: string[][][] = [[[]], [['--disallow-code-generation-from-strings']]];

test.each(BOTH_FILLS)(
  'a launch like the last one passes each new value, and one of other types or sizes still launches right (node %j)',
  (nodeArgs) => {
    const r = runWithFake(
      fake.lib,
      `${READ_ARGS}
    const { i32, u32, f64, i64 } = core;
    const d = core.Device.get(0);
    const a = d.allocate(64), b = d.allocate(64);
    const k = kernel(cudart.cudaKernel_t(0x104), 'rec4');
    const cfg = { grid: 2, block: 32 };
    const seen = [];
    k.launch(cfg, a, i32(-1), f64(2.5), i64(-3n)); seen.push(argBytes(4));
    k.launch(cfg, b, i32(7), f64(0.25), i64(9n)); seen.push(argBytes(4));
    k.launch(cfg, a, u32(5), f64(1), i64(1n)); seen.push(argBytes(4));
    cfg.grid = [3, 2]; cfg.block = 64;
    k.launch(cfg, b, u32(6), f64(1), i64(1n)); seen.push(argBytes(4));
    const c = new Uint32Array(7); fake.config(c);
    console.log(JSON.stringify({ seen, addrs: [a.ptr.toString(), b.ptr.toString()], config: Array.from(c), launches: fake.launches() }));`,
      nodeArgs,
    ) as { seen: string[][]; addrs: string[]; config: number[]; launches: number };
    const bits = (x: number) =>
      Buffer.from(new Float64Array([x]).buffer)
        .readBigUInt64LE()
        .toString();
    const [a, b] = r.addrs;
    expect(r.seen[0]).toEqual([a, '4294967295', bits(2.5), (2n ** 64n - 3n).toString()]);
    expect(r.seen[1]).toEqual([b, '7', bits(0.25), '9']);
    expect(r.seen[2]).toEqual([a, '5', bits(1), '1']);
    expect(r.seen[3][0]).toBe(b);
    expect(r.config).toEqual([3, 2, 1, 64, 1, 1, 0]);
    expect(r.launches).toBe(4);
  },
);

test.each(BOTH_FILLS)(
  'a repeated launch writes every scalar type at its size, and a 64-bit KernelArg made with a number still launches (node %j)',
  (nodeArgs) => {
    const r = runWithFake(
      fake.lib,
      `${READ_ARGS}
    const { i8, u8, i16, u16, f16, f32, u64, ptr, i64, KernelArg } = core;
    const k = kernel(cudart.cudaKernel_t(0x108), 'rec8');
    const cfg = { grid: 1, block: 1 };
    const seen = [];
    k.launch(cfg, i8(-2), u8(250), i16(-300), u16(65000), f16.bits(0x3c00), f32(1.5), u64(2n ** 63n), ptr(0x1234n)); seen.push(argBytes(8));
    k.launch(cfg, i8(3), u8(4), i16(5), u16(6), f16.bits(7), f32(-2), u64(9n), ptr(10n)); seen.push(argBytes(8));
    const w = kernel(cudart.cudaKernel_t(0x102), 'rec2');
    w.launch(cfg, i64(5n), u64(6n));
    w.launch(cfg, new KernelArg('i64', -7), new KernelArg('u64', 8)); seen.push(argBytes(2));
    w.launch(cfg, i64(9n), u64(10n)); seen.push(argBytes(2));
    console.log(JSON.stringify({ seen, launches: fake.launches() }));`,
      nodeArgs,
    ) as { seen: string[][]; launches: number };
    // The first 8 bytes of each argument's slot, masked to the argument's size.
    const low = (row: string[], sizes: number[]) => row.map((v, i) => (BigInt(v) & ((1n << BigInt(8 * sizes[i])) - 1n)).toString());
    const sizes = [1, 1, 2, 2, 2, 4, 8, 8];
    const f32bits = (x: number) => String(Buffer.from(new Float32Array([x]).buffer).readUInt32LE());
    expect(low(r.seen[0], sizes)).toEqual([
      '254',
      '250',
      String(65536 - 300),
      '65000',
      '15360',
      f32bits(1.5),
      String(2n ** 63n),
      String(0x1234),
    ]);
    expect(low(r.seen[1], sizes)).toEqual(['3', '4', '5', '6', '7', f32bits(-2), '9', '10']);
    expect(r.seen[2]).toEqual([(2n ** 64n - 7n).toString(), '8']);
    expect(r.seen[3]).toEqual(['9', '10']);
    expect(r.launches).toBe(5);
  },
);

test.each(BOTH_FILLS)(
  'launches pass C the kernel, the argument array and the stream: first, repeated and prepared, with a stream, none or one in use (node %j)',
  (nodeArgs) => {
    const r = runWithFake(
      fake.lib,
      `${READ_ARGS}
    const { i32 } = core;
    const d = core.Device.get(0);
    const s = d.createStream();
    const t = d.createStream();
    const addr = (p) => (p === null ? '0' : String(koffi.address(p)));
    // What C received: the kernel, the stream, and the ints the argument array pointed to (or its address, 0, for none).
    const ints = (n) => argBytes(n).map((x) => String(BigInt(x) & 0xffffffffn)).join(' ');
    const got = (n) => [addr(fake.kernelAt()), addr(fake.streamAt()), n ? ints(n) : addr(fake.args())];
    const k = kernel(cudart.cudaKernel_t(0x102), 'rec2');
    const e = kernel(cudart.cudaKernel_t(3), 'empty');
    const p = k.prepare('int a, int b');
    const cs = { grid: 1, block: 1, stream: s }, c0 = { grid: 1, block: 1 }, ce = { grid: 1, block: 1, stream: t };
    const out = { s: String(s.handle), t: String(t.handle), seen: [] };
    const see = (name, n, f) => { f(); out.seen.push([name, ...got(n)]); };
    for (const round of [1, 2]) {
      see('launch on s ' + round, 2, () => k.launch(cs, i32(round), i32(-round)));
      see('launch, no stream ' + round, 2, () => k.launch(c0, i32(10 + round), i32(7)));
      see('launch in use(t) ' + round, 2, () => t.use(() => k.launch(c0, i32(20 + round), i32(7))));
      see('no arguments on t ' + round, 0, () => e.launch(ce));
      see('prepared on s ' + round, 2, () => p(cs, 30 + round, 1));
      see('prepared, no stream ' + round, 2, () => p(c0, 40 + round, 2));
      see('prepared in use(t) ' + round, 2, () => t.use(() => p(c0, 50 + round, 3)));
    }
    console.log(JSON.stringify(out));`,
      nodeArgs,
    ) as { s: string; t: string; seen: string[][] };
    const { s, t } = r;
    const expected = [1, 2].flatMap((n) => [
      [`launch on s ${n}`, '258', s, `${n} ${2 ** 32 - n}`],
      [`launch, no stream ${n}`, '258', '0', `${10 + n} 7`],
      [`launch in use(t) ${n}`, '258', t, `${20 + n} 7`],
      [`no arguments on t ${n}`, '3', t, '0'],
      [`prepared on s ${n}`, '258', s, `${30 + n} 1`],
      [`prepared, no stream ${n}`, '258', '0', `${40 + n} 2`],
      [`prepared in use(t) ${n}`, '258', t, `${50 + n} 3`],
    ]);
    expect(r.seen).toEqual(expected);
  },
);

test('what a repeated launch refuses, it refuses in the words of a first launch', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { i32 } = core;
    const d = core.Device.get(0);
    const message = (f) => { try { f(); return 'launched'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    // Each case: a first launch of a fresh kernel, and the same launch after one that succeeded.
    const both = (setup) => {
      const fresh = kernel(cudart.cudaKernel_t(0x102), 'rec2');
      const warm = kernel(cudart.cudaKernel_t(0x102), 'rec2');
      const s = d.createStream();
      const buf = d.allocate(16);
      const cfg = { grid: 1, block: 1, stream: s };
      warm.launch(cfg, buf, i32(1));
      const args = setup(cfg, s, buf);
      return [message(() => fresh.launch(cfg, ...args)), message(() => warm.launch(cfg, ...args))];
    };
    console.log(JSON.stringify({
      closedBuffer: both((cfg, s, buf) => { buf.close(); return [buf, i32(1)]; }),
      closedStream: both((cfg, s, buf) => { s.close(); return [buf, i32(1)]; }),
      notAStream: both((cfg, s, buf) => { cfg.stream = {}; return [buf, i32(1)]; }),
      badShared: both((cfg, s, buf) => { cfg.sharedMem = -1; return [buf, i32(1)]; }),
      badGrid: both((cfg, s, buf) => { cfg.grid = 0; return [buf, i32(1)]; }),
      plainNumber: both((cfg, s, buf) => [buf, 1]),
    }));`,
  ) as Record<string, [string, string]>;
  for (const [name, [first, repeated]] of Object.entries(r)) {
    expect([name, repeated]).toEqual([name, first]);
    expect([name, first]).not.toEqual([name, 'launched']);
  }
  expect(r.closedBuffer[0]).toMatch(/DeviceBuffer that was closed/);
  expect(r.closedStream[0]).toMatch(/'config.stream' is a Stream that was closed/);
});

test('host copies, Event.record and GraphExec.launch check what they are given as before', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const message = (f) => { try { f(); return 'ok'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    const buf = d.allocate(16), s = d.createStream(), closed = d.createStream(); closed.close();
    buf.copyFrom(new Float32Array([1, 2, 3, 4]), { stream: s });
    const back = buf.copyTo(new Float32Array(4));
    const viaBuffer = buf.copyTo(Buffer.alloc(8));
    const ev = d.createEvent();
    const exec = (await s.capture(() => kernel(cudart.cudaKernel_t(3), 'empty').launch({ grid: 1, block: 1, stream: s }))).instantiate();
    console.log(JSON.stringify({
      back: Array.from(back), viaBuffer: Array.from(viaBuffer),
      tooBig: message(() => buf.copyFrom(new Float32Array(5))),
      tooBigOut: message(() => buf.copyTo(new Float32Array(5))),
      misspelt: message(() => buf.copyFrom(new Float32Array(1), { strem: s })),
      nullOptions: message(() => buf.copyTo(new Float32Array(1), null)),
      closedStream: message(() => buf.copyFrom(new Float32Array(1), { stream: closed })),
      notAStream: message(() => buf.copyTo(new Float32Array(1), { stream: 5 })),
      empty: message(() => buf.copyFrom(new Uint8Array(0))),
      recordOn: [message(() => ev.record(s)), message(() => ev.record()), message(() => ev.record(closed)), message(() => ev.record(ev))],
      launchOn: [message(() => exec.launch(s)), message(() => exec.launch()), message(() => exec.launch(closed))],
    }));`,
  ) as Record<string, unknown>;
  expect(r.back).toEqual([1, 2, 3, 4]);
  expect(r.viaBuffer).toEqual([0, 0, 128, 63, 0, 0, 0, 64]);
  expect(r.tooBig).toBe("RangeError: DeviceBuffer.copyFrom: the source has 20 bytes, more than the buffer's 16");
  expect(r.tooBigOut).toBe("RangeError: DeviceBuffer.copyTo: the destination has 20 bytes, more than the buffer's 16");
  expect(r.misspelt).toMatch(/^TypeError: DeviceBuffer.copyFrom: unknown option 'strem' \(did you mean 'stream'\?\)/);
  expect(r.nullOptions).toBe("TypeError: DeviceBuffer.copyTo: parameter 'options' must be an object of options, got null");
  expect(r.closedStream).toBe("Error: DeviceBuffer.copyFrom: parameter 'options.stream' is a Stream that was closed");
  expect(r.notAStream).toBe("TypeError: DeviceBuffer.copyTo: parameter 'options.stream' must be a Stream, got 5");
  expect(r.empty).toBe('ok');
  expect(r.recordOn).toEqual([
    'ok',
    'ok',
    "Error: Event.record: parameter 'stream' is a Stream that was closed",
    "TypeError: Event.record: parameter 'stream' must be a Stream, got a Event",
  ]);
  expect(r.launchOn).toEqual(['ok', 'ok', "Error: GraphExec.launch: parameter 'stream' is a Stream that was closed"]);
});

test('copy options of only { stream } pass at once; any other shape, after that one, is checked as by the general path', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const message = (f) => { try { f(); return 'ok'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    const buf = d.allocate(16), s = d.createStream(), host = new Float32Array([1, 2, 3, 4]);
    const copies = () => [message(() => buf.copyFrom(host, { stream: s })), message(() => buf.copyTo(new Float32Array(4), { stream: s }))];
    const warm = [...copies(), ...copies()];
    console.log(JSON.stringify({
      warm,
      extraKey: message(() => buf.copyFrom(host, { stream: s, sync: true })),
      misspeltAfter: message(() => buf.copyTo(new Float32Array(1), { stram: s })),
      array: message(() => buf.copyFrom(host, [])),
      number: message(() => buf.copyTo(new Float32Array(1), 5)),
      string: message(() => buf.copyFrom(host, 'stream')),
      empty: message(() => buf.copyFrom(host, {})),
      streamUndefined: message(() => buf.copyFrom(host, { stream: undefined })),
      inheritedStream: message(() => buf.copyFrom(host, Object.create({ stream: s }))),
      inheritedUnknown: message(() => buf.copyFrom(host, Object.create({ strem: s }))),
      notAStream: message(() => buf.copyTo(new Float32Array(1), { stream: {} })),
      again: copies(),
    }));`,
  ) as Record<string, unknown>;
  expect(r.warm).toEqual(['ok', 'ok', 'ok', 'ok']);
  expect(r.extraKey).toMatch(/^TypeError: DeviceBuffer.copyFrom: unknown option 'sync'; the options are stream$/);
  expect(r.misspeltAfter).toMatch(/^TypeError: DeviceBuffer.copyTo: unknown option 'stram' \(did you mean 'stream'\?\)/);
  expect(r.array).toBe("TypeError: DeviceBuffer.copyFrom: parameter 'options' must be an object of options, got an array");
  expect(r.number).toBe("TypeError: DeviceBuffer.copyTo: parameter 'options' must be an object of options, got number 5");
  expect(r.string).toBe("TypeError: DeviceBuffer.copyFrom: parameter 'options' must be an object of options, got string stream");
  // Keys the object inherits are not its options (checkOptions looks at own keys), as before.
  expect([r.empty, r.streamUndefined, r.inheritedStream, r.inheritedUnknown]).toEqual(['ok', 'ok', 'ok', 'ok']);
  expect(r.notAStream).toBe("TypeError: DeviceBuffer.copyTo: parameter 'options.stream' must be a Stream, got a Object");
  expect(r.again).toEqual(['ok', 'ok']);
});

test('the stream itself in place of { stream }: copies and fill are queued on it, and what is not an open Stream is refused by name', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const message = (f) => { try { f(); return 'ok'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    const last = L.func('void *fake_copy_stream(void)');
    // 'sync' after a synchronous copy, 'stream' after one queued on s, else the address queued on.
    const on = (s) => { const a = koffi.address(last()); return a === 0xffffffffffffffffn ? 'sync' : a === s.handle ? 'stream' : String(a); };
    const s = d.createStream(), closed = d.createStream(); closed.close();
    const buf = d.allocate(16), other = d.allocate(16), ev = d.createEvent();
    const host = new core.HostBuffer(16);
    host.as(Float32Array).set([1, 2, 3, 4]);
    const r = {};
    // Twice each, the second time as a repeated call (V8's optimised code) does it.
    r.copyFrom = [0, 1].map(() => { buf.copyFrom(host.as(Float32Array), s); return on(s); });
    r.copyTo = [0, 1].map(() => { const out = buf.copyTo(new Float32Array(4), s); return [on(s), Array.from(out)]; });
    r.subarray = (buf.copyFrom(host.as(Float32Array).subarray(2), s), [on(s), Array.from(buf.copyTo(new Float32Array(2)))]);
    r.sync = (buf.copyFrom(new Float32Array([5, 6, 7, 8])), on(s));
    r.device = (other.copyFrom(buf, s), [on(s), Array.from(other.copyTo(new Float32Array(4)))]);
    r.deviceTo = (buf.copyTo(other, s), on(s));
    r.fill = (other.fill(0, s), [on(s), Array.from(other.copyTo(new Uint8Array(4)))]);
    const view = other.view({ dtype: 'f32', shape: [4] });
    r.view = (view.copyFrom(new Float32Array([9, 10, 11, 12]), s), [on(s), Array.from(view.copyTo(undefined, s)), on(s)]);
    const array = core.CudaArray.create({ format: core.ChannelFormatDescriptor.of('f32'), width: 4 });
    r.cudaArray = Array.from(array.copyFrom(new Float32Array([13, 14, 15, 16]), s).copyTo(new Float32Array(4), s));
    r.refused = [
      message(() => buf.copyFrom(new Float32Array(1), closed)),
      message(() => buf.copyTo(new Float32Array(1), closed)),
      message(() => buf.copyFrom(other, closed)),
      message(() => other.fill(1, closed)),
      message(() => view.copyTo(undefined, closed)),
      message(() => array.copyFrom(new Float32Array(4), closed)),
      message(() => buf.copyFrom(new Float32Array(1), ev)),
      message(() => buf.copyTo(other, ev)),
    ];
    // The options bag still works after the stream itself, and the stream after a refusal.
    r.after = [message(() => buf.copyFrom(new Float32Array(1), { stream: s })), on(s), message(() => buf.copyTo(new Float32Array(1), s)), on(s)];
    console.log(JSON.stringify(r));`,
  ) as Record<string, unknown>;
  expect(r.copyFrom).toEqual(['stream', 'stream']);
  expect(r.copyTo).toEqual([
    ['stream', [1, 2, 3, 4]],
    ['stream', [1, 2, 3, 4]],
  ]);
  expect(r.subarray).toEqual(['stream', [3, 4]]);
  expect(r.sync).toBe('sync');
  expect(r.device).toEqual(['stream', [5, 6, 7, 8]]);
  expect(r.deviceTo).toBe('stream');
  expect(r.fill).toEqual(['stream', [0, 0, 0, 0]]);
  expect(r.view).toEqual(['stream', [9, 10, 11, 12], 'stream']);
  expect(r.cudaArray).toEqual([13, 14, 15, 16]);
  expect(r.refused).toEqual([
    "Error: DeviceBuffer.copyFrom: parameter 'stream' is a Stream that was closed",
    "Error: DeviceBuffer.copyTo: parameter 'stream' is a Stream that was closed",
    "Error: DeviceBuffer.copyFrom: parameter 'stream' is a Stream that was closed",
    "Error: DeviceBuffer.fill: parameter 'stream' is a Stream that was closed",
    "Error: StridedView.copyTo: parameter 'stream' is a Stream that was closed",
    "Error: CudaArray.copyFrom: parameter 'stream' is a Stream that was closed",
    "TypeError: DeviceBuffer.copyFrom: parameter 'stream' must be a Stream, got a Event",
    "TypeError: DeviceBuffer.copyTo: parameter 'stream' must be a Stream, got a Event",
  ]);
  expect(r.after).toEqual(['ok', 'stream', 'ok', 'stream']);
});

test('a resource nobody closes is still freed by the collector, and a closed one only once', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    // More than one flush's worth of both (the finalizer learns of open resources 256 at a time, or after the task).
    for (let i = 0; i < 300; i++) { d.allocate(16); d.allocate(16).close(); }
    const afterLoop = fake.live();
    for (let i = 0; i < 50 && fake.live() > 0; i++) { global.gc(); await new Promise((r) => setTimeout(r, 10)); }
    console.log(JSON.stringify({ afterLoop, atEnd: fake.live() }));`,
    ['--expose-gc'],
  ) as { afterLoop: number; atEnd: number };
  expect(r.afterLoop).toBe(300);
  expect(r.atEnd).toBe(0);
});

test('a queued copy of pinned memory core viewed passes its address: the bytes land where a typed array would put them', () => {
  const r = runWithFake(
    fake.lib,
    `
    const d = core.Device.get(0);
    const s = d.createStream();
    const buf = d.allocate(16);
    const host = new core.HostBuffer(64);
    const all = host.as(Float32Array);
    all.set(Array.from({ length: 16 }, (_, i) => i + 1));
    // In: a view 8 bytes in, and one at the start; out: into a view 16 bytes in.
    buf.copyFrom(new Float32Array(all.buffer, 8, 4), { stream: s });
    const fromOffset = Array.from(buf.copyTo(new Float32Array(4)));
    buf.copyFrom(all.subarray(0, 4), { stream: s });
    const fromStart = Array.from(buf.copyTo(new Float32Array(4)));
    buf.copyTo(new Float32Array(all.buffer, 16, 4), { stream: s });
    const landed = Array.from(all);
    // A pinned pool's block, memory the user registered (not tagged), and a small array of the heap.
    const pool = new core.PinnedMemoryPool();
    const block = pool.allocate(32);
    block.as(Float32Array).set([9, 8, 7, 6]);
    buf.copyFrom(new Float32Array(block.bytes.buffer, block.bytes.byteOffset, 4), { stream: s });
    const fromPool = Array.from(buf.copyTo(new Float32Array(4)));
    const mine = new Float32Array(1024).fill(5);
    const registered = core.HostBuffer.register(mine);
    buf.copyFrom(mine.subarray(4, 8), { stream: s });
    const fromRegistered = Array.from(buf.copyTo(new Float32Array(4)));
    const small = new Float32Array([4, 3, 2, 1]);
    buf.copyFrom(small, { stream: s });
    const fromHeap = Array.from(buf.copyTo(new Float32Array(4)));
    // Views seen before (their address remembered): each still lands its own bytes, the last written.
    const at8 = new Float32Array(all.buffer, 8, 4), at0 = all.subarray(0, 4);
    all.set([21, 22, 23, 24, 25, 26]);
    const seenAgain = [at8, at0, at8, at0].map((v) => (buf.copyFrom(v, s), Array.from(buf.copyTo(new Float32Array(4)))));
    console.log(JSON.stringify({
      fromOffset, fromStart, landed, fromPool, fromRegistered, fromHeap, seenAgain,
      // The tag is no key a user sees: not enumerable, and none on the user's own memory.
      keys: [Object.keys(all.buffer).length, Object.getOwnPropertySymbols(mine.buffer).length],
    }));
    registered.close(); block.close(); host.close();`,
  ) as Record<string, unknown>;
  expect(r.fromOffset).toEqual([3, 4, 5, 6]);
  expect(r.fromStart).toEqual([1, 2, 3, 4]);
  expect(r.landed).toEqual([1, 2, 3, 4, 1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 15, 16]);
  expect(r.fromPool).toEqual([9, 8, 7, 6]);
  expect(r.fromRegistered).toEqual([5, 5, 5, 5]);
  expect(r.fromHeap).toEqual([4, 3, 2, 1]);
  expect(r.seenAgain).toEqual([
    [23, 24, 25, 26],
    [21, 22, 23, 24],
    [23, 24, 25, 26],
    [21, 22, 23, 24],
  ]);
  expect(r.keys).toEqual([0, 0]);
});
