// cuda.core's VirtualMemoryResource, on the driver's virtual memory management API: an address
// range is reserved first (cuMemAddressReserve), physical memory is made (cuMemCreate), mapped into
// it (cuMemMap) and made accessible (cuMemSetAccess). Because the range is reserved up front, a
// buffer grows in place: more memory is mapped after what it has, at the same address.
import * as cuda from '../../driver';
import { Device } from '../device/Device';
import { driverGet } from '../base/driver-check';
import { checkOptions } from '../base/options';
import { describe, lookupName } from '../../ffi/checks';

/** How the physical memory can be shared with other processes: not at all, as a POSIX file descriptor, or as a fabric handle. */
export type VirtualHandleType = 'none' | 'posixFd' | 'fabric';

/** Who may touch a mapping: read and write, read only, or nothing. */
export type VirtualAccess = 'readwrite' | 'read' | 'none';

/** How `new VirtualMemoryResource(device, options)` makes a resource. */
export interface VirtualMemoryResourceOptions {
  /** What exportHandles() gives (default 'none'). */
  handleType?: VirtualHandleType;
  /** Other devices granted read/write access to every buffer, besides the resource's own device. */
  peers?: Device[];
  /** Round sizes to the 'recommended' granularity (the default, better performance) or the 'minimum'. */
  granularity?: 'minimum' | 'recommended';
}

/** How {@link VirtualMemoryResource.allocate} reserves address space. */
export interface VirtualAllocateOptions {
  /** The address range to reserve, in bytes: the buffer can grow in place up to it (default: its size, rounded to the granularity). */
  reserve?: number;
}

const HANDLE_TYPES: Record<VirtualHandleType, cuda.CUmemAllocationHandleType> = {
  none: cuda.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_NONE,
  posixFd: cuda.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
  fabric: cuda.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC,
};

/**
 * Allocates device memory through the driver's virtual memory API. `allocate(size, { reserve })`
 * gives a VirtualBuffer that `resize(n)` grows in place up to its reserved range (and past it when
 * the driver can extend the range at the same address), keeping its address and its contents.
 */
export class VirtualMemoryResource {
  /** cuMemCreate's properties for this resource. */
  private readonly props: cuda.CUmemAllocationProp_st;
  /** Devices granted access, the resource's own first. */
  readonly accessDevices: readonly Device[];
  /** What shareable handle the memory can be exported as: 'none', 'posixFd' or 'fabric'. */
  readonly handleType: VirtualHandleType;
  private gran?: number;
  private readonly granularityKind: cuda.CUmemAllocationGranularity_flags;

  /**
   * A resource for `device`'s memory (initialises the driver); throws TypeError when `device` is not
   * a Device, RangeError for a bad option.
   */
  constructor(
    /** The device whose memory it allocates. */
    readonly device: Device,
    options: VirtualMemoryResourceOptions = {},
  ) {
    if (!(device instanceof Device))
      throw new TypeError(`VirtualMemoryResource: parameter 'device' must be a Device, got ${describe(device)}`);
    checkOptions('new VirtualMemoryResource', options, { handleType: true, peers: true, granularity: true });
    const handleType = options.handleType ?? 'none';
    const requestedHandleTypes = lookupName(HANDLE_TYPES, handleType, 'VirtualMemoryResource', "option 'handleType'");
    const peers = options.peers ?? [];
    if (!Array.isArray(peers) || peers.some((p) => !(p instanceof Device)))
      throw new TypeError("VirtualMemoryResource: option 'peers' must be an array of Devices");
    const g = options.granularity ?? 'recommended';
    if (g !== 'minimum' && g !== 'recommended')
      throw new RangeError(`VirtualMemoryResource: option 'granularity' must be 'minimum' or 'recommended', got ${describe(g)}`);
    this.granularityKind =
      g === 'minimum'
        ? cuda.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM
        : cuda.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED;
    this.handleType = handleType;
    this.accessDevices = [device, ...peers.filter((p) => p !== device)];
    this.props = new cuda.CUmemAllocationProp_st({
      type: cuda.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED,
      requestedHandleTypes,
      location: { type: cuda.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: device.ordinal },
    });
  }

  /** The size every mapping is a multiple of, in bytes (cuMemGetAllocationGranularity). */
  get granularity(): number {
    if (this.gran === undefined) void this.device.primaryContext; // the driver must be initialised
    return (this.gran ??= driverGet(
      cuda.cuMemGetAllocationGranularity(this.props, this.granularityKind),
      'VirtualMemoryResource.granularity (cuMemGetAllocationGranularity)',
    ));
  }

  /** @internal `n` rounded up to the granularity. */
  roundUp(n: number): number {
    const g = this.granularity;
    return Math.ceil(n / g) * g;
  }

  /** @internal cuMemCreate's properties. */
  get allocationProps(): cuda.CUmemAllocationProp_st {
    return this.props;
  }
}
