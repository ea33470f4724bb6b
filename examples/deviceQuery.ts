// deviceQuery: what CUDA's sample of that name prints, through the runtime bindings.
//   npx tsx examples/deviceQuery.ts
// Exits with status 1, and one line on stderr saying why, when libcudart, the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import type { OkOutputs } from 'cuda-bindings';

const { cudaError_t, cudaDeviceAttr: A } = cudart;

/** 13000 → "13.0" */
function version(v: number): string {
  return `${Math.floor(v / 1000)}.${(v % 1000) / 10}`;
}

/** Thrown when a call fails; main() prints it and sets the exit status. */
class CudaCallError extends Error {}

/** The outputs of a call that must succeed. */
function must<R extends readonly [cudart.cudaError_t, ...unknown[]]>(
  r: R,
  what: string,
): { [K in keyof OkOutputs<R>]: NonNullable<OkOutputs<R>[K]> } {
  const [err, ...out] = r;
  if (err !== cudaError_t.cudaSuccess) {
    const [, name] = cudart.cudaGetErrorName(err);
    const [, text] = cudart.cudaGetErrorString(err);
    throw new CudaCallError(`${what} failed: ${name} (${err}): ${text}`);
  }
  return out as { [K in keyof OkOutputs<R>]: NonNullable<OkOutputs<R>[K]> };
}

/** CUDA cores per multiprocessor, as the sample's _ConvertSMVer2Cores; undefined where unknown. */
function coresPerSM(major: number, minor: number): number | undefined {
  const table: Record<string, number> = {
    '7.0': 64,
    '7.2': 64,
    '7.5': 64,
    '8.0': 64,
    '8.6': 128,
    '8.7': 128,
    '8.9': 128,
    '9.0': 128,
    '10.0': 128,
    '10.1': 128,
    '10.3': 128,
    '11.0': 128,
    '12.0': 128,
    '12.1': 128,
  };
  return table[`${major}.${minor}`];
}

function uuidString(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const yesNo = (v: number | boolean): string => (v ? 'Yes' : 'No');

function line(label: string, value: string | number): void {
  console.log(`  ${(label + ':').padEnd(50)}${value}`);
}

const computeModes: Record<number, string> = {
  [cudart.cudaComputeMode.cudaComputeModeDefault]: 'Default (multiple host threads can use ::cudaSetDevice() with device simultaneously)',
  [cudart.cudaComputeMode.cudaComputeModeExclusive]:
    'Exclusive (only one host thread in one process is able to use ::cudaSetDevice() with this device)',
  [cudart.cudaComputeMode.cudaComputeModeProhibited]: 'Prohibited (no host thread can use ::cudaSetDevice() with this device)',
  [cudart.cudaComputeMode.cudaComputeModeExclusiveProcess]:
    'Exclusive Process (many threads in one process is able to use ::cudaSetDevice() with this device)',
};

function printDevice(dev: number, driver: number, runtime: number): string {
  const [prop] = must(cudart.cudaGetDeviceProperties(dev), `cudaGetDeviceProperties(${dev})`);
  const attr = (a: cudart.cudaDeviceAttr, what: string): number =>
    must(cudart.cudaDeviceGetAttribute(a, dev), `cudaDeviceGetAttribute(${what}, ${dev})`)[0];
  const [busId] = must(cudart.cudaDeviceGetPCIBusId(32, dev), `cudaDeviceGetPCIBusId(${dev})`);
  must(cudart.cudaSetDevice(dev), `cudaSetDevice(${dev})`);
  const [free, total] = must(cudart.cudaMemGetInfo(), `cudaMemGetInfo on device ${dev}`);

  const clockKHz = attr(A.cudaDevAttrClockRate, 'cudaDevAttrClockRate');
  const memClockKHz = attr(A.cudaDevAttrMemoryClockRate, 'cudaDevAttrMemoryClockRate');
  const busWidth = attr(A.cudaDevAttrGlobalMemoryBusWidth, 'cudaDevAttrGlobalMemoryBusWidth');
  const timeout = attr(A.cudaDevAttrKernelExecTimeout, 'cudaDevAttrKernelExecTimeout');
  const computeMode = attr(A.cudaDevAttrComputeMode, 'cudaDevAttrComputeMode');
  const cores = coresPerSM(prop.major, prop.minor);
  const mb = (n: number): string => `${Math.round(n / 1048576)} MBytes (${n} bytes)`;

  console.log(`\nDevice ${dev}: "${prop.name}"`);
  line('UUID', uuidString(prop.uuid.bytes));
  line('PCI bus id', busId);
  line('CUDA Driver Version / Runtime Version', `${version(driver)} / ${version(runtime)}`);
  line('CUDA Capability Major/Minor version number', `${prop.major}.${prop.minor}`);
  line('Total amount of global memory', mb(prop.totalGlobalMem));
  line('Free / total memory (cudaMemGetInfo)', `${Math.round(free / 1048576)} / ${Math.round(total / 1048576)} MBytes`);
  if (cores !== undefined) {
    line(
      `(${String(prop.multiProcessorCount).padStart(3)}) Multiprocessors, (${String(cores).padStart(3)}) CUDA Cores/MP`,
      `${prop.multiProcessorCount * cores} CUDA Cores`,
    );
  } else {
    line('Multiprocessors', prop.multiProcessorCount);
  }
  line('GPU Max Clock rate', `${(clockKHz / 1e3).toFixed(0)} MHz (${(clockKHz / 1e6).toFixed(2)} GHz)`);
  line('Memory Clock rate', `${(memClockKHz / 1e3).toFixed(0)} MHz`);
  line('Memory Bus Width', `${busWidth}-bit`);
  line('L2 Cache Size', `${prop.l2CacheSize} bytes`);
  line('Maximum persisting L2 cache size', `${prop.persistingL2CacheMaxSize} bytes`);
  line('Total amount of constant memory', `${prop.totalConstMem} bytes`);
  line('Total amount of shared memory per block', `${prop.sharedMemPerBlock} bytes`);
  line('Maximum shared memory per block (opt-in)', `${prop.sharedMemPerBlockOptin} bytes`);
  line('Total shared memory per multiprocessor', `${prop.sharedMemPerMultiprocessor} bytes`);
  line('Total number of registers available per block', prop.regsPerBlock);
  line('Total number of registers per multiprocessor', prop.regsPerMultiprocessor);
  line('Warp size', prop.warpSize);
  line('Maximum number of threads per multiprocessor', prop.maxThreadsPerMultiProcessor);
  line('Maximum number of threads per block', prop.maxThreadsPerBlock);
  line('Maximum number of blocks per multiprocessor', prop.maxBlocksPerMultiProcessor);
  line('Max dimension size of a thread block (x,y,z)', `(${prop.maxThreadsDim.join(', ')})`);
  line('Max dimension size of a grid size    (x,y,z)', `(${prop.maxGridSize.join(', ')})`);
  line('Maximum memory pitch', `${prop.memPitch} bytes`);
  line('Texture alignment', `${prop.textureAlignment} bytes`);
  line('Concurrent copy and kernel execution', `${yesNo(prop.asyncEngineCount > 0)} with ${prop.asyncEngineCount} copy engine(s)`);
  line('Run time limit on kernels', yesNo(timeout));
  line('Integrated GPU sharing Host Memory', yesNo(prop.integrated));
  line('Support host page-locked memory mapping', yesNo(prop.canMapHostMemory));
  line('Device has ECC support', prop.ECCEnabled ? 'Enabled' : 'Disabled');
  line('Device supports Unified Addressing (UVA)', yesNo(prop.unifiedAddressing));
  line('Device supports Managed Memory', yesNo(prop.managedMemory));
  line('Device supports Compute Preemption', yesNo(prop.computePreemptionSupported));
  line('Supports Cooperative Kernel Launch', yesNo(prop.cooperativeLaunch));
  line('Supports Thread Block Clusters', yesNo(prop.clusterLaunch));
  line('Device PCI Domain ID / Bus ID / location ID', `${prop.pciDomainID} / ${prop.pciBusID} / ${prop.pciDeviceID}`);
  console.log('  Compute Mode:');
  console.log(`     < ${computeModes[computeMode] ?? `unknown (${computeMode})`} >`);
  return prop.name;
}

function main(): number {
  // Loading libcudart is the first thing that can fail.
  let runtime: number;
  let libPath: string;
  try {
    [runtime] = must(cudart.cudaRuntimeGetVersion(), 'cudaRuntimeGetVersion');
    libPath = cudart.libraryInfo().path;
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  console.log(`CUDA Runtime Version: ${version(runtime)} (${runtime})`);
  console.log(`libcudart: ${libPath}`);

  const [, driver] = cudart.cudaDriverGetVersion(); // 0 when no driver is installed
  const [cerr, count] = cudart.cudaGetDeviceCount();
  if (cerr === cudaError_t.cudaErrorInsufficientDriver) {
    if (!driver) {
      console.error('no CUDA driver found (cudaErrorInsufficientDriver): install the NVIDIA driver or check LD_LIBRARY_PATH');
    } else {
      console.error(
        `the CUDA driver supports CUDA ${version(driver)}, older than the runtime's ${version(runtime)} (cudaErrorInsufficientDriver): update the NVIDIA driver`,
      );
    }
    return 1;
  }
  if (cerr === cudaError_t.cudaErrorNoDevice || (cerr === cudaError_t.cudaSuccess && !count)) {
    console.error('no CUDA device found (cudaErrorNoDevice): check that a GPU is installed and visible (CUDA_VISIBLE_DEVICES)');
    return 1;
  }
  if (cerr !== cudaError_t.cudaSuccess) {
    const [, name] = cudart.cudaGetErrorName(cerr);
    const [, text] = cudart.cudaGetErrorString(cerr);
    console.error(`cudaGetDeviceCount failed: ${name} (${cerr}): ${text}`);
    return 1;
  }
  const n = count ?? 0;
  console.log(`CUDA Driver Version: ${version(driver ?? 0)} (${driver})`);
  console.log(`Detected ${n} CUDA Capable device(s)`);

  try {
    const names: string[] = [];
    for (let dev = 0; dev < n; dev++) names.push(printDevice(dev, driver ?? 0, runtime));

    if (n > 1) {
      console.log('');
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          if (i === j) continue;
          const [can] = must(cudart.cudaDeviceCanAccessPeer(i, j), `cudaDeviceCanAccessPeer(${i}, ${j})`);
          console.log(`> Peer access from ${names[i]} (GPU${i}) -> ${names[j]} (GPU${j}) : ${yesNo(can)}`);
        }
      }
    }
  } catch (e) {
    if (!(e instanceof CudaCallError)) throw e;
    console.error(e.message);
    return 1;
  }

  console.log(
    `\ndeviceQuery, CUDA Driver = CUDART, CUDA Driver Version = ${version(driver ?? 0)}, CUDA Runtime Version = ${version(runtime)}, NumDevs = ${n}`,
  );
  console.log('Result = PASS');
  return 0;
}

process.exitCode = main();
