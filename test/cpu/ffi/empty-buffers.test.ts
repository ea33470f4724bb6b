// Empty host memory reaches C as a valid address, not NULL: koffi passes a Buffer whose ArrayBuffer is
// empty as NULL, and C libraries read NULL as "no buffer" (nvJitLinkGetErrorLog of an empty log
// returned NVJITLINK_ERROR_NULL_INPUT on the H100). Extent checks still see the caller's 0 bytes.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CUDART_VERSION } from '../../../src/runtime/constants.gen';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-empty-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('an empty Buffer, TypedArray or ArrayBuffer is passed as a non-NULL address, and a count past it is still refused', () => {
  const src = path.join(tmp, 'e.c');
  const lib = path.join(tmp, 'libcudart-empty.so');
  // cudaMemcpy answers 1 when it was given NULL for src, 0 otherwise.
  fs.writeFileSync(
    src,
    `int cudaRuntimeGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }\nint cudaMemcpy(void *d, const void *s, unsigned long n, int k) { return s == 0; }\n`,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, src]);
  const script = `
    const { cudart } = require('./src');
    const k = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
    const out = [Buffer.alloc(0), new Float32Array(0), new ArrayBuffer(0), null].map((b) => cudart.cudaMemcpy(0x1000n, b, 0, k)[0]);
    let refused = '';
    try { cudart.cudaMemcpy(0x1000n, Buffer.alloc(0), 4, k); } catch (e) { refused = e.message; }
    console.log(JSON.stringify({ out, refused }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: path.join(__dirname, '..', '..', '..'),
    encoding: 'utf8',
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib },
    timeout: 180_000,
  });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual({ out: [0, 0, 0, 1], refused: "cudaMemcpy: parameter 'src' holds 0 bytes but count needs 4" });
});

test('a struct pointer field set to empty host memory holds a valid address, not NULL', () => {
  // (In-process: the field reads back the address it holds.)
  const { cudart } = require('../../../src') as typeof import('../../../src');
  for (const empty of [Buffer.alloc(0), new Float32Array(0), new ArrayBuffer(0)]) {
    const p = new cudart.cudaPitchedPtr({ ptr: empty, pitch: 0, xsize: 0, ysize: 0 });
    expect(p.ptr).not.toBe(0n);
  }
  expect(new cudart.cudaPitchedPtr({ ptr: null }).ptr).toBe(0n);
});
