// The byte layout every IPC handle of the core layer serialises to: a 4-letter tag, a version,
// some 64-bit numbers, then the handle's bytes. Base64 of it passes through any message channel.
import { describe } from '../../ffi/checks';

const VERSION = 1;

/** @internal `tag` (4 ASCII letters), version, `numbers` as u64, then `bytes`. */
export function serialise(tag: string, numbers: number[], bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(8 + 8 * numbers.length + bytes.length);
  out.write(tag, 0, 'latin1');
  out.writeUInt32LE(VERSION, 4);
  numbers.forEach((n, i) => out.writeBigUInt64LE(BigInt(n), 8 + 8 * i));
  out.set(bytes, 8 + 8 * numbers.length);
  return out;
}

/** @internal Bytes from a Buffer/Uint8Array or base64 text; a TypeError naming `fn` for anything else. */
export function hostBytes(data: Uint8Array | string, fn: string): Uint8Array {
  if (typeof data === 'string') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data))
      throw new TypeError(`${fn}: parameter 'data' must be base64 text or bytes; the string is not base64`);
    return Buffer.from(data, 'base64');
  }
  if (data instanceof Uint8Array) return data;
  throw new TypeError(`${fn}: parameter 'data' must be a Buffer, a Uint8Array or base64 text, got ${describe(data)}`);
}

/** @internal A copy of a peer's raw handle (`cType`: cudaIpcMemHandle_t or cudaIpcEventHandle_t): exactly 64 bytes, else a TypeError naming `fn`. */
export function rawHandle(bytes: Uint8Array, cType: string, fn: string): Uint8Array {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 64)
    throw new TypeError(
      `${fn}: parameter 'bytes' must be the 64 bytes of a ${cType}, got ${bytes instanceof Uint8Array ? `${bytes.length} bytes` : describe(bytes)}`,
    );
  return new Uint8Array(bytes);
}

/** @internal Reads serialise()'s layout back: `count` numbers and the 64 handle bytes. */
export function fromSerialised(
  data: Uint8Array | string,
  tag: string,
  count: number,
  fn: string,
  handleBytes = 64,
): [number[], Uint8Array] {
  const b = Buffer.from(hostBytes(data, fn));
  const want = 8 + 8 * count + handleBytes;
  if (b.length !== want) throw new RangeError(`${fn}: parameter 'data' must hold ${want} bytes, got ${b.length}`);
  if (b.toString('latin1', 0, 4) !== tag)
    throw new RangeError(
      `${fn}: parameter 'data' is not of this kind of handle (it starts with '${b.toString('latin1', 0, 4)}', not '${tag}')`,
    );
  const version = b.readUInt32LE(4);
  if (version !== VERSION)
    throw new RangeError(`${fn}: parameter 'data' has format version ${version}; this library reads version ${VERSION}`);
  const numbers = Array.from({ length: count }, (_, i) => {
    const v = b.readBigUInt64LE(8 + 8 * i);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${fn}: parameter 'data' holds a size or offset too large (${v})`);
    return Number(v);
  });
  return [numbers, new Uint8Array(b.subarray(8 + 8 * count))];
}
