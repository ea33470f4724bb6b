// A buffer of VirtualMemoryResource: physical chunks mapped one after another into a reserved
// address range, so that it can grow without moving.
import * as cuda from '../../driver';
import { DeviceBuffer } from './DeviceBuffer';
import type { Device } from '../device/Device';
import { driverGet, driverOk } from '../base/driver-check';
import { freshAllocation, hookedAllocation, hookedFree } from './MemoryHook';
import { describe, lookupName } from '../../ffi/checks';
import type { VirtualAccess, VirtualMemoryResource } from './VirtualMemoryResource';

/** @internal cuMemSetAccess's flags for an access name. */
export const ACCESS: Record<VirtualAccess, cuda.CUmemAccess_flags> = {
  readwrite: cuda.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
  read: cuda.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READ,
  none: cuda.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_NONE,
};

interface Mapping {
  /** The buffer's size now (resize changes it), for the hooks told of its free. */
  size: number;
  /** Address ranges reserved, in order (the first is where the buffer starts). */
  ranges: { at: bigint; size: number }[];
  /** Physical chunks, mapped back to back from the start. */
  chunks: { handle: bigint; size: number }[];
  /** Bytes mapped (the sum of the chunks). */
  mapped: number;
  /** Bytes reserved (the sum of the ranges). */
  reserved: number;
  /** Access granted to each device, by ordinal. */
  access: Map<number, { device: Device; flags: VirtualAccess }>;
}

/** Unmaps every chunk, releases it, then frees the address ranges: the order the driver needs. */
function unmapAll(base: bigint, m: Mapping): void {
  let at = base;
  for (const c of m.chunks) {
    cuda.cuMemUnmap(at, c.size);
    cuda.cuMemRelease(c.handle);
    at += BigInt(c.size);
  }
  for (const r of m.ranges) cuda.cuMemAddressFree(r.at, r.size);
  m.chunks = [];
  m.ranges = [];
  m.mapped = m.reserved = 0;
}

/**
 * Device memory from a VirtualMemoryResource. `resize(n)` grows it in place: new physical memory is
 * mapped after the old at the same address, and the bytes already there stay. It is a DeviceBuffer:
 * copies, fills, kernels and slices work as on any other.
 */
export class VirtualBuffer extends DeviceBuffer {
  private constructor(
    private readonly base: bigint,
    size: number,
    /** The resource that allocated it (kept alive by the buffer). */
    readonly resource: VirtualMemoryResource,
    private readonly mapping: Mapping,
    /** Made by this process (hooks see its free) rather than imported. */
    allocated = true,
  ) {
    const free = () => unmapAll(base, mapping);
    // Hooks are told of the size and the mapped bytes at the free, not those the buffer was made with.
    const hooked = () => hookedFree('VirtualMemoryResource', resource.device.ordinal, mapping.size, mapping.mapped, base, free)();
    super(base, size, resource.device, null, 'virtual', allocated ? hooked : free, [resource.device, resource]);
  }

  /** @internal Use resource.allocate(). */
  static create(resource: VirtualMemoryResource, size: number, reserve: number): VirtualBuffer {
    const mapping: Mapping = { size, ranges: [], chunks: [], mapped: 0, reserved: 0, access: new Map() };
    for (const d of resource.accessDevices) mapping.access.set(d.ordinal, { device: d, flags: 'readwrite' });
    const rounded = resource.roundUp(size);
    const base = hookedAllocation('VirtualMemoryResource', resource.device.ordinal, size, rounded, () =>
      freshAllocation('VirtualMemoryResource', resource.device.ordinal, rounded, () => {
        const at = driverGet(
          cuda.cuMemAddressReserve(reserve, resource.granularity, 0n, 0n),
          'VirtualMemoryResource.allocate (cuMemAddressReserve)',
        );
        mapping.ranges.push({ at, size: reserve });
        mapping.reserved = reserve;
        try {
          mapMore(resource, at, mapping, rounded, 'VirtualMemoryResource.allocate');
        } catch (e) {
          unmapAll(at, mapping);
          throw e;
        }
        return at;
      }),
    );
    return new VirtualBuffer(base, size, resource, mapping);
  }

  /**
   * @internal Use resource.importHandles(): maps the chunks another process exported (POSIX file
   * descriptors, in address order) into a new range, as one buffer.
   */
  static importChunks(resource: VirtualMemoryResource, chunks: readonly { fd: number; size: number }[]): VirtualBuffer {
    const total = chunks.reduce((n, c) => n + c.size, 0);
    const mapping: Mapping = { size: total, ranges: [], chunks: [], mapped: 0, reserved: 0, access: new Map() };
    for (const d of resource.accessDevices) mapping.access.set(d.ordinal, { device: d, flags: 'readwrite' });
    const at = driverGet(
      cuda.cuMemAddressReserve(total, resource.granularity, 0n, 0n),
      'VirtualMemoryResource.importHandles (cuMemAddressReserve)',
    );
    mapping.ranges.push({ at, size: total });
    mapping.reserved = total;
    try {
      for (const c of chunks) {
        // For a POSIX descriptor the "OS handle" is the descriptor itself, cast to a pointer.
        const handle = driverGet(
          cuda.cuMemImportFromShareableHandle(BigInt(c.fd), cuda.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          'VirtualMemoryResource.importHandles (cuMemImportFromShareableHandle)',
        );
        mapHandle(at, mapping, handle, c.size, 'VirtualMemoryResource.importHandles');
      }
    } catch (e) {
      unmapAll(at, mapping);
      throw e;
    }
    return new VirtualBuffer(at, total, resource, mapping, false);
  }

  /** Bytes of address space reserved for this buffer: it grows in place up to here for certain. */
  get reservedBytes(): number {
    this.live('reservedBytes');
    return this.mapping.reserved;
  }

  /** Bytes of physical memory mapped (the size rounded up to the granularity). */
  get mappedBytes(): number {
    this.live('mappedBytes');
    return this.mapping.mapped;
  }

  /**
   * Makes the buffer `size` bytes, at the same address, keeping its contents. Growing maps new
   * physical memory after the old; past the reserved range it asks the driver for the range just
   * after it, and throws a RangeError if that is taken (allocate with a larger `reserve`).
   * Shrinking only lowers `size`: the memory stays mapped until close().
   */
  resize(size: number): this {
    this.live('resize');
    if (!Number.isSafeInteger(size) || size <= 0)
      throw new RangeError(`VirtualBuffer.resize: parameter 'size' must be a positive integer, got ${size}`);
    const m = this.mapping;
    const want = this.resource.roundUp(size);
    if (want > m.mapped) {
      void this.resource.device.primaryContext; // the driver calls below need a context current
      if (want > m.reserved) this.extendRange(want - m.reserved);
      mapMore(this.resource, this.base, m, want - m.mapped, 'VirtualBuffer.resize');
    }
    (this as { size: number }).size = m.size = size;
    return this;
  }

  /** Grants `device` access to the whole buffer, and to what it grows into later ('none' withdraws it). */
  setAccess(device: Device, access: VirtualAccess = 'readwrite'): this {
    this.live('setAccess');
    if (!device || typeof device.ordinal !== 'number')
      throw new TypeError(`VirtualBuffer.setAccess: parameter 'device' must be a Device, got ${describe(device)}`);
    const flags = lookupName(ACCESS, access, 'VirtualBuffer.setAccess', "parameter 'access'");
    if (device === this.device && access !== 'readwrite')
      throw new RangeError("VirtualBuffer.setAccess: the buffer's own device keeps read/write access");
    driverOk(
      cuda.cuMemSetAccess(
        this.base,
        this.mapping.mapped,
        [{ location: { type: cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: device.ordinal }, flags }],
        1,
      ),
      'VirtualBuffer.setAccess (cuMemSetAccess)',
    );
    this.mapping.access.set(device.ordinal, { device, flags: access });
    return this;
  }

  /**
   * One POSIX file descriptor per physical chunk, in address order with their sizes
   * (cuMemExportToShareableHandle), for a resource made with `handleType: 'posixFd'`. The caller
   * owns the descriptors (close them with fs.closeSync).
   */
  exportHandles(): {
    /** The POSIX file descriptor of the chunk's allocation handle; the caller closes it. */
    fd: number;
    /** The chunk's size in bytes. */
    size: number;
  }[] {
    this.live('exportHandles');
    if (this.resource.handleType !== 'posixFd')
      throw new Error(
        `VirtualBuffer.exportHandles: the resource was made with handleType '${this.resource.handleType}'; exporting needs handleType 'posixFd'`,
      );
    return this.mapping.chunks.map((c) => {
      const out = new Int32Array(1);
      driverOk(
        cuda.cuMemExportToShareableHandle(out, c.handle, cuda.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0n),
        'VirtualBuffer.exportHandles (cuMemExportToShareableHandle)',
      );
      return { fd: out[0], size: c.size };
    });
  }

  /** Reserves `extra` bytes right after the range; a RangeError when the driver puts them elsewhere. */
  private extendRange(extra: number): void {
    const m = this.mapping;
    const end = this.base + BigInt(m.reserved);
    const need = this.resource.roundUp(extra);
    const [err, at] = cuda.cuMemAddressReserve(need, 0, end, 0n);
    if (err === 0 && at === end) {
      m.ranges.push({ at, size: need });
      m.reserved += need;
      return;
    }
    if (err === 0 && at !== null) cuda.cuMemAddressFree(at, need);
    throw new RangeError(
      `VirtualBuffer.resize: the ${m.reserved} bytes reserved are full and the address range after them is taken; allocate with a larger 'reserve' to grow to ${m.reserved + need} bytes`,
    );
  }
}

/** Creates `bytes` of physical memory, maps it after what `m` has mapped and grants the access `m` records. */
function mapMore(resource: VirtualMemoryResource, base: bigint, m: Mapping, bytes: number, fn: string): void {
  const handle = driverGet(cuda.cuMemCreate(bytes, resource.allocationProps, 0n), `${fn} (cuMemCreate)`);
  mapHandle(base, m, handle, bytes, fn);
}

/** Maps physical memory `handle` after what `m` has mapped (released again if that fails) and grants the access `m` records. */
function mapHandle(base: bigint, m: Mapping, handle: bigint, bytes: number, fn: string): void {
  const at = base + BigInt(m.mapped);
  const [err] = cuda.cuMemMap(at, bytes, 0, handle, 0n);
  if (err !== 0) {
    cuda.cuMemRelease(handle);
    driverOk([err], `${fn} (cuMemMap)`);
  }
  m.chunks.push({ handle, size: bytes });
  m.mapped += bytes;
  const descs = [...m.access.values()]
    .filter((a) => a.flags !== 'none')
    .map((a) => ({ location: { type: cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: a.device.ordinal }, flags: ACCESS[a.flags] }));
  driverOk(cuda.cuMemSetAccess(at, bytes, descs, descs.length), `${fn} (cuMemSetAccess)`);
}
