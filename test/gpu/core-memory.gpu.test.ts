// The memory side of core on one GPU: a virtual buffer grown in place, the pinned and managed pools,
// IPC of a buffer, an event and a pool to child processes (on the same device), memory hooks, green
// contexts and driver contexts. Skipped, saying why, without a device. Each test prints the figures
// the issue's closing note reports (lines starting `core-memory:`).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { core, cuda, cudart } from '../../src';
import type { OkOutputs } from '../../src';
import { fillPattern, patternMismatches, describeGpu } from './helpers';
import { FATBIN } from './fixtures/samples';

const root = path.join(__dirname, '..', '..');
const { Device } = core;
const MiB = 1 << 20;
const CHILD_TIMEOUT_MS = 120_000;
const note = (what: string, v: unknown) =>
  console.log(`core-memory: ${what} ${JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `0x${x.toString(16)}` : x))}`);

/** Runs the IPC child with `args` (and `fds` as its fds 3, 4, …); resolves with its exit and its RESULT line. */
function child(
  args: string[],
  fds: number[] = [],
): Promise<{ status: number | null; signal: string | null; result: Record<string, unknown> | null; output: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures', 'core-ipc-child.ts'), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe', ...fds],
    });
    let output = '';
    p.stdout!.on('data', (d) => (output += d));
    p.stderr!.on('data', (d) => (output += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    p.on('error', reject);
    p.on('close', (status, signal) => {
      clearTimeout(timer);
      console.log(`== fixtures/core-ipc-child.ts ${args[0]}: exit ${status}${signal ? ` (${signal})` : ''}\n${output}`);
      const line = output.split('\n').find((l) => l.startsWith('RESULT '));
      resolve({ status, signal, result: line ? JSON.parse(line.slice(7)) : null, output });
    });
  });
}

describeGpu('core memory on a GPU', () => {
  test('VirtualBuffer grows from 2 MiB to 1 GiB in place: same address, the first 2 MiB kept, the new end writable', () => {
    const d = Device.get(0).makeCurrent();
    const vmr = new core.VirtualMemoryResource(d);
    const buf = vmr.allocate(2 * MiB, { reserve: 1 << 30 });
    const before = buf.ptr;
    const head = new Uint32Array((2 * MiB) / 4);
    fillPattern(head, 0x2468);
    buf.copyFrom(head);
    buf.resize(1 << 30);
    const after = buf.ptr;
    const tail = new Uint32Array(MiB / 4);
    fillPattern(tail, 0x1357);
    buf.slice((1 << 30) - MiB).copyFrom(tail);
    const headBack = buf.copyTo(new Uint32Array((2 * MiB) / 4));
    const tailBack = new Uint32Array(MiB / 4);
    buf.slice((1 << 30) - MiB).copyTo(tailBack);
    const figures = {
      granularity: vmr.granularity,
      from: 2 * MiB,
      to: buf.size,
      mapped: buf.mappedBytes,
      reserved: buf.reservedBytes,
      before,
      after,
      sameAddress: before === after,
      headMismatches: patternMismatches(headBack, 0x2468),
      tailMismatches: patternMismatches(tailBack, 0x1357),
    };
    note('virtual grow', figures);
    // Without a reservation: growth asks the driver for the range just after; say what it did.
    const small = vmr.allocate(2 * MiB);
    const p0 = small.ptr;
    let unreserved: string;
    try {
      small.resize(64 * MiB);
      unreserved = small.ptr === p0 ? 'grew in place past its reservation' : 'moved';
    } catch (e) {
      unreserved = `refused: ${(e as Error).message}`;
    }
    note('virtual grow without a reservation', unreserved);
    small.close();
    buf.close();
    expect(figures).toMatchObject({ to: 1 << 30, mapped: 1 << 30, sameAddress: true, headMismatches: 0, tailMismatches: 0 });
    expect(() => buf.ptr).toThrow('VirtualBuffer.ptr: the VirtualBuffer was closed');
  }, 60_000);

  test('VirtualMemoryResource with POSIX file descriptor handles: one descriptor per chunk, a real open file', () => {
    const d = Device.get(0).makeCurrent();
    const vmr = new core.VirtualMemoryResource(d, { handleType: 'posixFd' });
    const buf = vmr.allocate(2 * MiB, { reserve: 8 * MiB });
    buf.resize(6 * MiB);
    const handles = buf.exportHandles();
    const open = handles.map((h) => {
      try {
        fs.fstatSync(h.fd);
        return true;
      } catch {
        return false;
      }
    });
    note('virtual posixFd handles', { handles, open });
    for (const h of handles) fs.closeSync(h.fd);
    buf.close();
    expect(handles.map((h) => h.size).reduce((a, n) => a + n, 0)).toBe(6 * MiB);
    expect(open.every(Boolean)).toBe(true);
    const plain = new core.VirtualMemoryResource(d).allocate(MiB);
    expect(() => plain.exportHandles()).toThrow(
      "VirtualBuffer.exportHandles: the resource was made with handleType 'none'; exporting needs handleType 'posixFd'",
    );
    plain.close();
  });

  test('VirtualMemoryResource: exported POSIX descriptors imported again map the same memory at a second address', () => {
    const d = Device.get(0).makeCurrent();
    const vmr = new core.VirtualMemoryResource(d, { handleType: 'posixFd' });
    const buf = vmr.allocate(2 * MiB, { reserve: 8 * MiB }).resize(6 * MiB);
    const words = new Uint32Array((6 * MiB) / 4);
    fillPattern(words, 0x6006);
    buf.copyFrom(words);
    const handles = buf.exportHandles();
    const twin = vmr.importHandles(handles);
    for (const h of handles) fs.closeSync(h.fd);
    const seen = patternMismatches(twin.copyTo(new Uint32Array((6 * MiB) / 4)), 0x6006);
    fillPattern(words, 0x7007);
    twin.copyFrom(words);
    const back = patternMismatches(buf.copyTo(new Uint32Array((6 * MiB) / 4)), 0x7007);
    const figures = { chunks: handles.length, original: buf.ptr, twin: twin.ptr, twinSeesOriginal: seen, originalSeesTwin: back };
    note('virtual import', figures);
    twin.close();
    buf.close();
    expect(figures).toMatchObject({ chunks: 2, twinSeesOriginal: 0, originalSeesTwin: 0 });
    expect(figures.twin).not.toBe(figures.original);
  });

  test('PinnedMemoryPool: the second allocation reuses the block, no cudaHostAlloc (counted through a hook)', () => {
    const d = Device.get(0).makeCurrent();
    const pool = new core.PinnedMemoryPool();
    const fresh: string[] = [];
    class CountFresh extends core.MemoryHook {
      override allocPost(e: core.MemoryEvent): void {
        fresh.push(e.allocator);
      }
    }
    const hook = new CountFresh();
    const a = pool.allocate(8 * MiB);
    const first = a.ptr;
    const afterFirst = fresh.length;
    a.close();
    const b = pool.allocate(8 * MiB);
    const afterSecond = fresh.length;
    fillPattern(b.as(Uint32Array), 0x77);
    const dev = d.allocate(8 * MiB).copyFrom(b.bytes);
    const back = new Uint32Array((8 * MiB) / 4);
    dev.copyTo(back);
    hook.close();
    const figures = {
      cudaHostAllocFirst: afterFirst,
      cudaHostAllocSecond: afterSecond - afterFirst,
      samePointer: b.ptr === first,
      used: pool.usedBytes(),
      total: pool.totalBytes(),
      mismatches: patternMismatches(back, 0x77),
    };
    note('pinned pool reuse', figures);
    dev.close();
    b.close();
    pool.freeAllBlocks();
    expect(figures).toEqual({
      cudaHostAllocFirst: 1,
      cudaHostAllocSecond: 0,
      samePointer: true,
      used: 8 * MiB,
      total: 8 * MiB,
      mismatches: 0,
    });
  });

  test('ManagedMemoryPool: allocate, prefetch to the device and back to the host, bytes kept (or the clear error where unsupported)', async () => {
    const d = Device.get(0).makeCurrent();
    let pool: core.ManagedMemoryPool;
    try {
      pool = core.ManagedMemoryPool.create(d);
    } catch (e) {
      note('managed pool', `unsupported: ${(e as Error).message}`);
      expect(e).toBeInstanceOf(core.CudaError);
      expect((e as core.CudaError).message).toMatch(/^cudaErrorNotSupported: managed memory pools are not supported here: /);
      return;
    }
    const s = d.createStream({ nonBlocking: true });
    const buf = pool.allocate(64 * MiB, s);
    const host = new Uint32Array((64 * MiB) / 4);
    fillPattern(host, 0x4242);
    buf.copyFrom(host, { stream: s });
    buf.prefetch(d, s);
    buf.prefetch('host', s);
    await s.synchronize();
    const [attrs] = [check(cudart.cudaPointerGetAttributes(buf.ptr))];
    const back = buf.copyTo(new Uint32Array((64 * MiB) / 4));
    const figures = {
      kind: buf.kind,
      size: buf.size,
      memoryType: cudart.cudaMemoryType[attrs.type],
      mismatches: patternMismatches(back, 0x4242),
    };
    note('managed pool', figures);
    buf.close();
    await s.synchronize();
    pool.close();
    s.close();
    expect(figures).toEqual({ kind: 'managed', size: 64 * MiB, memoryType: 'cudaMemoryTypeManaged', mismatches: 0 });
  }, 60_000);

  test(
    "IPC: a child opens a buffer and an event from base64 handles, reads the parent's bytes and writes its own",
    async () => {
      const d = Device.get(0).makeCurrent();
      if (d.attribute('IpcEventSupport') !== 1) throw new Error('device 0 has no cudaDevAttrIpcEventSupport: this test needs it');
      const BYTES = 16 * MiB;
      const stream = d.createStream({ nonBlocking: true });
      const mem = d.allocate(BYTES);
      const event = d.createEvent({ interprocess: true });
      const host = new Uint32Array(BYTES / 4);
      fillPattern(host, 0x5a5a);
      mem.copyFrom(host, { stream });
      event.record(stream);
      const r = await child([
        'buffer',
        core.IpcMemoryHandle.export(mem).toBase64(),
        core.IpcEventHandle.export(event).toBase64(),
        String(0x5a5a),
        String(0xa5a5),
      ]);
      stream.waitEvent(event);
      host.fill(0);
      mem.copyTo(host, { stream });
      await stream.synchronize();
      const figures = { child: r.result, parentSeesChild: patternMismatches(host, 0xa5a5) };
      note('ipc buffer+event', figures);
      mem.close();
      event.close();
      stream.close();
      expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
      expect(figures).toEqual({ child: { mode: 'buffer', bytes: BYTES, kind: 'ipc', parentMismatches: 0 }, parentSeesChild: 0 });
    },
    CHILD_TIMEOUT_MS + 30_000,
  );

  test(
    'IPC pool: the child imports the pool from a file descriptor and two buffers from descriptors; bytes checked both ways',
    async () => {
      const d = Device.get(0).makeCurrent();
      const stream = d.createStream({ nonBlocking: true });
      const pool = core.IpcMemoryPool.create(d);
      const sizes = [4 * MiB, 12 * MiB];
      const bufs = sizes.map((n) => pool.allocate(n, stream));
      bufs.forEach((b, i) => {
        const h = new Uint32Array(b.size / 4);
        fillPattern(h, 0x1000 + i);
        b.copyFrom(h, { stream });
      });
      await stream.synchronize();
      const fd = pool.exportHandle();
      const descs = bufs.map((b) => pool.exportBuffer(b).toBase64());
      const r = await child(['pool', descs[0], descs[1], String(0x1000), String(0x2000)], [fd]);
      fs.closeSync(fd);
      const back = bufs.map((b, i) => patternMismatches(b.copyTo(new Uint32Array(b.size / 4)), 0x2000 + i));
      const figures = { fd, child: r.result, parentSeesChild: back };
      note('ipc pool', figures);
      for (const b of bufs) b.close();
      await stream.synchronize();
      pool.close();
      stream.close();
      expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
      expect(figures.child).toEqual({ mode: 'pool', sizes, parentMismatches: 0, perBuffer: [0, 0] });
      expect(back).toEqual([0, 0]);
    },
    CHILD_TIMEOUT_MS + 30_000,
  );

  test('hooks see every allocation of a script, through every core allocator, and every free', async () => {
    const d = Device.get(0).makeCurrent();
    const events: [string, string][] = [];
    class Recorder extends core.MemoryHook {
      override mallocPost(e: core.MemoryEvent): void {
        events.push(['malloc', e.allocator]);
      }
      override freePost(e: core.MemoryEvent): void {
        events.push(['free', e.allocator]);
      }
    }
    const profile = new core.LineProfileHook();
    const hook = new Recorder();
    const s = d.createStream();
    const cache = new core.CachingAllocator();
    const pinned = new core.PinnedMemoryPool();
    const vmr = new core.VirtualMemoryResource(d);
    const ipcPool = core.IpcMemoryPool.create(d);
    const made = [
      d.allocate(MiB),
      cache.allocate(MiB, { device: d }),
      d.memoryPool.allocate(MiB, s),
      d.allocateManaged(MiB),
      vmr.allocate(MiB),
      ipcPool.allocate(MiB, s),
    ];
    const host = [new core.HostBuffer(MiB), pinned.allocate(MiB)];
    for (const b of made) b.close();
    for (const h of host) h.close();
    await s.synchronize();
    hook.close();
    profile.close();
    const allocators = [
      'cudaMalloc',
      'CachingAllocator',
      'MemoryPool',
      'cudaMallocManaged',
      'VirtualMemoryResource',
      'IpcMemoryPool',
      'cudaHostAlloc',
      'PinnedMemoryPool',
    ];
    const mallocs = events.filter((e) => e[0] === 'malloc').map((e) => e[1]);
    const frees = events.filter((e) => e[0] === 'free').map((e) => e[1]);
    note('hooks', { mallocs: mallocs.length, frees: frees.length, allocators: mallocs });
    process.stdout.write(profile.format());
    const rows = profile.rows();
    cache.freeAllBlocks();
    pinned.freeAllBlocks();
    ipcPool.close();
    s.close();
    expect(mallocs).toEqual(allocators);
    expect(frees.sort()).toEqual([...allocators].sort());
    expect(rows.reduce((n, r) => n + r.count, 0)).toBe(8);
    expect(rows.every((r) => r.site.includes('core-memory.gpu.test.ts'))).toBe(true);
  }, 60_000);

  test('a green context with half the SMs runs a kernel on its stream', async () => {
    const d = Device.get(0).makeCurrent();
    const res = core.DeviceResources.of(d);
    const all = res.sm;
    const { groups, remaining } = res.splitSM(Math.floor(all.smCount / 2));
    const green = res.createGreenContext(groups[0]);
    const stream = green.createStream();
    const mod = core.Module.load(FATBIN);
    const n = 1 << 20;
    const src = new Float32Array(n).map((_, i) => i % 1000);
    const a = d.allocate(n * 4).copyFrom(src);
    const out = d.allocate(n * 4);
    mod.kernel('scaleInto').launch({ grid: n / 256, block: 256, stream }, out, a, core.f32(3), core.i32(n));
    await stream.synchronize();
    const got = out.copyTo(new Float32Array(n));
    let wrong = 0;
    for (let i = 0; i < n; i++) if (got[i] !== 3 * src[i]) wrong++;
    const figures = {
      deviceSMs: all.smCount,
      greenSMs: green.smCount,
      remainingSMs: remaining.smCount,
      alignment: all.coscheduledAlignment,
      wrong,
      streamGreen: check(cuda.cuStreamGetGreenCtx(stream.handle as unknown as cuda.CUstream)) === green.handle,
    };
    note('green context', figures);
    stream.close();
    a.close();
    out.close();
    green.close();
    expect(figures.greenSMs).toBeGreaterThanOrEqual(Math.floor(all.smCount / 2));
    expect(figures.greenSMs).toBeLessThan(all.smCount);
    expect(figures.wrong).toBe(0);
    expect(figures.streamGreen).toBe(true);
  }, 60_000);

  test('contexts: create one (current), driver calls in it, push/pop around the primary, limits and cache config', () => {
    const d = Device.get(0).makeCurrent();
    const primary = core.Context.primary(d);
    expect(primary.handle).toBe(d.primaryContext);
    const ctx = core.Context.create(d, { scheduling: 'blockingSync' });
    const steps: Record<string, unknown> = {};
    steps.currentAfterCreate = core.Context.current()?.handle === ctx.handle;
    // Driver calls in the new context: memory made there and freed there.
    const p = check(cuda.cuMemAlloc(MiB));
    check(cuda.cuMemsetD8(p, 7, MiB));
    ctx.synchronize();
    const bytes = new Uint8Array(16);
    check(cuda.cuMemcpyDtoH(bytes, p, 16));
    steps.memsetSeen = bytes.every((x) => x === 7);
    steps.flags = check(cuda.cuCtxGetFlags()) & 0x7;
    steps.apiVersion = ctx.apiVersion;
    ctx.setLimit('printfFifoSize', 4 * MiB);
    steps.printfFifo = ctx.getLimit('printfFifoSize');
    steps.stackSize = ctx.getLimit('stackSize');
    ctx.cacheConfig = 'shared';
    steps.cacheConfig = ctx.cacheConfig;
    // Push the primary on top: driver calls go there; pop it and the created one is current again.
    primary.push();
    steps.primaryOnTop = core.Context.current()?.handle === primary.handle;
    const q = check(cuda.cuMemAlloc(MiB));
    check(cuda.cuMemFree(q));
    primary.pop();
    steps.createdBack = ctx.isCurrent;
    check(cuda.cuMemFree(p));
    let wrongPop = '';
    try {
      primary.pop();
    } catch (e) {
      wrongPop = (e as Error).message;
    }
    ctx.pop();
    steps.afterPop = core.Context.current()?.handle ?? null;
    note('contexts', steps);
    ctx.close();
    primary.close();
    d.makeCurrent();
    expect(steps).toMatchObject({
      currentAfterCreate: true,
      memsetSeen: true,
      flags: cuda.CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC,
      printfFifo: 4 * MiB,
      primaryOnTop: true,
      createdBack: true,
    });
    expect(steps.apiVersion).toBeGreaterThanOrEqual(3020);
    // Devices may not honour the preference; the value read must be one of the four.
    expect(['none', 'shared', 'l1', 'equal']).toContain(steps.cacheConfig);
    expect(wrongPop).toMatch(/^Context\.pop: this context is not the current one/);
    expect(() => ctx.push()).toThrow('Context.push: the Context was closed');
  });
});

/** The outputs of a facade call, or an Error naming the status. */
function check<R extends readonly [number, ...unknown[]]>(r: R): NonNullable<OkOutputs<R>[0]> {
  if (r[0] !== 0) throw new Error(`a CUDA call returned ${r[0]} (${cudart.cudaError_t[r[0]] ?? cuda.CUresult[r[0]]})`);
  return r[1] as NonNullable<OkOutputs<R>[0]>;
}
