// The address of pinned memory that core itself viewed (a HostBuffer's own allocation, a pinned pool's
// block), kept on the ArrayBuffer of the view, so that a queued copy from a TypedArray over it passes
// koffi the address instead of the array, which koffi takes in less time (issue #37, the pinned async
// copy row: 1,265 → 1,198 instructions a call on the dev machine, 1.0-1.3% of the call on the H100 by
// bench/stable/koffi-args.ts; 1,140 once each view's address is remembered, 1,028 with the stream
// given itself rather than `{ stream }`). The address is the one koffi would read from the array; a
// user's own ArrayBuffer (HostBuffer.register) is never tagged.

import { nonEmpty, type HostMemory } from '../../ffi/checks';

const ADDRESS = Symbol('cuda-bindings: pinned address');
type Tagged = ArrayBufferLike & { readonly [ADDRESS]?: bigint };

/** Records that `view` (an ArrayBuffer over memory core allocated) starts at address `ptr`. */
export function tagPinned(view: ArrayBuffer, ptr: bigint): void {
  Object.defineProperty(view, ADDRESS, { value: ptr });
}

/**
 * The views already found over tagged memory, with the address of each one's first byte. Reading a
 * TypedArray's `buffer` costs ~130 instructions in Node 20 (V8 does not inline the getter); this
 * lookup costs about half of that. Keyed weakly, so it keeps no view or memory alive.
 */
const known = new WeakMap<object, bigint>();

/** The address of `v`'s first byte when it views tagged memory, else what nonEmpty(v) gives koffi. */
export function pinnedOr(v: HostMemory): HostMemory | bigint {
  const address = known.get(v);
  return address !== undefined ? address : lookUp(v);
}

/** pinnedOr of a view not seen over tagged memory before (apart: pinnedOr is then small enough for V8 to inline). */
function lookUp(v: HostMemory): HostMemory | bigint {
  const buffer = (v as ArrayBufferView).buffer as Tagged | undefined;
  const base = buffer === undefined ? undefined : buffer[ADDRESS];
  if (base === undefined) return nonEmpty(v);
  const at = (v as ArrayBufferView).byteOffset;
  const address = at === 0 ? base : base + BigInt(at);
  known.set(v, address);
  return address;
}
