// The driver API of any age, for the probe: libcuda opened without the CUDA 13 check that the
// bindings need, so that a machine whose driver is too old for the runtime still lists its GPUs.
// Only calls that every driver since CUDA 11 has, each with its C prototype from the declarations.
import { lazyLibrary } from '../../ffi/binding';
import { cudaSpec } from '../../ffi/cuda-lib.gen';
import { CudaBindingsError } from '../../ffi/errors';
import { CUdevice_attribute } from '../../driver/enums.gen';

/** libcuda of any version: its version is read, never refused. */
const anyLibcuda = lazyLibrary({ ...cudaSpec, check: () => 0 }, () => require('../../ffi/cuda.gen') as typeof import('../../ffi/cuda.gen'));

/** What the driver API says of one GPU, whatever the driver's age. */
export interface DriverDevice {
  /** CUDA's ordinal of the device. */
  ordinal: number;
  /** The product name. */
  name: string;
  /** `GPU-xxxxxxxx-…`, as nvidia-smi prints it. */
  uuid: string;
  /** `0000:18:00.0`. */
  pciBusId: string;
  /** Bytes. */
  totalMemory: number;
  /** `major.minor`. */
  computeCapability: string;
  /** Streaming multiprocessors. */
  multiprocessors: number;
  /** Peak SM clock, MHz. */
  clockMHz: number;
  /** Peak memory clock, MHz. */
  memoryClockMHz: number;
}

/** A failed driver call of the probe: names the call and its CUresult. */
function failed(fn: string, status: number): CudaBindingsError {
  return new CudaBindingsError(`probeDriver: ${fn} failed with CUresult ${status}`, { code: status, codeName: `CUresult ${status}`, fn });
}

/** Calls libcuda's `fn` with `args`; throws naming the call where its status is not 0. */
function call(fn: string, ...args: unknown[]): void {
  const status = anyLibcuda.bind(fn as never)(...args) as number;
  if (status !== 0) throw failed(fn, status);
}

/** `GPU-431c7c37-cdb8-…` from the 16 bytes of a CUuuid. */
function uuidText(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** One device's identity and size from the driver API. */
function driverDevice(ordinal: number): DriverDevice {
  const i = new Int32Array(1);
  call('cuDeviceGet', i, ordinal);
  const dev = i[0];
  const attr = (a: number) => {
    call('cuDeviceGetAttribute', i, a, dev);
    return i[0];
  };
  const text = Buffer.alloc(256);
  call('cuDeviceGetName', text, text.length, dev);
  const name = text.toString('utf8').split('\0')[0];
  text.fill(0);
  call('cuDeviceGetPCIBusId', text, 64, dev);
  const pciBusId = text.toString('utf8').split('\0')[0];
  const uuid = new Uint8Array(16);
  call('cuDeviceGetUuid', uuid, dev);
  const bytes = new BigUint64Array(1);
  call('cuDeviceTotalMem', bytes, dev);
  const A = CUdevice_attribute;
  return {
    ordinal,
    name,
    uuid: uuidText(uuid),
    pciBusId,
    totalMemory: Number(bytes[0]),
    computeCapability: `${attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)}.${attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)}`,
    multiprocessors: attr(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
    clockMHz: attr(A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000,
    memoryClockMHz: attr(A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000,
  };
}

/**
 * The driver's CUDA version (cuDriverGetVersion, 12040 for 12.4) and its GPUs, through libcuda of any
 * age. Throws LibraryLoadError where there is no libcuda, or a CudaBindingsError naming the call that failed.
 */
export function probeDriver(): { version: number; devices: DriverDevice[] } {
  const i = new Int32Array(1);
  call('cuInit', 0);
  call('cuDriverGetVersion', i);
  const version = i[0];
  call('cuDeviceGetCount', i);
  return { version, devices: Array.from({ length: i[0] }, (_, d) => driverDevice(d)) };
}
