// The header values that hand-written ffi, struct and async code uses come from the generator
// (src/ffi/constants.gen.ts), not from copies typed by hand.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as C from '../../../src/ffi/constants.gen';
import * as runtime from '../../../src/runtime';
import * as driver from '../../../src/driver';
import { CUDA_MAJOR } from '../../../src/ffi/versions';
import { cudartSpec } from '../../../src/ffi/cudart-lib.gen';
import { nvjitlinkSpec } from '../../../src/ffi/nvjitlink-lib.gen';

const CUDA_INC = path.join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include');

/** CUDART_VERSION (cuda_runtime_api.h) and CUDA_VERSION (cuda.h) as g++ reads them from the headers. */
function headerVersions(): { CUDART_VERSION: number; CUDA_VERSION: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-version-'));
  try {
    const src = path.join(dir, 'version.cpp');
    fs.writeFileSync(
      src,
      [
        '#include <cuda_runtime_api.h>',
        '#include <cuda.h>',
        '#include <cstdio>',
        'int main() { std::printf("%d %d\\n", (int)CUDART_VERSION, (int)CUDA_VERSION); return 0; }',
      ].join('\n'),
    );
    execFileSync('g++', ['-std=c++17', '-w', `-I${CUDA_INC}`, '-o', path.join(dir, 'version'), src], { stdio: 'pipe' });
    const [rt, drv] = execFileSync(path.join(dir, 'version')).toString().trim().split(' ').map(Number);
    return { CUDART_VERSION: rt, CUDA_VERSION: drv };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("the ffi-level constants equal the facades' generated constants and enumerators", () => {
  expect(C.CUDART_VERSION).toBe(runtime.CUDART_VERSION);
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

test("the CUDA version the bindings were generated for and the major the loaders demand are the headers', as g++ reads them", () => {
  const h = headerVersions();
  expect(h.CUDART_VERSION).toBeGreaterThanOrEqual(12000);
  expect(C.CUDART_VERSION).toBe(h.CUDART_VERSION);
  // cuda.h and cuda_runtime_api.h of one toolkit agree; the major is their thousands (13 for 13000).
  expect(h.CUDA_VERSION).toBe(h.CUDART_VERSION);
  const major = Math.trunc(h.CUDA_VERSION / 1000);
  expect(CUDA_MAJOR).toBe(major);
  // The files the loaders open carry that major.
  expect(cudartSpec.linuxNames).toEqual([`libcudart.so.${major}`]);
  expect(nvjitlinkSpec.linuxNames).toEqual([`libnvJitLink.so.${major}`]);
}, 120_000);

test('no hand-written module keeps its own copy of a header value that constants.gen.ts provides', () => {
  const src = path.join(__dirname, '..', '..', '..', 'src');
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
