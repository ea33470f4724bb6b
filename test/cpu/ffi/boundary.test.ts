// C never writes past a host buffer: the three out-parameters of issue #21 whose extent comes from
// another argument or another call, against fake libcuda/libnvrtc built here that write exactly
// what NVIDIA documents. Each buffer is a short view at the start of a larger zeroed ArrayBuffer,
// so a write past the view shows up in the bytes after it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CUDA_VERSION } from '../../../src/driver/constants.gen';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-boundary-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const libcuda = path.join(tmp, 'libcuda-boundary.so');
const libnvrtc = path.join(tmp, 'libnvrtc-boundary.so');

beforeAll(() => {
  // The driver's own prototypes and struct sizes, from cuda.h.
  fs.writeFileSync(
    path.join(tmp, 'cuda.c'),
    `
    #include <string.h>
    #include <cuda.h>
    CUresult cuDriverGetVersion(int *v) { *v = ${CUDA_VERSION}; return CUDA_SUCCESS; }
    /* "size: the size of the memory region value points to": a setting fills it (a path, padded). */
    CUresult cuCoredumpGetAttribute(CUcoredumpSettings attrib, void *value, size_t *size) {
      memset(value, 'p', *size);
      return CUDA_SUCCESS;
    }
    /* "result: output array of CUdevResource ... nbGroups: the number of groups that would be or should be created". */
    CUresult cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *nbGroups, const CUdevResource *input,
                                         CUdevResource *remaining, unsigned int useFlags, unsigned int minCount) {
      if (result) for (unsigned i = 0; i < *nbGroups; i++) { memset(&result[i], 0, sizeof *result); result[i].type = CU_DEV_RESOURCE_TYPE_SM; result[i].sm.smCount = minCount; }
      if (remaining) { memset(remaining, 0, sizeof *remaining); remaining->type = CU_DEV_RESOURCE_TYPE_SM; }
      return CUDA_SUCCESS;
    }`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-I/usr/local/cuda/include', '-o', libcuda, path.join(tmp, 'cuda.c')]);
  // NVRTC 13.0 supports 20 architectures; nvrtcGetSupportedArchs writes that many ints.
  fs.writeFileSync(
    path.join(tmp, 'nvrtc.c'),
    `
    static const int archs[20] = { 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121, 122, 123, 124, 125, 126, 127, 128 };
    int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
    int nvrtcGetNumSupportedArchs(int *n) { *n = 20; return 0; }
    int nvrtcGetSupportedArchs(int *a) { for (int i = 0; i < 20; i++) a[i] = archs[i]; return 0; }`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', libnvrtc, path.join(tmp, 'nvrtc.c')]);
});

/** Runs `body` in a child with the fakes loaded; it sets `out`, printed with whether bytes past the view changed. */
function run(body: string): { out: any; overwritten: number } {
  const script = `
    const { cuda, nvrtc } = require('./src');
    const whole = new ArrayBuffer(8192);
    let out;
    try { out = { returned: (() => { ${body} })() }; } catch (e) { out = { threw: e.constructor.name, message: e.message }; }
    const past = new Uint8Array(whole).subarray(globalThis.viewBytes);
    console.log(JSON.stringify({ out, overwritten: past.filter((b) => b !== 0).length }, (k, v) => (typeof v === 'bigint' ? String(v) : v)));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
    timeout: 30_000,
    env: { ...process.env, CUDA_BINDINGS_CUDA: libcuda, CUDA_BINDINGS_NVRTC: libnvrtc },
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
}

test('nvrtcGetSupportedArchs allocates the list nvrtcGetNumSupportedArchs asks for and returns it', () => {
  // (Before: it took the caller's array, and a 1-element view got all 20 ints.)
  const r = run(`globalThis.viewBytes = 4; return nvrtc.nvrtcGetSupportedArchs(new Int32Array(whole, 0, 1));`);
  expect(r.overwritten).toBe(0);
  expect(r.out.returned).toEqual([0, [75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121, 122, 123, 124, 125, 126, 127, 128]]);
}, 60_000);

test('cuCoredumpGetAttribute refuses a value buffer smaller than size before C writes size bytes', () => {
  const r = run(
    `globalThis.viewBytes = 8; return cuda.cuCoredumpGetAttribute(cuda.CUcoredumpSettings.CU_COREDUMP_FILE, new Uint8Array(whole, 0, 8), 1024);`,
  );
  expect(r.overwritten).toBe(0);
  expect(r.out).toEqual({ threw: 'RangeError', message: "cuCoredumpGetAttribute: parameter 'value' holds 8 bytes but size needs 1024" });
  // A buffer as large as size is filled and the size comes back.
  const ok = run(
    `globalThis.viewBytes = 1024; const r = cuda.cuCoredumpGetAttribute(cuda.CUcoredumpSettings.CU_COREDUMP_FILE, new Uint8Array(whole, 0, 1024), 1024); return [r, new Uint8Array(whole)[1023]];`,
  );
  expect(ok).toEqual({ out: { returned: [[0, 1024], 'p'.charCodeAt(0)] }, overwritten: 0 });
}, 60_000);

test('cuDevSmResourceSplitByCount refuses a result buffer smaller than nbGroups CUdevResource', () => {
  const r = run(
    `globalThis.viewBytes = 1; return cuda.cuDevSmResourceSplitByCount(new Uint8Array(whole, 0, 1), 2, new cuda.CUdevResource_st(), 0, 8);`,
  );
  expect(r.overwritten).toBe(0);
  expect(r.out).toEqual({
    threw: 'RangeError',
    message: "cuDevSmResourceSplitByCount: parameter 'result' holds 1 bytes but nbGroups * sizeof(CUdevResource) needs 288",
  });
  // NULL asks for the count; a buffer of nbGroups × 144 bytes is filled.
  const ok =
    run(`globalThis.viewBytes = 288; const r = cuda.cuDevSmResourceSplitByCount(new Uint8Array(whole, 0, 288), 2, new cuda.CUdevResource_st(), 0, 8);
    return [r[0], r[1], new DataView(whole).getUint32(144 + 96, true)];`);
  expect(ok).toEqual({ out: { returned: [0, 2, 8] }, overwritten: 0 });
  expect(
    run(`globalThis.viewBytes = 0; return cuda.cuDevSmResourceSplitByCount(null, 0, new cuda.CUdevResource_st(), 0, 8)[0];`).out,
  ).toEqual({ returned: 0 });
}, 60_000);

describe('arrays of pointers C writes through one by one', () => {
  // No libcuda here: a call that passes its checks fails to load the library.
  const { cuda } = require('../../../src') as typeof import('../../../src');
  const P = cuda.CUpointer_attribute;

  test("cuPointerGetAttributes: each buffer holds its attribute's C type", () => {
    expect(() =>
      cuda.cuPointerGetAttributes(
        2,
        [P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, P.CU_POINTER_ATTRIBUTE_DEVICE_POINTER],
        [Buffer.alloc(4), Buffer.alloc(4)],
        0x1000n,
      ),
    ).toThrow(new RangeError("cuPointerGetAttributes: parameter 'data[1]' holds 4 bytes but pointerAttrBytes(nth(attributes, 1)) needs 8"));
    expect(() => cuda.cuPointerGetAttributes(1, [P.CU_POINTER_ATTRIBUTE_P2P_TOKENS], [Buffer.alloc(8)], 0x1000n)).toThrow(
      /'data\[0\]' holds 8 bytes but .* needs 16/,
    );
    expect(() =>
      cuda.cuPointerGetAttributes(
        2,
        [P.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, P.CU_POINTER_ATTRIBUTE_DEVICE_POINTER],
        [Buffer.alloc(4), Buffer.alloc(8)],
        0x1000n,
      ),
    ).toThrow(/^libcuda: could not load/);
  });

  test('cuMemRangeGetAttributes: data[i] holds dataSizes[i] bytes', () => {
    expect(() => cuda.cuMemRangeGetAttributes([Buffer.alloc(4), Buffer.alloc(8)], [4, 12], [1, 3], 2, 0x1000n, 4096)).toThrow(
      new RangeError("cuMemRangeGetAttributes: parameter 'data[1]' holds 8 bytes but nth(dataSizes, 1) needs 12"),
    );
  });

  test('a JIT log buffer holds what its size option says', () => {
    const O = cuda.CUjit_option;
    const opts = [O.CU_JIT_INFO_LOG_BUFFER, O.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES];
    expect(() => cuda.cuModuleLoadDataEx(Buffer.alloc(16), 2, opts, [Buffer.alloc(100), 4096n])).toThrow(
      new RangeError(
        "cuModuleLoadDataEx: parameter 'optionValues[0]' holds 100 bytes but jitLogBytes(options, optionValues, 0) needs 4096",
      ),
    );
    expect(() => cuda.cuModuleLoadDataEx(Buffer.alloc(16), 2, opts, [Buffer.alloc(4096), 4096n])).toThrow(/^libcuda: could not load/);
  });
});
