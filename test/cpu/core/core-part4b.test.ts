// Core, part 4 (second half) without a GPU: the caching allocator's split and merge replayed from
// CuPy's tests/cupy_tests/cuda_tests/test_memory.py (TestSingleDeviceMemoryPool, TestMemoryPool),
// asserting the same figures, on the fake libcudart's memory variant (malloc'd "device" memory).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FAKE_CONTROLS, buildFakeCudart, removeFakeCudart, runOnFake } from '../helpers/fake-cudart';

const root = path.join(__dirname, '..', '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-core4b-'));
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  removeFakeCudart();
});

/** Runs `body` (an async function's, with `core` and `fake` in scope) on the host-functions fake; returns what it logs last, as JSON. */
function onStreamsFake(body: string): unknown {
  const r = runOnFake(`${FAKE_CONTROLS}
    const { core } = require('./src');
    (async () => { ${body} })().catch((e) => { console.log(JSON.stringify({ error: String(e && e.stack || e) })); });`);
  if (r.status !== 0) throw new Error(`child exited ${r.status} ${r.signal ?? ''}\n${r.stdout}\n${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

/**
 * Runs `cases` (name → the body of a function of `pool`, `d`, `s`, `U`, `count`, returning JSON-able
 * results) in one Node child on the fake, each with a fresh allocator; returns each case's result.
 */
function runCases(cases: Record<string, string>, options = '{}'): Record<string, unknown> {
  const lib = buildFakeCudart('memory', tmp).lib;
  const bodies = Object.entries(cases)
    .map(([name, body]) => `out[${JSON.stringify(name)}] = (() => { const pool = new core.CachingAllocator(${options}); ${body} })();`)
    .join('\n');
  const script = `
    const { core } = require('./src');
    const count = require('koffi').load(process.env.CUDA_BINDINGS_CUDART).func('long fake_count(const char *)');
    const d = core.Device.get(0);
    const s = d.createStream();
    const U = 512;
    const out = {};
    ${bodies}
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib },
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status} ${r.signal ?? ''}\n${r.stdout}\n${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
}

describe("CachingAllocator: CuPy's SingleDeviceMemoryPool tests, same sequences, same figures", () => {
  let out: Record<string, unknown>;
  beforeAll(() => {
    out = runCases({
      roundSize: `return [U - 1, U, U + 1].map((n) => { const b = pool.allocate(n, { device: d }); const used = pool.usedBytes(); b.close(); return used; });`,
      alloc: `const [p1, p2, p3] = [4, 4, 8].map((n) => pool.allocate(U * n, { device: d }).ptr); return [p1 !== p2, p1 !== p3, p2 !== p3];`,
      allocSplit: `
        const p = pool.allocate(U * 4, { device: d }); const ptr = p.ptr; p.close();
        const head = pool.allocate(U * 2, { device: d }), tail = pool.allocate(U * 2, { device: d });
        return [head.ptr === ptr, tail.ptr === ptr + BigInt(U * 2)];`,
      allocLimit: `
        pool.limit = U * 6;
        const p1 = pool.allocate(U * 5, { device: d }), p2 = pool.allocate(U, { device: d });
        let err = null;
        try { pool.allocate(U, { device: d }); } catch (e) { err = e.codeName; }
        pool.limit = U * 7;
        const p3 = pool.allocate(U, { device: d });
        return [err, pool.usedBytes()];`,
      allocLimitFragmented: `
        pool.limit = U * 6;
        pool.allocate(U * 5, { device: d }).close();
        const p2 = pool.allocate(U * 6, { device: d });
        return [p2.size, pool.totalBytes()];`,
      free: `const p1 = pool.allocate(U * 4, { device: d }); const ptr = p1.ptr; p1.close(); return pool.allocate(U * 4, { device: d }).ptr === ptr;`,
      freeStream: `const p1 = pool.allocate(U * 4, { device: d }); const ptr = p1.ptr; p1.close(); return pool.allocate(U * 4, { device: d, stream: s }).ptr !== ptr;`,
      freeMerge: `
        const p = pool.allocate(U * 4, { device: d }); const ptr = p.ptr; p.close();
        const res = [];
        for (const headFirst of [false, true]) {
          const head = pool.allocate(U * 2, { device: d }), tail = pool.allocate(U * 2, { device: d });
          res.push(head.ptr === ptr);
          if (headFirst) { head.close(); tail.close(); } else { tail.close(); head.close(); }
          const whole = pool.allocate(U * 4, { device: d });
          res.push(whole.ptr === ptr, pool.nFreeBlocks());
          whole.close();
        }
        return res;`,
      freeDifferentSize: `const p1 = pool.allocate(U * 4, { device: d }); const ptr = p1.ptr; p1.close(); return pool.allocate(U * 8, { device: d }).ptr !== ptr;`,
      freeAllBlocks: `
        const p1 = pool.allocate(U * 4, { device: d }); const ptr = p1.ptr; p1.close();
        const before = count('cudaFree'); pool.freeAllBlocks();
        const freed = count('cudaFree') - before, total = pool.totalBytes();
        const mallocs = count('cudaMalloc');
        pool.allocate(U * 4, { device: d });
        return [freed, total, count('cudaMalloc') - mallocs];`,
      freeAllBlocksSplit: `
        pool.allocate(U * 4, { device: d }).close();
        const head = pool.allocate(U * 2, { device: d }), tail = pool.allocate(U * 2, { device: d });
        const tailPtr = tail.ptr; tail.close();
        pool.freeAllBlocks();
        const p = pool.allocate(U * 2, { device: d });
        return [p.ptr === tailPtr, pool.totalBytes()];`,
      freeAllBlocksStream: `
        const p1 = pool.allocate(U * 4, { device: d }); const ptr1 = p1.ptr; p1.close();
        const p2 = pool.allocate(U * 4, { device: d, stream: s }); const ptr2 = p2.ptr; p2.close();
        pool.freeAllBlocks(undefined, null);
        const p3 = pool.allocate(U * 4, { device: d });
        const p4 = pool.allocate(U * 4, { device: d, stream: s });
        return [p3.ptr !== ptr2, p4.ptr !== ptr1, p4.ptr === ptr2, pool.totalBytes()];`,
      freeAllBlocksAllStreams: `
        pool.allocate(U * 4, { device: d }).close();
        pool.allocate(U * 4, { device: d, stream: s }).close();
        const before = count('cudaFree'); pool.freeAllBlocks();
        return [count('cudaFree') - before, pool.totalBytes(), pool.nFreeBlocks()];`,
      // CuPy's test_used_bytes and test_free_bytes run one sequence: both figures at each step.
      usedAndFreeBytes: `
        const r = [];
        const step = () => r.push([pool.usedBytes() / U, pool.freeBytes() / U]);
        const p1 = pool.allocate(U * 2, { device: d }); step();
        const p2 = pool.allocate(U * 4, { device: d }); step();
        p2.close(); step();
        p1.close(); step();
        const p3 = pool.allocate(U, { device: d }); step();
        return r;`,
      usedBytesStream: `pool.allocate(U * 4, { device: d }).close(); pool.allocate(U * 2, { device: d, stream: s }); return pool.usedBytes() / U;`,
      freeBytesStream: `pool.allocate(U * 4, { device: d }).close(); pool.allocate(U * 2, { device: d, stream: s }); return pool.freeBytes() / U;`,
      totalBytes: `
        const r = [];
        const p1 = pool.allocate(U * 2, { device: d }); r.push(pool.totalBytes());
        const p2 = pool.allocate(U * 4, { device: d }); r.push(pool.totalBytes());
        p1.close(); r.push(pool.totalBytes());
        p2.close(); r.push(pool.totalBytes());
        const p3 = pool.allocate(U, { device: d }); r.push(pool.totalBytes());
        const sum = pool.usedBytes() + pool.freeBytes() === pool.totalBytes();
        p3.close();
        pool.freeAllBlocks(); r.push(pool.totalBytes());
        return [r.map((n) => n / U), sum];`,
      totalBytesStream: `pool.allocate(U * 4, { device: d }).close(); pool.allocate(U * 2, { device: d, stream: s }); return pool.totalBytes() / U;`,
    });
  });

  test('sizes round up to 512 bytes (test_round_size)', () => expect(out.roundSize).toEqual([512, 512, 1024]));
  test('three allocations, three addresses (test_alloc)', () => expect(out.alloc).toEqual([true, true, true]));
  test('a free block is split: the head at its start, the tail after it (test_alloc_split)', () =>
    expect(out.allocSplit).toEqual([true, true]));
  test('the limit counts what is held; raising it lets the next one through (test_alloc_limit)', () =>
    expect(out.allocLimit).toEqual(['cudaErrorMemoryAllocation', 7 * 512]));
  test('past the limit, the free whole blocks are given back first (test_alloc_limit_fragmented)', () =>
    expect(out.allocLimitFragmented).toEqual([6 * 512, 6 * 512]));
  test('a freed block is handed out again (test_free)', () => expect(out.free).toBe(true));
  test("a block freed on one stream is not another stream's (test_free_stream)", () => expect(out.freeStream).toBe(true));
  test('freed halves merge back into the whole block, whichever is freed first (test_free_merge)', () =>
    expect(out.freeMerge).toEqual([true, true, 0, true, true, 0]));
  test('a larger request does not take a smaller free block (test_free_different_size)', () => expect(out.freeDifferentSize).toBe(true));
  test('freeAllBlocks gives the whole free block back; the next request is a new cudaMalloc (test_free_all_blocks)', () =>
    expect(out.freeAllBlocks).toEqual([1, 0, 1]));
  test('freeAllBlocks keeps a free piece of a split block (test_free_all_blocks_split)', () =>
    expect(out.freeAllBlocksSplit).toEqual([true, 4 * 512]));
  test("freeAllBlocks of one stream frees only that stream's blocks (test_free_all_blocks_stream)", () =>
    expect(out.freeAllBlocksStream).toEqual([true, true, true, 8 * 512]));
  test("freeAllBlocks with no stream frees every stream's blocks (test_free_all_blocks_all_streams)", () =>
    expect(out.freeAllBlocksAllStreams).toEqual([2, 0, 0]));
  test('usedBytes, and freeBytes counting split free pieces (test_used_bytes, test_free_bytes and their _stream forms)', () => {
    const pairs = out.usedAndFreeBytes as [number, number][];
    expect(pairs.map((p) => p[0])).toEqual([2, 6, 2, 0, 1]);
    expect(pairs.map((p) => p[1])).toEqual([0, 0, 4, 6, 5]);
    expect([out.usedBytesStream, out.freeBytesStream]).toEqual([2, 4]);
  });
  test('totalBytes (test_total_bytes, test_total_bytes_stream)', () => {
    expect(out.totalBytes).toEqual([[2, 6, 6, 6, 6, 0], true]);
    expect(out.totalBytesStream).toBe(6);
  });
});

describe("CachingAllocator: CuPy's MemoryPool tests, over device and managed memory", () => {
  for (const memory of ['device', 'managed'] as const) {
    test(`${memory}: nFreeBlocks counts free chunks; freeAllBlocks empties them; figures start at 0 (test_free_all_blocks, test_*_without_malloc)`, () => {
      const call = memory === 'managed' ? 'cudaMallocManaged' : 'cudaMalloc';
      const out = runCases(
        {
          counts: `
            const empty = [pool.nFreeBlocks(), pool.usedBytes(), pool.freeBytes(), pool.totalBytes()];
            pool.freeAllBlocks();
            const before = count('${call}');
            const b = pool.allocate(1, { device: d });
            const r = [b.kind, count('${call}') - before, pool.nFreeBlocks()];
            b.close(); b.close();
            r.push(pool.nFreeBlocks());
            pool.freeAllBlocks();
            r.push(pool.nFreeBlocks(), pool.totalBytes());
            return [empty, r, pool.memory];`,
        },
        `{ memory: '${memory}' }`,
      );
      expect(out.counts).toEqual([[0, 0, 0, 0], [memory === 'managed' ? 'managed' : 'cached', 1, 0, 1, 0, 0], memory]);
    });
  }

  test('shareAcrossStreams: a block freed on one stream goes to another once its free event completed (the fake completes at once)', () => {
    const out = runCases(
      {
        shared: `
          const p1 = pool.allocate(U * 4, { device: d }); const ptr = p1.ptr; p1.close();
          const p2 = pool.allocate(U * 2, { device: d, stream: s });
          return [p2.ptr === ptr, pool.freeBytes() / U, pool.totalBytes() / U, pool.shareAcrossStreams];`,
      },
      '{ shareAcrossStreams: true }',
    );
    expect(out.shared).toEqual([true, 2, 4, true]);
  });

  test('a whole block freed after its stream was closed goes straight back to CUDA; a split one waits for freeAllBlocks', () => {
    const out = runCases({
      closed: `
        const s2 = d.createStream();
        const whole = pool.allocate(U * 4, { device: d, stream: s2 });
        pool.allocate(U * 4, { device: d, stream: s2 }).close();
        const head = pool.allocate(U * 2, { device: d, stream: s2 });
        s2.close();
        const before = count('cudaFree');
        whole.close();
        const r = [count('cudaFree') - before, pool.totalBytes() / U, pool.nFreeBlocks()];
        head.close();
        r.push(count('cudaFree') - before, pool.totalBytes() / U, pool.nFreeBlocks());
        return r;`,
    });
    expect(out.closed).toEqual([1, 4, 1, 2, 0, 0]);
  });

  test('options and arguments are checked, naming the option', () => {
    const out = runCases({
      errors: `
        const msg = (f) => { try { f(); return 'no error'; } catch (e) { return e.message; } };
        return [
          msg(() => new core.CachingAllocator({ memory: 'host' })),
          msg(() => new core.CachingAllocator({ shareAcrossStreams: 1 })),
          msg(() => pool.freeAllBlocks(undefined, 7)),
        ];`,
    });
    expect(out.errors).toEqual([
      "new CachingAllocator: option 'memory' must be 'device' or 'managed', got the string \"host\"",
      "new CachingAllocator: option 'shareAcrossStreams' must be a boolean, got 1",
      "CachingAllocator.freeAllBlocks: parameter 'stream' must be a Stream, null or absent, got 7",
    ]);
  });
});

describe('memory resources', () => {
  test('a user MemoryResource: device.allocate and setAllocator take it; buffers remember it; close() deallocates on the stream', () => {
    const out = runCases({
      resource: `
        const calls = [];
        const mr = {
          isDeviceAccessible: true, isHostAccessible: false, deviceId: 0,
          allocate(size, stream) { calls.push(['allocate', size, stream === s]); return core.DeviceBuffer.fromMemoryResource(0x10000n + BigInt(calls.length) * 0x1000n, size, this, { stream }); },
          deallocate(ptr, size, stream) { calls.push(['deallocate', Number(ptr - 0x10000n), size, stream === s]); },
        };
        const a = d.allocate(100, { memoryResource: mr, stream: s });
        const view = a.slice(10);
        const info = [a.kind, a.memoryResource === mr, view.memoryResource === mr, a.stream === s];
        a.close(); a.close();
        const previous = core.setAllocator(mr);
        const b = d.allocate(64);
        b.close();
        core.setAllocator(previous);
        const plain = d.allocate(8);
        const none = plain.memoryResource;
        plain.close();
        return [info, calls, none];`,
    });
    expect(out.resource).toEqual([
      ['resource', true, true, true],
      [
        ['allocate', 100, true],
        ['deallocate', 0x1000, 100, true],
        ['allocate', 64, false],
        ['deallocate', 0x3000, 64, false],
      ],
      null,
    ]);
  });

  test('an allocator installed for one device comes before the one for all; null removes it', () => {
    const out = runCases({
      perDevice: `
        const all = new core.CachingAllocator(), mine = new core.CachingAllocator();
        core.setAllocator(all);
        const before = core.setAllocator(mine, d);
        const got = [before, core.getAllocator(d) === mine, core.getAllocator() === all];
        d.allocate(1000).close();
        const figures = [mine.totalBytes(), all.totalBytes()];
        const removed = core.setAllocator(null, d) === mine;
        d.allocate(1000).close();
        figures.push(all.totalBytes());
        core.setAllocator(null);
        return [got, figures, removed, core.getAllocator(d)];`,
    });
    expect(out.perDevice).toEqual([[null, true, true], [1024, 0, 1024], true, null]);
  });

  test('resources and allocators are checked, naming the parameter', () => {
    const out = runCases({
      errors: `
        const msg = (f) => { try { f(); return 'no error'; } catch (e) { return e.message; } };
        const wrongDevice = { isDeviceAccessible: true, isHostAccessible: false, deviceId: 3, allocate() {}, deallocate() {} };
        const liar = { isDeviceAccessible: true, isHostAccessible: false, deviceId: 0, allocate() { return 42; }, deallocate() {} };
        return [
          msg(() => d.allocate(8, { memoryResource: { allocate() {} } })),
          msg(() => d.allocate(8, { memoryResource: wrongDevice })),
          msg(() => d.allocate(8, { memoryResource: liar })),
          msg(() => core.DeviceBuffer.fromMemoryResource(1n, 8, {})),
          msg(() => core.setAllocator(pool, 0)),
        ];`,
    });
    expect(out.errors).toEqual([
      "Device.allocate: parameter 'options.memoryResource' must be a MemoryResource (allocate, deallocate, isDeviceAccessible, isHostAccessible, deviceId), got an object (Object)",
      "Device.allocate: the memory resource is device 3's, and the allocation is for device 0",
      "Device.allocate: the memory resource's allocate(8) must return a DeviceBuffer of at least 8 bytes (DeviceBuffer.fromMemoryResource), got 42",
      "DeviceBuffer.fromMemoryResource: parameter 'resource' must be a MemoryResource (allocate, deallocate, isDeviceAccessible, isHostAccessible, deviceId), got an object (Object)",
      "setAllocator: parameter 'device' must be a Device or absent, got 0",
    ]);
  });

  test('GraphMemoryResource: allocates only while the stream captures (cudaMallocAsync), remembers itself, frees with cudaFreeAsync', () => {
    const out = onStreamsFake(`
      const d = core.Device.get(0);
      const gmr = core.GraphMemoryResource.of(d);
      const s = d.createStream();
      const msg = (f) => { try { f(); return 'no error'; } catch (e) { return e.message; } };
      const outside = msg(() => d.allocate(256, { stream: s, memoryResource: gmr }));
      const noStream = msg(() => gmr.allocate(256));
      let inside;
      const before = fake.count('cudaMallocAsync');
      const graph = await s.capture(() => {
        const b = d.allocate(256, { stream: s, memoryResource: gmr });
        inside = [b.memoryResource === gmr, b.kind, b.size];
        b.close();
      });
      console.log(JSON.stringify([outside, noStream, inside, fake.count('cudaMallocAsync') - before, core.GraphMemoryResource.of(d) === gmr,
        gmr.deviceId, gmr.isDeviceAccessible, gmr.isHostAccessible]));`);
    expect(out).toEqual([
      'GraphMemoryResource.allocate: the stream is not capturing (cudaStreamCaptureStatusNone); graph memory is allocated only during a capture',
      "GraphMemoryResource.allocate: parameter 'stream' must be the Stream being captured, got undefined",
      [true, 'resource', 256],
      1,
      true,
      0,
      true,
      false,
    ]);
  });
});

describe('pinned memory and pool attributes', () => {
  test('a zero-byte pinned allocation is allowed, as in CuPy: no memory, a null address, an empty view', () => {
    const out = runCases({
      zero: `
        const before = count('cudaHostAlloc');
        const pinned = new core.PinnedMemoryPool();
        const a = new core.HostBuffer(0), b = pinned.allocate(0);
        const r = [a.ptr === 0n, a.size, a.bytes.length, b.ptr === 0n, b.size, pinned.totalBytes(), count('cudaHostAlloc') - before];
        a.close(); b.close();
        return [...r, a.isClosed, b.isClosed];`,
    });
    expect(out.zero).toEqual([true, 0, 0, true, 0, 0, 0, true, true]);
  });

  test("MemoryPool's reuse attributes read and write as booleans (cudaMemPoolReuse*)", () => {
    const out = runCases({
      reuse: `
        const p = d.memoryPool;
        const names = ['reuseFollowEventDependencies', 'reuseAllowOpportunistic', 'reuseAllowInternalDependencies'];
        const r = names.map((n) => p[n]);
        const sets = count('cudaMemPoolSetAttribute');
        for (const n of names) p[n] = true;
        r.push(...names.map((n) => p[n]));
        p.reuseAllowOpportunistic = false;
        r.push(p.reuseAllowOpportunistic, p.reuseFollowEventDependencies, count('cudaMemPoolSetAttribute') - sets);
        let err = null;
        try { p.reuseAllowOpportunistic = 1; } catch (e) { err = e.message; }
        return [r, err];`,
    });
    expect(out.reuse).toEqual([
      [false, false, false, true, true, true, false, true, 4],
      'MemoryPool.reuseAllowOpportunistic: the value must be true or false, got 1',
    ]);
  });
});

test("LineProfileHook's call tree: used and acquired bytes by caller, outermost first, cut at maxDepth", () => {
  const out = runCases({
    tree: `
      const full = new core.LineProfileHook(), cut = new core.LineProfileHook({ maxDepth: 1 });
      const cache = new core.CachingAllocator();
      function inner() { cache.allocate(1000, { device: d }).close(); }
      function outer() { inner(); inner(); }
      outer();
      full.close(); cut.close();
      const strip = (n) => ({ site: n.site.replace(/^.*?:(\\d+):/, 'L$1:'), used: n.usedBytes, acquired: n.acquiredBytes, children: n.children.map(strip) });
      let err = null;
      try { new core.LineProfileHook({ maxDepth: -1, install: false }); } catch (e) { err = e.message; }
      return [strip(full.tree()), strip(cut.tree()), full.formatTree().split('\\n')[0], err];`,
  });
  const [full, cut, firstLine, err] = out.tree as [
    { site: string; used: number; acquired: number; children: unknown[] },
    { site: string; used: number; acquired: number; children: { children: unknown[] }[] },
    string,
    string,
  ];
  // Two requests of 1024 bytes; the first one took its block from CUDA.
  expect([full.site, full.used, full.acquired]).toEqual(['_root', 2048, 1024]);
  type Node = { site: string; used: number; acquired: number; children: Node[] };
  const chain: Node[] = [];
  for (let n = full as Node; n.children.length; n = n.children[0]) chain.push(n.children[0]);
  const deepest = chain[chain.length - 1];
  // The innermost caller is inner() (both calls on one line of outer()), below outer().
  expect(chain.slice(-2).map((n) => n.site.replace(/^L\d+:/, ''))).toEqual(['outer', 'inner']);
  expect([deepest.used, deepest.acquired, deepest.children]).toEqual([2048, 1024, []]);
  expect(cut.children).toHaveLength(1);
  expect(cut.children[0].children).toEqual([]);
  expect(firstLine).toBe('_root (2.00KB, 1.00KB)');
  expect(err).toBe("new LineProfileHook: option 'maxDepth' must be a non-negative integer (0: no limit), got -1");
});

describe('Program, part 4: typed options, the backend options before compiling, NVVM checks, handles', () => {
  let nvrtcLib = '';
  beforeAll(() => {
    nvrtcLib = path.join(tmp, 'libnvrtc-fake.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-o', nvrtcLib, path.join(__dirname, '..', 'fixtures', 'fake-nvrtc-pch.c')]);
  });

  /** Runs `body` (with `core`, `nvrtc`, `out(v)` and `log()`, the fake NVRTC's calls) on the fake libnvrtc of the PCH tests. */
  function onNvrtc(body: string): unknown {
    const script = `
      const { core, nvrtc } = require('./src');
      const log = () => require('koffi').load(process.env.CUDA_BINDINGS_NVRTC).func('const char *fake_log(void)')().split('\\n').filter(Boolean);
      const out = (v) => console.log(JSON.stringify(v));
      const msg = (f) => { try { f(); return 'no error'; } catch (e) { return e.message; } };
      (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      encoding: 'utf8',
      cwd: root,
      env: { ...process.env, CUDA_BINDINGS_NVRTC: nvrtcLib, CUDA_BINDINGS_CACHE_DIR: path.join(tmp, 'cache') },
      timeout: 60_000,
    });
    if (r.stderr !== '' || r.status !== 0) throw new Error(`the child failed (status ${r.status}):\n${r.stderr}\n${r.stdout}`);
    return JSON.parse(r.stdout);
  }

  const SRC = 'extern "C" __global__ void k(int *x) { x[0] = 1; }';

  test('the typed options become NVRTC flags, readable before compiling and on the Program, as the compiler got them', () => {
    const r = onNvrtc(`
      const options = { arch: 'sm_90', debug: true, lineInfo: true, ftz: true, precSqrt: false, precDiv: true, fma: false, options: ['-DX=1'], cache: false };
      const before = core.Program.backendOptions(options);
      const p = core.Program.compile(${JSON.stringify(SRC)}, options);
      out({ before, after: p.backendOptions, calls: log() });`);
    const flags = ['-G', '-lineinfo', '--ftz=true', '--prec-sqrt=false', '--prec-div=true', '--fmad=false', '-DX=1'];
    expect(r).toEqual({
      before: { compiler: 'nvrtc', options: ['--gpu-architecture=sm_90', ...flags] },
      after: ['--gpu-architecture=sm_90', ...flags],
      calls: [`compile heap=32MiB ${flags.join(' ')}`],
    });
  });

  test("keepHandle keeps NVRTC's program as program.handle until close(), skipping the disk cache; compileAsync refuses it", () => {
    const r = onNvrtc(`
      const a = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', keepHandle: true });
      const b = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', keepHandle: true });
      const held = [a.handle !== null, a.handle !== b.handle, a.fromCache, b.fromCache, a.isClosed];
      a.close(); a.close();
      const plain = core.Program.compile(${JSON.stringify(SRC)}, { arch: 'sm_90', cache: false });
      let rejected = null;
      try { await core.Program.compileAsync(${JSON.stringify(SRC)}, { arch: 'sm_90', keepHandle: true }); } catch (e) { rejected = e.message; }
      out({ held, closed: [a.handle, a.isClosed, a.code.length], plain: plain.handle, rejected, bad: msg(() => core.Program.compile('x', { arch: 'sm_90', keepHandle: 1 })) });`);
    expect(r).toEqual({
      held: [true, true, false, false, false],
      closed: [null, true, 4],
      plain: null,
      rejected: "Program.compileAsync: option 'keepHandle' is for Program.compile (a handle is kept from a compile on this thread)",
      bad: "Program.compile: option 'keepHandle' must be true or false, got 1",
    });
  });

  test('Program.fromHandle compiles a program made with the facade (or reads a compiled one); it does not own it unless told', () => {
    const r = onNvrtc(`
      const [, h] = nvrtc.nvrtcCreateProgram(${JSON.stringify(SRC)}, 'raw.cu', 0, null, null);
      const p = core.Program.fromHandle(h, { language: 'c++', arch: 'sm_90', ftz: true, name: 'raw.cu' });
      const again = core.Program.fromHandle(h, { language: 'c++', arch: 'sm_90', compiled: true });
      const first = [p.handle === h, p.code.length, p.name, p.backendOptions, again.backendOptions, p.fromCache, p.compiler];
      p.close();
      const stillUsable = nvrtc.nvrtcGetCUBINSize(h)[1];
      const [, h2] = nvrtc.nvrtcCreateProgram(${JSON.stringify(SRC)}, 'owned.cu', 0, null, null);
      const owned = core.Program.fromHandle(h2, { language: 'c++', arch: 'sm_90', owned: true });
      owned.close();
      nvrtc.nvrtcDestroyProgram(h);
      out({ first, stillUsable, ownedHandle: owned.handle, calls: log(), errors: [
        msg(() => core.Program.fromHandle(h, {})),
        msg(() => core.Program.fromHandle(null, { language: 'c++' })),
        msg(() => core.Program.fromHandle(h, { language: 'c++', owned: 'yes' })),
        msg(() => core.Program.fromHandle(h, { language: 'c++', headers: {} })),
      ] });`);
    expect(r).toEqual({
      first: [true, 4, 'raw.cu', ['--gpu-architecture=sm_90', '--ftz=true'], [], false, 'nvrtc 13.0'],
      stillUsable: 4,
      ownedHandle: null,
      calls: ['compile heap=32MiB --ftz=true', 'compile heap=32MiB'],
      errors: [
        "Program.fromHandle: option 'language' must be 'c++' (an nvrtcProgram) or 'nvvm' (an nvvmProgram), got undefined",
        "Program.fromHandle: parameter 'handle' must be an nvrtcProgram or nvvmProgram, got null",
        'Program.fromHandle: option \'owned\' must be true or false, got the string "yes"',
        "Program.fromHandle: unknown option 'headers'; the options are name, options, nameExpressions, arch, target, debug, lineInfo, optimization, ftz, precSqrt, precDiv, fma, language, compiled, owned",
      ],
    });
  });

  test("NVVM options are libNVVM's spelling, and what libNVVM cannot take is refused by name (as cuda.core does), before libNVVM is needed", () => {
    const r = onNvrtc(`
      const nv = (o) => msg(() => core.Program.backendOptions({ language: 'nvvm', arch: '90', ...o }));
      out({
        flags: core.Program.backendOptions({ language: 'nvvm', arch: 'sm_90', target: 'ltoir', debug: true, optimization: 0, ftz: false, precSqrt: true, precDiv: false, fma: true, options: ['-jump-table-density=50'] }),
        errors: [
          nv({ options: ['-lineinfo'] }),
          nv({ options: ['-std=c++17'] }),
          nv({ options: ['-arch=compute_80'] }),
          nv({ options: ['-gen-lto'] }),
          nv({ options: ['-opt=2'] }),
          nv({ lineInfo: true }),
          nv({ optimization: 2 }),
          nv({ pch: true }),
          msg(() => core.Program.backendOptions({ arch: 'sm_90', optimization: 3 })),
          msg(() => core.Program.backendOptions({ arch: 'sm_90', ftz: 'yes' })),
        ],
      });`);
    const takes = 'it takes -g, -opt=0|3, -ftz=0|1, -prec-sqrt=0|1, -prec-div=0|1, -fma=0|1 and -jump-table-density=0..101';
    expect(r).toEqual({
      flags: {
        compiler: 'nvvm',
        options: [
          '-arch=compute_90',
          '-gen-lto',
          '-g',
          '-opt=0',
          '-ftz=0',
          '-prec-sqrt=1',
          '-prec-div=0',
          '-fma=1',
          '-jump-table-density=50',
        ],
      },
      errors: [
        `Program.backendOptions: libNVVM does not take '-lineinfo' (in option 'options'); ${takes}`,
        `Program.backendOptions: libNVVM does not take '-std=c++17' (in option 'options'); ${takes}`,
        "Program.backendOptions: option 'options' holds '-arch=compute_80'; give the architecture as the 'arch' option",
        "Program.backendOptions: option 'options' holds '-gen-lto'; ask for LTO-IR with { target: 'ltoir' }",
        `Program.backendOptions: libNVVM does not take '-opt=2' (in option 'options'); ${takes}`,
        "Program.backendOptions: option 'lineInfo' is not taken by libNVVM (line information comes from the IR's debug metadata)",
        "Program.backendOptions: option 'optimization' must be 0 or 3 (libNVVM's -opt levels), got 2",
        "Program.backendOptions: option 'pch' is for NVRTC (CUDA C++), not NVVM IR",
        "Program.backendOptions: option 'optimization' is libNVVM's -opt, for NVVM IR ({ language: 'nvvm' }); for CUDA C++ pass compiler options",
        'Program.backendOptions: option \'ftz\' must be true or false, got the string "yes"',
      ],
    });
  });
});
