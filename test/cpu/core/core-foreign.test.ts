// Wrapping what another library owns (issue #31, item 4): Stream/Event/Module/Kernel.fromHandle and
// DeviceBuffer.fromPointer never destroy or free a borrowed handle, and hold its owner alive, on the
// fake libcudart that counts each destroy and free.
import { removeFakeCudart, runOnFake, FAKE_CONTROLS } from '../helpers/fake-cudart';

afterAll(removeFakeCudart);

/** Runs `body` (with `core`, `fake` and an `out` object to fill) on the fake; returns `out`. */
function onFake(body: string): Record<string, unknown> {
  const r = runOnFake(
    `${FAKE_CONTROLS}
    const { core, cudart } = require('./src');
    const out = {};
    (async () => { ${body} })().then(() => process.stdout.write(JSON.stringify(out)), (e) => { console.error(e); process.exit(1); });`,
    ['--expose-gc'],
  );
  if (r.status !== 0) throw new Error(`the script failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const COUNTED = ['cudaStreamDestroy', 'cudaEventDestroy', 'cudaLibraryUnload', 'cudaFree'];

test('closing a wrapped stream, event, module or pointer destroys and frees nothing', () => {
  const r = onFake(`
    const dev = core.Device.get(0);
    const names = ${JSON.stringify(COUNTED)};
    const before = names.map((n) => fake.count(n));
    const s = core.Stream.fromHandle(0x1234n, { owner: {} });
    const e = core.Event.fromHandle(0x2345n, { device: dev });
    const m = core.Module.fromHandle(0x3456n);
    const k = core.Kernel.fromHandle(0x4567n, m, { name: 'borrowed' });
    const b = core.DeviceBuffer.fromPointer(0x10000n, 256, { stream: s });
    const v = b.slice(64);
    out.kinds = [b.kind, v.kind, String(b.ptr), String(v.ptr), b.size, v.size, b.stream === s, v.stream === s];
    out.owned = [s.owned, e.owned, m.owned];
    out.handles = [String(s.handle), String(e.handle), String(m.handle), String(k.handle), k.name];
    for (const x of [v, b, k.module, s, e]) x.close();
    out.closed = [s.isClosed, e.isClosed, m.isClosed, k.isClosed, b.isClosed, v.isClosed];
    out.after = names.map((n, i) => fake.count(n) - before[i]);
    try { b.ptr; } catch (err) { out.useAfterClose = err.message; }
  `);
  expect(r.kinds).toEqual(['foreign', 'foreign', String(0x10000), String(0x10000 + 64), 256, 192, true, true]);
  expect(r.owned).toEqual([false, false, false]);
  expect(r.handles).toEqual([String(0x1234), String(0x2345), String(0x3456), String(0x4567), 'borrowed']);
  expect(r.closed).toEqual([true, true, true, true, true, true]);
  expect(r.after).toEqual([0, 0, 0, 0]);
  expect(r.useAfterClose).toBe('DeviceBuffer.ptr: the DeviceBuffer was closed');
});

test('closing what core made itself does destroy and free it (the same calls counted)', () => {
  const r = onFake(`
    const dev = core.Device.get(0);
    const names = ${JSON.stringify(COUNTED)};
    const before = names.map((n) => fake.count(n));
    const s = dev.createStream(), e = dev.createEvent(), b = dev.allocate(64);
    const m = core.Module.load(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 2]));
    out.owned = [s.owned, e.owned, m.owned];
    for (const x of [s, e, b, m]) x.close();
    out.after = names.map((n, i) => fake.count(n) - before[i]);
  `);
  expect(r.owned).toEqual([true, true, true]);
  expect(r.after).toEqual([1, 1, 1, 1]);
});

test('a wrapper holds its owner alive until the wrapper is collected, and the collector frees nothing borrowed', () => {
  const r = onFake(`
    const names = ${JSON.stringify(COUNTED)};
    const before = names.map((n) => fake.count(n));
    const refs = {};
    let wrappers = (() => {
      const owners = { stream: {}, event: {}, module: {}, buffer: {} };
      for (const [k, o] of Object.entries(owners)) refs[k] = new WeakRef(o);
      return [
        core.Stream.fromHandle(0x1234n, { owner: owners.stream }),
        core.Event.fromHandle(0x2345n, { owner: owners.event }),
        core.Kernel.fromHandle(0x4567n, core.Module.fromHandle(0x3456n, { owner: owners.module }), { name: 'k' }),
        core.DeviceBuffer.fromPointer(0x10000n, 16, { owner: owners.buffer }).slice(8),
      ];
    })();
    const alive = () => Object.values(refs).map((r) => r.deref() !== undefined);
    const settle = async () => { for (let i = 0; i < 5; i++) { globalThis.gc(); await new Promise((res) => setTimeout(res, 10)); } };
    await settle();
    out.whileWrapped = alive();
    wrappers = null;
    await settle();
    out.afterCollection = alive();
    out.after = names.map((n, i) => fake.count(n) - before[i]);
  `);
  expect(r.whileWrapped).toEqual([true, true, true, true]);
  expect(r.afterCollection).toEqual([false, false, false, false]);
  expect(r.after).toEqual([0, 0, 0, 0]);
});

test('bad handles, pointers and options are refused naming the function and the parameter', () => {
  const r = onFake(`
    const t = (name, f) => { try { f(); out[name] = 'returned'; } catch (e) { out[name] = e.constructor.name + ': ' + e.message; } };
    t('stream string', () => core.Stream.fromHandle('0x12'));
    t('event null', () => core.Event.fromHandle(0n));
    t('event timing', () => core.Event.fromHandle(1n, { timing: 'yes' }));
    t('pointer negative', () => core.DeviceBuffer.fromPointer(-1, 16));
    t('pointer null', () => core.DeviceBuffer.fromPointer(0n, 16));
    t('pointer size', () => core.DeviceBuffer.fromPointer(0x1000n, 1.5));
    t('pointer device', () => core.DeviceBuffer.fromPointer(0x1000n, 16, { device: 0 }));
    t('pointer option', () => core.DeviceBuffer.fromPointer(0x1000n, 16, { onwer: {} }));
    const s = core.Stream.fromHandle(5n); s.close();
    t('pointer closed stream', () => core.DeviceBuffer.fromPointer(0x1000n, 16, { stream: s }));
    t('kernel module', () => core.Kernel.fromHandle(1n, {}));
    t('stream above 2^53', () => core.Stream.fromHandle(1n << 60n));
    t('event above 2^53', () => core.Event.fromHandle(2n ** 53n));
    t('stream at 2^53 - 1', () => String(core.Stream.fromHandle(2n ** 53n - 1n).handle));
    const m = core.Module.fromHandle(0x3456n, { owner: {} });
    t('kernel above 2^53', () => core.Kernel.fromHandle(2n ** 60n, m, { name: 'k' }));
    t('kernel at 2^53 - 1', () => String(core.Kernel.fromHandle(2n ** 53n - 1n, m, { name: 'k' }).handle));
  `);
  expect(r['stream string']).toMatch(/^TypeError: Stream.fromHandle: parameter 'handle' must be a handle or address/);
  expect(r['event null']).toBe("RangeError: Event.fromHandle: parameter 'handle' is 0 (a null handle)");
  expect(r['event timing']).toBe("TypeError: Event.fromHandle: option 'timing' must be a boolean, got yes");
  expect(r['pointer negative']).toMatch(/^TypeError: DeviceBuffer.fromPointer: parameter 'ptr' must be/);
  expect(r['pointer null']).toBe("RangeError: DeviceBuffer.fromPointer: parameter 'ptr' is 0 (a null handle)");
  expect(r['pointer size']).toBe("RangeError: DeviceBuffer.fromPointer: parameter 'size' must be a non-negative integer, got 1.5");
  expect(r['pointer device']).toBe("TypeError: DeviceBuffer.fromPointer: option 'device' must be a Device, got 0");
  expect(r['pointer option']).toMatch(/^TypeError: DeviceBuffer.fromPointer: unknown option 'onwer' \(did you mean 'owner'\?\)/);
  expect(r['pointer closed stream']).toBe("Error: DeviceBuffer.fromPointer: parameter 'options.stream' is a Stream that was closed");
  expect(r['kernel module']).toBe("TypeError: Kernel.fromHandle: parameter 'module' must be a Module, got a Object");
  // Core passes a stream's or event's handle to C as a number: one a number cannot hold exactly is refused.
  expect(r['stream above 2^53']).toBe(
    "RangeError: Stream.fromHandle: parameter 'handle' is 0x1000000000000000, not an address below 2^53 (core passes handles to C as numbers)",
  );
  expect(r['event above 2^53']).toBe(
    "RangeError: Event.fromHandle: parameter 'handle' is 0x20000000000000, not an address below 2^53 (core passes handles to C as numbers)",
  );
  expect(r['stream at 2^53 - 1']).toBe('returned');
  // A kernel's handle too (its launches pass it as a number).
  expect(r['kernel above 2^53']).toBe(
    "RangeError: Kernel.fromHandle: parameter 'handle' is 0x1000000000000000, not an address below 2^53 (core passes handles to C as numbers)",
  );
  expect(r['kernel at 2^53 - 1']).toBe('returned');
});
