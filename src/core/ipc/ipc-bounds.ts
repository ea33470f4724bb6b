// What an opened IPC mapping really holds. A descriptor from another process says how many bytes
// it shares; the driver's range of the allocation (cuMemGetAddressRange) says how many there are.
import * as cuda from '../../driver';
import { driverError } from '../base/errors';

/**
 * @internal Checks that the bytes up to `end` (offset + size) from `base`, an address just mapped,
 * lie in the allocation the driver has there; otherwise calls `close()` (unmapping it) and throws a
 * RangeError `${fn}: ${claim}, but the allocation it opens holds N bytes` (a CudaError when the
 * driver cannot say).
 */
export function checkMapped(base: bigint, end: number, close: () => void, fn: string, claim: string): void {
  const [err, start, size] = cuda.cuMemGetAddressRange(base);
  if (err !== cuda.CUresult.CUDA_SUCCESS || start === null || size === null) {
    close();
    throw driverError(err, `${fn} (cuMemGetAddressRange)`);
  }
  const holds = start + BigInt(size) - base;
  if (BigInt(end) <= holds) return;
  close();
  throw new RangeError(`${fn}: ${claim}, but the allocation it opens holds ${holds} bytes`);
}
