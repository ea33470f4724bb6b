// Core, part 4 (second half) on a GPU: the caching allocator's split and merge over real device and
// managed memory, memory resources (a user's, and graph memory during stream capture), the pool's
// reuse flags, zero-byte pinned memory, LineProfileHook's call tree; Program's typed options,
// backend options, handles and Program.fromHandle with NVRTC and libNVVM; the Linker's new nvJitLink
// options, linkPtx and handle; ObjectCode.fromFile keeping its path.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core, cudart, nvrtc, nvvm, nvjitlink } from '../../src';
import { describeGpu } from './helpers';
import { KERNEL_CU, MATH_CU } from './fixtures/affine-units';

const { Device, Program, Linker, ObjectCode, CachingAllocator, GraphMemoryResource, DeviceBuffer, f32, i32 } = core;
const U = 512;

const FILL_CU =
  'extern "C" __global__ void fillWith(int *x, int v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }\n';

/** Launches applyAffine(x, y, 3, -1, n) of `mod`; returns how many y differ from 3x - 1 by more than a rounding. */
function affineMismatches(mod: core.Module, n = 4099): number {
  const d = Device.get(0);
  const x = Float32Array.from({ length: n }, (_, i) => (i % 977) / 4);
  const dx = d.allocate(4 * n).copyFrom(x);
  const dy = d.allocate(4 * n);
  mod.kernel('applyAffine').launch({ grid: Math.ceil(n / 256), block: 256 }, dx, dy, f32(3), f32(-1), i32(n));
  const y = dy.copyTo(new Float32Array(n));
  dx.close();
  dy.close();
  let bad = 0;
  for (let i = 0; i < n; i++) if (Math.abs(y[i] - (3 * x[i] - 1)) > 1e-4 * Math.max(1, Math.abs(y[i]))) bad++;
  return bad;
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'core-part4b-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describeGpu('core part 4: memory the CuPy and cuda.core way', () => {
  test.each(['device', 'managed'] as const)(
    'CachingAllocator over %s memory: a freed block splits into two that hold their own data, and merges back (CuPy test_alloc_split, test_free_merge)',
    (memory) => {
      const d = Device.get(0);
      const alloc = new CachingAllocator({ memory });
      const whole = alloc.allocate(U * 4, { device: d });
      const base = whole.ptr;
      whole.close();
      const head = alloc.allocate(U * 2, { device: d });
      const tail = alloc.allocate(U * 2, { device: d });
      expect([head.ptr === base, tail.ptr === base + BigInt(U * 2), head.kind]).toEqual([
        true,
        true,
        memory === 'managed' ? 'managed' : 'cached',
      ]);
      head.fill(1);
      tail.fill(2);
      expect([head.copyTo(new Uint8Array(U * 2)).every((b) => b === 1), tail.copyTo(new Uint8Array(U * 2)).every((b) => b === 2)]).toEqual([
        true,
        true,
      ]);
      expect([alloc.usedBytes(d), alloc.freeBytes(d), alloc.totalBytes(d), alloc.nFreeBlocks(d)]).toEqual([U * 4, 0, U * 4, 0]);
      tail.close();
      expect([alloc.freeBytes(d), alloc.nFreeBlocks(d)]).toEqual([U * 2, 1]);
      head.close();
      expect([alloc.freeBytes(d), alloc.nFreeBlocks(d)]).toEqual([U * 4, 1]);
      const again = alloc.allocate(U * 4, { device: d });
      expect(again.ptr).toBe(base);
      if (memory === 'managed') again.prefetch(d);
      again.close();
      alloc.freeAllBlocks(d);
      expect([alloc.totalBytes(d), alloc.nFreeBlocks(d)]).toEqual([0, 0]);
    },
  );

  test("CachingAllocator: a stream's blocks stay its own; freeAllBlocks of one stream frees only those (CuPy test_free_stream, test_free_all_blocks_stream)", async () => {
    const d = Device.get(0);
    const s = d.createStream();
    const alloc = new CachingAllocator();
    const a = alloc.allocate(U * 4, { device: d });
    const pa = a.ptr;
    a.close();
    const b = alloc.allocate(U * 4, { device: d, stream: s });
    const pb = b.ptr;
    expect(pb).not.toBe(pa);
    b.close();
    alloc.freeAllBlocks(d, null);
    expect(alloc.totalBytes(d)).toBe(U * 4);
    const c = alloc.allocate(U * 4, { device: d, stream: s });
    expect(c.ptr).toBe(pb);
    c.close();
    await s.synchronize();
    alloc.freeAllBlocks();
    s.close();
    expect(alloc.totalBytes()).toBe(0);
  });

  test('a MemoryResource of the user (stream-ordered cudaMallocAsync): device.allocate and setAllocator use it; close() deallocates on the stream', async () => {
    const d = Device.get(0);
    const s = d.createStream();
    const calls: string[] = [];
    const mr: core.MemoryResource = {
      isDeviceAccessible: true,
      isHostAccessible: false,
      deviceId: d.ordinal,
      allocate(size, stream) {
        calls.push(`allocate ${size}`);
        const ptr = core.check(cudart.cudaMallocAsync(size, stream?.handle ?? null), 'cudaMallocAsync');
        return DeviceBuffer.fromMemoryResource(ptr, size, mr, { stream });
      },
      deallocate(ptr, size, stream) {
        calls.push(`deallocate ${size}`);
        core.check(cudart.cudaFreeAsync(ptr, stream?.handle ?? null), 'cudaFreeAsync');
      },
    };
    const buf = d.allocate(1 << 20, { stream: s, memoryResource: mr });
    expect([buf.memoryResource === mr, buf.kind]).toEqual([true, 'resource']);
    buf.fill(7, { stream: s });
    const host = buf.copyTo(new Uint8Array(16), { stream: s });
    await s.synchronize();
    expect(host.every((b) => b === 7)).toBe(true);
    buf.close();
    const previous = core.setAllocator(mr, d);
    try {
      d.allocate(256).close();
    } finally {
      core.setAllocator(previous, d);
    }
    await s.synchronize();
    s.close();
    expect(calls).toEqual(['allocate 1048576', 'deallocate 1048576', 'allocate 256', 'deallocate 256']);
  });

  test('GraphMemoryResource: graph memory allocated and freed inside a capture, used by a kernel, the result copied out; refused outside a capture', async () => {
    const d = Device.get(0).makeCurrent();
    const gmr = GraphMemoryResource.of(d);
    const s = d.createStream();
    expect(() => d.allocate(4096, { stream: s, memoryResource: gmr })).toThrow(
      /^GraphMemoryResource\.allocate: the stream is not capturing/,
    );
    const mod = Program.compile(FILL_CU, { cache: false }).load();
    const n = 1024;
    const out = d.allocate(4 * n);
    const graph = await s.capture(() => {
      const tmpBuf = d.allocate(4 * n, { stream: s, memoryResource: gmr });
      expect(tmpBuf.memoryResource).toBe(gmr);
      mod.kernel('fillWith').launch({ grid: n / 256, block: 256, stream: s }, tmpBuf, i32(42), i32(n));
      out.copyFrom(tmpBuf, { stream: s });
      tmpBuf.close();
    });
    const exec = graph.instantiate();
    exec.launch(s);
    await s.synchronize();
    expect(out.copyTo(new Int32Array(n)).every((v) => v === 42)).toBe(true);
    expect(gmr.stats.usedHighBytes).toBeGreaterThanOrEqual(4 * n);
    gmr.resetPeaks();
    for (const r of [exec, graph, out, mod, s]) r.close();
    gmr.trim();
  });

  test("MemoryPool's reuse flags read back what was set (cudaMemPoolReuse*)", () => {
    const pool = Device.get(0).createMemoryPool();
    for (const k of ['reuseFollowEventDependencies', 'reuseAllowOpportunistic', 'reuseAllowInternalDependencies'] as const) {
      expect(pool[k]).toBe(true); // CUDA's default
      pool[k] = false;
      expect(pool[k]).toBe(false);
      pool[k] = true;
      expect(pool[k]).toBe(true);
    }
    pool.close();
  });

  test('zero-byte pinned allocations, as in CuPy; LineProfileHook reports a call tree of real allocations', () => {
    const pinned = new core.PinnedMemoryPool();
    const zero = pinned.allocate(0);
    expect([zero.ptr, zero.size, new core.HostBuffer(0).bytes.length]).toEqual([0n, 0, 0]);
    zero.close();
    const d = Device.get(0);
    const alloc = new CachingAllocator();
    const hook = new core.LineProfileHook();
    const take = () => alloc.allocate(3000, { device: d }).close();
    take();
    take();
    hook.close();
    const tree = hook.tree();
    expect([tree.site, tree.usedBytes, tree.acquiredBytes]).toEqual(['_root', 2 * 3072, 3072]);
    expect(hook.formatTree().split('\n')[0]).toBe('_root (6.00KB, 3.00KB)');
    alloc.freeAllBlocks();
  });
});

describeGpu('core part 4: Program, Linker and ObjectCode the cuda.core way', () => {
  test('Program: typed options reach NVRTC as backendOptions says; keepHandle leaves a usable nvrtcProgram until close()', () => {
    const options = { ftz: true, fma: false, lineInfo: true, keepHandle: true };
    const before = Program.backendOptions(options);
    const p = Program.compile(FILL_CU, options);
    expect(before).toEqual({ compiler: 'nvrtc', options: [...p.backendOptions] });
    expect(p.backendOptions.slice(1)).toEqual(['-lineinfo', '--ftz=true', '--fmad=false']);
    const [err, size] = nvrtc.nvrtcGetCUBINSize(p.handle as nvrtc.nvrtcProgram);
    expect([err, size]).toEqual([nvrtc.nvrtcResult.NVRTC_SUCCESS, p.code.length]);
    const mod = p.load();
    const out = Device.get(0).allocate(4 * 256);
    mod.kernel('fillWith').launch({ grid: 1, block: 256 }, out, i32(5), i32(256));
    expect(out.copyTo(new Int32Array(256)).every((v) => v === 5)).toBe(true);
    out.close();
    mod.close();
    p.close();
    expect(p.handle).toBeNull();
  });

  test('Program.fromHandle: an nvrtcProgram made with the facade, compiled and loaded; the caller still owns it', () => {
    const [e, h] = nvrtc.nvrtcCreateProgram(FILL_CU, 'raw.cu', 0, null, null);
    expect(e).toBe(nvrtc.nvrtcResult.NVRTC_SUCCESS);
    const p = Program.fromHandle(h!, { language: 'c++', name: 'raw.cu' });
    expect([p.handle === h, p.compiler.startsWith('nvrtc'), p.target]).toEqual([true, true, 'cubin']);
    const mod = p.load();
    expect(mod.kernel('fillWith')).toBeDefined();
    mod.close();
    p.close();
    expect(nvrtc.nvrtcGetCUBINSize(h!)[0]).toBe(nvrtc.nvrtcResult.NVRTC_SUCCESS); // not destroyed by close()
    expect(nvrtc.nvrtcDestroyProgram(h!)[0]).toBe(nvrtc.nvrtcResult.NVRTC_SUCCESS);
  });

  test('NVVM: typed options in libNVVM spelling, keepHandle, fromHandle (owned) of a program built with the facade; refused options named', () => {
    const [, major, , debugMajor] = nvvm.nvvmIRVersion();
    const ir = `target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @seven(i32 addrspace(1)* %y) {
entry:
  store i32 7, i32 addrspace(1)* %y, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*)* @seven, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 ${major}, i32 0, i32 ${debugMajor}, i32 0}
`;
    const kept = Program.compile(ir, { language: 'nvvm', optimization: 3, ftz: true, fma: true, keepHandle: true });
    expect(kept.backendOptions.slice(1)).toEqual(['-opt=3', '-ftz=1', '-fma=1']);
    expect(nvvm.nvvmGetCompiledResultSize(kept.handle as nvvm.nvvmProgram)[0]).toBe(nvvm.nvvmResult.NVVM_SUCCESS);
    kept.close();
    const [, prog] = nvvm.nvvmCreateProgram();
    const bytes = new TextEncoder().encode(ir);
    expect(nvvm.nvvmAddModuleToProgram(prog, bytes, bytes.length, 'seven.ll')[0]).toBe(nvvm.nvvmResult.NVVM_SUCCESS);
    const p = Program.fromHandle(prog!, { language: 'nvvm', owned: true, precDiv: true });
    expect(p.objectCode.text).toMatch(/\.entry\s+seven/);
    const mod = p.load();
    const y = Device.get(0).allocate(4);
    mod.kernel('seven').launch({ grid: 1, block: 1 }, y);
    expect(y.copyTo(new Int32Array(1))[0]).toBe(7);
    y.close();
    mod.close();
    p.close();
    expect(() => Program.compile(ir, { language: 'nvvm', options: ['-lineinfo'] })).toThrow(/libNVVM does not take '-lineinfo'/);
  });

  test('Linker: LTO-IR links with splitCompile, optimizeUnusedVariables and noCache, to a cubin that computes, and to PTX (linkPtx); keepHandle gives the nvJitLink handle', () => {
    const math = Program.compile(MATH_CU, { name: 'math.cu', target: 'ltoir', cache: false }).objectCode;
    const kernel = Program.compile(KERNEL_CU, { name: 'kernel.cu', target: 'ltoir', cache: false }).objectCode;
    const options = { lto: true, splitCompile: 0, optimizeUnusedVariables: true, noCache: true, keepHandle: true };
    const linker = new Linker(math, kernel, options);
    const { backend, options: flags } = linker.backendOptions();
    expect(backend).toBe('nvJitLink');
    expect(flags.slice(1)).toEqual(['-lto', '-split-compile=0', '-optimize-unused-variables', '-no-cache']);
    const cubin = linker.link();
    const [e, size] = nvjitlink.nvJitLinkGetLinkedCubinSize(linker.handle as nvjitlink.nvJitLinkHandle);
    expect([e, size]).toEqual([nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS, cubin.code.length]);
    const mod = cubin.load();
    expect(affineMismatches(mod)).toBe(0);
    mod.close();
    const ptx = linker.linkPtx();
    expect(ptx.text).toMatch(/\.entry\s+applyAffine/);
    linker.close();
    expect(linker.handle).toBeNull();
    const extended = new Linker(math, kernel, { lto: true, splitCompileExtended: 0, cache: false }).link().load();
    expect(affineMismatches(extended)).toBe(0);
    extended.close();
  });

  test('ObjectCode.fromFile: a cubin, PTX and LTO-IR read by their ending keep the path they came from; the cubin and PTX load', () => {
    const files = {
      cubin: Program.compile(FILL_CU, { cache: false }),
      ptx: Program.compile(FILL_CU, { target: 'ptx', cache: false }),
      ltoir: Program.compile(MATH_CU, { target: 'ltoir', cache: false }),
    };
    for (const [kind, p] of Object.entries(files)) {
      const file = path.join(tmp, `k.${kind}`);
      fs.writeFileSync(file, kind === 'ptx' ? p.objectCode.text : p.code);
      const code = ObjectCode.fromFile(file);
      expect([code.kind, code.path]).toEqual([kind, file]);
      if (kind !== 'ltoir') {
        const mod = code.load();
        expect(mod.kernel('fillWith')).toBeDefined();
        mod.close();
      }
    }
  });
});
