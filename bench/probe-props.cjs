// Ad hoc (not committed): where cudaGetDeviceProperties' time goes on the GPU machine.
const { cudart } = require('../dist');
const S = require('../dist/structs/runtime.js');
const M = require('../dist/ffi/marshal.js');
const koffi = require('koffi');
const lib = koffi.load(cudart.libraryInfo().path);
const raw = lib.func('int cudaGetDeviceProperties(void *, int)');
cudart.cudaSetDevice(0); cudart.cudaFree(null);
function time(fn, n) { const r = []; for (let k = 0; k < 9; k++) { const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) fn(); r.push(Number(process.hrtime.bigint() - t) / n); } return r.sort((a, b) => a - b)[4]; }
const buf = new Uint8Array(1008);
let slab = new ArrayBuffer(1 << 20), used = 0;
const cases = {
  rawReused: () => raw(buf, 0),
  rawFreshU8: () => raw(new Uint8Array(1008), 0),
  alloc1008: () => M.alloc(1008),
  bigSlab: () => { if (used + 1008 > slab.byteLength) { slab = new ArrayBuffer(1 << 20); used = 0; } const u = new Uint8Array(slab, used, 1008); used += 1008; return u; },
  newProp: () => new S.cudaDeviceProp(),
  newDim3: () => new S.dim3(),
  facade: () => cudart.cudaGetDeviceProperties(0),
  facade5: () => { const p = cudart.cudaGetDeviceProperties(0)[1]; return p.name.length + p.totalGlobalMem + p.multiProcessorCount + p.major + p.minor; },
  name: (() => { const p = cudart.cudaGetDeviceProperties(0)[1]; return () => p.name; })(),
  totalGlobalMem: (() => { const p = cudart.cudaGetDeviceProperties(0)[1]; return () => p.totalGlobalMem; })(),
  major: (() => { const p = cudart.cudaGetDeviceProperties(0)[1]; return () => p.major; })(),
  getDevice: () => cudart.cudaGetDevice(),
};
for (let round = 0; round < 2; round++) for (const [k, fn] of Object.entries(cases)) { fn(); console.log(round, k, time(fn, 5000).toFixed(1)); }
