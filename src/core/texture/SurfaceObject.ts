// A surface object (CuPy's SurfaceObject): a 64-bit handle a kernel reads and writes a CUDA array
// through (`cudaSurfaceObject_t`, surf2Dwrite and the like); it keeps the array alive, and reports
// closed once the array is.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource } from '../base/lifetime';
import { CudaArray } from './CudaArray';
import { ResourceDescriptor } from './ResourceDescriptor';
import { describe } from '../../ffi/checks';

/**
 * A surface object: a 64-bit handle (`cudaSurfaceObject_t`) through which kernels read and write a
 * {@link CudaArray} made with `{ surface: true }` (surf2Dwrite, …). Pass it as a kernel argument.
 *
 * Lifetime: close() destroys it (cudaDestroySurfaceObject); it keeps its array alive, and once the
 * array is closed (its memory freed) the surface reports `isClosed` too, so launches refuse it, as a
 * DeviceBuffer's view reports closed with its allocation. An array not made for surfaces throws
 * Error; CUDA failures throw {@link CudaError}.
 *
 * @example
 * ```ts
 * using arr = CudaArray.create({ format: ChannelFormatDescriptor.of('f32'), width: 256, height: 256, surface: true });
 * using surf = SurfaceObject.create(arr);
 * kernel.launch({ grid: [16, 16], block: [16, 16] }, surf, i32(256));
 * ```
 */
export class SurfaceObject extends Resource {
  private constructor(
    /** The handle, a kernel's `cudaSurfaceObject_t` (pass the object itself, or `u64(surf.handle)`). */
    readonly handle: cudart.cudaSurfaceObject_t,
    /** The array it reads and writes (kept alive by the surface). */
    readonly array: CudaArray,
  ) {
    super(() => void cudart.cudaDestroySurfaceObject(handle), [array]);
  }

  /** Whether close() was called on the surface, or on its array (whose memory a kernel would write through it). */
  override get isClosed(): boolean {
    return super.isClosed || this.array.isClosed;
  }

  /** A surface over `array`, which must have been made with `{ surface: true }`. */
  static create(array: CudaArray | ResourceDescriptor): SurfaceObject {
    const fn = 'SurfaceObject.create';
    const a = array instanceof ResourceDescriptor ? array.resource : array;
    if (!(a instanceof CudaArray))
      throw new TypeError(`${fn}: parameter 'array' must be a CudaArray (or a ResourceDescriptor of one), got ${describe(array)}`);
    if (a.isClosed) throw new Error(`${fn}: parameter 'array' is a CudaArray that was closed`);
    if (!a.surface) throw new Error(`${fn}: the CudaArray was not made for surfaces; create it with { surface: true }`);
    a.device.makeCurrent();
    const h = check(cudart.cudaCreateSurfaceObject(ResourceDescriptor.array(a).toStruct(fn)), `${fn} (cudaCreateSurfaceObject)`);
    return new SurfaceObject(h, a);
  }
}
