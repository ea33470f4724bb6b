// The one rule for wrapping a handle or pointer another library made (cuda.core's from_handle):
// the wrapper never frees what it does not own, and holds the owner (the object whose lifetime
// decides when the handle dies) for as long as it lives.
import { describe } from '../../ffi/checks';
import { Device } from './Device';

/**
 * What every `fromHandle`/`fromPointer` takes besides the handle: who owns it and where it lives.
 * The wrapper holds `owner` alive while it lives and never destroys or frees the handle itself.
 */
export interface ForeignOptions {
  /**
   * The object that owns the handle (a CuPy-like array, a framework's tensor, an addon's wrapper):
   * kept alive while the wrapper lives, so that the garbage collector does not free it first.
   */
  owner?: unknown;
  /** The device the handle belongs to (default: the current device). */
  device?: Device;
}

/** The keys of ForeignOptions, for checkOptions. */
export const FOREIGN_OPTIONS = { owner: true, device: true } as const;

/**
 * @internal A handle value (a bigint, or a safe non-negative integer) as a bigint; a TypeError
 * naming `fn` and `param` for anything else. `allowNull` lets 0 through (the default stream).
 */
export function foreignValue(v: unknown, fn: string, param: string, allowNull = false): bigint {
  let b: bigint | null = null;
  if (typeof v === 'bigint') b = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  if (b === null || b < 0n || b >= 1n << 64n)
    throw new TypeError(
      `${fn}: parameter '${param}' must be a handle or address (a bigint, or a non-negative integer), got ${describe(v)}`,
    );
  if (b === 0n && !allowNull) throw new RangeError(`${fn}: parameter '${param}' is 0 (a null handle)`);
  return b;
}

/** @internal `options.device`, or the current device when absent; a TypeError naming `fn` for anything else. */
export function foreignDevice(device: unknown, fn: string): Device {
  if (device === undefined) return Device.current();
  if (!(device instanceof Device)) throw new TypeError(`${fn}: option 'device' must be a Device, got ${describe(device)}`);
  return device;
}
