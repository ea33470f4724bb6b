// Does a synchronous 4-byte D2H copy take longer into some host memory than into other? The stable
// run's own processes put core's D2H row 1.16x the floor's, where one process puts it at 1.01x, and
// each process copies into a 4-byte Int32Array of its own. This times the floor's cudaMemcpy (a koffi
// declaration of its own, as d2h-steps.cjs) into destinations of several kinds and alignments, in
// turns, in one process, after one kernel launch (as every process of the stable run has made):
// the fastest of 7 loops of 1,500 calls, ns a call, for each of 3 passes, with the address's offset
// in its page.
//   npm run build && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-dest.cjs /tmp/k.cubin
const path = require('node:path');
const koffi = require('koffi');
const { cudart } = require(path.resolve('dist'));
const cubin = process.argv[2];
const lib = koffi.load(cudart.libraryInfo().path);
const memcpy = lib.func('int cudaMemcpy(void *dst, void *src, size_t n, int kind)');
const memcpyAddr = lib.func('int cudaMemcpy(uint64_t dst, void *src, size_t n, int kind)');
const malloc = lib.func('int cudaMalloc(void *p, size_t n)');
const mallocHost = lib.func('int cudaMallocHost(void *p, size_t n)');
const slot = new BigUint64Array(1);
const ok = (r, what) => {
  if (r !== 0) throw new Error(`${what} failed with status ${r}`);
  return slot[0];
};
const d = ok(malloc(slot, 1 << 20), 'cudaMalloc');
const pinned = ok(mallocHost(slot, 4096), 'cudaMallocHost');

// One kernel launch first, as every process of the stable run makes one before its rows.
const [, l] = cudart.cudaLibraryLoadFromFile(cubin, null, null, 0, null, null, 0);
const [, k] = cudart.cudaLibraryGetKernel(l, 'empty');
const g = new cudart.dim3({ x: 1, y: 1, z: 1 });
ok(cudart.cudaLaunchKernel(k, g, g, null, 0, null)[0], 'cudaLaunchKernel');
cudart.cudaDeviceSynchronize();

const big = new ArrayBuffer(1 << 16);
/** Each destination: a name and the value passed to cudaMemcpy as dst. */
const dests = [
  ['Int32Array([1]) (as ops.ts hv)', new Int32Array([1])],
  ['Int32Array(new ArrayBuffer(4))', new Int32Array(new ArrayBuffer(4))],
  ['Int32Array(1024)[0]', new Int32Array(1024)],
  ...[0, 4, 8, 64, 2048, 4092, 4096, 32768].map((o) => [`64 KiB ArrayBuffer + ${o}`, new Int32Array(big, o, 1)]),
  ['cudaMallocHost (pinned)', pinned],
];
const addr = (v) => (typeof v === 'bigint' ? v : BigInt(koffi.address(v)));

function time(dst) {
  const f = typeof dst === 'bigint' ? memcpyAddr : memcpy;
  let best = Infinity;
  for (let r = 0; r < 7; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 1500; i++) f(dst, d, 4, 2);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1500);
  }
  return best;
}

const rows = dests.map(([name, v]) => ({ name, at: addr(v), ns: [] }));
for (let pass = 0; pass < 3; pass++) dests.forEach(([, v], i) => rows[i].ns.push(time(v)));
for (const r of rows)
  console.log(`${r.name.padEnd(34)} page+${String(r.at % 4096n).padStart(4)}  ${r.ns.map((x) => x.toFixed(0)).join(' ')}`);
