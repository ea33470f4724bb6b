// What koffi's part of a call costs for each way of passing one argument (issue #37: where the time
// of the rows that core cannot bring to the floor goes). Each row is one C call made several ways
// that differ only in how one pointer reaches koffi (a typed array on V8's heap or over outside
// memory, a bigint address, a koffi external), in one process, taking turns loop by loop as
// floor.ts does, in fresh processes; a variant's figure is the median over processes of the median
// of its per-round ratios to the row's first variant (the one the floor and the facade use today).
//   node dist-bench/bench/stable/koffi-args.js [--processes 4] [--rounds 10] [--loops 5] [--calls 200000] [--cpus 8] [--out f.json]
// Without a driver (the dev machine) the calls return cudaErrorInsufficientDriver at once, which
// still times koffi's part; the pinned and pool rows then pass made-up memory and are left out.
import * as fs from 'node:fs';
import * as os from 'node:os';
import koffi from 'koffi';
import { cudart } from '../../src/index';
import * as core from '../../src/core';
import { gpuName, inFreshProcesses, median, options, pinTo } from './plan';
import { BATCH, timersFor, type Op } from './timers';

/** A call made several ways; `share` of `--calls` calls a loop (a call of the slow rows takes µs). */
type Row = { op: string; batch: boolean; share: number; variants: [string, Op][] };
/** Per row and variant: ns per call, a value per round. */
type Samples = Record<string, Record<string, number[]>>;

/** The rows of this machine, made with the real libcudart (the package's own search finds it). */
function rows(): [Row[], () => void] {
  const lib = koffi.load(cudart.libraryInfo().path);
  const fn = (decl: string) => lib.func(decl);
  const getDevice = fn('int cudaGetDevice(void *p)');
  const peek = fn('int cudaPeekAtLastError()');
  const driverVersion = new Int32Array(1);
  fn('int cudaDriverGetVersion(void *p)')(driverVersion);
  const gpu = driverVersion[0] > 0;
  const mallocFromPoolAsync = fn('int cudaMallocFromPoolAsync(void *p, size_t n, void *pool, void *s)');
  const freeAsync = fn('int cudaFreeAsync(void *p, void *s)');
  const memcpy = fn('int cudaMemcpy(void *dst, void *src, size_t n, int kind)');
  const memcpyAsync = fn('int cudaMemcpyAsync(void *dst, void *src, size_t n, int kind, void *s)');
  const sync = fn('int cudaStreamSynchronize(void *s)');

  // Output slots: on V8's heap (4 bytes: a typed array this small keeps its data in the heap), over
  // an ArrayBuffer of a page (the facade's scratch store), and over memory koffi allocated outside
  // the heap (passed by its address, read back through a view of the same memory).
  const onHeap = new Int32Array(1);
  const store = new ArrayBuffer(4096);
  const storeU8 = new Uint8Array(store, 0, 8);
  const storeU64 = new BigUint64Array(store);
  const native = koffi.alloc('uint64_t', 512);
  const nativeAddress = BigInt(koffi.address(native));
  const nativeU64 = new BigUint64Array(koffi.view(native, 4096));

  const out = (r: number, what: string) => {
    if (r !== 0) throw new Error(`${what} failed with status ${r}`);
    return storeU64[0];
  };
  const list: Row[] = [
    { op: 'cudaPeekAtLastError', batch: false, share: 1, variants: [['no argument', () => peek()]] },
    {
      op: 'cudaGetDevice',
      batch: false,
      share: 1,
      variants: [
        ['Int32Array(1) on the heap (the floor until run 14)', () => getDevice(onHeap)],
        ["Uint8Array over a page's ArrayBuffer (the facade's slot until run 14)", () => getDevice(storeU8)],
        ['BigUint64Array over that page (core until run 14)', () => getDevice(storeU64)],
        ["bigint address of koffi's memory (the floor, facade and core now)", () => getDevice(nativeAddress)],
        ['koffi external of that memory', () => getDevice(native)],
      ],
    },
  ];
  let finish = () => undefined as unknown;
  if (gpu) {
    out(fn('int cudaSetDevice(int d)')(0), 'cudaSetDevice');
    const s = out(fn('int cudaStreamCreateWithFlags(void *p, unsigned int f)')(storeU8, 1), 'cudaStreamCreateWithFlags');
    const pool = out(fn('int cudaDeviceGetDefaultMemPool(void *p, int d)')(storeU8, 0), 'cudaDeviceGetDefaultMemPool');
    const d = out(fn('int cudaMalloc(void *p, size_t n)')(storeU8, 1 << 20), 'cudaMalloc');
    const pinned = out(fn('int cudaMallocHost(void *p, size_t n)')(storeU8, 4096), 'cudaMallocHost');
    const pinnedU8 = new Uint8Array(koffi.view(pinned, 4096), 0, 4);
    const pinnedI32 = new Int32Array(pinnedU8.buffer, 0, 1);
    const offHeap = new Int32Array(new ArrayBuffer(4096), 0, 1);
    list.push(
      {
        op: 'cudaMallocFromPoolAsync+cudaFreeAsync_1MiB',
        batch: true,
        share: 0.1,
        variants: [
          [
            'BigUint64Array over a page (the floor and core until run 14)',
            () => {
              mallocFromPoolAsync(storeU64, 1 << 20, pool, s);
              freeAsync(storeU64[0], s);
            },
          ],
          [
            "bigint address of koffi's memory",
            () => {
              mallocFromPoolAsync(nativeAddress, 1 << 20, pool, s);
              freeAsync(nativeU64[0], s);
            },
          ],
        ],
      },
      {
        op: 'cudaMemcpyAsync_H2D_4B_pinned',
        batch: true,
        share: 0.1,
        variants: [
          ['source a bigint address (the floor)', () => memcpyAsync(d, pinned, 4, 1, s)],
          ['source an Int32Array over the pinned memory (core)', () => memcpyAsync(d, pinnedI32, 4, 1, s)],
          ['source a Uint8Array over it', () => memcpyAsync(d, pinnedU8, 4, 1, s)],
        ],
      },
      {
        op: 'cudaMemcpy_D2H_4B',
        batch: false,
        share: 0.02,
        variants: [
          ['Int32Array(1) on the heap (the floor, core)', () => memcpy(onHeap, d, 4, 2)],
          ['Int32Array over an ArrayBuffer of a page', () => memcpy(offHeap, d, 4, 2)],
        ],
      },
    );
    // Core's own objects (made as ops.ts' coreOps makes them) through the floor's call, and core's
    // call: says whether a row's time over the floor is core's code or the memory and stream it uses.
    const dev = core.Device.get(0).makeCurrent();
    const cs = dev.createStream({ nonBlocking: true });
    const buf = dev.allocate(1 << 20);
    const host = new core.HostBuffer(4096);
    const hostView = new Int32Array(host.bytes.buffer, host.bytes.byteOffset, 1);
    const corePool = dev.memoryPool;
    list.push(
      {
        op: "cudaMemcpyAsync_H2D_4B_pinned, core's objects",
        batch: true,
        share: 0.1,
        variants: [
          ["the floor's memory and stream", () => memcpyAsync(d, pinned, 4, 1, s)],
          ["core's DeviceBuffer as the destination", () => memcpyAsync(buf.ptr, pinned, 4, 1, s)],
          ["core's HostBuffer as the source (its address)", () => memcpyAsync(d, host.ptr, 4, 1, s)],
          ["core's Stream", () => memcpyAsync(d, pinned, 4, 1, cs.handle)],
          ["all three of core's, addresses", () => memcpyAsync(buf.ptr, host.ptr, 4, 1, cs.handle)],
          ["core's call: buf.copyFrom(view, { stream })", () => buf.copyFrom(hostView, { stream: cs })],
          ["core's call: buf.copyFrom(view, stream)", () => buf.copyFrom(hostView, cs)],
        ],
      },
      {
        op: "cudaMallocFromPoolAsync+cudaFreeAsync_1MiB, core's objects",
        batch: true,
        share: 0.1,
        variants: [
          ["the floor's pool and stream", () => (mallocFromPoolAsync(storeU64, 1 << 20, pool, s), freeAsync(storeU64[0], s))],
          [
            "core's pool and Stream",
            () => (mallocFromPoolAsync(storeU64, 1 << 20, corePool.handle, cs.handle), freeAsync(storeU64[0], cs.handle)),
          ],
          ["core's call: pool.allocate(n, s).close()", () => corePool.allocate(1 << 20, cs).close()],
        ],
      },
      {
        op: "cudaGetDevice, core's call",
        batch: false,
        share: 1,
        variants: [
          ['Int32Array(1) on the heap (the floor)', () => getDevice(onHeap)],
          ["core's call: Device.current()", () => core.Device.current()],
        ],
      },
    );
    finish = () => (sync(s), sync(cs.handle));
  }
  return [list, finish as () => void];
}

/** Times every variant of every row in this process, taking turns loop by loop. */
function child(rounds: number, loops: number, calls: number): Samples {
  const [list, sync] = rows();
  const out: Samples = {};
  for (let round = 0; round <= rounds; round++)
    for (const { op, batch, share, variants } of list) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length]);
      const best = new Map<string, number>(variants.map(([name]) => [name, Infinity]));
      const n = batch ? BATCH * Math.max(1, Math.round((calls * share) / BATCH)) : Math.max(1, Math.round(calls * share));
      for (let k = 0; k < loops; k++)
        for (const [name, f] of order) {
          const t = timersFor(`${op} ${name}`)[batch ? 'batch' : 'loop'](f, n, sync);
          sync();
          best.set(name, Math.min(best.get(name)!, t));
        }
      if (round === 0) continue; // the warm-up round
      const row = (out[op] ??= {});
      for (const [name] of variants) (row[name] ??= []).push(best.get(name)!);
    }
  return out;
}

/** Per row and variant: ns (median over processes of the per-process medians) and the ratio to the row's first variant. */
function table(processes: Samples[]): string {
  const lines = ['| call | how the pointer is passed | ns | ÷ first [min–max of processes] |', '|---|---|---:|---:|'];
  for (const op of Object.keys(processes[0])) {
    const names = Object.keys(processes[0][op]);
    for (const name of names) {
      const ns = median(processes.map((p) => median(p[op][name])));
      const ratios = processes.map((p) => median(p[op][name].map((t, i) => t / p[op][names[0]][i])));
      const r = (x: number) => x.toFixed(3);
      lines.push(`| ${op} | ${name} | ${ns.toFixed(1)} | ${r(median(ratios))} [${r(Math.min(...ratios))}–${r(Math.max(...ratios))}] |`);
    }
  }
  return lines.join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const opt = options(args);
  if (args[0] === '--child') {
    console.log(JSON.stringify(child(Number(args[1]), Number(args[2]), Number(args[3]))));
    return;
  }
  const processes = Number(opt('--processes', '4'));
  const [rounds, loops, calls] = [opt('--rounds', '10'), opt('--loops', '5'), opt('--calls', '200000')];
  const cpus = pinTo(opt('--cpus', '8'));
  const samples = inFreshProcesses<Samples>(__filename, [rounds, loops, calls], processes, cpus);
  const gpu = gpuName() ?? '(no GPU)';
  const meta = { date: new Date().toISOString(), gpu, node: process.version, processes, rounds, loops, calls, cpus, host: os.hostname() };
  const outFile = opt('--out', '');
  if (outFile) fs.writeFileSync(outFile, JSON.stringify({ meta, processes: samples }) + '\n');
  console.log(
    `# ${gpu}; Node ${process.version}; ${processes} processes of ${rounds} rounds, a sample the fastest of ${loops} loops; CPU(s) ${cpus ?? '(not pinned)'}`,
  );
  console.log(table(samples));
}

main();
