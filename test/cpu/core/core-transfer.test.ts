// DeviceBuffer.upload and download on the fake libcudart's kernels variant (device memory is host
// memory, copies copy, kernel 1 doubles): the data's round trip, the checks before C, the staging
// pool's reuse, and that a block given back is never read through a view taken before.
import * as fs from 'node:fs';
import { CALL_TRACE, buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

/** Script lines: the device, a stream, the pool, `busy(on)` (events incomplete while on) and `registered()`. */
const SETUP = `
  const F = koffi.load(process.env.CUDA_BINDINGS_CUDART);
  const busy = F.func('void fake_events_busy(int)');
  const registered = F.func('long fake_registered(void)');
  const { stagingPool: pool, i32 } = core;
  const dev = core.Device.get(0);
  const stream = dev.createStream({ nonBlocking: true });
  const turns = async (n = 20) => { for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 2)); };
  const out = (v) => console.log(JSON.stringify(v));`;

test('upload, a kernel and download on one stream: the result comes back as a Float32Array over pinned staging memory', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const n = 1000, xs = Float32Array.from({ length: n }, (_, i) => i);
    const x = dev.allocate(4 * n), y = dev.allocate(4 * n);
    x.upload(xs, { stream });
    xs.fill(-1); // the upload copied it already
    kernel(1n, 'twice').launch({ grid: 1, block: 1, stream }, x, y, i32(n));
    const ys = await y.download(Float32Array, { stream });
    const into = await y.download(new Float32Array(n), { stream });
    await turns();
    out({ kind: ys.constructor.name, length: ys.length, first: [ys[0], ys[1], ys[999]], into: [into[1], into[999]],
      used: pool.usedBytes(), free: pool.freeBytes(), registered: Number(registered()) });`,
  );
  // One 64 KiB block lent (the result), one free (the upload's and the copied download's, reused).
  expect(r).toEqual({ kind: 'Float32Array', length: 1000, first: [0, 2, 1998], into: [2, 1998], used: 65536, free: 65536, registered: 2 });
});

test('a released block is reused, and every view of it taken before reads as empty', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(4 * 16).upload(new Float32Array(16).fill(3), { stream });
    const a = await y.download(Float32Array, { stream });
    const part = a.subarray(4), bytes = Buffer.from(a.buffer, a.byteOffset, a.byteLength), before = [a[0], part.length, bytes.length];
    pool.release(a);
    pool.release(a); // twice: nothing more
    y.upload(new Float32Array(16).fill(7), { stream });
    const b = await y.download(Float32Array, { stream });
    await turns();
    out({ before, after: [a.length, a[0] ?? null, part.length, bytes.length], next: b[0], registered: Number(registered()), used: pool.usedBytes() });`,
  );
  expect(r).toEqual({ before: [3, 12, 64], after: [0, null, 0, 0], next: 7, registered: 1, used: 65536 });
});

test("an upload's staging block goes back to the pool only once the copy's event has completed", () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const x = dev.allocate(1 << 20);
    busy(1);
    x.upload(new Uint8Array(1 << 20), { stream });
    await turns();
    const during = [pool.usedBytes(), pool.freeBytes()];
    busy(0);
    await turns();
    out({ during, after: [pool.usedBytes(), pool.freeBytes()] });`,
  );
  expect(r).toEqual({ during: [1 << 20, 0], after: [0, 1 << 20] });
});

test('round trips back to back reuse one block: a lease that finds none free first takes back the blocks of completed copies', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(1 << 20), src = new Uint8Array(1 << 20);
    for (let i = 0; i < 100; i++) {
      busy(1); // the poller finds the upload's copy still running, and waits before it asks again
      y.upload(src, { stream });
      busy(0);
      pool.release(await y.download(Uint8Array, { stream }));
    }
    out({ registered: Number(registered()), total: pool.totalBytes(), used: pool.usedBytes() });`,
  );
  // One block: the download's completion gives back the upload's block before the next upload (the
  // poller's turn is not waited for), and the released result's block is the next upload's.
  expect(r).toEqual({ registered: 1, total: 1 << 20, used: 0 });
});

test('an array from stagingPool.allocate() is uploaded without a staging copy, and held until the copy is done though released', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const x = dev.allocate(4 * 8), y = dev.allocate(4 * 8);
    const xs = pool.allocate(Float32Array, 8); xs.set([1, 2, 3, 4, 5, 6, 7, 8]);
    busy(1);
    x.upload(xs.subarray(4), { stream });
    pool.release(xs);
    await turns();
    const during = [xs.length, pool.usedBytes()];
    busy(0);
    await turns();
    const after = pool.usedBytes();
    const back = await x.download(new Float32Array(4), { stream });
    out({ during, after, back: Array.from(back), registered: Number(registered()) });`,
  );
  expect(r).toEqual({ during: [0, 65536], after: 0, back: [5, 6, 7, 8], registered: 1 });
});

test("uploads from kept arrays and a download on one stream: the download's completion gives back a kept array released meanwhile, with no poller turn", () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const x = dev.allocate(4 * 8), y = dev.allocate(4 * 8);
    const xs = pool.allocate(Float32Array, 8), dst = pool.allocate(Float32Array, 8);
    xs.set([1, 2, 3, 4, 5, 6, 7, 8]);
    busy(1);
    x.upload(xs, { stream }).upload(xs, { stream }); // two copies from one kept array, no event yet
    kernel(1n, 'twice').launch({ grid: 1, block: 1, stream }, x, y, i32(8));
    const p = y.download(dst, { stream });
    pool.release(xs);
    await turns(2);
    const during = pool.usedBytes();
    busy(0);
    await p;
    out({ during, after: pool.usedBytes(), result: Array.from(dst) });`,
  );
  expect(r).toEqual({ during: 2 * 65536, after: 65536, result: [2, 4, 6, 8, 10, 12, 14, 16] });
});

test("a download into staging memory copies straight into it: no block lent, the view's offset kept, its block held until the copy is done though released", () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(4 * 8).upload(Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]), { stream });
    await turns();
    const dst = pool.allocate(Float32Array, 16); // the upload's block, back in the pool and reused
    const view = dst.subarray(4, 12);
    busy(1);
    const p = y.download(view, { stream });
    await turns(2);
    const during = [pool.totalBytes(), Number(registered()), Array.from(dst.slice(4, 13))];
    pool.release(dst);
    const released = [dst.length, pool.freeBytes()];
    busy(0);
    const same = (await p) === view;
    await turns();
    out({ during, released, same, free: pool.freeBytes() });`,
  );
  expect(r).toEqual({ during: [65536, 1, [1, 2, 3, 4, 5, 6, 7, 8, 0]], released: [0, 0], same: true, free: 65536 });
});

test('a download into staging memory given up on (signal) counts its copy done once it completes: the array is released as usual', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(64);
    const dst = pool.allocate(Uint8Array, 64);
    busy(1);
    const ac = new AbortController();
    const p = y.download(dst, { stream, signal: ac.signal }).catch((e) => e.name);
    await turns(2);
    ac.abort();
    const name = await p;
    busy(0);
    await turns();
    pool.release(dst);
    out({ name, used: pool.usedBytes(), free: pool.freeBytes() });`,
  );
  expect(r).toEqual({ name: 'AbortError', used: 0, free: 65536 });
});

test('a download given up on (signal) gives its block back once the copy completes', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(256);
    busy(1);
    const ac = new AbortController();
    const p = y.download(Uint8Array, { stream, signal: ac.signal }).catch((e) => e.name);
    await turns(2);
    ac.abort();
    const name = await p;
    const during = pool.usedBytes();
    busy(0);
    await turns();
    out({ name, during, after: pool.usedBytes() });`,
  );
  expect(r).toEqual({ name: 'AbortError', during: 65536, after: 0 });
});

/**
 * Script lines: every runtime call traced in `calls` (see CALL_TRACE), and what C saw of a download
 * from the buffer at `address` since the trace was emptied: its copy, the polls of the event recorded
 * after it, the buffer's cudaFree.
 */
const TRACED_DOWNLOAD = `${CALL_TRACE}
  const freed = (address) => calls.some((c) => c.name === 'cudaFree' && c.args[0] === address);
  const downloadAndFree = (address) => {
    const copy = calls.findIndex((c) => c.name === 'cudaMemcpyAsync' && c.args[1] === address);
    const event = calls.find((c, i) => i > copy && c.name === 'cudaEventRecord').args[0];
    const polls = calls.flatMap((c, i) => (c.name === 'cudaEventQuery' && c.args[0] === event ? [i] : []));
    const frees = calls.flatMap((c, i) => (c.name === 'cudaFree' && c.args[0] === address ? [i] : []));
    return { copied: copy >= 0, polled: polls.length > 0, frees: frees.length, freedAfterTheLastPoll: frees[0] > Math.max(...polls) };
  };`;

test('a buffer closed while its download is under way, or after giving up on it, is freed only once the copy’s event completes', () => {
  const r = runWithFake(
    fake.lib,
    `${TRACED_DOWNLOAD}
    ${SETUP}
    busy(1);
    calls.length = 0;
    const buf = dev.allocate(4096), at = buf.ptr;
    const p = buf.download(Float32Array, { stream });
    buf.close();
    let useAfterClose;
    try { buf.upload(new Uint8Array(8), { stream }); } catch (e) { useAfterClose = e.message; }
    const closing = { isClosed: buf.isClosed, freedAtClose: freed(at), useAfterClose };
    setTimeout(() => busy(0), 20);
    const closedWhileQueued = { ...closing, resolved: (await p).length, ...downloadAndFree(at) };

    // Given up on (a timeout), then closed: the poller lets the buffer go once the event completes.
    busy(1);
    calls.length = 0;
    const given = dev.allocate(4096), givenAt = given.ptr;
    let settled;
    try { await given.download(new Uint8Array(4096), { stream, timeout: 5 }); } catch (e) { settled = e.name; }
    given.close();
    const freedWhenClosed = freed(givenAt);
    await turns();
    busy(0);
    for (let i = 0; i < 500 && !freed(givenAt); i++) await turns(1);
    out({ closedWhileQueued, givenUp: { settled, freedWhenClosed, ...downloadAndFree(givenAt) } });`,
  );
  const copiedThenFreed = { copied: true, polled: true, frees: 1, freedAfterTheLastPoll: true };
  expect(r).toEqual({
    closedWhileQueued: {
      isClosed: true,
      freedAtClose: false,
      useAfterClose: 'DeviceBuffer.upload: the DeviceBuffer was closed',
      resolved: 1024,
      ...copiedThenFreed,
    },
    givenUp: { settled: 'TimeoutError', freedWhenClosed: false, ...copiedThenFreed },
  });
});

test('an array the program drops is given back by the garbage collector', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(64);
    await y.download(Float32Array, { stream });
    const held = pool.usedBytes();
    for (let i = 0; i < 20 && pool.usedBytes() > 0; i++) { global.gc(); await turns(2); }
    out({ held, after: pool.usedBytes(), free: pool.freeBytes() });`,
    ['--expose-gc'],
  );
  expect(r).toEqual({ held: 65536, after: 0, free: 65536 });
});

test('freeAllBlocks unpins every free block and keeps those lent out', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const y = dev.allocate(1 << 17);
    const kept = await y.download(Uint8Array, { stream });
    pool.release(await y.download(Uint8Array, { stream }));
    const before = [Number(registered()), pool.freeBlockCount];
    pool.freeAllBlocks();
    out({ before, after: [Number(registered()), pool.freeBlockCount, pool.usedBytes(), kept.length] });`,
  );
  expect(r).toEqual({ before: [2, 1], after: [1, 0, 1 << 17, 1 << 17] });
});

test('freeAllBlocks drops every reference to the blocks: after two collections their memory is no longer external', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const MiB = 1 << 20, ext = () => Math.round(process.memoryUsage().external / MiB);
    const collect = async () => { global.gc(); await new Promise((r) => setTimeout(r, 200)); global.gc(); };
    await collect();
    const before = ext();
    const bufs = Array.from({ length: 64 }, () => dev.allocate(MiB));
    let results = await Promise.all(bufs.map((b) => b.upload(new Uint8Array(MiB), { stream }).download(Uint8Array, { stream })));
    await turns();
    const loaded = ext() - before;
    results.forEach((a) => pool.release(a));
    results = null; // a released array still reachable keeps its block's pages (V8 does, for a WebAssembly memory)
    pool.freeAllBlocks();
    await collect();
    out({ loaded: loaded >= 64, left: ext() - before, blocks: pool.totalBytes(), registered: Number(registered()) });`,
    ['--expose-gc'],
  );
  // 64 blocks of 1 MiB while loaded (each upload's, reused by its download); nothing of them after the trim.
  expect(r).toEqual({ loaded: true, left: 0, blocks: 0, registered: 0 });
});

test('bad calls are refused before C, naming the method and the parameter', () => {
  const r = runWithFake(
    fake.lib,
    `${SETUP}
    const msg = async (f) => { try { await f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    const buf = dev.allocate(6);
    const closedStream = dev.createStream(); closedStream.close();
    const closedBuf = dev.allocate(8); closedBuf.close();
    out([
      await msg(() => buf.upload(new Uint8Array(8), { stream })),
      await msg(() => buf.upload([1, 2], { stream })),
      await msg(() => buf.upload(new Uint8Array(2))),
      await msg(() => buf.upload(new Uint8Array(2), { stream: closedStream })),
      await msg(() => buf.upload(new Uint8Array(2), { stream, sream: 1 })),
      await msg(() => closedBuf.upload(new Uint8Array(2), { stream })),
      await msg(() => buf.download(Float32Array, { stream })),
      await msg(() => buf.download(Array, { stream })),
      await msg(() => buf.download(new Uint8Array(7), { stream })),
      await msg(() => buf.download(Uint8Array, { stream: closedStream })),
      await msg(() => closedBuf.download(Uint8Array, { stream })),
      await msg(() => pool.release(new Float32Array(4))),
      await msg(() => pool.allocate(Float32Array, 0)),
    ]);`,
  );
  expect(r).toEqual([
    "RangeError: DeviceBuffer.upload: the source has 8 bytes, more than the buffer's 6",
    "TypeError: DeviceBuffer.upload: parameter 'src' must be a Buffer, TypedArray, DataView or ArrayBuffer, got an array",
    "TypeError: DeviceBuffer.upload: parameter 'options.stream' must be a Stream, got undefined",
    "Error: DeviceBuffer.upload: parameter 'options.stream' is a Stream that was closed",
    expect.stringMatching(/^TypeError: DeviceBuffer\.upload: unknown option 'sream'/),
    'Error: DeviceBuffer.upload: the DeviceBuffer was closed',
    "RangeError: DeviceBuffer.download: the buffer's 6 bytes are not a whole number of Float32Array elements (4 bytes each)",
    "TypeError: DeviceBuffer.download: parameter 'kind' must be a TypedArray class (Float32Array, Uint8Array, …), got Array",
    "RangeError: DeviceBuffer.download: the destination has 7 bytes, more than the buffer's 6",
    "Error: DeviceBuffer.download: parameter 'options.stream' is a Stream that was closed",
    'Error: DeviceBuffer.download: the DeviceBuffer was closed',
    "TypeError: StagingPool.release: parameter 'array' is not over staging memory (it did not come from download() or allocate())",
    "RangeError: StagingPool.allocate: parameter 'length' must be a positive integer of at most 1073741824 bytes, got 0",
  ]);
});

test('CUDA_BINDINGS_WARN_BLOCKING_COPIES=1: a pageable copy on a stream warns once per method; upload and download do not', () => {
  process.env.CUDA_BINDINGS_WARN_BLOCKING_COPIES = '1';
  try {
    const r = runWithFake(
      fake.lib,
      `${SETUP}
      const warnings = [];
      process.removeAllListeners('warning');
      process.on('warning', (w) => warnings.push(w.code + ' ' + w.message.split(':')[0]));
      const buf = dev.allocate(16);
      buf.copyFrom(new Uint8Array(16), { stream }); buf.copyFrom(new Uint8Array(16), { stream });
      buf.copyTo(new Uint8Array(16), { stream });
      buf.copyTo(new Uint8Array(16)); // synchronous: blocking is what it says
      buf.upload(new Uint8Array(16), { stream }); await buf.download(Uint8Array, { stream });
      await turns(2);
      out(warnings);`,
    );
    expect(r).toEqual(['CUDA_BINDINGS_BLOCKING_COPY DeviceBuffer.copyFrom', 'CUDA_BINDINGS_BLOCKING_COPY DeviceBuffer.copyTo']);
  } finally {
    delete process.env.CUDA_BINDINGS_WARN_BLOCKING_COPIES;
  }
});
