// Small structs passed by value go to C as their 8-byte words (x86-64 System V): eightbyte() reads
// word i of a struct, and word8()/word4() (what the generated facade calls) a whole word and a last
// word of 4 bytes. Each must give what the bytes say, for every size.
import { eightbyte, word4, word8 } from '../../../src/ffi/struct-support';
import { dim3, cudaExtent, char3, short3 } from '../../../src/runtime/structs.gen';
import type { CStruct } from '../../../src/ffi/struct-base';

/** Word i of the bytes, read byte by byte (little-endian), as a number when exact, else a bigint. */
function reference(bytes: Uint8Array, i: number): number | bigint {
  let v = 0n;
  for (let k = Math.min(bytes.length, i * 8 + 8) - 1; k >= i * 8; k--) v = (v << 8n) | BigInt(bytes[k]);
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

test.each([
  ['dim3 (12 bytes: a word and 4 bytes)', dim3, 12],
  ['cudaExtent (24 bytes: three words)', cudaExtent, 24],
  ['char3 (3 bytes)', char3, 3],
  ['short3 (6 bytes)', short3, 6],
] as const)('%s: every word equals its bytes', (_name, cls, size) => {
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  for (let trial = 0; trial < 200; trial++) {
    // A window at an odd offset of a larger buffer, as a nested struct sits.
    const buf = new Uint8Array(size + 7);
    const bytes = buf.subarray(3, 3 + size);
    for (let k = 0; k < size; k++) bytes[k] = trial < 3 ? [0, 0xff, 1][trial] : rnd();
    const s = (cls as unknown as { view(m: Uint8Array): CStruct }).view(bytes);
    for (let i = 0; i < Math.ceil(size / 8); i++) {
      expect(eightbyte(s, i)).toEqual(reference(bytes, i));
      // The readers the generated facade calls for a whole word and for a last word of 4 bytes.
      const left = size - 8 * i;
      if (left >= 8) expect(word8(s, 8 * i)).toEqual(reference(bytes, i));
      if (left === 4) expect(word4(s, 8 * i)).toEqual(reference(bytes, i));
    }
  }
});
