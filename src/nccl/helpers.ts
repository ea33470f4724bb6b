// What nccl.h writes as macros and what passing a unique id between processes needs: written by
// hand over the generated struct classes (the layouts and values are checked against g++).
import { ncclConfig_t, ncclSimInfo_t, ncclUniqueId, type ncclConfig_tInit } from './structs.gen';
import { NCCL_CONFIG_UNDEF_INT, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_UNDEF_FLOAT, NCCL_UNIQUE_ID_BYTES } from './constants.gen';

/** `NCCL_VERSION(X, Y, Z)`: the version code NCCL uses (ncclGetVersion, ncclConfig_t.version). */
export function NCCL_VERSION(major: number, minor: number, patch: number): number {
  return major <= 2 && minor <= 8 ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
}

/**
 * A ncclConfig_t as `ncclConfig_t c = NCCL_CONFIG_INITIALIZER;` makes it (size, magic, version set,
 * every option NCCL_CONFIG_UNDEF_INT or NULL), then `init`'s fields set on it.
 */
export function ncclConfigInitializer(init: ncclConfig_tInit = {}): ncclConfig_t {
  if (init === null || typeof init !== 'object')
    throw new TypeError(
      `ncclConfigInitializer: parameter 'init' must be an object of ncclConfig_t fields, got ${init === null ? 'null' : typeof init}`,
    );
  const u = NCCL_CONFIG_UNDEF_INT;
  // `init` last, through the constructor: it refuses a name that is not a field (Object.prototype's too).
  return new ncclConfig_t({
    size: ncclConfig_t.layout.size,
    magic: 0xcafebeef,
    version: NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),
    blocking: u,
    cgaClusterSize: u,
    minCTAs: u,
    maxCTAs: u,
    netName: null,
    splitShare: u,
    trafficClass: u,
    commName: null,
    collnetEnable: u,
    CTAPolicy: u,
    shrinkShare: u,
    nvlsCTAs: u,
    nChannelsPerNetPeer: u,
    nvlinkCentricSched: u,
    ...init,
  });
}

/** A ncclSimInfo_t as `NCCL_SIM_INFO_INITIALIZER` makes it, for ncclGroupSimulateEnd. */
export function ncclSimInfoInitializer(): ncclSimInfo_t {
  return new ncclSimInfo_t({
    size: ncclSimInfo_t.layout.size,
    magic: 0x74685283,
    version: NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),
    estimatedTime: NCCL_UNDEF_FLOAT,
  });
}

/** The 128 bytes of a unique id, as a Buffer (a copy), to send to the other ranks. */
export function uniqueIdToBuffer(id: ncclUniqueId): Buffer {
  if (!(id instanceof ncclUniqueId)) throw new TypeError(`uniqueIdToBuffer: parameter 'id' must be a ncclUniqueId, got ${typeof id}`);
  return Buffer.from(id.getBytes());
}

/** A unique id from the 128 bytes another rank sent (a Buffer or any byte view). */
export function uniqueIdFromBuffer(bytes: Uint8Array | ArrayBuffer): ncclUniqueId {
  const u8 =
    bytes instanceof ArrayBuffer
      ? new Uint8Array(bytes)
      : ArrayBuffer.isView(bytes)
        ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : null;
  if (!u8)
    throw new TypeError(
      `uniqueIdFromBuffer: parameter 'bytes' must be a Buffer, a Uint8Array or an ArrayBuffer, got ${bytes === null ? 'null' : typeof bytes}`,
    );
  if (u8.byteLength !== NCCL_UNIQUE_ID_BYTES)
    throw new RangeError(
      `uniqueIdFromBuffer: parameter 'bytes' must hold ${NCCL_UNIQUE_ID_BYTES} bytes (NCCL_UNIQUE_ID_BYTES), got ${u8.byteLength}`,
    );
  const id = new ncclUniqueId();
  id.getBytes().set(u8);
  return id;
}

/** The unique id as base64 (172 characters), for an environment variable or a command line. */
export function uniqueIdToBase64(id: ncclUniqueId): string {
  return uniqueIdToBuffer(id).toString('base64');
}

/** A unique id from its base64 form. */
export function uniqueIdFromBase64(text: string): ncclUniqueId {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text))
    throw new TypeError(
      `uniqueIdFromBase64: parameter 'text' must be a base64 string, got ${typeof text === 'string' ? JSON.stringify(text.slice(0, 40)) : typeof text}`,
    );
  const b = Buffer.from(text, 'base64');
  if (b.length !== NCCL_UNIQUE_ID_BYTES)
    throw new RangeError(
      `uniqueIdFromBase64: parameter 'text' must decode to ${NCCL_UNIQUE_ID_BYTES} bytes (NCCL_UNIQUE_ID_BYTES), got ${b.length}`,
    );
  return uniqueIdFromBuffer(b);
}

// Frozen so that the facade's `export *` re-exports plain values, not getters (see tools/codegen/util.ts).
Object.freeze(exports);
