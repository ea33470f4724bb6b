// What the runtime-API examples share: checked calls, the no-GPU message, the examples' kernels
// (examples/kernels/*.fatbin, built by tools/build-kernels.sh), resources freed at the end, the
// result check, and the run that prints `Result = PASS` or sets a failing exit status.
import * as path from 'node:path';
import koffi from 'koffi';
import { cudart } from 'cuda-bindings';
import type { OkOutputs } from 'cuda-bindings';
import { CudaCallError } from './driver';

export { CudaCallError };

const { cudaError_t } = cudart;

/** The outputs of a result when it succeeded, none of them null. */
type Outputs<R> = { [K in keyof OkOutputs<R>]: NonNullable<OkOutputs<R>[K]> };

/** "cudaErrorInvalidValue (1): invalid argument" */
function describeError(err: cudart.cudaError_t): string {
  return `${cudart.cudaGetErrorName(err)[1]} (${err}): ${cudart.cudaGetErrorString(err)[1]}`;
}

/** The outputs of a runtime call that must succeed; throws CudaCallError naming `what` and the error. */
export function check<R extends readonly [cudart.cudaError_t, ...unknown[]]>(r: R, what: string): Outputs<R> {
  const [err, ...out] = r;
  if (err !== cudaError_t.cudaSuccess) throw new CudaCallError(`${what} failed: ${describeError(err)}`);
  return out as Outputs<R>;
}

/** 13000 → "13.0" */
export function cudaVersion(v: number): string {
  return `${Math.floor(v / 1000)}.${(v % 1000) / 10}`;
}

/** Why the GPU cannot be used, in one line, or null when there is a driver and a device. */
function noGpuReason(): string | null {
  let runtime: number;
  try {
    [runtime] = check(cudart.cudaRuntimeGetVersion(), 'cudaRuntimeGetVersion');
  } catch (e) {
    if (!(e instanceof cudart.LibraryLoadError)) throw e;
    return `needs libcudart, which could not be loaded: ${e.message.split('\n').pop()}`;
  }
  const [err, count] = cudart.cudaGetDeviceCount();
  if (err === cudaError_t.cudaErrorInsufficientDriver) {
    const [, driver] = cudart.cudaDriverGetVersion(); // 0 when no driver is installed
    return driver
      ? `the CUDA driver supports CUDA ${cudaVersion(driver)}, older than the runtime's ${cudaVersion(runtime)} (cudaErrorInsufficientDriver): update the NVIDIA driver`
      : 'no CUDA driver found (cudaErrorInsufficientDriver): install the NVIDIA driver or check LD_LIBRARY_PATH';
  }
  if (err === cudaError_t.cudaErrorNoDevice || (err === cudaError_t.cudaSuccess && !count)) {
    return 'no CUDA device found (cudaErrorNoDevice): check that a GPU is installed and visible (CUDA_VISIBLE_DEVICES)';
  }
  if (err !== cudaError_t.cudaSuccess) return `cudaGetDeviceCount failed: ${describeError(err)}`;
  return null;
}

/** True when there is a driver and a device; otherwise prints one line saying why to stderr and returns false. */
export function requireGpu(example: string): boolean {
  const reason = noGpuReason();
  if (reason !== null) console.error(`${example}: ${reason}`);
  return reason === null;
}

const libraries = new Map<string, cudart.cudaLibrary_t>();
const kernelNames = new Map<bigint, string>();

/** A kernel of examples/kernels/<file> (a fatbin); the library stays loaded until the example ends. */
export function loadKernel(file: string, name: string): cudart.cudaKernel_t {
  let lib = libraries.get(file);
  if (lib === undefined) {
    const where = path.join(__dirname, '..', 'kernels', file);
    [lib] = check(cudart.cudaLibraryLoadFromFile(where, null, null, 0, null, null, 0), `cudaLibraryLoadFromFile(${where})`);
    libraries.set(file, lib);
  }
  const [kernel] = check(cudart.cudaLibraryGetKernel(lib, name), `cudaLibraryGetKernel(${file}, ${name})`);
  kernelNames.set(kernel, name);
  return kernel;
}

/** A one-dimensional dim3. */
export function dim(x: number): cudart.dim3 {
  return new cudart.dim3({ x, y: 1, z: 1 });
}

/** Blocks of `threads` enough for `n` elements. */
export function blocksFor(n: number, threads: number): number {
  return Math.ceil(n / threads);
}

/** cudaLaunchKernel on a one-dimensional grid, checked. */
export function launch(
  kernel: cudart.cudaKernel_t,
  blocks: number,
  threads: number,
  args: cudart.KernelArgInput[] | cudart.KernelArgs,
  stream: cudart.cudaStream_t | null = null,
  sharedMem = 0,
): void {
  const name = kernelNames.get(kernel) ?? 'kernel';
  check(
    cudart.cudaLaunchKernel(kernel, dim(blocks), dim(threads), args, sharedMem, stream),
    `cudaLaunchKernel(${name}<<<${blocks}, ${threads}, ${sharedMem}>>>)`,
  );
}

/** Milliseconds between two recorded events that have completed. */
export function elapsedMs(start: cudart.cudaEvent_t, stop: cudart.cudaEvent_t): number {
  return check(cudart.cudaEventElapsedTime(start, stop), 'cudaEventElapsedTime')[0];
}

/** Page-locked host memory seen from JS: its address (for CUDA) and its floats (for JS). */
export interface PinnedFloats {
  ptr: bigint;
  data: Float32Array;
}

/** The address of element i of pinned floats. */
export function at(p: PinnedFloats, i: number): bigint {
  return p.ptr + BigInt(i * 4);
}

/** What an example allocates and creates, released in reverse order when it ends. */
export class Resources {
  private readonly cleanup: (() => unknown)[] = [];

  defer(release: () => unknown): void {
    this.cleanup.push(release);
  }

  /** Device memory (cudaMalloc). */
  malloc(bytes: number): bigint {
    const [p] = check(cudart.cudaMalloc(bytes), `cudaMalloc(${bytes})`);
    this.defer(() => cudart.cudaFree(p));
    return p;
  }

  /** `n` floats of page-locked host memory (cudaHostAlloc with `flags`). */
  pinnedFloats(n: number, flags: number = cudart.cudaHostAllocDefault): PinnedFloats {
    const [ptr] = check(cudart.cudaHostAlloc(n * 4, flags), `cudaHostAlloc(${n * 4}, ${flags})`);
    this.defer(() => cudart.cudaFreeHost(ptr));
    return { ptr, data: new Float32Array(koffi.view(ptr, n * 4)) };
  }

  stream(flags: number = cudart.cudaStreamDefault): cudart.cudaStream_t {
    const [s] = check(cudart.cudaStreamCreateWithFlags(flags), 'cudaStreamCreateWithFlags');
    this.defer(() => cudart.cudaStreamDestroy(s));
    return s;
  }

  event(): cudart.cudaEvent_t {
    const [e] = check(cudart.cudaEventCreate(), 'cudaEventCreate');
    this.defer(() => cudart.cudaEventDestroy(e));
    return e;
  }

  /** Releases everything, last first. Waits (off the JS thread) for JS host functions still pending first. */
  async release(): Promise<void> {
    if (cudart.pendingHostFunctions() > 0) await cudart.async.cudaDeviceSynchronize();
    for (const release of this.cleanup.splice(0).reverse()) release();
    for (const lib of libraries.values()) cudart.cudaLibraryUnload(lib);
    libraries.clear();
  }
}

/**
 * Checks every element against its expected value, within `tolerance`; prints how many are wrong
 * and the first of them to stderr. True when all are right.
 */
export function verify(what: string, actual: ArrayLike<number>, expected: (i: number) => number, tolerance = 0): boolean {
  let bad = 0;
  let first = -1;
  for (let i = 0; i < actual.length; i++) {
    if (!(Math.abs(actual[i] - expected(i)) <= tolerance)) {
      if (first < 0) first = i;
      bad++;
    }
  }
  if (bad > 0)
    console.error(
      `${what}: ${bad} of ${actual.length} elements are wrong; the first is [${first}] = ${actual[first]}, expected ${expected(first)}`,
    );
  return bad === 0;
}

/** The device's name and compute capability, as the samples print it. */
export function deviceLine(device = 0): string {
  const [prop] = check(cudart.cudaGetDeviceProperties(device), `cudaGetDeviceProperties(${device})`);
  return `GPU Device ${device}: "${prop.name}" with compute capability ${prop.major}.${prop.minor}`;
}

/**
 * Runs an example: exit status 1 with one line on stderr when there is no GPU; otherwise runs
 * `body`, releases its resources and prints `Result = PASS` when it returned true. A failed call
 * or a wrong result prints why and sets exit status 1.
 */
export function runExample(name: string, body: (r: Resources) => boolean | Promise<boolean>): void {
  if (!requireGpu(name)) {
    process.exitCode = 1;
    return;
  }
  const resources = new Resources();
  const finish = (passed: boolean) => {
    console.log(`Result = ${passed ? 'PASS' : 'FAIL'}`);
    process.exitCode = passed ? 0 : 1;
  };
  (async () => {
    try {
      return await body(resources);
    } finally {
      await resources.release();
    }
  })().then(finish, (e: unknown) => {
    console.error(e instanceof CudaCallError ? `${name}: ${e.message}` : e instanceof Error ? (e.stack ?? e.message) : String(e));
    finish(false);
  });
}
