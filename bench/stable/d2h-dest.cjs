// Does a synchronous 4-byte D2H copy take longer into some host memory than into other? The stable
// run's own processes put core's D2H row 1.16x the floor's, where one process puts it at 1.01x, and
// each process copies into a 4-byte Int32Array of its own. This times the floor's cudaMemcpy (a koffi
// declaration of its own, as d2h-steps.cjs) into destinations of several kinds and alignments, in
// turns, in one process, after one kernel launch (as every process of the stable run has made):
// the fastest of 7 loops of 1,500 calls, ns a call, for each of 3 passes, with the address's offset
// in its page.
//   npm run build && nvcc -O2 -arch=native -cubin -o /tmp/k.cubin bench/kernels.cu
//   taskset -c 8 node bench/stable/d2h-dest.cjs /tmp/k.cubin
const koffi = require('koffi');
const { lib, memcpy, D2H, ok, deviceMemory, fastest, launchEmpty } = require('./d2h-floor.cjs');
const memcpyAddr = lib.func('int cudaMemcpy(uint64_t dst, void *src, size_t n, int kind)');
const mallocHost = lib.func('int cudaMallocHost(void *p, size_t n)');
const d = deviceMemory();
const slot = new BigUint64Array(1);
ok(mallocHost(slot, 4096), 'cudaMallocHost');
const pinned = slot[0];

// One kernel launch first, as every process of the stable run makes one before its rows.
launchEmpty(process.argv[2], null);

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
  return fastest(() => f(dst, d, 4, D2H));
}

const rows = dests.map(([name, v]) => ({ name, at: addr(v), ns: [] }));
for (let pass = 0; pass < 3; pass++) dests.forEach(([, v], i) => rows[i].ns.push(time(v)));
for (const r of rows)
  console.log(`${r.name.padEnd(34)} page+${String(r.at % 4096n).padStart(4)}  ${r.ns.map((x) => x.toFixed(0)).join(' ')}`);
