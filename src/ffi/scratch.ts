// Reusable memory for output parameters. A call writes its outputs into these slots and the facade
// reads them back at once, so the hot path allocates nothing. Each worker thread loads its own copy.
import koffi from 'koffi';

/** Number of 8-byte slots; no runtime function has more output parameters than this. */
export const SLOTS = 8;
// The slots sit at the start of a page-sized store: a C function that writes more than its slot
// (an output array the headers type as one value) then lands in memory of ours, not the heap's.
// A call gets a slot's address as a bigint: koffi passes a bigint in about 20 ns less than a typed
// array over the same memory (cudaGetDevice 0.77× on the H100 and H200 machines, by
// bench/stable/koffi-args.ts). An ArrayBuffer's memory is outside V8's heap and never moves, and the
// views below keep it for the module's life; it is freed with the thread, as before.
const store = new ArrayBuffer(4096);
const base = BigInt(koffi.address(new Uint8Array(store)) as bigint | number);
/** slot[i] is the address of the i-th 8-byte slot, passed to C as a pointer. */
export const slot: readonly bigint[] = Array.from({ length: SLOTS }, (_, i) => base + BigInt(i * 8));
export const I32 = new Int32Array(store);
export const U32 = new Uint32Array(store);
export const F32 = new Float32Array(store);
export const F64 = new Float64Array(store);
export const I64 = new BigInt64Array(store);
export const U64 = new BigUint64Array(store);
export const DV = new DataView(store);

/** Reads slot i as a size_t: a number, exact below 2^53. */
export function readSize(i: number): number {
  return U32[2 * i] + U32[2 * i + 1] * 4294967296;
}
