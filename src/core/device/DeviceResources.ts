// cuda.core 1.2's device resources: what a device's SMs are, split into groups, and green contexts
// made from the groups.
import { describe } from '../../ffi/checks';
import * as cuda from '../../driver';
import { Device } from './Device';
import { driverGet } from '../base/driver-check';
import { GreenContext } from './GreenContext';
import { SMResource } from './SMResource';

const SM = cuda.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM;
const RESOURCE_BYTES = 144;

/** What `splitSM` gives: the groups, and the SMs left over. */
export interface SMSplit {
  /** The groups asked for, each of at least the asked-for number of SMs. */
  groups: SMResource[];
  /** The SMs not put in a group. */
  remaining: SMResource;
}

/**
 * A device's resources for green contexts (CUDA 12.4+): its streaming multiprocessors, split into
 * groups that a {@link GreenContext} then runs on alone, so work on one group cannot take SMs from
 * another. Holds nothing to free. Driver failures throw {@link CudaError}.
 *
 * @example
 * ```ts
 * const res = DeviceResources.of(Device.get(0));
 * const { groups } = res.splitSM(16, 2);          // two groups of at least 16 SMs
 * using green = res.createGreenContext(groups[0]);
 * using stream = green.createStream();            // work here runs on those SMs only
 * ```
 */
export class DeviceResources {
  private constructor(
    /** The device whose resources these are. */
    readonly device: Device,
  ) {}

  /** The resources of `device`. */
  static of(device: Device): DeviceResources {
    if (!(device instanceof Device))
      throw new TypeError(`DeviceResources.of: parameter 'device' must be a Device, got ${describe(device)}`);
    return new DeviceResources(device);
  }

  /** All the device's SMs (cuDeviceGetDevResource). */
  get sm(): SMResource {
    void this.device.primaryContext; // the driver must be initialised
    return new SMResource(
      driverGet(cuda.cuDeviceGetDevResource(this.device.ordinal, SM), 'DeviceResources.sm (cuDeviceGetDevResource)'),
      this.device,
    );
  }

  /**
   * Splits `from` (default: all the SMs) into up to `groups` groups of at least `minCount` SMs each
   * (cuDevSmResourceSplitByCount; the driver rounds the count up to the SM alignment), and the rest.
   */
  splitSM(minCount: number, groups = 1, from: SMResource = this.sm): SMSplit {
    if (!Number.isInteger(minCount) || minCount <= 0)
      throw new RangeError(`DeviceResources.splitSM: parameter 'minCount' must be a positive integer, got ${minCount}`);
    if (!Number.isInteger(groups) || groups <= 0)
      throw new RangeError(`DeviceResources.splitSM: parameter 'groups' must be a positive integer, got ${groups}`);
    if (!(from instanceof SMResource))
      throw new TypeError(`DeviceResources.splitSM: parameter 'from' must be an SMResource, got ${describe(from)}`);
    if (from.device !== this.device)
      throw new RangeError(`DeviceResources.splitSM: parameter 'from' is of device ${from.device.ordinal}, not ${this.device.ordinal}`);
    const out = new Uint8Array(RESOURCE_BYTES * groups);
    const [err, made, remaining] = cuda.cuDevSmResourceSplitByCount(out, groups, from.raw, 0, minCount);
    const n = driverGet([err, made], 'DeviceResources.splitSM (cuDevSmResourceSplitByCount)');
    return {
      groups: Array.from(
        { length: n },
        (_, i) => new SMResource(cuda.CUdevResource_st.view(out.subarray(i * RESOURCE_BYTES, (i + 1) * RESOURCE_BYTES)), this.device),
      ),
      remaining: new SMResource(remaining!, this.device),
    };
  }

  /** A green context that runs on `resources`' SMs only (cuDevResourceGenerateDesc, cuGreenCtxCreate). */
  createGreenContext(resources: SMResource | SMResource[]): GreenContext {
    const list = Array.isArray(resources) ? resources : [resources];
    if (list.length === 0 || list.some((r) => !(r instanceof SMResource)))
      throw new TypeError("DeviceResources.createGreenContext: parameter 'resources' must be an SMResource or a non-empty array of them");
    if (list.some((r) => r.device !== this.device))
      throw new RangeError(`DeviceResources.createGreenContext: every resource must be of device ${this.device.ordinal}`);
    const desc = driverGet(
      cuda.cuDevResourceGenerateDesc(
        list.map((r) => r.raw),
        list.length,
      ),
      'DeviceResources.createGreenContext (cuDevResourceGenerateDesc)',
    );
    const h = driverGet(
      cuda.cuGreenCtxCreate(desc, this.device.ordinal, cuda.CUgreenCtxCreate_flags.CU_GREEN_CTX_DEFAULT_STREAM),
      'DeviceResources.createGreenContext (cuGreenCtxCreate)',
    );
    return new GreenContext(h, this.device, list);
  }
}
