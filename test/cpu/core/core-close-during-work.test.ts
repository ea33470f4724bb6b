// Work under way holds open what its C calls use: an awaited copy its DeviceBuffer (and a view's
// allocation), a synchronize() its Event or Stream. close() meanwhile marks the object closed at once
// (new uses throw) and frees it only after the last C call of that work, also when the caller gave up
// waiting. Against the host-functions fake libcudart, with every runtime call traced in order.
import { CALL_TRACE, FAKE_CONTROLS, fakeCudart, removeFakeCudart, runOnFake } from '../helpers/fake-cudart';

beforeAll(() => void fakeCudart());
afterAll(removeFakeCudart);

/**
 * Runs `body` (the inside of an async function) on the fake and returns what it `out`s. In scope:
 * `core`, `dev`, `fake`, `calls` (CALL_TRACE), `err(f)`, `settle(promise)`, `sleep(ms)`, `freed(address)`
 * and `copies(address, size)`, which says what C saw of the device memory [address, address + size).
 */
function traced(body: string): Record<string, unknown> {
  const r = runOnFake(`
    process.env.UV_THREADPOOL_SIZE = '4'; // the copies' pieces below are counted for four pool threads
    ${CALL_TRACE}
    const { core } = require('./src');
    ${FAKE_CONTROLS}
    const dev = core.Device.get(0);
    const out = (v) => console.log(JSON.stringify(v));
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    const settle = (p) => p.then(() => 'resolved', (e) => e.name + ': ' + e.message);
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const freed = (address) => calls.some((c) => c.name === 'cudaFree' && c.args[0] === address);
    const copies = (address, size) => {
      const end = address + BigInt(size);
      const frees = [], uses = [];
      calls.forEach((c, i) => {
        if (c.name === 'cudaFree' && c.args[0] === address) frees.push(i);
        else if (c.args.some((a) => a !== null && a >= address && a < end)) uses.push(i);
      });
      // Where a copy is over: a pool thread's cudaMemcpy when it returns; a cudaMemcpyAsync once its stream was waited for.
      const streams = new Set(uses.filter((i) => calls[i].name === 'cudaMemcpyAsync').map((i) => calls[i].args[4]));
      const ends = [];
      calls.forEach((c, i) => {
        if (c.name === 'cudaMemcpy done' || (/^cudaStream(Synchronize|Query)$/.test(c.name) && streams.has(c.args[0]))) ends.push(i);
      });
      const byName = {};
      for (const i of uses) byName[calls[i].name] = (byName[calls[i].name] ?? 0) + 1;
      return { copies: byName, frees: frees.length, freedAfterTheCopiesEnded: frees[0] > Math.max(...uses, ...ends) };
    };
    (async () => { ${body} })().catch((e) => out({ error: String((e && e.stack) || e) }));`);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(r.stdout);
}

const CLOSED_COPY_FROM = 'Error: DeviceBuffer.copyFrom: the DeviceBuffer was closed';

test('an upload of 32 MiB or more (staged through pinned memory), closed while under way or after giving up, is freed after its last copy', () => {
  const r = traced(`
    const N = 64 << 20, src = new Uint8Array(N), host = new Uint8Array(8);
    // Closed at once: the upload has not begun.
    const buf = dev.allocate(N), at = buf.ptr;
    const p = buf.copyFromAsync(src);
    buf.close();
    const closing = { isClosed: buf.isClosed, freedAtClose: freed(at), useAfterClose: err(() => buf.copyFrom(host)) };
    const closedAtOnce = { ...closing, settled: await settle(p), ...copies(at, N) };

    // Given up on (an AbortError), then closed, as \`await using\` would: the upload goes on to its end.
    calls.length = 0;
    const given = dev.allocate(N), givenAt = given.ptr, ac = new AbortController();
    const q = given.copyFromAsync(src, { signal: ac.signal });
    ac.abort();
    let settled;
    try { await q; settled = 'resolved'; } catch (e) { settled = e.name; } finally { given.close(); }
    const freedWhenSettled = freed(givenAt);
    for (let i = 0; i < 500 && !freed(givenAt); i++) await sleep(10);
    const givenUp = { settled, freedWhenSettled, ...copies(givenAt, N) };

    // Queued behind another upload of the device and closed before it began: it runs after the close.
    calls.length = 0;
    const first = dev.allocate(N), queued = dev.allocate(N), queuedAt = queued.ptr;
    const both = [first.copyFromAsync(src), queued.copyFromAsync(src)];
    queued.close();
    const queuedSettled = (await Promise.all(both.map(settle))).join(', ');
    first.close();
    out({ closedAtOnce, givenUp, queued: { settled: queuedSettled, ...copies(queuedAt, N) } });`);
  const sixteenChunks = { copies: { cudaMemcpyAsync: 16 }, frees: 1, freedAfterTheCopiesEnded: true };
  expect(r).toEqual({
    closedAtOnce: { isClosed: true, freedAtClose: false, useAfterClose: CLOSED_COPY_FROM, settled: 'resolved', ...sixteenChunks },
    givenUp: { settled: 'AbortError', freedWhenSettled: false, ...sixteenChunks },
    queued: { settled: 'resolved, resolved', ...sixteenChunks },
  });
});

test('a smaller upload in pieces on the pool, a view’s upload and a download (copyToAsync), closed while under way, are freed after their last copy', () => {
  const r = traced(`
    const N = 16 << 20, host = new Uint8Array(8);
    const buf = dev.allocate(N), at = buf.ptr;
    const p = buf.copyFromAsync(new Uint8Array(N));
    buf.close();
    const upload = { freedAtClose: freed(at), useAfterClose: err(() => buf.copyFrom(host)), settled: await settle(p), ...copies(at, N) };

    // A view's copy holds its allocation: the allocation closed under it is freed after the copy.
    calls.length = 0;
    const parent = dev.allocate(N + 65536), parentAt = parent.ptr, view = parent.slice(65536);
    const v = view.copyFromAsync(new Uint8Array(N));
    parent.close();
    const viewUpload = { viewIsClosed: view.isClosed, freedAtClose: freed(parentAt), settled: await settle(v), ...copies(parentAt, N + 65536) };

    calls.length = 0;
    const from = dev.allocate(N), fromAt = from.ptr, dst = new Uint8Array(N);
    const d = from.copyToAsync(dst);
    from.close();
    const freedAtClose = freed(fromAt);
    const download = { freedAtClose, resolvesWithDst: (await d) === dst, ...copies(fromAt, N) };
    out({ upload, viewUpload, download });`);
  const fourPieces = { copies: { cudaMemcpy: 4 }, frees: 1, freedAfterTheCopiesEnded: true };
  expect(r).toEqual({
    upload: { freedAtClose: false, useAfterClose: CLOSED_COPY_FROM, settled: 'resolved', ...fourPieces },
    viewUpload: { viewIsClosed: true, freedAtClose: false, settled: 'resolved', ...fourPieces },
    download: { freedAtClose: false, resolvesWithDst: true, ...fourPieces },
  });
});

/** Script lines: what C saw of `handle` (its polls by `polls`, its destroy by `destroy`) since the trace was emptied. */
const POLLS_AND_DESTROY = `
  const pollsAndDestroy = (handle, polls, destroy) => {
    const at = (names) => calls.flatMap((c, i) => (names.includes(c.name) && c.args[0] === handle ? [i] : []));
    const p = at(polls), d = at([destroy]);
    return { polled: p.length > 0, destroyed: d.length, destroyedAfterTheLastPoll: d[0] > Math.max(...p) };
  };`;

test('Event.synchronize: an event closed while the wait polls it is destroyed after the last poll, also when the wait times out', () => {
  const r = traced(`${POLLS_AND_DESTROY}
    const s = dev.createStream();
    const polls = ['cudaEventQuery', 'cudaEventSynchronize'];
    fake.setBusy(s.handleNumber, true);
    const e = dev.createEvent().record(s);
    calls.length = 0;
    const p = e.synchronize();
    e.close();
    const closing = { isClosed: e.isClosed, destroyedAtClose: calls.some((c) => c.name === 'cudaEventDestroy'), useAfterClose: err(() => e.query()) };
    setTimeout(() => fake.setBusy(s.handleNumber, false), 20);
    const closedWhilePolled = { ...closing, settled: await settle(p), ...pollsAndDestroy(e.handle, polls, 'cudaEventDestroy') };

    // Given up on after 5 ms while the work goes on: the polling stops, then the event is destroyed.
    fake.setBusy(s.handleNumber, true);
    const t = dev.createEvent().record(s);
    calls.length = 0;
    const q = t.synchronize({ timeout: 5 });
    t.close();
    const settled = await settle(q);
    await sleep(20); // no poll of the destroyed event afterwards either
    fake.setBusy(s.handleNumber, false);
    out({ closedWhilePolled, timedOut: { settled, ...pollsAndDestroy(t.handle, polls, 'cudaEventDestroy') } });`);
  expect(r).toEqual({
    closedWhilePolled: {
      isClosed: true,
      destroyedAtClose: false,
      useAfterClose: 'Error: Event.query: the Event was closed',
      settled: 'resolved',
      polled: true,
      destroyed: 1,
      destroyedAfterTheLastPoll: true,
    },
    timedOut: {
      settled: 'TimeoutError: Event.synchronize: timed out after 5 ms; the GPU work was not cancelled',
      polled: true,
      destroyed: 1,
      destroyedAfterTheLastPoll: true,
    },
  });
});

test('Stream.synchronize: a stream closed while the wait polls it is destroyed after the last poll', () => {
  const r = traced(`${POLLS_AND_DESTROY}
    const s = dev.createStream();
    fake.setBusy(s.handleNumber, true);
    calls.length = 0;
    const p = s.synchronize();
    s.close();
    const closing = { isClosed: s.isClosed, destroyedAtClose: calls.some((c) => c.name === 'cudaStreamDestroy'), useAfterClose: err(() => s.query()) };
    setTimeout(() => fake.setBusy(s.handleNumber, false), 20);
    out({ ...closing, settled: await settle(p), ...pollsAndDestroy(s.handle, ['cudaStreamQuery', 'cudaStreamSynchronize'], 'cudaStreamDestroy') });`);
  expect(r).toEqual({
    isClosed: true,
    destroyedAtClose: false,
    useAfterClose: 'Error: Stream.query: the Stream was closed',
    settled: 'resolved',
    polled: true,
    destroyed: 1,
    destroyedAfterTheLastPoll: true,
  });
});
