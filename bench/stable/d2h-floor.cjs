// What the D2H probes (d2h-steps, d2h-dest, d2h-setup, d2h-contexts, d2h-gap) share: the floor's
// synchronous 4-byte cudaMemcpy to the host (koffi declarations of their own, as ops.ts's koffi floor
// has), device memory to copy from, the timing of a loop of copies, and one launch of the `empty`
// kernel of bench/kernels.cu.
const path = require('node:path');
const koffi = require('koffi');
const { cudart } = require(path.resolve('dist'));

/** libcudart, the library the facade loaded, declared again by koffi. */
const lib = koffi.load(cudart.libraryInfo().path);
const memcpy = lib.func('int cudaMemcpy(void *dst, void *src, size_t n, int kind)');
const malloc = lib.func('int cudaMalloc(void *p, size_t n)');
/** cudaMemcpy's kind for device to host. */
const D2H = 2;

/** Throws naming `what` unless `status` is cudaSuccess. */
function ok(status, what) {
  if (status !== 0) throw new Error(`${what} failed with status ${status}`);
}

/** The address of 1 MiB of device memory from cudaMalloc. */
function deviceMemory() {
  const slot = new BigUint64Array(1);
  ok(malloc(slot, 1 << 20), 'cudaMalloc');
  return slot[0];
}

/** The floor's D2H: a function that copies 4 bytes of fresh device memory to `dst` (an Int32Array of its own unless given). */
function floorD2H(dst = new Int32Array(1)) {
  const d = deviceMemory();
  return () => memcpy(dst, d, 4, D2H);
}

/** The fastest of `loops` loops of `calls` calls of `f`, in ns a call. */
function fastest(f, calls = 1500, loops = 7) {
  let best = Infinity;
  for (let r = 0; r < loops; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) f();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / calls);
  }
  return best;
}

/** Launches `cubin`'s `empty` kernel once on `stream` (null: the legacy default stream) and waits for it. */
function launchEmpty(cubin, stream) {
  const [loaded, l] = cudart.cudaLibraryLoadFromFile(cubin, null, null, 0, null, null, 0);
  ok(loaded, 'cudaLibraryLoadFromFile');
  const [found, k] = cudart.cudaLibraryGetKernel(l, 'empty');
  ok(found, 'cudaLibraryGetKernel');
  const g = new cudart.dim3({ x: 1, y: 1, z: 1 });
  ok(cudart.cudaLaunchKernel(k, g, g, null, 0, stream)[0], 'cudaLaunchKernel');
  ok((stream === null ? cudart.cudaDeviceSynchronize() : cudart.cudaStreamSynchronize(stream))[0], 'the wait for the launch');
}

/** A new non-blocking stream, as the stable run's servers make theirs. */
function createdStream() {
  const [made, s] = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking);
  ok(made, 'cudaStreamCreateWithFlags');
  return s;
}

module.exports = { lib, memcpy, D2H, ok, deviceMemory, floorD2H, fastest, launchEmpty, createdStream };
