// The header values that hand-written ffi, struct and async code uses come from the generator
// (src/ffi/constants.gen.ts), not from copies typed by hand.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as C from '../../src/ffi/constants.gen';
import * as runtime from '../../src/runtime';
import * as driver from '../../src/driver';
import { CUDA_MAJOR } from '../../src/ffi/versions';

test("the ffi-level constants equal the facades' generated constants and enumerators", () => {
  expect(C.CUDART_VERSION).toBe(runtime.CUDART_VERSION);
  // The major version the loaders demand is the headers' (13 for CUDART_VERSION 13000).
  expect(CUDA_MAJOR).toBe(Math.floor(runtime.CUDART_VERSION / 1000));
  expect([C.cudaStreamLegacy, C.cudaStreamPerThread, C.cudaEventDisableTiming]).toEqual([
    runtime.cudaStreamLegacy,
    runtime.cudaStreamPerThread,
    runtime.cudaEventDisableTiming,
  ]);
  expect(C.cudaStreamCaptureStatusActive).toBe(runtime.cudaStreamCaptureStatus.cudaStreamCaptureStatusActive);
  expect(C.cudaMemRangeAttributeAccessedBy).toBe(runtime.cudaMemRangeAttribute.cudaMemRangeAttributeAccessedBy);
  expect([C.CU_STREAM_LEGACY, C.CU_STREAM_PER_THREAD]).toEqual([driver.CU_STREAM_LEGACY, driver.CU_STREAM_PER_THREAD]);
  expect(C.CU_STREAM_CAPTURE_STATUS_ACTIVE).toBe(driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE);
  expect([C.CU_LAUNCH_PARAM_BUFFER_POINTER, C.CU_LAUNCH_PARAM_BUFFER_SIZE, C.CU_LAUNCH_PARAM_END]).toEqual([
    driver.CU_LAUNCH_PARAM_BUFFER_POINTER,
    driver.CU_LAUNCH_PARAM_BUFFER_SIZE,
    driver.CU_LAUNCH_PARAM_END,
  ]);
});

test('no hand-written module keeps its own copy of a header value that constants.gen.ts provides', () => {
  const src = path.join(__dirname, '..', '..', 'src');
  const files = ['runtime/async.ts', 'ffi/host-callbacks.ts', 'ffi/kernel-args.ts', 'ffi/struct-support.ts', 'ffi/versions.ts'];
  const copies = files.flatMap((f) => {
    const text = fs.readFileSync(path.join(src, f), 'utf8');
    return [...text.matchAll(/^(?:export )?const (\w+) = (\d+n?);/gm)]
      .filter(([, , v]) => (Object.values(C) as (number | bigint)[]).includes(v.endsWith('n') ? BigInt(v.slice(0, -1)) : Number(v)))
      .map(([l]) => `${f}: ${l}`);
  });
  expect(copies.filter((l) => !/EXIT_GRACE_MS|MAX_IN_FLIGHT/.test(l))).toEqual([]);
  // The major version the loaders require is derived from CUDART_VERSION, not typed.
  expect(fs.readFileSync(path.join(src, 'ffi/versions.ts'), 'utf8')).not.toMatch(/CUDA_MAJOR = \d/);
});
