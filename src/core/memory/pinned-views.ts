// The address of pinned memory that core itself viewed (a HostBuffer's own allocation, a pinned pool's
// block), kept on the ArrayBuffer of the view, so that a queued copy from a TypedArray over it passes
// koffi the address instead of the array, which koffi takes in less time (issue #37, the pinned async
// copy row: 1,265 → 1,198 instructions a call on the dev machine, 1.0-1.3% of the call on the H100 by
// bench/stable/koffi-args.ts). The address is the one koffi would read from the array; a user's own
// ArrayBuffer (HostBuffer.register) is never tagged.

import { nonEmpty, type HostMemory } from '../../ffi/checks';

const ADDRESS = Symbol('cuda-bindings: pinned address');
type Tagged = ArrayBufferLike & { readonly [ADDRESS]?: bigint };

/** Records that `view` (an ArrayBuffer over memory core allocated) starts at address `ptr`. */
export function tagPinned(view: ArrayBuffer, ptr: bigint): void {
  Object.defineProperty(view, ADDRESS, { value: ptr });
}

/** The address of `v`'s first byte when it views tagged memory, else what nonEmpty(v) gives koffi. */
export function pinnedOr(v: HostMemory): HostMemory | bigint {
  const buffer = (v as ArrayBufferView).buffer as Tagged | undefined;
  const base = buffer === undefined ? undefined : buffer[ADDRESS];
  if (base === undefined) return nonEmpty(v);
  const at = (v as ArrayBufferView).byteOffset;
  return at === 0 ? base : base + BigInt(at);
}
