// Loaded device code (cubin, PTX or fatbin) and the kernels in it. A module is a CUDA library
// (cudaLibraryLoadData): it belongs to no context, so its kernels run on any device.
import * as fs from 'node:fs';
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource } from '../base/lifetime';
import { checkOptions } from '../base/options';
import { libraryLoad } from '../../runtime/async';
import { checkWaitOptions, unlessGivenUp, type WaitOptions } from '../../ffi/waits';
import { describe, checkPtxText, isOwnName } from '../../ffi/checks';
import { foreignValue } from '../device/foreign';
import { Device } from '../device/Device';
import { DeviceBuffer } from '../memory/DeviceBuffer';

/** How {@link Module.load} (and ObjectCode.load) maps names to the module's symbols. */
export interface ModuleOptions {
  /** Names to look kernels up by → the symbols they stand for (a Program's name expressions → lowered names). */
  names?: Readonly<Record<string, string>>;
}

const ELF = [0x7f, 0x45, 0x4c, 0x46];
const FATBIN = [0x50, 0xed, 0x55, 0xba];

/** Whether `b` starts with `magic`. */
function startsWith(b: Uint8Array, magic: number[]): boolean {
  return magic.every((x, i) => b[i] === x);
}

/** The options of `Module.loadAsync`: a load's, and when to give up waiting for it. */
export interface ModuleLoadAsyncOptions extends ModuleOptions, WaitOptions {}

/** The image to load: PTX gets the NUL the loader reads up to, which a JS buffer need not have. */
function loadImage(code: Uint8Array, fn: string): Uint8Array {
  if (!(code instanceof Uint8Array))
    throw new TypeError(`${fn}: parameter 'code' must be a file path or a Uint8Array of a cubin, fatbin or PTX, got ${describe(code)}`);
  if (code.length === 0) throw new RangeError(`${fn}: parameter 'code' is empty`);
  if (startsWith(code, ELF) || startsWith(code, FATBIN)) return code;
  // Anything else is PTX text, which the driver reads up to its first NUL.
  checkPtxText(code, fn, 'code');
  if (code[code.length - 1] === 0) return code;
  const image = new Uint8Array(code.length + 1);
  image.set(code);
  return image;
}

/**
 * Loaded device code (a cubin, fatbin or PTX) and the kernels in it. It is a CUDA library
 * (cudaLibraryLoadData), bound to no context, so its kernels run on any device. Made by
 * {@link Module.load}, `program.load()`, `objectCode.load()` or a Linker's output.
 *
 * Lifetime: close() unloads it (cudaLibraryUnload); its {@link Kernel}s keep it alive but cannot be
 * launched after it is closed (they throw Error). Loading code the driver rejects throws
 * {@link CudaError}.
 *
 * @example
 * ```ts
 * using module = Module.load('kernels.cubin');          // or the bytes of a cubin, fatbin or PTX
 * console.log(module.kernelNames());
 * module.kernel('saxpy').launch({ grid: 256, block: 256 }, x, y, f32(2), i32(n));
 * ```
 */
export class Module extends Resource {
  private constructor(
    /** The runtime handle (cudaLibrary_t), for the `cuda-bindings/runtime` facade; valid until close(). */
    readonly handle: cudart.cudaLibrary_t,
    private readonly names: Readonly<Record<string, string>>,
    image: Uint8Array | null,
    /** Whether close() unloads the library: false for one wrapped with {@link Module.fromHandle}, which another library owns. */
    readonly owned = true,
    owner?: unknown,
  ) {
    super(owned ? () => void cudart.cudaLibraryUnload(handle) : () => undefined, image ? [image] : [owner]);
  }

  /**
   * Wraps a CUDA library (cudaLibrary_t / CUlibrary) another library loaded. The wrapper never
   * unloads it: close() only marks it (and its kernels) closed. It holds `options.owner` (whatever
   * owns the library) alive while it or one of its kernels lives.
   */
  static fromHandle(
    handle: cudart.cudaLibrary_t | bigint | number,
    options: { owner?: unknown; names?: Readonly<Record<string, string>> } = {},
  ): Module {
    checkOptions('Module.fromHandle', options, { owner: true, names: true });
    const h = cudart.cudaLibrary_t(foreignValue(handle, 'Module.fromHandle', 'handle'));
    return new Module(h, options.names ?? {}, null, false, options.owner);
  }

  /**
   * Loads device code: a file path, or the bytes of a cubin, a fatbin or PTX text (PTX is
   * JIT-compiled for the device here). Throws Error for a missing file, TypeError or RangeError for
   * other input, CudaError when the driver rejects the code.
   */
  static load(code: string | Uint8Array, options: ModuleOptions = {}): Module {
    checkOptions('Module.load', options, { names: true });
    const names = options.names ?? {};
    if (typeof code === 'string') {
      if (!fs.existsSync(code)) throw new Error(`Module.load: no file ${code}`);
      return new Module(
        check(cudart.cudaLibraryLoadFromFile(code, null, null, 0, null, null, 0), `cudaLibraryLoadFromFile(${code})`),
        names,
        null,
      );
    }
    const image = loadImage(code, 'Module.load');
    return new Module(check(cudart.cudaLibraryLoadData(image, null, null, 0, null, null, 0), 'cudaLibraryLoadData'), names, image);
  }

  /**
   * Module.load off the JS thread, on the thread pool (loading PTX JIT-compiles it, which takes
   * long). `options.signal`/`timeout` reject with an AbortError/TimeoutError; the load itself is not
   * cancelled (what it loads is unloaded once it is done).
   */
  static async loadAsync(code: string | Uint8Array, options: ModuleLoadAsyncOptions = {}): Promise<Module> {
    const fn = 'Module.loadAsync';
    const o = checkWaitOptions(options, fn, ['names']);
    const names = options.names ?? {};
    let image: Uint8Array | null = null;
    if (typeof code === 'string') {
      if (!fs.existsSync(code)) throw new Error(`${fn}: no file ${code}`);
    } else image = loadImage(code, fn);
    const work = libraryLoad(fn, image ?? (code as string), {});
    let gaveUp = false;
    // A load that finishes after the caller gave up is unloaded.
    void work.then(
      ([err, h]) => {
        if (gaveUp && err === 0) cudart.cudaLibraryUnload(h!);
      },
      () => undefined,
    );
    let result: [cudart.cudaError_t, cudart.cudaLibrary_t | null];
    try {
      result = await unlessGivenUp(fn, o, work);
    } catch (e) {
      gaveUp = true;
      throw e;
    }
    return new Module(check(result, image ? 'cudaLibraryLoadData' : `cudaLibraryLoadFromFile(${code as string})`), names, image);
  }

  /**
   * @internal The handle of the kernel called `name` (a C symbol, or a name expression of the
   * Program it came from), for module.kernel(name) (launch/extensions.ts). Throws Error listing the
   * module's kernels when there is none of that name.
   */
  kernelHandle(name: string): cudart.cudaKernel_t {
    this.live('kernel');
    if (typeof name !== 'string' || name === '')
      throw new TypeError(`Module.kernel: parameter 'name' must be a kernel's name, got ${describe(name)}`);
    const symbol = isOwnName(this.names, name) ? this.names[name] : name;
    const [err, h] = cudart.cudaLibraryGetKernel(this.handle, symbol);
    if (err === cudart.cudaError_t.cudaErrorSymbolNotFound) {
      cudart.cudaGetLastError();
      throw new Error(
        `Module.kernel: no kernel '${name}'${symbol !== name ? ` (${symbol})` : ''} in this module; it has ${this.kernelNames().join(', ') || 'none'}`,
      );
    }
    return check([err, h], `cudaLibraryGetKernel(${name})`);
  }

  /**
   * A `__device__` or `__constant__` variable of the module (PyCUDA's `get_global`) as a DeviceBuffer
   * of its size, on `device` (default: the current one; cudaLibraryGetGlobal): copy to and from it,
   * or pass it to a kernel. The buffer does not own the memory (close() frees nothing) and is closed
   * with the module. `name` is the C symbol (mangled unless `extern "C"`) or a name expression of the
   * Program it came from. Throws Error naming the variable when the module has none of that name.
   */
  global(name: string, device?: Device): DeviceBuffer {
    this.live('global');
    if (typeof name !== 'string' || name === '')
      throw new TypeError(`Module.global: parameter 'name' must be a variable's name, got ${describe(name)}`);
    if (device !== undefined && !(device instanceof Device))
      throw new TypeError(`Module.global: parameter 'device' must be a Device, got ${describe(device)}`);
    const d = device ?? Device.current();
    const symbol = isOwnName(this.names, name) ? this.names[name] : name;
    const previous = Device.current();
    d.makeCurrent();
    let r: ReturnType<typeof cudart.cudaLibraryGetGlobal>;
    try {
      r = cudart.cudaLibraryGetGlobal(this.handle, symbol);
    } finally {
      previous.makeCurrent();
    }
    if (r[0] === cudart.cudaError_t.cudaErrorSymbolNotFound) {
      cudart.cudaGetLastError();
      throw new Error(
        `Module.global: no __device__ or __constant__ variable '${name}'${symbol !== name ? ` (${symbol})` : ''} in this module`,
      );
    }
    const [address, size] = check(r, `cudaLibraryGetGlobal(${name})`);
    const view = DeviceBuffer.fromAllocation(address, size, d, 'foreign', () => undefined, [this, d]);
    (this.globals ??= []).push(new WeakRef(view));
    return view;
  }

  private globals?: WeakRef<DeviceBuffer>[];

  /** Unloads the module (nothing for a wrapped one) and closes the DeviceBuffers of its variables ({@link Module.global}). */
  override close(): void {
    if (this.isClosed) return;
    for (const g of this.globals ?? []) g.deref()?.close();
    super.close();
  }

  /** The C names of the kernels in the module. */
  kernelNames(): string[] {
    this.live('kernelNames');
    const n = check(cudart.cudaLibraryGetKernelCount(this.handle), 'cudaLibraryGetKernelCount');
    if (n === 0) return [];
    const handles = check(cudart.cudaLibraryEnumerateKernels(n, this.handle), 'cudaLibraryEnumerateKernels');
    return handles.map((h) => check(cudart.cudaFuncGetName(h), 'cudaFuncGetName'));
  }
}
