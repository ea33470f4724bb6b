// The operations of the stable benchmark, as each Node implementation makes them: the tuple facade,
// core, and raw koffi (the floor of any binding made with koffi: the facade's own koffi declarations,
// dist/ffi/*.gen.js, with small structs split into words as the facade passes them, called with
// arguments prepared once, and nothing else). node.ts serves them to run.ts one process each;
// floor.ts times them side by side in one process.
import * as path from 'node:path';
import type { Op } from './timers';

// The compiled package, as users load it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { cudart, cuda, core } = require(path.resolve('dist')) as typeof import('../../src');
type OkOutputs<R extends readonly unknown[]> = import('../../src').OkOutputs<R>;

/** An implementation's operations by name, and the wait for its stream. */
export type Ops = [Record<string, Op>, () => void];

function ok<R extends readonly [number, ...unknown[]]>(r: R, what: string): OkOutputs<R> {
  if (r[0] !== 0) throw new Error(`${what} failed with status ${r[0]}`);
  return r.slice(1) as OkOutputs<R>;
}
/** The tuple facade's operations on the kernels of `cubin`. */
export function facadeOps(cubin: string): Ops {
  ok(cudart.cudaSetDevice(0), 'cudaSetDevice');
  cudart.cudaFree(null);
  const [s] = ok(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
  const [ev] = ok(cudart.cudaEventCreateWithFlags(cudart.cudaEventDisableTiming), 'cudaEventCreateWithFlags');
  const [d] = ok(cudart.cudaMalloc(1 << 20), 'cudaMalloc');
  const [pinned] = ok(cudart.cudaMallocHost(4096), 'cudaMallocHost');
  const [pool] = ok(cudart.cudaDeviceGetDefaultMemPool(0), 'cudaDeviceGetDefaultMemPool');
  const [lib] = ok(cudart.cudaLibraryLoadFromFile(cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadFromFile');
  const [k0] = ok(cudart.cudaLibraryGetKernel(lib!, 'empty'), 'cudaLibraryGetKernel');
  const [k8] = ok(cudart.cudaLibraryGetKernel(lib!, 'empty8'), 'cudaLibraryGetKernel');
  const [mod] = ok(cuda.cuModuleLoad(cubin), 'cuModuleLoad');
  const [f0] = ok(cuda.cuModuleGetFunction(mod!, 'empty'), 'cuModuleGetFunction');
  const [f8] = ok(cuda.cuModuleGetFunction(mod!, 'empty8'), 'cuModuleGetFunction');
  const cs = cuda.CUstream(s!);
  const g = new cudart.dim3({ x: 1, y: 1, z: 1 });
  const { i32, u32, i64, f32, f64 } = cudart;
  // Packed once, as C's void *args[8] (the facade's hot-loop idiom).
  const args8 = new cudart.KernelArgs([d!, d!, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]);
  ok(cudart.cudaStreamBeginCapture(s!, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal), 'cudaStreamBeginCapture');
  cudart.cudaLaunchKernel(k0!, g, g, null, 0, s!);
  const [graph] = ok(cudart.cudaStreamEndCapture(s!), 'cudaStreamEndCapture');
  const [exec] = ok(cudart.cudaGraphInstantiate(graph!, 0), 'cudaGraphInstantiate');
  const hv = new Int32Array([1]);
  const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
  const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;
  const ops: Record<string, Op> = {
    cudaGetDevice: () => cudart.cudaGetDevice(),
    cudaPeekAtLastError: () => cudart.cudaPeekAtLastError(),
    cudaStreamQuery: () => cudart.cudaStreamQuery(s!),
    cudaEventQuery: () => cudart.cudaEventQuery(ev!),
    cudaEventRecord: () => cudart.cudaEventRecord(ev!, s!),
    cudaGetDeviceProperties: () => cudart.cudaGetDeviceProperties(0),
    'cudaGetDeviceProperties+5fields': () => {
      const p = cudart.cudaGetDeviceProperties(0)[1]!;
      return p.name.length + p.totalGlobalMem + p.multiProcessorCount + p.major + p.minor;
    },
    'cudaMalloc+cudaFree_1MiB': () => cudart.cudaFree(cudart.cudaMalloc(1 << 20)[1]),
    'cudaMallocAsync+cudaFreeAsync_1MiB': () => cudart.cudaFreeAsync(cudart.cudaMallocAsync(1 << 20, s!)[1], s!),
    'cudaMallocFromPoolAsync+cudaFreeAsync_1MiB': () => cudart.cudaFreeAsync(cudart.cudaMallocFromPoolAsync(1 << 20, pool!, s!)[1], s!),
    cudaMemcpy_H2D_4B: () => cudart.cudaMemcpy(d!, hv, 4, H2D),
    cudaMemcpy_D2H_4B: () => cudart.cudaMemcpy(hv, d!, 4, D2H),
    cudaMemcpyAsync_H2D_4B_pinned: () => cudart.cudaMemcpyAsync(d!, pinned!, 4, H2D, s!),
    cudaLaunchKernel_empty: () => cudart.cudaLaunchKernel(k0!, g, g, null, 0, s!),
    cudaLaunchKernel_8args: () => cudart.cudaLaunchKernel(k8!, g, g, args8, 0, s!),
    cuLaunchKernel_empty: () => cuda.cuLaunchKernel(f0!, 1, 1, 1, 1, 1, 1, 0, cs, null, null),
    cuLaunchKernel_8args: () => cuda.cuLaunchKernel(f8!, 1, 1, 1, 1, 1, 1, 0, cs, args8, null),
    cudaGraphLaunch_1kernel: () => cudart.cudaGraphLaunch(exec!, s!),
    'launch+sync_empty': () => {
      cudart.cudaLaunchKernel(k0!, g, g, null, 0, s!);
      cudart.cudaStreamSynchronize(s!);
    },
  };
  return [ops, () => cudart.cudaStreamSynchronize(s!)];
}

/** What packEmpty8 has packed: held for the life of the process. */
const packed: Buffer[] = [];

/**
 * The arguments of `empty8(float *a, float *b, int c, unsigned d, float e, float f, long long g,
 * double h)` packed once, each at its offset as C lays them out (a and b the device address `d`, then
 * 1 to 6), and the array of their addresses, as C's `void *args[8]`. The values' memory stays
 * referenced for the life of the process (the addresses point into it).
 */
export function packEmpty8(d: bigint): BigUint64Array {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const koffi = require('koffi') as typeof import('koffi');
  const values = Buffer.alloc(64);
  values.writeBigUInt64LE(d, 0);
  values.writeBigUInt64LE(d, 8);
  values.writeInt32LE(1, 16);
  values.writeUInt32LE(2, 20);
  values.writeFloatLE(3, 24);
  values.writeFloatLE(4, 28);
  values.writeBigInt64LE(5n, 32);
  values.writeDoubleLE(6, 40);
  const base = koffi.address(values) as bigint;
  packed.push(values);
  return BigUint64Array.from([0, 8, 16, 20, 24, 28, 32, 40], (at) => base + BigInt(at));
}

/** The koffi floor's operations on the kernels of `cubin`. */
export function koffiOps(cubin: string): Ops {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const koffi = require('koffi') as typeof import('koffi');
  type Decl = [string, string, unknown[], unknown[]?];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const rtDecls = require(path.resolve('dist', 'ffi', 'cudart.gen')).declarations as Record<string, Decl>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const drvDecls = require(path.resolve('dist', 'ffi', 'cuda.gen')).declarations as Record<string, Decl>;
  const rtLib = koffi.load(cudart.libraryInfo().path);
  const drvLib = koffi.load('libcuda.so.1');
  const bind = (lib: ReturnType<typeof koffi.load>, decls: Record<string, Decl>, name: string) => {
    const [sym, ret, params, split] = decls[name];
    return lib.func(sym, ret as string, (split ?? params) as string[]);
  };
  const R = new Proxy({} as Record<string, (...a: unknown[]) => number>, { get: (_, n: string) => bind(rtLib, rtDecls, n) });
  const D = new Proxy({} as Record<string, (...a: unknown[]) => number>, { get: (_, n: string) => bind(drvLib, drvDecls, n) });
  // Outputs go to memory outside V8's heap, passed by its address (a bigint) as the facade and core
  // pass their scratch slots: koffi takes a bigint in about 20 ns less than a typed array
  // (koffi-args.ts). Up to bench/results/h100-run14.json the floor passed a BigUint64Array and an Int32Array(1).
  const page = koffi.alloc('uint8_t', 64);
  const at = BigInt(koffi.address(page) as bigint | number);
  const slotView = new BigUint64Array(koffi.view(page, 64) as ArrayBuffer);
  const slot = at; // cudaGetDevice's int goes to the same place
  const i32 = at;
  const out = (r: number, what: string) => {
    if (r !== 0) throw new Error(`${what} failed with status ${r}`);
    return slotView[0];
  };
  out(R.cudaSetDevice(0), 'cudaSetDevice');
  R.cudaFree(null);
  const s = out(R.cudaStreamCreateWithFlags(slot, 1), 'cudaStreamCreateWithFlags');
  const ev = out(R.cudaEventCreateWithFlags(slot, 2), 'cudaEventCreateWithFlags');
  const d = out(R.cudaMalloc(slot, 1 << 20), 'cudaMalloc');
  const pinned = out(R.cudaMallocHost(slot, 4096), 'cudaMallocHost');
  const pool = out(R.cudaDeviceGetDefaultMemPool(slot, 0), 'cudaDeviceGetDefaultMemPool');
  const lib = out(R.cudaLibraryLoadFromFile(slot, cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadFromFile');
  const k0 = out(R.cudaLibraryGetKernel(slot, lib, 'empty'), 'cudaLibraryGetKernel');
  const k8 = out(R.cudaLibraryGetKernel(slot, lib, 'empty8'), 'cudaLibraryGetKernel');
  const mod = out(D.cuModuleLoad(slot, cubin), 'cuModuleLoad');
  const f0 = out(D.cuModuleGetFunction(slot, mod, 'empty'), 'cuModuleGetFunction');
  const f8 = out(D.cuModuleGetFunction(slot, mod, 'empty8'), 'cuModuleGetFunction');
  const args8 = packEmpty8(d);
  const gw0 = 1 + 1 * 4294967296; // dim3 {1,1,1} as its two eightbytes
  const gw1 = 1;
  const [
    cudaGetDevice,
    cudaPeekAtLastError,
    cudaStreamQuery,
    cudaEventQuery,
    cudaEventRecord,
    cudaGetDeviceProperties,
    cudaMalloc,
    cudaFree,
    cudaMallocAsync,
    cudaMallocFromPoolAsync,
    cudaFreeAsync,
    cudaMemcpy,
    cudaMemcpyAsync,
    cudaLaunchKernel,
    cudaGraphLaunch,
    cudaStreamSynchronize,
    cudaStreamBeginCapture,
    cudaStreamEndCapture,
    cudaGraphInstantiate,
  ] = [
    'cudaGetDevice',
    'cudaPeekAtLastError',
    'cudaStreamQuery',
    'cudaEventQuery',
    'cudaEventRecord',
    'cudaGetDeviceProperties',
    'cudaMalloc',
    'cudaFree',
    'cudaMallocAsync',
    'cudaMallocFromPoolAsync',
    'cudaFreeAsync',
    'cudaMemcpy',
    'cudaMemcpyAsync',
    'cudaLaunchKernel',
    'cudaGraphLaunch',
    'cudaStreamSynchronize',
    'cudaStreamBeginCapture',
    'cudaStreamEndCapture',
    'cudaGraphInstantiate',
  ].map((n) => R[n]);
  const cuLaunchKernel = D.cuLaunchKernel;
  out(cudaStreamBeginCapture(s, 0), 'cudaStreamBeginCapture');
  cudaLaunchKernel(k0, gw0, gw1, gw0, gw1, null, 0, s);
  const graph = out(cudaStreamEndCapture(s, slot), 'cudaStreamEndCapture');
  const exec = out(cudaGraphInstantiate(slot, graph, 0), 'cudaGraphInstantiate');
  const prop = Buffer.alloc(1008);
  const hv = new Int32Array([1]);
  // The floor of returning a new struct: fresh zeroed memory from a slab (as the facade's structs
  // get it) for every call, and the five fields read straight from the bytes.
  let slab = new ArrayBuffer(64 * 1024);
  let used = 0;
  let slabView = new DataView(slab);
  const props5 = () => {
    if (used + 1008 > slab.byteLength) {
      slab = new ArrayBuffer(64 * 1024);
      slabView = new DataView(slab);
      used = 0;
    }
    const at = used;
    const u8 = new Uint8Array(slab, at, 1008);
    used += 1008;
    cudaGetDeviceProperties(u8, 0);
    const end = u8.indexOf(0);
    const name = Buffer.from(slab, at, end < 0 ? 256 : end).toString('latin1');
    return (
      name.length +
      Number(slabView.getBigUint64(at + 288, true)) +
      slabView.getInt32(at + 384, true) +
      slabView.getInt32(at + 360, true) +
      slabView.getInt32(at + 364, true)
    );
  };
  const ops: Record<string, Op> = {
    cudaGetDevice: () => cudaGetDevice(i32),
    cudaPeekAtLastError: () => cudaPeekAtLastError(),
    cudaStreamQuery: () => cudaStreamQuery(s),
    cudaEventQuery: () => cudaEventQuery(ev),
    cudaEventRecord: () => cudaEventRecord(ev, s),
    cudaGetDeviceProperties: () => cudaGetDeviceProperties(prop, 0),
    'cudaGetDeviceProperties+5fields': props5,
    'cudaMalloc+cudaFree_1MiB': () => {
      cudaMalloc(slot, 1 << 20);
      cudaFree(slotView[0]);
    },
    'cudaMallocAsync+cudaFreeAsync_1MiB': () => {
      cudaMallocAsync(slot, 1 << 20, s);
      cudaFreeAsync(slotView[0], s);
    },
    'cudaMallocFromPoolAsync+cudaFreeAsync_1MiB': () => {
      cudaMallocFromPoolAsync(slot, 1 << 20, pool, s);
      cudaFreeAsync(slotView[0], s);
    },
    cudaMemcpy_H2D_4B: () => cudaMemcpy(d, hv, 4, 1),
    cudaMemcpy_D2H_4B: () => cudaMemcpy(hv, d, 4, 2),
    cudaMemcpyAsync_H2D_4B_pinned: () => cudaMemcpyAsync(d, pinned, 4, 1, s),
    cudaLaunchKernel_empty: () => cudaLaunchKernel(k0, gw0, gw1, gw0, gw1, null, 0, s),
    cudaLaunchKernel_8args: () => cudaLaunchKernel(k8, gw0, gw1, gw0, gw1, args8, 0, s),
    cuLaunchKernel_empty: () => cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, s, null, null),
    cuLaunchKernel_8args: () => cuLaunchKernel(f8, 1, 1, 1, 1, 1, 1, 0, s, args8, null),
    cudaGraphLaunch_1kernel: () => cudaGraphLaunch(exec, s),
    'launch+sync_empty': () => {
      cudaLaunchKernel(k0, gw0, gw1, gw0, gw1, null, 0, s);
      cudaStreamSynchronize(s);
    },
  };
  for (const n of ['cudaLaunchKernel_8args', 'cuLaunchKernel_8args', 'cudaGraphLaunch_1kernel', 'cudaMemcpyAsync_H2D_4B_pinned'])
    out(ops[n]() as number, n);
  return [ops, () => cudaStreamSynchronize(s)];
}

/** Core's operations on the kernels of `cubin`. */
export async function coreOps(cubin: string): Promise<Ops> {
  const { Device, Module, i32, u32, i64, f32, f64 } = core;
  const dev = Device.get(0).makeCurrent();
  const s = dev.createStream({ nonBlocking: true });
  const ev = dev.createEvent({ timing: false }); // as C's cudaEventDisableTiming
  const buf = dev.allocate(1 << 20);
  const pinned = new core.HostBuffer(4096);
  const pinnedView = new Int32Array(pinned.bytes.buffer, pinned.bytes.byteOffset, 1);
  const hv = new Int32Array([1]);
  const mod = Module.load(cubin);
  const empty = mod.kernel('empty');
  const empty8 = mod.kernel('empty8');
  const copy = mod.kernel('copyFloats');
  const cfg = { grid: 1, block: 1, stream: s };
  const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
  const pool = dev.memoryPool;
  const sync = () => cudart.cudaStreamSynchronize(s.handle);
  const n = 1 << 20;
  const hx = new Float32Array(n);
  const hy = new Float32Array(n);
  const big = { grid: n / 256, block: 256, stream: s };
  const dx = dev.allocate(4 * n);
  const dy = dev.allocate(4 * n);
  // In/Out's temporaries from a caching allocator (CuPy's pool), as a user who launches in a loop has.
  core.setAllocator(new core.CachingAllocator());
  empty.launch(cfg);
  const exec = (await s.capture(() => empty.launch(cfg))).instantiate();
  exec.upload(s);
  prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6);
  await s.synchronize();
  const ops: Record<string, Op> = {
    cudaGetDevice: () => Device.current(),
    cudaStreamQuery: () => s.query(),
    cudaEventQuery: () => ev.query(),
    cudaEventRecord: () => ev.record(s),
    'cudaMalloc+cudaFree_1MiB': () => dev.allocate(1 << 20).close(),
    'cudaMallocAsync+cudaFreeAsync_1MiB': () => pool.allocate(1 << 20, s).close(),
    'cudaMallocFromPoolAsync+cudaFreeAsync_1MiB': () => pool.allocate(1 << 20, s).close(),
    cudaMemcpy_H2D_4B: () => buf.copyFrom(hv),
    cudaMemcpy_D2H_4B: () => buf.copyTo(hv),
    // The stream itself in place of { stream } (as CuPy's and PyCUDA's copies take it): no options bag to check.
    cudaMemcpyAsync_H2D_4B_pinned: () => buf.copyFrom(pinnedView, s),
    cudaLaunchKernel_empty: () => empty.launch(cfg),
    // Core's fastest 8-argument path: the prepared launch, plain numbers packed by declared types.
    cudaLaunchKernel_8args: () => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6),
    cudaLaunchKernel_8args_typed: () => empty8.launch(cfg, buf, buf, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)),
    cudaGraphLaunch_1kernel: () => exec.launch(s),
    // Not a row (plan.ts has none): run.ts's settle step for core, which has no blocking wait of its own.
    settle: () => {
      empty.launch(cfg);
      sync();
    },
    InOut_4MiB: () => copy.launch(big, core.In(hx), core.Out(hy), i32(n)),
    // The same through core with the copies written out by hand (buffers allocated once).
    InOut_4MiB_manual: () => {
      dx.copyFrom(hx, { stream: s });
      copy.launch(big, dx, dy, i32(n));
      dy.copyTo(hy, { stream: s });
      sync();
    },
  };
  return [ops, sync];
}
