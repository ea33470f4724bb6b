// A texture object (CuPy's TextureObject): a 64-bit handle a kernel samples through
// (`cudaTextureObject_t`), over an array, linear or pitched memory, which it keeps alive; it
// reports closed once that memory is.
import * as cudart from '../../runtime';
import { check } from '../base/errors';
import { Resource, article } from '../base/lifetime';
import { CudaArray } from './CudaArray';
import { ResourceDescriptor } from './ResourceDescriptor';
import { TextureDescriptor, type TextureOptions } from './TextureDescriptor';
import { describe } from '../../ffi/checks';
import { SurfaceObject } from './SurfaceObject';
import { TensorMapDescriptor } from './TensorMapDescriptor';

/**
 * A texture object: a 64-bit handle (`cudaTextureObject_t`) a kernel samples through (tex2D, …),
 * over a CudaArray, linear or pitched memory, with the addressing and filtering of a
 * {@link TextureDescriptor}. Pass it as a kernel argument.
 *
 * Lifetime: close() destroys it (cudaDestroyTextureObject); it keeps the memory it reads alive, and
 * once that memory (the array, or the buffer of linear or pitched memory) is closed the texture
 * reports `isClosed` too, so launches refuse it. A resource that is neither an array nor a descriptor throws TypeError; CUDA failures throw
 * {@link CudaError}.
 *
 * @example
 * ```ts
 * using arr = CudaArray.fromMatrix(image, 480);             // 480 rows
 * using tex = TextureObject.create(arr, { filterMode: 'linear', normalizedCoords: true });
 * kernel.launch({ grid: [40, 30], block: [16, 16] }, tex, out);
 * ```
 */
export class TextureObject extends Resource {
  private constructor(
    /** The handle, a kernel's `cudaTextureObject_t` (pass the object itself, or `u64(tex.handle)`). */
    readonly handle: cudart.cudaTextureObject_t,
    /** The memory it samples. */
    readonly resource: ResourceDescriptor,
    /** How it samples (addressing, filtering, read mode). */
    readonly texture: TextureDescriptor,
  ) {
    super(() => void cudart.cudaDestroyTextureObject(handle), [resource.resource]);
  }

  /** Whether close() was called on the texture, or on the memory it samples (freed then). */
  override get isClosed(): boolean {
    return super.isClosed || this.resource.resource.isClosed;
  }

  /** A texture over `resource` (a CudaArray, or a ResourceDescriptor of linear or pitched memory) sampled as `texture` says. */
  static create(resource: ResourceDescriptor | CudaArray, texture: TextureDescriptor | TextureOptions = {}): TextureObject {
    const fn = 'TextureObject.create';
    const r = resource instanceof CudaArray ? ResourceDescriptor.array(resource) : resource;
    if (!(r instanceof ResourceDescriptor))
      throw new TypeError(`${fn}: parameter 'resource' must be a CudaArray or a ResourceDescriptor, got ${describe(resource)}`);
    const t = texture instanceof TextureDescriptor ? texture : new TextureDescriptor(texture);
    const res = r.toStruct(fn);
    const device = r.resource.device;
    device.makeCurrent();
    const h = check(cudart.cudaCreateTextureObject(res, t.toStruct(), null), `${fn} (cudaCreateTextureObject)`);
    return new TextureObject(h, r, t);
  }
}

/**
 * @internal How a launch or a graph names a closed object it refuses: `a SurfaceObject whose
 * CudaArray was closed` when a texture's or surface's memory (or a tensor map's buffer) went first,
 * else `a <class> that was closed`.
 */
export function closedObject(o: object): string {
  const memory =
    o instanceof SurfaceObject
      ? o.array
      : o instanceof TextureObject
        ? o.resource.resource
        : o instanceof TensorMapDescriptor
          ? o.buffer
          : null;
  const name = o.constructor.name;
  return `${article(name)} ${name} ${memory?.isClosed ? `whose ${memory.constructor.name} was closed` : 'that was closed'}`;
}
