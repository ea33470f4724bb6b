// Where core's prepared launch spends its time above the koffi floor, on a GPU, in one process:
// the floor (cudaLaunchKernel through koffi with everything built once), the same call on a
// KernelArgs' own argument memory, that plus the 8 stores a prepared launch makes, the facade with
// pre-packed KernelArgs, and the prepared launch (DeviceBuffers, then bigint addresses). Each row is
// the median over 12 rounds of its ratio to the floor in the same round (a round's figure the
// fastest of 5 loops, the variants taking turns loop by loop; launches in synchronised batches of 128).
//   npm run build && npx tsc -p tsconfig.bench.json
//   nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node dist-bench/bench/stable/prepared-gpu.js /tmp/k.cubin
import * as path from 'node:path';
import { median } from './plan';
import { timersFor } from './timers';

/* eslint-disable @typescript-eslint/no-require-imports */
const koffi = require('koffi') as typeof import('koffi');
const { cudart, core } = require(path.resolve('dist')) as typeof import('../../src');
const { declarations } = require(path.resolve('dist', 'ffi', 'cudart.gen')) as {
  declarations: Record<string, [string, string, string[], string[]?]>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

const cubin = process.argv[2];
if (!cubin) throw new Error('usage: node dist-bench/bench/stable/prepared-gpu.js kernels.cubin');
const dev = core.Device.get(0).makeCurrent();
const stream = dev.createStream({ nonBlocking: true });
const buf = dev.allocate(1 << 20);
const empty8 = core.Module.load(cubin).kernel('empty8');
const cfg = { grid: 1, block: 1, stream };
const prepared = empty8.prepare('const float *a, float *b, int c, unsigned d, float e, float f, long long g, double h');
const [sym, ret, params, split] = declarations.cudaLaunchKernel;
const raw = koffi.load(cudart.libraryInfo().path).func(sym, ret, split ?? params);
const sync = () => cudart.cudaStreamSynchronize(stream.handle);

// The floor's arguments: 8 values packed once and the array of their addresses, as C's void *args[8].
const d = buf.ptr;
const vals = Buffer.alloc(64);
// Each value at its offset in empty8(float *a, float *b, int c, unsigned d, float e, float f, long long g, double h).
const packed: [number, (at: number) => number][] = [
  [0, (at) => vals.writeBigUInt64LE(d, at)],
  [8, (at) => vals.writeBigUInt64LE(d, at)],
  [16, (at) => vals.writeInt32LE(1, at)],
  [20, (at) => vals.writeUInt32LE(2, at)],
  [24, (at) => vals.writeFloatLE(3, at)],
  [28, (at) => vals.writeFloatLE(4, at)],
  [32, (at) => vals.writeBigInt64LE(5n, at)],
  [40, (at) => vals.writeDoubleLE(6, at)],
];
for (const [at, write] of packed) write(at);
const base = koffi.address(vals) as bigint;
const args8 = BigUint64Array.from(packed, ([at]) => base + BigInt(at));
const { i32, u32, i64, f32, f64 } = core;
const ka = new cudart.KernelArgs([d, d, i32(1), u32(2), f32(3), f32(4), i64(5), f64(6)]);
const kaView = new DataView(ka.buffer.buffer, ka.buffer.byteOffset, ka.buffer.byteLength);
const word0 = 1 + 4294967296; // dim3 {1, 1, 1}: x | y << 32, then z
const k = empty8.handle;
const h = stream.handle;
const g = new cudart.dim3({ x: 1, y: 1, z: 1 });

const ops: Record<string, () => unknown> = {
  floor: () => raw(k, word0, 1, word0, 1, args8, 0, h),
  'floor, KernelArgs memory': () => raw(k, word0, 1, word0, 1, ka.pointers, 0, h),
  'floor + 8 stores': () => {
    kaView.setBigUint64(0, d, true);
    kaView.setBigUint64(8, d, true);
    kaView.setInt32(16, 1, true);
    kaView.setUint32(20, 2, true);
    kaView.setFloat32(24, 3, true);
    kaView.setFloat32(28, 4, true);
    kaView.setUint32(32, 5, true);
    kaView.setInt32(36, 0, true);
    kaView.setFloat64(40, 6, true);
    return raw(k, word0, 1, word0, 1, ka.pointers, 0, h);
  },
  'facade, KernelArgs pre-packed': () => cudart.cudaLaunchKernel(k, g, g, ka, 0, h),
  'prepared, DeviceBuffers': () => prepared(cfg, buf, buf, 1, 2, 3, 4, 5, 6),
  'prepared, bigint addresses': () => prepared(cfg, d, d, 1, 2, 3, 4, 5, 6),
};

const names = Object.keys(ops);
const timers = Object.fromEntries(names.map((n) => [n, timersFor(n).batch]));
for (const n of names) timers[n](ops[n], 2560, sync);
const ratios: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const floors: number[] = [];
for (let round = 0; round < 12; round++) {
  const best: Record<string, number> = Object.fromEntries(names.map((n) => [n, Infinity]));
  for (let loop = 0; loop < 5; loop++) for (const n of names) best[n] = Math.min(best[n], timers[n](ops[n], 12_800, sync));
  for (const n of names) ratios[n].push(best[n] / best.floor);
  floors.push(best.floor);
}
console.log(`# ${dev.name}; floor ${median(floors).toFixed(0)} ns per launch (median of 12 rounds)`);
console.log('| variant | ratio to the floor (median) | per round |');
console.log('|---|---:|---|');
for (const n of names) console.log(`| ${n} | ${median(ratios[n]).toFixed(3)} | ${ratios[n].map((x) => x.toFixed(2)).join(' ')} |`);
stream.close();
buf.close();
