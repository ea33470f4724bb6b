// Managed memory on a GPU: prefetches move pages (the range's last prefetch location says where,
// and the bytes survive the trips), advice reads back, and the CUDA 13.0 batched prefetch and
// discard run on driver 580.
import * as fs from 'node:fs';
import koffi from 'koffi';
import { core } from '../../src';
import { describeGpu, fillPattern, patternMismatches } from './helpers';

const { Device } = core;

describeGpu('managed memory: prefetch, advice, discard', () => {
  test('prefetch moves the pages to the device and back to the host, bytes intact', async () => {
    const d = Device.get(0);
    if (!d.attribute('ConcurrentManagedAccess')) return void console.warn('skipped: no concurrent managed access on device 0');
    using s = d.createStream();
    using b = d.allocateManaged(4 << 20);
    const words = new Uint32Array(1 << 20);
    fillPattern(words, 7);
    b.copyFrom(words);
    expect(b.lastPrefetchLocation).toBeNull();
    b.prefetch(d, s);
    await s.synchronize();
    expect(b.lastPrefetchLocation).toBe(d);
    b.prefetch('host', s);
    await s.synchronize();
    expect(b.lastPrefetchLocation).toBe('host');
    expect(patternMismatches(b.copyTo(new Uint32Array(1 << 20)), 7)).toBe(0);
  });

  test('advice reads back from the range', () => {
    const d = Device.get(0);
    using b = d.allocateManaged(1 << 20);
    b.advise('readMostly', d).advise('preferredLocation', d).advise('accessedBy', d);
    expect([b.readMostly, b.preferredLocation, b.accessedBy]).toEqual([true, d, [d]]);
    b.advise('readMostly', d, false).advise('preferredLocation', d, false).advise('accessedBy', d, false);
    expect([b.readMostly, b.preferredLocation, b.accessedBy]).toEqual([false, null, []]);
  });

  test('batched prefetch (one location each), discard and discard-and-prefetch on the driver', async () => {
    const d = Device.get(0);
    if (!d.attribute('ConcurrentManagedAccess')) return void console.warn('skipped: no concurrent managed access on device 0');
    using s = d.createStream();
    using a = d.allocateManaged(2 << 20);
    using b = d.allocateManaged(2 << 20);
    core.prefetchBatch(s, [a, b], [d, 'host']);
    await s.synchronize();
    expect([a.lastPrefetchLocation, b.lastPrefetchLocation]).toEqual([d, 'host']);
    core.prefetchBatch(s, [a, b], d);
    await s.synchronize();
    expect([a.lastPrefetchLocation, b.lastPrefetchLocation]).toEqual([d, d]);
    // Discarded contents are unspecified: only that the calls are accepted, and that the memory is usable after.
    a.discard(s);
    core.discardBatch(s, [a, b]);
    core.discardPrefetchBatch(s, [a, b], 'host');
    b.discardPrefetch(d, s);
    await s.synchronize();
    a.fill(3);
    expect(a.copyTo(new Uint8Array(16))).toEqual(new Uint8Array(16).fill(3));
  });

  test('a host-NUMA pool: pinned host memory on the node nearest the device (numa_maps says so), written by the device, read by the host', async () => {
    const d = Device.get(0);
    expect(d.attribute('HostNumaMemoryPoolsSupported')).toBe(1);
    const node = d.attribute('HostNumaId');
    expect(node).toBeGreaterThanOrEqual(0);
    using s = d.createStream();
    using pool = d.createMemoryPool({ location: 'hostNuma' });
    expect([pool.location, pool.numaNode]).toEqual(['hostNuma', node]);
    const b = pool.allocate(8 << 20, s);
    b.fill(0x5a, { stream: s });
    await s.synchronize();
    // The host reads the device's writes straight from the allocation: it is host memory.
    const host = new Uint8Array(koffi.view(b.ptr, 8 << 20) as ArrayBuffer);
    expect(host.every((x) => x === 0x5a)).toBe(true);
    // The kernel's page map for the range (all of /proc/self/numa_maps' lines whose start is in it) names only that node.
    const start = b.ptr;
    const lines = fs
      .readFileSync('/proc/self/numa_maps', 'utf8')
      .split('\n')
      .filter((l) => {
        const at = l.split(' ')[0];
        return at !== '' && BigInt('0x' + at) >= start && BigInt('0x' + at) < start + BigInt(8 << 20);
      });
    const nodes = new Set(lines.flatMap((l) => [...l.matchAll(/ N(\d+)=/g)].map((m) => Number(m[1]))));
    console.log(`host NUMA pool: node ${node}; numa_maps lines in the range: ${lines.length}: ${lines.join(' | ')}`);
    if (lines.length > 0) expect([...nodes]).toEqual([node]);
    else {
      // The range starts inside a mapping that began before it: take the mapping that holds it.
      const maps = fs
        .readFileSync('/proc/self/numa_maps', 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      const holder = maps.filter((l) => BigInt('0x' + l.split(' ')[0]) <= start).pop()!;
      console.log(`host NUMA pool: mapping holding the range: ${holder}`);
      expect([...holder.matchAll(/ N(\d+)=/g)].map((m) => Number(m[1]))).toEqual([node]);
    }
    b.close();
    await s.synchronize();
  });
});
