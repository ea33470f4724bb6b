// A set of a device's streaming multiprocessors, as green contexts divide them (CUdevResource of type SM).
import * as cuda from '../../driver';
import type { Device } from './Device';

/** Streaming multiprocessors of a device: the whole device's, or a group split from them. */
export class SMResource {
  /** @internal Use DeviceResources. */
  constructor(
    /** The driver's description (a CUdevResource of type SM). */
    readonly raw: cuda.CUdevResource_st,
    /** The device the SMs belong to. */
    readonly device: Device,
  ) {}

  /** How many SMs the set has. */
  get smCount(): number {
    return this.raw.sm.smCount;
  }

  /** The smallest group a split can make. */
  get minPartitionSize(): number {
    return this.raw.sm.minSmPartitionSize;
  }

  /** Split groups are multiples of this many SMs. */
  get coscheduledAlignment(): number {
    return this.raw.sm.smCoscheduledAlignment;
  }
}
