// A kernel of a loaded Module: its attributes, occupancy, and launches with typed arguments.
// module.kernel(name) and kernel.prepare() are added by launch/extensions.ts (see base/extend.ts).
import { describe } from '../../ffi/checks';
import * as cudart from '../../runtime';
import { check, runtimeError } from '../base/errors';
import { Device } from '../device/Device';
import type { Module } from './Module';
import { openArg } from '../base/lifetime';
import { foreignValue } from '../device/foreign';
import { hasHostArguments, launchWithHostArguments, launchWithHostArgumentsAsync } from './HostArgument';
import { completion } from '../base/completion';
import { addressNumber } from '../base/direct';
import { kernelArgument, type KernelArgument } from './kernel-argument';
import { checkOptions } from '../base/options';
import { LAUNCH_CONFIG_KEYS, setDim, usesExtendedOptions, withCurrentStream, type LaunchConfig } from './launch-config';
import { KernelOccupancy, LaunchLimits, onDevice } from './occupancy';
import { ExtendedLauncher } from './extended-launch';
import { DirectLaunch } from './direct-launch';

/** What cudaFuncGetAttributes says about a kernel on a device. */
export interface KernelAttributes {
  /** The most threads a block of this kernel may have (limited by its register use). */
  maxThreadsPerBlock: number;
  /** Registers each thread uses. */
  numRegs: number;
  /** Bytes of static shared memory per block (`__shared__` arrays of fixed size). */
  sharedSizeBytes: number;
  /** Bytes of `__constant__` memory the kernel uses. */
  constSizeBytes: number;
  /** Bytes of local memory per thread (register spills, local arrays). */
  localSizeBytes: number;
  /** The most dynamic shared memory a launch may ask for, in bytes (raise it with setAttribute('MaxDynamicSharedMemorySize', n)). */
  maxDynamicSharedSizeBytes: number;
  /** The PTX ISA version it was compiled for, as major * 10 + minor (e.g. 90 for sm_90's). */
  ptxVersion: number;
  /** The architecture of its binary code, as major * 10 + minor (e.g. 90 for sm_90). */
  binaryVersion: number;
  /** Whether global loads are cached in L1 (compiled with `-Xptxas -dlcm=ca`). */
  cacheModeCA: boolean;
  /** The preferred share of L1 given to shared memory, in percent (-1: no preference). */
  preferredSharedMemoryCarveout: number;
  /** Whether the kernel must be launched with a cluster (compiled with `__cluster_dims__` or asking for one). */
  clusterDimMustBeSet: boolean;
  /** The cluster size the kernel was compiled with (`__cluster_dims__(x, y, z)`) as [x, y, z], or null when it has none. */
  requiredClusterDim: [number, number, number] | null;
  /** The cluster width it must be launched with (`__cluster_dims__`' x, or setAttribute('RequiredClusterWidth', n)); 0 when none. */
  requiredClusterWidth: number;
  /** The cluster height it must be launched with; 0 when none. */
  requiredClusterHeight: number;
  /** The cluster depth it must be launched with; 0 when none. */
  requiredClusterDepth: number;
  /** Whether clusters larger than the portable 8 blocks are allowed (setAttribute('NonPortableClusterSizeAllowed', 1)). */
  nonPortableClusterSizeAllowed: boolean;
  /** The cluster scheduling policy preference (a cudaClusterSchedulingPolicy value; 0 is the default). */
  clusterSchedulingPolicyPreference: number;
}

/** One parameter of a kernel as the driver lays it out (cudaFuncGetParamInfo): where it starts in the argument buffer and how big it is. */
export interface KernelParamInfo {
  /** Its byte offset in the kernel's parameter buffer. */
  offset: number;
  /** Its size in bytes (8 for a pointer, 12 for a `float3` passed by value, …). */
  size: number;
}

/** Attributes a kernel can be given (cudaFuncAttribute without its prefix). */
export type SettableKernelAttribute =
  | 'MaxDynamicSharedMemorySize'
  | 'PreferredSharedMemoryCarveout'
  | 'RequiredClusterWidth'
  | 'RequiredClusterHeight'
  | 'RequiredClusterDepth'
  | 'NonPortableClusterSizeAllowed'
  | 'ClusterSchedulingPolicyPreference';

/** The device a kernel method is about: `device`, or the current one when absent. */
function deviceArg(device: Device | undefined, where: string): Device {
  if (device === undefined) return Device.current();
  if (!(device instanceof Device)) throw new TypeError(`${where}: parameter 'device' must be a Device, got ${describe(device)}`);
  return device;
}

/**
 * A kernel (a `__global__` function) of a loaded {@link Module}, got with `module.kernel(name)`:
 * launches with typed arguments, its attributes, and occupancy.
 *
 * Arguments go in the order of the C parameters: a {@link DeviceBuffer} (its address), a mapped
 * {@link HostBuffer}, a typed scalar (`i32(n)`, `f32(x)`, … — a plain number is refused because its C
 * type is unknown), a bigint pointer, a texture or surface object, a tensor map, or `In`/`Out`/`InOut`
 * host arrays (copied in and back), or a graph's ConditionalHandle (in stream work captured into it). Lifetime: the kernel has nothing to free; it is usable while its
 * Module is open and keeps the Module alive. A failed launch throws {@link CudaError}; errors inside
 * the kernel surface at the next synchronize.
 *
 * @example
 * ```ts
 * const program = Program.compile(`extern "C" __global__ void scale(float *x, float a, int n) {
 *   int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }`);
 * using module = program.load();
 * const scale = module.kernel('scale');
 * scale.launch({ grid: Math.ceil(n / 256), block: 256, stream }, buf, f32(2), i32(n));
 * await stream.synchronize();
 * ```
 */
export class Kernel {
  private readonly grid = new cudart.dim3();
  private readonly block = new cudart.dim3();
  /** `Kernel.launch(<name>)`, formatted once: the config check of every launch names it. */
  private readonly launchName: string;
  /** `cudaLaunchKernel(<name>)`, the call a refused launch names. */
  private readonly failedLaunch: string;
  /** The fast path of a launch like the last one (direct-launch.ts). */
  private readonly direct = new DirectLaunch();
  private extended?: ExtendedLauncher;
  private params?: readonly KernelParamInfo[];
  private occupancyView?: KernelOccupancy;
  /** @internal The cluster and occupancy limits extended launches are checked against, kept per device and shape. */
  readonly limits: LaunchLimits = new LaunchLimits(this);
  /** @internal The handle as a number (exact: an address is below 2^53), as core's launch fast paths pass it (launchKernelByAddress). */
  readonly handleNumber: number;

  /** @internal Use module.kernel(name). */
  constructor(
    /** The runtime handle (cudaKernel_t), for the `cuda-bindings/runtime` facade; valid while the module is open. */
    readonly handle: cudart.cudaKernel_t,
    /** The kernel's name as the module exports it (the mangled name unless declared `extern "C"`). */
    readonly name: string,
    /** The module it is in (kept alive by the kernel). */
    readonly module: Module,
  ) {
    this.launchName = `Kernel.launch(${name})`;
    this.failedLaunch = `cudaLaunchKernel(${name})`;
    this.handleNumber = addressNumber(handle, 'Kernel.fromHandle');
  }

  /**
   * Wraps a kernel handle (cudaKernel_t / CUkernel) of `module`, a Module loaded here or one wrapped
   * with {@link Module.fromHandle}. Nothing is freed by a kernel; it holds its module alive, and the
   * module holds its owner. `options.name` names it in errors (default: what cudaFuncGetName says).
   */
  static fromHandle(handle: cudart.cudaKernel_t | bigint | number, module: Module, options: { name?: string } = {}): Kernel {
    const fn = 'Kernel.fromHandle';
    checkOptions(fn, options, { name: true });
    const h = cudart.cudaKernel_t(foreignValue(handle, fn, 'handle'));
    openArg(module, 'Module', fn, 'module');
    if (options.name !== undefined && typeof options.name !== 'string')
      throw new TypeError(`${fn}: option 'name' must be a string, got ${describe(options.name)}`);
    return new Kernel(h, options.name ?? check(cudart.cudaFuncGetName(h), `${fn} (cudaFuncGetName)`), module);
  }

  /** Throws when the kernel's module was closed: the kernel's handle is gone with it. */
  private live(what: string): void {
    if (this.module.isClosed) throw new Error(`Kernel.${what}(${this.name}): the Module it belongs to was closed`);
  }

  /** Whether the module the kernel belongs to was closed (the kernel cannot be used then). */
  get isClosed(): boolean {
    return this.module.isClosed;
  }

  /**
   * Queues the kernel on `config.stream` with `args` (in the order of its C parameters) and returns
   * at once (cudaLaunchKernel; cudaLaunchKernelExC when the config asks for a cluster, a
   * cooperative or a programmatic launch). Throws RangeError for a bad grid or block, a cluster
   * larger than the kernel may have or a cooperative grid larger than the device holds at once,
   * TypeError for an argument of no known C type (a plain number), Error for a closed buffer or
   * module, CudaError when the launch is refused (too many threads, too much shared memory, …).
   */
  launch(config: LaunchConfig, ...args: KernelArgument[]): void {
    // A launch like the last one (same config object, arguments of the same types) goes straight to C;
    // the rest apart, so that this is small enough for V8 to inline into the caller's loop.
    if (this.module.isClosed || !this.direct.launch(this.handleNumber, config, args, this.failedLaunch)) this.launchChecked(config, args);
  }

  /** launch() through every check (a first launch, another config or other types, anything unusual): the general path. */
  private launchChecked(config: LaunchConfig, args: KernelArgument[]): void {
    this.live('launch');
    config = withCurrentStream(config, this.launchName);
    // In/Out/InOut host arrays go through temporary device buffers (HostArgument.ts).
    if (hasHostArguments(args)) return launchWithHostArguments(this, config, args);
    if (!config || typeof config !== 'object')
      throw new TypeError(
        `Kernel.launch(${this.name}): the first parameter must be a launch config { grid, block, sharedMem?, stream? }, got ${describe(config)}`,
      );
    checkOptions(this.launchName, config, LAUNCH_CONFIG_KEYS, 'config');
    if (config.stream !== undefined) openArg(config.stream, 'Stream', 'Kernel.launch', 'config.stream');
    // Clusters, cooperative and programmatic launches go through cudaLaunchKernelExC; a plain launch
    // pays five property reads for it.
    if (usesExtendedOptions(config))
      return (this.extended ??= new ExtendedLauncher()).launch(this, this.limits, config, this.pack(args), this.launchName);
    const sharedMem = config.sharedMem ?? 0;
    const err = cudart.cudaLaunchKernel(
      this.handle,
      setDim(this.grid, config.grid, 'grid', 'Kernel.launch'),
      setDim(this.block, config.block, 'block', 'Kernel.launch'),
      this.pack(args),
      sharedMem,
      config.stream?.handle ?? null,
    );
    if (err[0] !== cudart.cudaError_t.cudaSuccess) throw runtimeError(err[0], this.failedLaunch);
    this.direct.learn(config, args);
  }

  /**
   * Launches and resolves once the kernel is done, waiting off the JS thread; In/Out/InOut host
   * arrays are copied in and back off the JS thread too.
   */
  async launchAsync(config: LaunchConfig, ...args: KernelArgument[]): Promise<void> {
    config = withCurrentStream(config, `Kernel.launchAsync(${this.name})`);
    if (hasHostArguments(args)) return launchWithHostArgumentsAsync(this, config, args);
    this.launch(config, ...args);
    await completion(config.stream?.handle ?? null);
  }

  /** What the compiler and the driver say about the kernel on `device` (default: the current one): registers, shared, local and constant memory, cluster limits (cudaFuncGetAttributes). */
  attributes(device?: Device): KernelAttributes {
    this.live('attributes');
    // cudaFuncGetAttributes answers for the current device: `device` is made current for the call.
    const a = onDevice(device, 'Kernel.attributes', () => check(cudart.cudaFuncGetAttributes(this.handle), 'cudaFuncGetAttributes'));
    return {
      maxThreadsPerBlock: a.maxThreadsPerBlock,
      numRegs: a.numRegs,
      sharedSizeBytes: a.sharedSizeBytes,
      constSizeBytes: a.constSizeBytes,
      localSizeBytes: a.localSizeBytes,
      maxDynamicSharedSizeBytes: a.maxDynamicSharedSizeBytes,
      ptxVersion: a.ptxVersion,
      binaryVersion: a.binaryVersion,
      cacheModeCA: a.cacheModeCA !== 0,
      preferredSharedMemoryCarveout: a.preferredShmemCarveout,
      clusterDimMustBeSet: a.clusterDimMustBeSet !== 0,
      requiredClusterDim: a.requiredClusterWidth > 0 ? [a.requiredClusterWidth, a.requiredClusterHeight, a.requiredClusterDepth] : null,
      requiredClusterWidth: a.requiredClusterWidth,
      requiredClusterHeight: a.requiredClusterHeight,
      requiredClusterDepth: a.requiredClusterDepth,
      nonPortableClusterSizeAllowed: a.nonPortableClusterSizeAllowed !== 0,
      clusterSchedulingPolicyPreference: a.clusterSchedulingPolicyPreference,
    };
  }

  /** How many parameters the kernel takes (cuda.core's `num_arguments`): the length of {@link Kernel.argumentsInfo}. */
  get numArguments(): number {
    return this.argumentsInfo.length;
  }

  /**
   * The offset and size of each parameter in C order (cudaFuncGetParamInfo, asked until CUDA says
   * there are no more), read once: what a launch's argument buffer must hold.
   */
  get argumentsInfo(): readonly KernelParamInfo[] {
    this.live('argumentsInfo');
    if (this.params) return this.params;
    const out: KernelParamInfo[] = [];
    for (;;) {
      const [err, offset, size] = cudart.cudaFuncGetParamInfo(this.handle, out.length);
      // Past the last parameter: cudaErrorInvalidValue, which is then cleared.
      if (err === cudart.cudaError_t.cudaErrorInvalidValue) break;
      out.push({ offset: check([err, offset], `Kernel.argumentsInfo(${this.name}) (cudaFuncGetParamInfo ${out.length})`), size: size! });
    }
    cudart.cudaGetLastError();
    return (this.params = Object.freeze(out.map((p) => Object.freeze(p))));
  }

  /**
   * What the kernel can do on a device at once (cuda.core's `kernel.occupancy`): active blocks per
   * multiprocessor, the largest cooperative grid, the largest cluster, active clusters.
   */
  get occupancy(): KernelOccupancy {
    return (this.occupancyView ??= new KernelOccupancy(this));
  }

  /**
   * Sets an attribute of the kernel for `device` (default: the current one), e.g.
   * `setAttribute('MaxDynamicSharedMemorySize', 100 * 1024)` (bytes) before a launch that needs more
   * than 48 KiB. Returns the kernel; throws RangeError for an unknown attribute, CudaError for a value the device refuses.
   */
  setAttribute(attr: SettableKernelAttribute, value: number, device?: Device): this {
    this.live('setAttribute');
    device = deviceArg(device, 'Kernel.setAttribute');
    const code = (cudart.cudaFuncAttribute as unknown as Record<string, number>)[`cudaFuncAttribute${attr}`];
    if (code === undefined) throw new RangeError(`Kernel.setAttribute: no attribute named '${attr}'`);
    check(cudart.cudaKernelSetAttributeForDevice(this.handle, code, value, device.ordinal), 'cudaKernelSetAttributeForDevice');
    this.limits.clear();
    return this;
  }

  /** How many blocks of `blockSize` threads (with `sharedMem` bytes of dynamic shared memory each) fit on one multiprocessor of the current device at once. */
  maxActiveBlocksPerMultiprocessor(blockSize: number, sharedMem = 0): number {
    this.live('maxActiveBlocksPerMultiprocessor');
    return check(
      cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(this.handle, blockSize, sharedMem),
      'cudaOccupancyMaxActiveBlocksPerMultiprocessor',
    );
  }

  /**
   * The block size that keeps the most threads resident on the current device, and the smallest
   * grid that fills it (what cudaOccupancyMaxPotentialBlockSize computes in C++).
   */
  suggestedBlockSize(sharedMem = 0): {
    /** Threads per block (a multiple of the warp size) that keeps the most threads resident per multiprocessor. */
    blockSize: number;
    /** Blocks that fill every multiprocessor at that block size: resident blocks per multiprocessor times their count. */
    minGridSize: number;
  } {
    this.live('suggestedBlockSize');
    const device = Device.current();
    const limit = this.attributes(device).maxThreadsPerBlock;
    const warp = device.properties.warpSize;
    let best = { blockSize: 0, blocks: 0 };
    for (let size = Math.floor(limit / warp) * warp; size > 0; size -= warp) {
      const blocks = this.maxActiveBlocksPerMultiprocessor(size, sharedMem);
      if (blocks * size > best.blocks * best.blockSize) best = { blockSize: size, blocks };
    }
    return { blockSize: best.blockSize, minGridSize: best.blocks * device.properties.multiProcessorCount };
  }

  /** The arguments as the facade takes them (it packs them into the last launch's memory when the types match). */
  private pack(args: KernelArgument[]): cudart.KernelArgInput[] | null {
    if (args.length === 0) return null;
    const values = new Array<cudart.KernelArgInput>(args.length);
    for (let i = 0; i < args.length; i++) values[i] = kernelArgument(args[i], i, this.launchName);
    return values;
  }
}
