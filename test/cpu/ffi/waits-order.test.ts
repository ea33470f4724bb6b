// Polled waits given one order (core's downloads on one stream, whose events complete in the order
// recorded): only the oldest pending one is polled, and they settle in order. Queries here are plain
// functions, not the library's.
import { NOT_READY, pendingWaits, poll } from '../../../src/ffi/waits';

/** A query not ready until `finish()`, counting its calls. */
function query() {
  const q = { calls: 0, ready: false, run: () => (q.calls++, q.ready ? 0 : NOT_READY), finish: () => (q.ready = true) };
  return q;
}

const turns = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('of waits in one order, only the oldest pending one is polled; others are polled as usual; they settle in order', async () => {
  const stream = {};
  const [first, second, other] = [query(), query(), query()];
  const settled: string[] = [];
  const waits = [
    poll('t', first.run, {}, undefined, stream).then(() => settled.push('first')),
    poll('t', second.run, {}, undefined, stream).then(() => settled.push('second')),
    poll('t', other.run, {}).then(() => settled.push('other')),
  ];
  await turns(30);
  const during = [first.calls, second.calls, other.calls];
  second.finish(); // out of order: not seen while the first is pending
  await turns(10);
  const secondAlone = [second.calls, settled.length];
  first.finish();
  other.finish();
  await Promise.all(waits);
  expect(during[0]).toBeGreaterThan(3);
  expect(during[1]).toBe(1); // its first look, when it began
  expect(during[2]).toBeGreaterThan(3);
  expect(secondAlone).toEqual([1, 0]);
  expect(settled.indexOf('first')).toBeLessThan(settled.indexOf('second'));
  expect(pendingWaits()).toBe(0);
});

test('a wait given up on (signal) no longer holds back the next one of its order', async () => {
  const stream = {};
  const [first, second] = [query(), query()];
  const ac = new AbortController();
  const gaveUp = poll('t', first.run, { signal: ac.signal }, undefined, stream).catch((e: Error) => e.name);
  const next = poll('t', second.run, {}, undefined, stream);
  await turns(10);
  const before = second.calls;
  ac.abort();
  await turns(10);
  second.finish();
  expect(await gaveUp).toBe('AbortError');
  expect(await next).toBe(0);
  expect(before).toBe(1);
  expect(second.calls).toBeGreaterThan(1);
  expect(pendingWaits()).toBe(0);
});
