// The memory side of core without a GPU: hooks, the pinned pool and IPC handles, driven by the fake
// libcudart's memory variant (test/cpu/fixtures/fake-cudart.c), which hands out malloc'd memory and
// counts every call.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../../src';
import { CUDA_VERSION } from '../../../src/driver/constants.gen';
import { buildFakeCudart } from '../helpers/fake-cudart';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-corememory-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let lib = '';
const driver = path.join(tmp, 'libcuda-fake.so');

beforeAll(() => {
  lib = buildFakeCudart('memory', tmp).lib;
  // The driver's virtual memory calls, logged in order; a reservation at a given address gets it
  // unless fake_refuse(1) was called.
  const dsrc = path.join(tmp, 'd.c');
  fs.writeFileSync(
    dsrc,
    `
    #include <stdio.h>
    #include <string.h>
    #include <stdint.h>
    #include <stdlib.h>
    #include <dlfcn.h>
    typedef unsigned long long u64;
    static char log_[8192]; static int refuse; static u64 next = 0x7f0000000000ULL, handles;
    static void say(const char *f, u64 a, u64 b) { char l[96]; snprintf(l, sizeof l, "%s %llx %llx;", f, a, b); strncat(log_, l, sizeof log_ - strlen(log_) - 1); }
    const char *fake_log(void) { return log_; }
    void fake_refuse(int r) { refuse = r; }
    int cuDriverGetVersion(int *v) { *v = ${CUDA_VERSION}; return 0; }
    int cuGetErrorName(int e, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }
    int cuGetErrorString(int e, const char **s) { *s = "fake driver error"; return 0; }
    int cuInit(unsigned f) { return 0; }
    /* A context stack per thread, as the driver keeps: the primary context (0xc0) at the bottom. */
    static void *stack[16] = { (void *)0xc0 }; static int depth = 1, created; static size_t limits[16]; static int cache;
    int cuCtxGetCurrent(void **c) { *c = depth ? stack[depth - 1] : 0; return 0; }
    int cuCtxCreate_v4(void **c, void *params, unsigned flags, int dev) { *c = (void *)(uintptr_t)(0xd00 + 0x10 * ++created + flags); stack[depth++] = *c; say("create-ctx", (u64)(uintptr_t)*c, flags); return 0; }
    int cuCtxDestroy_v2(void *c) { say("destroy-ctx", (u64)(uintptr_t)c, 0); return 0; }
    int cuCtxPushCurrent_v2(void *c) { stack[depth++] = c; return 0; }
    int cuCtxPopCurrent_v2(void **c) { if (!depth) return 201; *c = stack[--depth]; return 0; }
    int cuCtxGetDevice(int *d) { *d = 0; return 0; }
    int cuCtxSynchronize(void) { say("sync", (u64)(uintptr_t)stack[depth - 1], 0); return 0; }
    int cuCtxSetLimit(int l, size_t v) { say("setLimit", (u64)(uintptr_t)stack[depth - 1], l); limits[l] = v; return 0; }
    int cuCtxGetLimit(size_t *v, int l) { *v = limits[l]; return 0; }
    int cuCtxGetCacheConfig(int *c) { *c = cache; return 0; }
    int cuCtxSetCacheConfig(int c) { cache = c; return 0; }
    int cuCtxGetApiVersion(void *c, unsigned *v) { *v = 3020; return 0; }
    int cuDevicePrimaryCtxRetain(void **c, int d) { say("retain", d, 0); *c = (void *)0xc0; return 0; }
    int cuDevicePrimaryCtxRelease_v2(int d) { say("release-primary", d, 0); return 0; }
    void fake_clear_log(void) { log_[0] = 0; }
    /* Green contexts: 132 SMs, groups rounded up to multiples of 8; a CUdevResource is 144 bytes, sm at 96. */
    static void sm(unsigned char *r, unsigned n) { memset(r, 0, 144); *(int *)r = 1; ((unsigned *)(r + 96))[0] = n; ((unsigned *)(r + 96))[1] = 8; ((unsigned *)(r + 96))[2] = 8; }
    int cuDeviceGetDevResource(int dev, unsigned char *r, int type) { if (type != 1) return 1; sm(r, 132); return 0; }
    int cuDevSmResourceSplitByCount(unsigned char *out, unsigned *n, const unsigned char *in, unsigned char *rem, unsigned flags, unsigned min) {
      unsigned have = ((const unsigned *)(in + 96))[0], each = (min + 7) / 8 * 8, made = 0;
      while (made < *n && have >= each) { sm(out + 144 * made++, each); have -= each; }
      *n = made; sm(rem, have); say("split", min, made); return 0; }
    int cuDevResourceGenerateDesc(void **desc, const unsigned char *r, unsigned n) { *desc = (void *)0xde5c; say("desc", ((const unsigned *)(r + 96))[0], n); return 0; }
    int cuGreenCtxCreate(void **g, void *desc, int dev, unsigned flags) { *g = (void *)0x9a0; say("green", (u64)(uintptr_t)desc, flags); return 0; }
    int cuGreenCtxDestroy(void *g) { say("green-destroy", (u64)(uintptr_t)g, 0); return 0; }
    int cuCtxFromGreenCtx(void **c, void *g) { *c = (void *)0x9c0; return 0; }
    int cuGreenCtxStreamCreate(void **s, void *g, unsigned flags, int prio) { *s = (void *)0x5700; say("green-stream", flags, prio); return 0; }
    int cuMemGetAllocationGranularity(size_t *g, const void *prop, int opt) { *g = 2 << 20; return 0; }
    int cuMemAddressReserve(u64 *p, size_t size, size_t align, u64 addr, u64 flags) {
      if (addr && !refuse) *p = addr; else { *p = next; next += 1ULL << 40; }
      say("reserve", *p, size); return 0; }
    int cuMemAddressFree(u64 p, size_t size) { say("addressFree", p, size); return 0; }
    int cuMemCreate(u64 *h, size_t size, const void *prop, u64 flags) { *h = ++handles; say("create", *h, size); return 0; }
    int cuMemRelease(u64 h) { say("release", h, 0); return 0; }
    int cuMemMap(u64 p, size_t size, size_t off, u64 h, u64 flags) { say("map", p, h); return 0; }
    int cuMemUnmap(u64 p, size_t size) { say("unmap", p, size); return 0; }
    int cuMemSetAccess(u64 p, size_t size, const void *d, size_t n) { say("access", p, n); return 0; }
    int cuMemExportToShareableHandle(int *fd, u64 h, int type, u64 flags) { if (type != 1) return 1; *fd = 50 + (int)h; say("export", h, *fd); return 0; }
    /* an imported handle is 100 + the descriptor (decimal; the log prints hex) */
    int cuMemImportFromShareableHandle(u64 *h, void *os, int type) { if (type != 1) return 1; *h = 100 + (u64)(uintptr_t)os; say("import", (u64)(uintptr_t)os, *h); return 0; }
    /* the runtime fake's allocations and IPC mappings (fake_range in fake-cudart.c) */
    int cuMemGetAddressRange_v2(u64 *base, size_t *size, u64 p) {
      static int (*range)(u64, u64 *, size_t *);
      if (!range) range = (int (*)(u64, u64 *, size_t *))dlsym(dlopen(getenv("CUDA_BINDINGS_CUDART"), RTLD_NOW | RTLD_NOLOAD), "fake_range");
      return range ? range(p, base, size) : 500; }
  `,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', driver, dsrc, '-ldl']);
});

/** Runs `script` in a Node child against the fake library; its last line of output is JSON. */
function run(script: string): unknown {
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      '-e',
      `
    const koffi = require('koffi');
    const { core } = require('./src');
    const fake = koffi.load(process.env.CUDA_BINDINGS_CUDART).func('long fake_count(const char *)');
    const fakeDriver = koffi.load(process.env.CUDA_BINDINGS_CUDA);
    const driverLog = fakeDriver.func('const char *fake_log(void)');
    const refuse = fakeDriver.func('void fake_refuse(int)');
    const clearLog = fakeDriver.func('void fake_clear_log(void)');
    const calls = (name) => Number(fake(name));
    (async () => { ${script} })().catch((e) => { console.error(e); process.exit(1); });`,
    ],
    {
      encoding: 'utf8',
      cwd: path.join(__dirname, '..', '..', '..'),
      env: { ...process.env, CUDA_BINDINGS_CUDART: lib, CUDA_BINDINGS_CUDA: driver },
      timeout: 180_000,
    },
  );
  if (r.status !== 0) throw new Error(`child exited ${r.status} ${r.signal ?? ''}\n${r.stdout}\n${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

test('hooks see every allocation and free of core allocators: alloc* only when memory comes from CUDA', () => {
  const out = run(`
    const seen = [];
    class Recorder extends core.MemoryHook {}
    for (const phase of ['allocPre', 'allocPost', 'mallocPre', 'mallocPost', 'freePre', 'freePost'])
      Recorder.prototype[phase] = function (e) { seen.push([phase, e.allocator, e.device, e.size, e.memSize, e.ptr === null ? null : 'ptr']); };
    const d = core.Device.get(0);
    const hook = new Recorder();
    const b = d.allocate(100);
    b.close();
    const cache = new core.CachingAllocator();
    cache.allocate(1000, { device: d }).close();
    cache.allocate(1000, { device: d }).close();
    const s = d.createStream();
    d.memoryPool.allocate(64, s).close();
    d.allocateManaged(32).close();
    new core.HostBuffer(16).close();
    hook.close();
    d.allocate(5).close(); // not seen: uninstalled
    console.log(JSON.stringify(seen));`);
  const p = (alloc: string, dev: number | string, size: number, mem = size) => [
    ['mallocPre', alloc, dev, size, mem, null],
    ['allocPre', alloc, dev, mem, mem, null],
    ['allocPost', alloc, dev, mem, mem, 'ptr'],
    ['mallocPost', alloc, dev, size, mem, 'ptr'],
  ];
  const f = (alloc: string, dev: number | string, size: number, mem = size) => [
    ['freePre', alloc, dev, size, mem, 'ptr'],
    ['freePost', alloc, dev, size, mem, 'ptr'],
  ];
  expect(out).toEqual([
    ...p('cudaMalloc', 0, 100),
    ...f('cudaMalloc', 0, 100),
    // CachingAllocator: the first request takes a 1024-byte block from cudaMalloc, the second reuses it.
    ['mallocPre', 'CachingAllocator', 0, 1000, 1024, null],
    ['allocPre', 'CachingAllocator', 0, 1000, 1024, null],
    ['allocPost', 'CachingAllocator', 0, 1000, 1024, 'ptr'],
    ['mallocPost', 'CachingAllocator', 0, 1000, 1024, 'ptr'],
    ...f('CachingAllocator', 0, 1000, 1024),
    ['mallocPre', 'CachingAllocator', 0, 1000, 1024, null],
    ['mallocPost', 'CachingAllocator', 0, 1000, 1024, 'ptr'],
    ...f('CachingAllocator', 0, 1000, 1024),
    ...p('MemoryPool', 0, 64),
    ...f('MemoryPool', 0, 64),
    ...p('cudaMallocManaged', 0, 32),
    ...f('cudaMallocManaged', 0, 32),
    ...p('cudaHostAlloc', 'host', 16),
    ...f('cudaHostAlloc', 'host', 16),
  ]);
});

test('DebugPrintHook prints one JSON line per allocation and free; hook.with() installs it only for the call', () => {
  const out = run(`
    const lines = [];
    const hook = new core.DebugPrintHook({ install: false, write: (l) => lines.push(JSON.parse(l)) });
    const d = core.Device.get(0);
    const inside = hook.with(() => { const b = d.allocate(10); const p = b.ptr; b.close(); return [hook.isInstalled, '0x' + p.toString(16)]; });
    d.allocate(20).close();
    const viaPromise = await hook.with(async () => { await null; d.allocate(30).close(); return hook.isInstalled; });
    console.log(JSON.stringify({ inside, after: hook.isInstalled, viaPromise, lines }));`) as {
    inside: [boolean, string];
    after: boolean;
    viaPromise: boolean;
    lines: { hook: string; size: number; ptr: string }[];
  };
  expect(out.inside[0]).toBe(true);
  expect(out.after).toBe(false);
  expect(out.viaPromise).toBe(true);
  expect(out.lines.map((l) => [l.hook, l.size])).toEqual([
    ['allocPost', 10],
    ['mallocPost', 10],
    ['freePost', 10],
    ['allocPost', 30],
    ['mallocPost', 30],
    ['freePost', 30],
  ]);
  expect(out.lines[0]).toEqual({ hook: 'allocPost', allocator: 'cudaMalloc', device: 0, size: 10, memSize: 10, ptr: out.inside[1] });
});

test('LineProfileHook sums the bytes by the line of the script that asked', () => {
  const out = run(`
    const hook = new core.LineProfileHook();
    const d = core.Device.get(0);
    for (let i = 0; i < 3; i++) d.allocate(100).close();
    new core.HostBuffer(4096).close();
    hook.close();
    const rows = hook.rows();
    console.log(JSON.stringify({ rows, table: hook.format() }));`) as {
    rows: { site: string; count: number; bytes: number }[];
    table: string;
  };
  // The HostBuffer line follows the loop's line in the script.
  const lines = out.rows.map((r) => Number(/:(\d+):\d+$/.exec(r.site)![1]));
  expect(out.rows.map((r) => [r.count, r.bytes])).toEqual([
    [1, 4096],
    [3, 300],
  ]);
  expect(lines[0] - lines[1]).toBe(1);
  expect(out.rows[0].site).toMatch(/^\[eval\]/);
  expect(out.table.split('\n')[0]).toMatch(/^call site\s+count\s+bytes\s+held$/);
  expect(out.table).toMatch(/\ntotal\s+4\s+4396\s+4396\n$/);
});

test('PinnedMemoryPool: the second allocation of a size reuses the block (no cudaHostAlloc), installable for new HostBuffer', () => {
  const out = run(`
    const pool = new core.PinnedMemoryPool();
    const a = pool.allocate(1000);
    a.bytes.fill(7);
    const first = a.ptr;
    const afterFirst = [calls('cudaHostAlloc'), pool.usedBytes(), pool.totalBytes()];
    a.close();
    const afterClose = [pool.usedBytes(), pool.totalBytes(), pool.freeBytes()];
    let hostAllocs = 0;
    class Count extends core.MemoryHook { allocPost(e) { hostAllocs++; } }
    const hook = new Count();
    const b = pool.allocate(1000);
    const reused = [b.ptr === first, b.size, b.bytes.length, calls('cudaHostAlloc'), hostAllocs];
    const c = pool.allocate(1000, { mapped: true }); // other flags: another block
    const previous = core.setPinnedMemoryAllocator(pool);
    b.close();
    const viaCtor = new core.HostBuffer(900); // same rounded size: b's block again
    const installed = [viaCtor instanceof core.HostBuffer, viaCtor.ptr === first, calls('cudaHostAlloc')];
    core.setPinnedMemoryAllocator(previous);
    viaCtor.close(); c.close();
    hook.close();
    const before = calls('cudaFreeHost');
    pool.freeAllBlocks();
    // Views of the blocks may still be reachable until collected: they are freed then, never before.
    for (let i = 0; i < 50 && calls('cudaFreeHost') - before < 2; i++) { global.gc(); await new Promise((r) => setTimeout(r, 10)); }
    console.log(JSON.stringify({ afterFirst, afterClose, reused, installed, freed: calls('cudaFreeHost') - before, end: [pool.usedBytes(), pool.totalBytes(), pool.freeBlockCount] }));`);
  expect(out).toEqual({
    afterFirst: [1, 1024, 1024],
    afterClose: [0, 1024, 1024],
    reused: [true, 1000, 1000, 1, 0],
    installed: [true, true, 2],
    freed: 2,
    end: [0, 0, 0],
  });
});

test('PinnedMemoryPool limit: past it a RangeError; bad sizes and options are refused by name', () => {
  expect(() => new core.PinnedMemoryPool({ limit: -1 })).toThrow(
    new RangeError("PinnedMemoryPool.limit: parameter 'bytes' must be a non-negative integer or Infinity, got -1"),
  );
  const pool = new core.PinnedMemoryPool({ limit: 0 });
  expect(() => pool.allocate(-1)).toThrow(
    new RangeError("PinnedMemoryPool.allocate: parameter 'size' must be a non-negative integer, got -1"),
  );
  expect(() => pool.allocate(1.5)).toThrow(/parameter 'size' must be a non-negative integer, got 1.5/);
  expect(() => pool.allocate(16)).toThrow(
    new RangeError("PinnedMemoryPool.allocate: 512 more bytes would pass the pool's limit of 0 (0 in use)"),
  );
  expect(() => core.setPinnedMemoryAllocator({} as never)).toThrow(/setPinnedMemoryAllocator: parameter 'allocator' must have an allocate/);
});

test('IPC handles pass through base64 and open to the same memory; opened memory is closed with cudaIpcCloseMemHandle', () => {
  const out = run(`
    const d = core.Device.get(0);
    const buf = d.allocate(4096);
    const view = buf.slice(256, 1024);
    const text = core.IpcMemoryHandle.export(view).toBase64();
    const h = core.IpcMemoryHandle.from(text);
    const opened = h.open(d);
    const fromBytes = core.IpcMemoryHandle.from(core.IpcMemoryHandle.export(buf).toBuffer());
    const r = { size: h.size, offset: h.offset, kind: opened.kind, delta: Number(opened.ptr - buf.ptr), openedSize: opened.size, whole: [fromBytes.size, fromBytes.offset], len: Buffer.from(text, 'base64').length };
    opened.close();
    r.closes = calls('cudaIpcCloseMemHandle');
    const ev = d.createEvent({ interprocess: true, timing: false });
    const eh = core.IpcEventHandle.from(core.IpcEventHandle.export(ev).toBase64());
    const e2 = eh.open(d);
    r.event = [ev.interprocess, e2.interprocess, e2.handle === ev.handle];
    try { core.IpcEventHandle.export(d.createEvent()); } catch (e) { r.plain = e.message; }
    r.timingOff = d.createEvent({ interprocess: true }).timing;
    try { d.createEvent({ interprocess: true, timing: true }); } catch (e) { r.timing = e.message; }
    try { core.IpcMemoryHandle.export(d.allocateManaged(64)); } catch (e) { r.managed = e.message; }
    buf.close();
    try { core.IpcMemoryHandle.export(buf); } catch (e) { r.closed = e.message; }
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    size: 1024,
    offset: 256,
    kind: 'ipc',
    delta: 0x1000 + 256,
    openedSize: 1024,
    whole: [4096, 0],
    len: 88,
    closes: 1,
    event: [true, true, true],
    timingOff: false,
    plain: "IpcEventHandle.export: parameter 'event' was not made shareable: create it with { interprocess: true, timing: false }",
    timing: "Device.createEvent: option 'interprocess' needs { timing: false } (CUDA cannot share an event that records timestamps)",
    managed: "IpcMemoryHandle.export: parameter 'buffer' must be cudaMalloc memory (kind 'device' or 'cached'); it is managed memory",
    closed: "IpcMemoryHandle.export: parameter 'buffer' was closed",
  });
});

test('serialised handles are checked: length, kind, version, base64', () => {
  const desc = new core.IpcBufferDescriptor(new Uint8Array(64).fill(3), 12345);
  const back = core.IpcBufferDescriptor.from(desc.toBase64());
  expect([back.size, Buffer.from(back.bytes).equals(Buffer.alloc(64, 3))]).toEqual([12345, true]);
  expect(() => core.IpcMemoryHandle.from(desc.toBuffer())).toThrow(
    new RangeError("IpcMemoryHandle.from: parameter 'data' must hold 88 bytes, got 80"),
  );
  const wrongKind = Buffer.concat([Buffer.from('CBPB'), Buffer.alloc(84)]);
  expect(() => core.IpcMemoryHandle.from(wrongKind)).toThrow(
    new RangeError("IpcMemoryHandle.from: parameter 'data' is not of this kind of handle (it starts with 'CBPB', not 'CBIM')"),
  );
  const v2 = desc.toBuffer();
  v2.writeUInt32LE(2, 4);
  expect(() => core.IpcBufferDescriptor.from(v2)).toThrow(
    new RangeError("IpcBufferDescriptor.from: parameter 'data' has format version 2; this library reads version 1"),
  );
  expect(() => core.IpcEventHandle.from('not base64!')).toThrow(
    new TypeError("IpcEventHandle.from: parameter 'data' must be base64 text or bytes; the string is not base64"),
  );
  expect(() => core.IpcEventHandle.from(42 as never)).toThrow(
    new TypeError("IpcEventHandle.from: parameter 'data' must be a Buffer, a Uint8Array or base64 text, got 42"),
  );
  expect(() => new core.IpcBufferDescriptor(new Uint8Array(8), 1)).toThrow(
    new TypeError("IpcBufferDescriptor: parameter 'bytes' must be 64 bytes, got 8 bytes"),
  );
});

test('IpcMemoryHandle.from refuses a size and offset whose sum passes Number.MAX_SAFE_INTEGER', () => {
  const data = Buffer.alloc(88);
  data.write('CBIM', 'latin1');
  data.writeUInt32LE(1, 4);
  data.writeBigUInt64LE(BigInt(Number.MAX_SAFE_INTEGER), 8);
  data.writeBigUInt64LE(4096n, 16);
  expect(() => core.IpcMemoryHandle.from(data)).toThrow(
    new RangeError(
      "IpcMemoryHandle.from: parameter 'data' claims 9007199254740991 bytes at offset 4096, more than any allocation (9007199254740991 bytes)",
    ),
  );
});

test('IpcMemoryHandle.open refuses a handle that claims more than the allocation it opens holds, and closes the mapping first', () => {
  const out = run(`
    const d = core.Device.get(0);
    const small = d.allocate(16);
    const exported = core.IpcMemoryHandle.export(small).toBuffer();
    const forged = (size, offset) => {
      const b = Buffer.from(exported);
      b.writeBigUInt64LE(BigInt(size), 8);
      b.writeBigUInt64LE(BigInt(offset), 16);
      return core.IpcMemoryHandle.from(b);
    };
    const [opens, closes] = [calls('cudaIpcOpenMemHandle'), calls('cudaIpcCloseMemHandle')];
    const errors = [];
    for (const [size, offset] of [[1 << 20, 0], [16, 4096], [8, 9]]) {
      try { forged(size, offset).open(d); errors.push('opened'); } catch (e) { errors.push(e.name + ': ' + e.message); }
    }
    const r = { errors, opened: calls('cudaIpcOpenMemHandle') - opens, closed: calls('cudaIpcCloseMemHandle') - closes };
    const whole = forged(16, 0).open(d);
    const tail = forged(8, 8).open(d);
    r.valid = [whole.size, tail.size, Number(tail.ptr - whole.ptr)];
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    errors: [
      'RangeError: IpcMemoryHandle.open: the handle claims 1048576 bytes at offset 0, but the allocation it opens holds 16 bytes',
      'RangeError: IpcMemoryHandle.open: the handle claims 16 bytes at offset 4096, but the allocation it opens holds 16 bytes',
      'RangeError: IpcMemoryHandle.open: the handle claims 8 bytes at offset 9, but the allocation it opens holds 16 bytes',
    ],
    opened: 3,
    closed: 3,
    valid: [16, 8, 8],
  });
});

test('IpcMemoryPool.importBuffer refuses a descriptor that claims more than the allocation it opens holds (from the pointer to its end), and frees the mapping first', () => {
  const out = run(`
    const d = core.Device.get(0);
    const s = d.createStream();
    const pool = core.IpcMemoryPool.create(d);
    const buf = pool.allocate(16, s);
    const exported = pool.exportBuffer(buf).toBuffer();
    const other = core.IpcMemoryPool.import(7, d);
    // the fake's descriptor is the pointer (at byte 16 of the serialised form, after the size)
    const forged = (size, at) => {
      const b = Buffer.from(exported);
      b.writeBigUInt64LE(BigInt(size), 8);
      b.writeBigUInt64LE(buf.ptr + BigInt(at), 16);
      return core.IpcBufferDescriptor.from(b);
    };
    const frees = calls('cudaFreeAsync');
    const errors = [];
    for (const [size, at] of [[1 << 20, 0], [16, 8]]) {
      try { other.importBuffer(forged(size, at), s); errors.push('opened'); } catch (e) { errors.push(e.name + ': ' + e.message); }
    }
    const r = { errors, freed: calls('cudaFreeAsync') - frees };
    r.valid = [other.importBuffer(core.IpcBufferDescriptor.from(exported), s).size, other.importBuffer(forged(8, 8), s).size];
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    errors: [
      "RangeError: IpcMemoryPool.importBuffer: parameter 'descriptor' claims 1048576 bytes, but the allocation it opens holds 16 bytes",
      "RangeError: IpcMemoryPool.importBuffer: parameter 'descriptor' claims 16 bytes, but the allocation it opens holds 8 bytes",
    ],
    freed: 2,
    valid: [16, 8],
  });
});

test('pool buffers are freed once: by close() on their stream (the legacy one once it is closed), after the last hold, or by the collector', () => {
  const out = run(`
    const { holdAll } = require('./src/core/base/lifetime');
    const lastStream = koffi.load(process.env.CUDA_BINDINGS_CUDART).func('void *fake_last_free_stream(void)');
    const streamOfLastFree = () => { const p = lastStream(); return p === null ? null : String(koffi.address(p)); };
    const d = core.Device.get(0), s = d.createStream(), pool = d.memoryPool;
    const freed = (f) => { const before = calls('cudaFreeAsync'); f(); return calls('cudaFreeAsync') - before; };
    const r = {};
    const a = pool.allocate(64, s);
    r.closeTwice = [freed(() => a.close()), streamOfLastFree() === String(s.handle), freed(() => a.close())];
    const s2 = d.createStream(), b = pool.allocate(64, s2);
    s2.close();
    r.afterStreamClosed = [freed(() => b.close()), streamOfLastFree()];
    // Held (as an executable graph holds what its nodes use): closed at once, freed by the last let-go.
    const c = pool.allocate(64, s), letGo = holdAll([c]);
    r.held = [freed(() => c.close()), c.isClosed, freed(letGo), freed(letGo)];
    // Held once and let go before close(): close() frees at once.
    const e = pool.allocate(64, s);
    holdAll([e])();
    r.letGoFirst = freed(() => e.close());
    // More than a batch of waiting resources (256), open and closed alternately: the open ones go to the collector.
    let before = calls('cudaFreeAsync');
    for (let i = 0; i < 300; i++) { pool.allocate(64, s); pool.allocate(64, s).close(); }
    r.closedInLoop = calls('cudaFreeAsync') - before;
    before = calls('cudaFreeAsync');
    for (let i = 0; i < 50 && calls('cudaFreeAsync') - before < 300; i++) { global.gc(); await new Promise((res) => setTimeout(res, 10)); }
    r.collected = calls('cudaFreeAsync') - before;
    // A hook installed after the allocation sees its free, by its allocator's name and size.
    const seen = [];
    class Recorder extends core.MemoryHook {}
    Recorder.prototype.freePre = (ev) => seen.push([ev.allocator, ev.size]);
    const f = pool.allocate(48, s);
    const hook = new Recorder();
    f.close();
    hook.close();
    r.hookSaw = seen;
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    closeTwice: [1, true, 0],
    afterStreamClosed: [1, null],
    held: [0, true, 1, 0],
    letGoFirst: 1,
    closedInLoop: 300,
    collected: 300,
    hookSaw: [['MemoryPool', 48]],
  });
});

test('a hook installs at construction unless told not to, close() uninstalls, with() restores the state it found', () => {
  class Quiet extends core.MemoryHook {}
  const a = new Quiet();
  expect(a.isInstalled).toBe(true);
  a.close();
  a.close();
  expect(a.isInstalled).toBe(false);
  const b = new Quiet({ install: false });
  expect(b.with(() => b.isInstalled)).toBe(true);
  expect(b.isInstalled).toBe(false);
  expect(() =>
    b.with(() => {
      throw new Error('inside');
    }),
  ).toThrow('inside');
  expect(b.isInstalled).toBe(false);
  b.install();
  b.with(() => undefined);
  expect(b.isInstalled).toBe(true);
  b.close();
  expect(() => b.with(42 as never)).toThrow(new TypeError("Quiet.with: parameter 'fn' must be a function, got 42"));
  expect(() => new core.DebugPrintHook({ write: 'stdout' as never })).toThrow(
    new TypeError('DebugPrintHook: option \'write\' must be a function, got the string "stdout"'),
  );
});

test('VirtualBuffer: reserve, map, grant access; resize maps more at the same address; close unmaps, releases, then frees the ranges', () => {
  const out = run(`
    const d = core.Device.get(0);
    const vmr = new core.VirtualMemoryResource(d);
    const buf = vmr.allocate(3 << 20, { reserve: 8 << 20 });
    const start = buf.ptr;
    const first = [vmr.granularity, buf.size, buf.mappedBytes, buf.reservedBytes, buf.kind];
    buf.resize(6 << 20);               // within the reservation
    buf.resize(10 << 20);              // past it: the range after it is reserved too
    const grown = [buf.ptr === start, buf.size, buf.mappedBytes, buf.reservedBytes];
    buf.resize(1 << 20);               // shrinking keeps the mapping
    const shrunk = [buf.size, buf.mappedBytes];
    refuse(1);
    let refused = null;
    try { buf.resize(20 << 20); } catch (e) { refused = e.constructor.name + ': ' + e.message; }
    refuse(0);
    buf.close();
    const calls = driverLog().split(';').filter(Boolean);
    let badSize = null;
    try { vmr.allocate(0); } catch (e) { badSize = e.message; }
    let closed = null;
    try { buf.resize(1); } catch (e) { closed = e.message; }
    console.log(JSON.stringify({ first, grown, shrunk, refused, calls, badSize, closed }));`) as Record<string, unknown>;
  const MiB = 1 << 20;
  expect(out.first).toEqual([2 * MiB, 3 * MiB, 4 * MiB, 8 * MiB, 'virtual']);
  expect(out.grown).toEqual([true, 10 * MiB, 10 * MiB, 10 * MiB]);
  expect(out.shrunk).toEqual([MiB, 10 * MiB]);
  expect(out.refused).toBe(
    "RangeError: VirtualBuffer.resize: the 10485760 bytes reserved are full and the address range after them is taken; allocate with a larger 'reserve' to grow to 20971520 bytes",
  );
  const a = 0x7f0000000000;
  const h = (n: number) => n.toString(16);
  expect(out.calls).toEqual([
    `reserve ${h(a)} ${h(8 * MiB)}`,
    `create 1 ${h(4 * MiB)}`,
    `map ${h(a)} 1`,
    `access ${h(a)} 1`,
    `create 2 ${h(2 * MiB)}`,
    `map ${h(a + 4 * MiB)} 2`,
    `access ${h(a + 4 * MiB)} 1`,
    `reserve ${h(a + 8 * MiB)} ${h(2 * MiB)}`,
    `create 3 ${h(4 * MiB)}`,
    `map ${h(a + 6 * MiB)} 3`,
    `access ${h(a + 6 * MiB)} 1`,
    // refused: the driver gave another address, which is freed again
    `reserve ${h(a + 2 ** 40)} ${h(10 * MiB)}`,
    `addressFree ${h(a + 2 ** 40)} ${h(10 * MiB)}`,
    // close: every chunk unmapped and released, then the ranges freed
    `unmap ${h(a)} ${h(4 * MiB)}`,
    'release 1 0',
    `unmap ${h(a + 4 * MiB)} ${h(2 * MiB)}`,
    'release 2 0',
    `unmap ${h(a + 6 * MiB)} ${h(4 * MiB)}`,
    'release 3 0',
    `addressFree ${h(a)} ${h(8 * MiB)}`,
    `addressFree ${h(a + 8 * MiB)} ${h(2 * MiB)}`,
  ]);
  expect(out.badSize).toBe("VirtualMemoryResource.allocate: parameter 'size' must be a positive integer, got 0");
  expect(out.closed).toBe('VirtualBuffer.resize: the VirtualBuffer was closed');
});

test("VirtualBuffer: hooks see a resized buffer's free with the size and the mapped bytes it has then", () => {
  const out = run(`
    const d = core.Device.get(0);
    const seen = [];
    class Watch extends core.MemoryHook { freePost(e) { seen.push([e.allocator, e.size, e.memSize]); } }
    const hook = new Watch();
    const grown = new core.VirtualMemoryResource(d).allocate(3 << 20, { reserve: 16 << 20 });
    grown.resize(10 << 20);
    grown.close();
    const shrunk = new core.VirtualMemoryResource(d).allocate(5 << 20);
    shrunk.resize(1 << 20);
    shrunk.close();
    hook.close();
    console.log(JSON.stringify(seen));`);
  const MiB = 1 << 20;
  // Grown: the 10 MiB it holds at close, all mapped; shrunk: the 1 MiB asked for, the 6 MiB still mapped.
  expect(out).toEqual([
    ['VirtualMemoryResource', 10 * MiB, 10 * MiB],
    ['VirtualMemoryResource', MiB, 6 * MiB],
  ]);
});

test("names looked up in a table are the table's own: Object.prototype's are refused, and the message lists the names", () => {
  const out = run(`
    const d = core.Device.get(0);
    const errors = [];
    const t = (f) => { try { f(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    t(() => new core.VirtualMemoryResource(d, { handleType: 'constructor' }));
    const buf = new core.VirtualMemoryResource(d).allocate(1 << 20);
    t(() => buf.setAccess(d, 'toString'));
    buf.close();
    t(() => core.Context.create(d, { scheduling: 'constructor' }));
    const ctx = core.Context.primary(d);
    t(() => ctx.getLimit('__proto__'));
    t(() => ctx.setLimit('constructor', 1));
    t(() => { ctx.cacheConfig = 'valueOf'; });
    t(() => { ctx.sharedMemConfig = 'hasOwnProperty'; });
    ctx.close();
    console.log(JSON.stringify(errors));`);
  const limits =
    "'stackSize', 'printfFifoSize', 'mallocHeapSize', 'devRuntimeSyncDepth', 'devRuntimePendingLaunchCount', 'maxL2FetchGranularity', 'persistingL2CacheSize'";
  expect(out).toEqual([
    "RangeError: VirtualMemoryResource: option 'handleType' must be one of 'none', 'posixFd', 'fabric', got the string \"constructor\"",
    "RangeError: VirtualBuffer.setAccess: parameter 'access' must be one of 'readwrite', 'read', 'none', got the string \"toString\"",
    "RangeError: Context.create: option 'scheduling' must be one of 'auto', 'spin', 'yield', 'blockingSync', got the string \"constructor\"",
    `RangeError: Context.getLimit: parameter 'limit' must be one of ${limits}, got the string "__proto__"`,
    `RangeError: Context.setLimit: parameter 'limit' must be one of ${limits}, got the string "constructor"`,
    "RangeError: Context.cacheConfig: the value must be one of 'none', 'shared', 'l1', 'equal', got the string \"valueOf\"",
    "RangeError: Context.sharedMemConfig: the value must be one of 'default', 'fourByte', 'eightByte', got the string \"hasOwnProperty\"",
  ]);
});

test('new classes refuse bad input by method and parameter before any call', () => {
  expect(() => new core.VirtualMemoryResource({} as never)).toThrow(
    new TypeError("VirtualMemoryResource: parameter 'device' must be a Device, got an object (Object)"),
  );
  expect(() => core.Context.create(3 as never)).toThrow(new TypeError("Context.create: parameter 'device' must be a Device, got 3"));
  expect(() => core.Context.primary(null as never)).toThrow(
    new TypeError("Context.primary: parameter 'device' must be a Device, got null"),
  );
  expect(() => core.DeviceResources.of('0' as never)).toThrow(
    new TypeError('DeviceResources.of: parameter \'device\' must be a Device, got the string "0"'),
  );
  expect(() => core.IpcMemoryPool.create({} as never)).toThrow(
    new TypeError("IpcMemoryPool.create: parameter 'device' must be a Device, got an object (Object)"),
  );
  // The driver reads the descriptor as a C int: nothing outside [0, 2^31 - 1] may reach it.
  const fdRange = "IpcMemoryPool.import: parameter 'fd' must be a file descriptor (an integer within [0, 2147483647])";
  expect(() => core.IpcMemoryPool.import(-1)).toThrow(new RangeError(`${fdRange}, got -1`));
  expect(() => core.IpcMemoryPool.import(2 ** 31)).toThrow(new RangeError(`${fdRange}, got 2147483648`));
  expect(() => core.IpcMemoryPool.import(2 ** 64)).toThrow(new RangeError(`${fdRange}, got 18446744073709552000`));
  expect(() => core.IpcMemoryPool.import(3.5)).toThrow(new RangeError(`${fdRange}, got 3.5`));
  expect(() => core.IpcMemoryPool.import(3n as never)).toThrow(new RangeError(`${fdRange}, got 3n`));
  expect(() => core.ManagedMemoryPool.create(undefined as never)).toThrow(
    new TypeError("ManagedMemoryPool.create: parameter 'device' must be a Device, got undefined"),
  );
  expect(() => core.IpcMemoryHandle.export({} as never)).toThrow(
    new TypeError("IpcMemoryHandle.export: parameter 'buffer' must be a DeviceBuffer, got an object (Object)"),
  );
  expect(() => core.IpcEventHandle.export(null as never)).toThrow(
    new TypeError("IpcEventHandle.export: parameter 'event' must be an Event, got null"),
  );
});

test('closed objects passed in are refused before any handle reaches C', () => {
  const out = run(`
    const d = core.Device.get(0);
    const s = d.createStream();
    s.close();
    const errors = [];
    const pool = core.IpcMemoryPool.create(d);
    for (const f of [() => pool.allocate(16, s), () => pool.importBuffer(new core.IpcBufferDescriptor(new Uint8Array(64), 16), s)]) {
      try { f(); } catch (e) { errors.push(e.message); }
    }
    const ev = d.createEvent({ interprocess: true });
    ev.close();
    try { core.IpcEventHandle.export(ev); } catch (e) { errors.push(e.message); }
    pool.close();
    try { pool.exportHandle(); } catch (e) { errors.push(e.message); }
    console.log(JSON.stringify({ errors, poolAllocs: calls('cudaMallocFromPoolAsync') }));`);
  expect(out).toEqual({
    errors: [
      "IpcMemoryPool.allocate: parameter 'stream' was closed",
      "IpcMemoryPool.importBuffer: parameter 'stream' was closed",
      "IpcEventHandle.export: parameter 'event' was closed",
      'IpcMemoryPool.exportHandle: the IpcMemoryPool was closed',
    ],
    poolAllocs: 0,
  });
});

test('Context: create pushes it, push/pop keep the stack, pop refuses a context not on top, run() pushes around a call, limits and cache config by name', () => {
  const out = run(`
    const d = core.Device.get(0);
    clearLog();
    const top = () => { const c = core.Context.current(); return c ? '0x' + c.handle.toString(16) : null; };
    const r = { start: top() };
    const ctx = core.Context.create(d, { scheduling: 'blockingSync' });
    r.created = ['0x' + ctx.handle.toString(16), top(), ctx.kind, ctx.apiVersion];
    const primary = core.Context.primary(d);
    primary.push();
    r.pushed = top();
    try { ctx.pop(); } catch (e) { r.wrongPop = e.message; }
    primary.pop();
    r.popped = top();
    ctx.pop();
    r.afterPop = top();
    ctx.setLimit('mallocHeapSize', 1 << 20);  // pushed for the call, popped after
    r.limit = [ctx.getLimit('mallocHeapSize'), top()];
    ctx.cacheConfig = 'l1';
    r.cache = ctx.cacheConfig;
    ctx.synchronize();
    for (const f of [() => ctx.getLimit('stack'), () => ctx.setLimit('stackSize', -1), () => { ctx.cacheConfig = 'big'; }, () => core.Context.create(d, { scheduling: 'busy' })]) {
      try { f(); r.missing = true; } catch (e) { (r.bad ??= []).push(e.constructor.name + ': ' + e.message); }
    }
    ctx.close();
    primary.close();
    try { ctx.push(); } catch (e) { r.closed = e.message; }
    r.log = driverLog().split(';').filter(Boolean);
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    start: '0xc0',
    created: ['0xd14', '0xd14', 'created', 3020],
    pushed: '0xc0',
    wrongPop: 'Context.pop: this context is not the current one (the current is 0xc0); pop the contexts pushed after it first',
    popped: '0xd14',
    afterPop: '0xc0',
    limit: [1 << 20, '0xc0'],
    cache: 'l1',
    bad: [
      "RangeError: Context.getLimit: parameter 'limit' must be one of 'stackSize', 'printfFifoSize', 'mallocHeapSize', 'devRuntimeSyncDepth', 'devRuntimePendingLaunchCount', 'maxL2FetchGranularity', 'persistingL2CacheSize', got the string \"stack\"",
      "RangeError: Context.setLimit: parameter 'value' must be a non-negative integer, got -1",
      "RangeError: Context.cacheConfig: the value must be one of 'none', 'shared', 'l1', 'equal', got the string \"big\"",
      "RangeError: Context.create: option 'scheduling' must be one of 'auto', 'spin', 'yield', 'blockingSync', got the string \"busy\"",
    ],
    closed: 'Context.push: the Context was closed',
    log: ['create-ctx d14 4', 'retain 0 0', 'setLimit d14 2', 'sync d14 0', 'destroy-ctx d14 0', 'release-primary 0 0'],
  });
});

test('DeviceResources: SMs queried and split; a green context from a group, its stream closed before it, its Context refused once it is closed', () => {
  const out = run(`
    const d = core.Device.get(0);
    const res = core.DeviceResources.of(d);
    const all = res.sm;
    const { groups, remaining } = res.splitSM(66);
    const two = res.splitSM(30, 4);
    clearLog();
    const green = res.createGreenContext(groups[0]);
    const stream = green.createStream({ priority: -1 });
    const ctx = green.context;
    const r = { all: [all.smCount, all.minPartitionSize, all.coscheduledAlignment], half: [groups.length, groups[0].smCount, remaining.smCount], four: [two.groups.map((g) => g.smCount), two.remaining.smCount], green: [green.smCount, '0x' + ctx.handle.toString(16), stream.handle] };
    const destroysBefore = calls('cudaStreamDestroy');
    green.close();
    r.streamClosed = [stream.isClosed, calls('cudaStreamDestroy') - destroysBefore];
    try { ctx.push(); } catch (e) { r.ctxAfter = e.message; }
    try { green.createStream(); } catch (e) { r.streamAfter = e.message; }
    for (const f of [() => res.splitSM(0), () => res.splitSM(8, 1.5), () => res.createGreenContext([]), () => res.splitSM(8, 1, {})]) {
      try { f(); } catch (e) { (r.bad ??= []).push(e.constructor.name + ': ' + e.message); }
    }
    r.log = driverLog().split(';').filter(Boolean);
    console.log(JSON.stringify(r, (k, v) => typeof v === 'bigint' ? '0x' + v.toString(16) : v));`);
  expect(out).toEqual({
    all: [132, 8, 8],
    half: [1, 72, 60],
    four: [[32, 32, 32, 32], 4],
    green: [72, '0x9c0', '0x5700'],
    streamClosed: [true, 1],
    ctxAfter: 'Context.push: the green context this context belongs to was closed',
    streamAfter: 'GreenContext.createStream: the GreenContext was closed',
    bad: [
      "RangeError: DeviceResources.splitSM: parameter 'minCount' must be a positive integer, got 0",
      "RangeError: DeviceResources.splitSM: parameter 'groups' must be a positive integer, got 1.5",
      "TypeError: DeviceResources.createGreenContext: parameter 'resources' must be an SMResource or a non-empty array of them",
      "TypeError: DeviceResources.splitSM: parameter 'from' must be an SMResource, got an object (Object)",
    ],
    // CU_GREEN_CTX_DEFAULT_STREAM (1); green streams are CU_STREAM_NON_BLOCKING (1)
    log: ['desc 48 1', 'green de5c 1', 'green-stream 1 ffffffffffffffff', 'green-destroy 9a0 0'],
  });
});

test('ManagedMemoryPool: a managed pool (allocation type managed) whose buffers are managed memory; a clear error without concurrent managed access', () => {
  const out = run(`
    const lib = koffi.load(process.env.CUDA_BINDINGS_CUDART);
    const props = lib.func('long fake_pool_props(void)');
    const concurrent = lib.func('void fake_concurrent(int)');
    const d = core.Device.get(0);
    const s = d.createStream();
    const pool = core.ManagedMemoryPool.create(d);
    const r = { props: Number(props()) };
    const b = pool.allocate(4096, s);
    b.prefetch(d, s);
    r.buffer = [b.kind, b.size, calls('cudaMemPrefetchAsync')];
    b.close();
    pool.close();
    s.close();
    try { pool.allocate(16, s); } catch (e) { r.closedPool = e.message; }
    const pool2 = core.ManagedMemoryPool.create(d);
    try { pool2.allocate(16, s); } catch (e) { r.closedStream = e.message; }
    pool2.close();
    concurrent(0);
    try { core.ManagedMemoryPool.create(d); } catch (e) { r.unsupported = [e.constructor.name, e.code, e.message]; }
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    props: 200 + 1, // cudaMemAllocationTypeManaged, cudaMemLocationTypeDevice
    buffer: ['managed', 4096, 1],
    closedPool: 'ManagedMemoryPool.allocate: the ManagedMemoryPool was closed',
    closedStream: "ManagedMemoryPool.allocate: parameter 'stream' was closed",
    unsupported: [
      'CudaError',
      801,
      'cudaErrorNotSupported: managed memory pools are not supported here: device 0 has no concurrent managed access (cudaDevAttrConcurrentManagedAccess is 0) (in ManagedMemoryPool.create)',
    ],
  });
});

test('Device.createMemoryPool: host and host-NUMA pools of pinned memory, granted to the device; the node nearest the device by default; bad options refused', () => {
  const out = run(`
    const lib = koffi.load(process.env.CUDA_BINDINGS_CUDART);
    const props = lib.func('long fake_pool_props(void)');
    const locId = lib.func('long fake_pool_location_id(void)');
    const access = lib.func('long fake_pool_access(void)');
    const numa = lib.func('void fake_host_numa_id(int)');
    const d = core.Device.get(0);
    const s = d.createStream();
    const seen = (p) => [p.location, p.numaNode, Number(props()), Number(locId()), Number(access())];
    const r = {};
    const devicePool = d.createMemoryPool();
    r.device = seen(devicePool);
    const host = d.createMemoryPool({ location: 'host' });
    r.host = seen(host);
    const explicit = d.createMemoryPool({ location: 'hostNuma', numaNode: 3 });
    r.explicit = seen(explicit);
    numa(2);
    const nearest = d.createMemoryPool({ location: 'hostNuma' });
    r.nearest = seen(nearest);
    const b = nearest.allocate(4096, s);
    r.buffer = [b.kind, b.size];
    b.close();
    numa(-1);
    for (const [k, o] of Object.entries({
      noNode: { location: 'hostNuma' },
      badLocation: { location: 'numa' },
      nodeWithoutNuma: { location: 'host', numaNode: 0 },
      negativeNode: { location: 'hostNuma', numaNode: -1 },
    })) {
      try { d.createMemoryPool(o); r[k] = 'no error'; } catch (e) { r[k] = e.constructor.name + ': ' + e.message; }
    }
    for (const p of [devicePool, host, explicit, nearest]) p.close();
    s.close();
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    // [location, numaNode, allocType*100 + location type, location id, last cudaMemPoolSetAccess]
    device: ['device', null, 100 + 1, 0, -1],
    host: ['host', null, 100 + 2, 0, 1 * 10000 + 1 * 1000 + 0 * 10 + 3], // one grant: device 0, read-write
    explicit: ['hostNuma', 3, 100 + 3, 3, 10000 + 1000 + 3],
    nearest: ['hostNuma', 2, 100 + 3, 2, 10000 + 1000 + 3],
    buffer: ['pool', 4096],
    noNode:
      "RangeError: Device.createMemoryPool: location 'hostNuma' without 'numaNode' needs the device's host NUMA node, and device 0 reports none (HostNumaId -1); pass 'numaNode'",
    badLocation:
      "RangeError: Device.createMemoryPool: option 'location' must be one of 'device', 'host', 'hostNuma', got the string \"numa\"",
    nodeWithoutNuma: "TypeError: Device.createMemoryPool: option 'numaNode' goes only with location 'hostNuma', not 'host'",
    negativeNode: "RangeError: Device.createMemoryPool: option 'numaNode' must be a non-negative integer, got -1",
  });
});

test('IpcMemoryPool: exported as a descriptor (POSIX fd handle type), imported from one; buffers shared by base64 descriptors; an imported pool does not allocate', () => {
  const out = run(`
    const imported = koffi.load(process.env.CUDA_BINDINGS_CUDART).func('long fake_imported_handle(void)');
    const d = core.Device.get(0);
    const s = d.createStream();
    const pool = core.IpcMemoryPool.create(d);
    const fd = pool.exportHandle();
    const buf = pool.allocate(4096, s);
    const text = pool.exportBuffer(buf).toBase64();
    const other = core.IpcMemoryPool.import(7, d);
    const opened = other.importBuffer(core.IpcBufferDescriptor.from(text), s);
    const r = { fd, importedWith: Number(imported()), isImported: [pool.isImported, other.isImported], opened: [opened.ptr === buf.ptr, opened.size, opened.kind] };
    try { other.allocate(16, s); } catch (e) { r.importedAllocate = e.message; }
    try { pool.exportBuffer(buf.slice(16)); } catch (e) { r.slice = e.message; }
    try { pool.exportBuffer(d.allocate(16)); } catch (e) { r.plain = e.message; }
    const frees = calls('cudaFreeAsync');
    opened.close(); buf.close();
    r.freed = calls('cudaFreeAsync') - frees;
    other.close(); pool.close();
    r.destroyed = calls('cudaMemPoolDestroy');
    core.IpcMemoryPool.import(2 ** 31 - 1, d).close();
    r.largestFd = Number(imported());
    console.log(JSON.stringify(r));`);
  expect(out).toEqual({
    fd: 41, // 40 + cudaMemHandleTypePosixFileDescriptor
    importedWith: 71, // descriptor 7, handle type 1: the descriptor itself is the handle
    isImported: [false, true],
    opened: [true, 4096, 'ipc'],
    importedAllocate:
      'IpcMemoryPool.allocate: this pool was imported from another process; only its owner allocates (open its buffers with importBuffer)',
    slice: "IpcMemoryPool.exportBuffer: parameter 'buffer' must be an allocation of this pool, not a slice",
    plain: "IpcMemoryPool.exportBuffer: parameter 'buffer' must be an allocation of this pool, not device memory",
    freed: 2,
    destroyed: 2,
    largestFd: (2 ** 31 - 1) * 10 + 1, // the largest C int descriptor reaches the driver whole
  });
});

test('a hook that throws before an allocation stops it (no cudaMalloc); one that throws before a free does not keep the memory', () => {
  const out = run(`
    const d = core.Device.get(0);
    class Refuse extends core.MemoryHook { mallocPre() { throw new Error('no more memory for you'); } }
    const refuse = new Refuse();
    let refused = null;
    try { d.allocate(8); } catch (e) { refused = e.message; }
    refuse.close();
    const mallocs = calls('cudaMalloc');
    const b = d.allocate(8);
    class Grumpy extends core.MemoryHook { freePre() { throw new Error('grr'); } }
    const grumpy = new Grumpy();
    const frees = calls('cudaFree');
    b.close();
    grumpy.close();
    console.log(JSON.stringify({ refused, mallocs, freed: calls('cudaFree') - frees, closed: b.isClosed }));`);
  expect(out).toEqual({ refused: 'no more memory for you', mallocs: 0, freed: 1, closed: true });
});

test('VirtualBuffer sharing: exportHandles gives a descriptor per chunk; importHandles maps them in order into one range, unmapped and released at close', () => {
  const out = run(`
    const d = core.Device.get(0);
    const vmr = new core.VirtualMemoryResource(d, { handleType: 'posixFd' });
    const buf = vmr.allocate(2 << 20, { reserve: 8 << 20 });
    buf.resize(6 << 20);
    clearLog();
    const handles = buf.exportHandles();
    const seen = [];
    class Watch extends core.MemoryHook { freePost(e) { seen.push(e.allocator); } }
    const watch = new Watch();
    const imported = vmr.importHandles(handles);
    const r = { handles, imported: [imported.size, imported.mappedBytes, imported.kind] };
    imported.close();
    watch.close();
    r.hookedFrees = seen.length;
    r.log = driverLog().split(';').filter(Boolean);
    for (const f of [() => vmr.importHandles([]), () => vmr.importHandles([{ fd: -1, size: 2 << 20 }]), () => vmr.importHandles([{ fd: 2 ** 32 + 3, size: 2 << 20 }]), () => vmr.importHandles([{ fd: 3, size: 1000 }]), () => vmr.importHandles([3]), () => new core.VirtualMemoryResource(d).allocate(1).exportHandles()]) {
      try { f(); } catch (e) { (r.bad ??= []).push(e.constructor.name + ': ' + e.message); }
    }
    buf.close();
    console.log(JSON.stringify(r));`) as Record<string, unknown>;
  const MiB = 1 << 20;
  expect(out.handles).toEqual([
    { fd: 51, size: 2 * MiB },
    { fd: 52, size: 4 * MiB },
  ]);
  expect(out.imported).toEqual([6 * MiB, 6 * MiB, 'virtual']);
  expect(out.hookedFrees).toBe(0); // an import is no allocation of this process
  const r = (out.log as string[]).find((l) => l.startsWith('reserve'))!.split(' ')[1];
  const at = BigInt(`0x${r}`);
  const h = (n: bigint) => n.toString(16);
  expect(out.log).toEqual([
    'export 1 33',
    'export 2 34',
    `reserve ${r} ${h(6n * 1048576n)}`,
    'import 33 97',
    `map ${r} 97`,
    `access ${r} 1`,
    'import 34 98',
    `map ${h(at + 2n * 1048576n)} 98`,
    `access ${h(at + 2n * 1048576n)} 1`,
    `unmap ${r} ${h(2n * 1048576n)}`,
    'release 97 0',
    `unmap ${h(at + 2n * 1048576n)} ${h(4n * 1048576n)}`,
    'release 98 0',
    `addressFree ${r} ${h(6n * 1048576n)}`,
  ]);
  expect(out.bad).toEqual([
    "TypeError: VirtualMemoryResource.importHandles: parameter 'handles' must be a non-empty array of { fd, size }",
    "RangeError: VirtualMemoryResource.importHandles: parameter 'handles[0].fd' must be a file descriptor (an integer within [0, 2147483647]), got -1",
    "RangeError: VirtualMemoryResource.importHandles: parameter 'handles[0].fd' must be a file descriptor (an integer within [0, 2147483647]), got 4294967299",
    "RangeError: VirtualMemoryResource.importHandles: parameter 'handles[0].size' must be a positive multiple of the granularity (2097152), got 1000",
    "RangeError: VirtualMemoryResource.importHandles: parameter 'handles[0].fd' must be a file descriptor (an integer within [0, 2147483647]), got undefined",
    "Error: VirtualBuffer.exportHandles: the resource was made with handleType 'none'; exporting needs handleType 'posixFd'",
  ]);
});
