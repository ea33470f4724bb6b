// The header's static inline constructors, which libcudart does not export, and cuda-python's
// getLocalRuntimeVersion().
import { cudaExtent, cudaPitchedPtr, cudaPos } from './structs.gen';
import type { Pointer } from '../ffi/marshal';
import type { Result } from '../ffi/result';
import { libcudart } from '../ffi/cudart-lib.gen';
import { cudaError_t } from './enums.gen';
import type { cudaError_tOk } from './api.gen';

/** Returns a cudaExtent from its width, height and depth (make_cudaExtent). */
export function make_cudaExtent(w: number, h: number, d: number): cudaExtent {
  return new cudaExtent({ width: w, height: h, depth: d });
}

/** Returns a cudaPitchedPtr from a pointer, pitch, width and height (make_cudaPitchedPtr). */
export function make_cudaPitchedPtr(d: Exclude<Pointer, null> | null, p: number, xsz: number, ysz: number): cudaPitchedPtr {
  return new cudaPitchedPtr({ ptr: d, pitch: p, xsize: xsz, ysize: ysz });
}

/** Returns a cudaPos from x, y and z (make_cudaPos). */
export function make_cudaPos(x: number, y: number, z: number): cudaPos {
  return new cudaPos({ x, y, z });
}

/** The version of the libcudart that is loaded, as cuda-python's getLocalRuntimeVersion(). */
export function getLocalRuntimeVersion(): Result<cudaError_tOk, Exclude<cudaError_t, cudaError_tOk>, [number]> {
  const v = new Int32Array(1);
  const err = libcudart.bind('cudaRuntimeGetVersion')(v) as cudaError_t;
  return err === cudaError_t.cudaSuccess ? [err, v[0]] : [err, null];
}

// Frozen so that the facade's `export *` re-exports plain values, not getters (see tools/codegen/util.ts).
Object.freeze(exports);
