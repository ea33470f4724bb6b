// How far C may write through each pointer parameter: the rule kinds, and the check the generator
// emits for each. The generator fails when a pointer that C may write through (a pointer to
// non-const that is not an opaque handle) has no rule, and the coverage report lists every such
// parameter with its rule.
//
// Most rules follow from how the facade passes the parameter and need no table:
//   type      the binding passes its own memory of the pointed-to type's size (an output scalar in
//             a scratch slot, an output struct it allocates, an in/out value);
//   count     the binding packs or allocates `count` elements (ParamSpec inArray/outArray), or
//             checks a typed array the caller packed against count × element size;
//   size      the binding allocates a length argument's bytes (outString, rangeAttr).
// Host memory the caller passes (a `void *` or `char *` parameter, ParamSpec `pointer`) needs one
// of these tables in the API's spec (an ApiSpec field of the same name):
//   extents        { fn: { param: bytes } }: a JS expression over the call's arguments, the bytes C
//                  may touch: a size argument ('count'), count × element size
//                  ('nbGroups * sizeof(CUdevResource)', sizeof from the layouts), a helper of
//                  EXTENT_HELPERS ('span2D(dpitch, width, height)'), or { bytes, what } where the
//                  expression reads badly in an error. Checked before the call: a RangeError
//                  `fn: parameter 'p' holds N bytes but <what> needs M`.
//   queried        { fn: { param: { query, args } } }: C writes as many bytes as another call of the
//                  same API reports (nvrtcGetPTX after nvrtcGetPTXSize); the query runs before the
//                  call. A parameter whose data cuda-python returns instead is allocated inside
//                  (ParamSpec queriedArray), so the caller cannot get the size wrong.
//   elementExtents { fn: { param: bytes of element i } }: an array of pointers C writes through
//                  one by one (cuMemRangeGetAttributes' data[i] gets dataSizes[i] bytes); each host
//                  buffer in it is checked. The expression may use `i` and nth(array, i).
//   notWritten     { fn: { param: why } }: a pointer to non-const that C does not write host
//                  memory through (a device address it frees, a pointer it only reads); for an
//                  array of data pointers (`void **`), that C writes through none of its elements.
//                  The reason is printed in the report.
//   fieldExtents   { StructClass: { 'field.path': bytes } }: a pointer field of a struct that holds
//                  host memory (`srcPtr.ptr = typedArray`): the bytes C touches through it, a JS
//                  expression over the struct `s` (its field paths read straight from the bytes,
//                  64-bit ones as numbers) and the helpers of ffi/struct-base.ts (hostBytes3D).
//                  Every call given the struct checks the memory is still attached and this long.
// An array of data pointers (`void **data`, ParamSpec inArray) needs elementExtents or notWritten
// for its elements besides the count rule of the array itself.
// Adding an API: run the generator; it names every writable pointer that lacks a rule
// (`fn(param: type)`, or `fn(param[i]: ...)` for the elements of an array of pointers); fill the
// tables above for each. The tests then fuzz every checked buffer one element short.

/** The bytes a caller's buffer must hold: an expression, or one with a phrase for the error. */
export type ExtentBytes = string | { bytes: string; what: string };

export interface QueryRule {
  /** A function of the same facade returning [status, n]. */
  query: string;
  /** Its arguments: parameters of the call being checked. */
  args: string[];
  /** Bytes per unit the query counts (1 for a byte count). */
  unit?: number;
}

export interface ExtentTables {
  extents: Record<string, Record<string, ExtentBytes>>;
  queried?: Record<string, Record<string, QueryRule>>;
  elementExtents?: Record<string, Record<string, string>>;
  notWritten?: Record<string, Record<string, string>>;
  fieldExtents?: Record<string, Record<string, string>>;
}

/** Rule kinds, as the report counts them. */
export type ExtentKind = 'type' | 'count' | 'size' | 'query' | 'elements' | 'not written';

/** Helpers an extent expression may call, and the module that has them. */
export const EXTENT_HELPERS: Record<string, string> = {
  span2D: 'M.span2D',
  shareableHandleBytes: 'X.shareableHandleBytes',
  nth: 'X.nth',
  pointerAttrBytes: 'X.pointerAttrBytes',
  jitLogBytes: 'X.jitLogBytes',
};
