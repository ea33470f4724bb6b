// What a user can reach from a struct cannot be detached under the library: structs share 64 KiB
// slabs, and a transfer of one struct's ArrayBuffer must not take the others (or later structs,
// or calls) with it. A pointer field that holds host memory is checked at the call: memory
// transferred away since the field was set is refused, naming the struct and the field.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { cudart, cuda } from '../../../src';

const { cudaError_t } = cudart;
/** Without a driver every call returns cudaErrorInsufficientDriver; a call that gets that far passed its checks. */
const reachedC = (r: unknown[]) => expect(r[0]).toBe(cudaError_t.cudaErrorInsufficientDriver);

/** Transfers `ab` as a user would; true when it was detached. */
function transfer(ab: ArrayBufferLike): boolean {
  try {
    structuredClone(ab, { transfer: [ab as ArrayBuffer] });
  } catch {
    // Newer Node refuses to transfer an untransferable buffer: as good as a copy.
  }
  return ab.byteLength === 0;
}

test('two small structs share a slab, and transferring its ArrayBuffer detaches neither', () => {
  const a = new cudart.cudaExtent({ width: 1 });
  const b = new cudart.cudaExtent({ width: 2 });
  expect(a.getBytes().buffer).toBe(b.getBytes().buffer);
  expect(transfer(a.getBytes().buffer)).toBe(false);
  expect([a.width, b.width]).toEqual([1, 2]);
  b.height = 3;
  expect(b.height).toBe(3);
  expect(new cudart.cudaExtent({ depth: 4 }).depth).toBe(4);
  // Calls that make or take structs keep working.
  reachedC(cudart.cudaGetDeviceProperties(0));
  reachedC(cudart.cudaMemcpy3D(new cudart.cudaMemcpy3DParms({ extent: b, kind: 4 })));
});

test("posting a struct's buffer to a worker leaves the struct and its neighbours working", async () => {
  const a = new cudart.cudaPos({ x: 7 });
  const b = new cudart.cudaPos({ y: 8 });
  const w = new Worker(
    'require("worker_threads").parentPort.once("message", (m) => require("worker_threads").parentPort.postMessage(m.byteLength))',
    { eval: true },
  );
  try {
    const got = new Promise((resolve) => w.once('message', resolve));
    try {
      w.postMessage(a.getBytes().buffer, [a.getBytes().buffer as ArrayBuffer]);
    } catch {
      // refused: fine
    }
    await got;
    expect([a.x, b.y, a.getBytes().byteLength]).toEqual([7, 8, 24]);
    reachedC(cudart.cudaMemcpy3D(new cudart.cudaMemcpy3DParms({ srcPos: a, dstPos: b, kind: 4 })));
  } finally {
    await w.terminate();
  }
});

test('a slab detached by other means (ArrayBuffer.prototype.transfer in newer Node) does not stop new allocations', () => {
  // V8's own detach, which ignores Node's untransferable mark as .transfer() would.
  const script = `
    const { cudart } = require('./src');
    const detach = new Function('ab', '%ArrayBufferDetach(ab)');
    const a = new cudart.cudaExtent();
    detach(a.getBytes().buffer);
    const b = new cudart.cudaExtent({ width: 9 });
    console.log(JSON.stringify([a.getBytes().byteLength, b.width, cudart.cudaGetDeviceProperties(0)[0]]));`;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
  });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual([0, 9, cudaError_t.cudaErrorInsufficientDriver]);
});

test('KernelArgs and the extra-buffer form keep their memory when it is transferred', () => {
  const k = new cudart.KernelArgs([cudart.i32(5)]);
  expect(transfer(k.buffer.buffer)).toBe(false);
  expect(new DataView(k.buffer.buffer, k.buffer.byteOffset).getInt32(0, true)).toBe(5);
  const extra = cuda.launchParamBuffer(k);
  expect(transfer(extra.buffer)).toBe(false);
});

test('JitOptions keeps the log buffers whose addresses its values hold', () => {
  const o = new cuda.JitOptions({}, 64);
  const logs = [(o as any).info, (o as any).error] as Uint8Array[];
  for (const l of logs) expect(transfer(l.buffer)).toBe(false);
  expect(logs.map((l) => l.byteLength)).toEqual([64, 64]);
});

describe('a pointer field keeps its host buffer and the call checks it', () => {
  test('a buffer transferred away after it was set is refused, naming the struct and the field', () => {
    const p = new cudart.cudaMemcpy3DParms({ extent: { width: 64, height: 1, depth: 1 }, kind: 1 });
    const host = new Float32Array(16);
    p.srcPtr.ptr = host;
    p.srcPtr.pitch = 64;
    reachedC(cudart.cudaMemcpy3D(p));
    expect(transfer(host.buffer)).toBe(true);
    expect(() => cudart.cudaMemcpy3D(p)).toThrow(
      new TypeError(
        "cudaMemcpy3D: parameter 'p': field cudaMemcpy3DParms.srcPtr.ptr points into host memory of 64 bytes that has since been detached (transferred away); set the field again",
      ),
    );
    // Pointing the field elsewhere ends the check.
    p.srcPtr.ptr = 0x1000n;
    reachedC(cudart.cudaMemcpy3D(p));
  });

  test('the same for a buffer posted to a worker, and for a field set by assigning a struct', async () => {
    const p = new cudart.cudaMemcpy3DParms({ kind: 2 });
    const dst = new Uint8Array(256);
    p.dstPtr = new cudart.cudaPitchedPtr({ ptr: dst, pitch: 256, xsize: 256, ysize: 1 });
    p.srcPtr.ptr = new Uint8Array(256);
    const w = new Worker('require("worker_threads").parentPort.once("message", () => process.exit(0))', { eval: true });
    w.postMessage(dst.buffer, [dst.buffer]);
    await new Promise((resolve) => w.once('exit', resolve));
    expect(() => cudart.cudaMemcpy3D(p)).toThrow(
      /^cudaMemcpy3D: parameter 'p': field cudaMemcpy3DParms\.dstPtr\.ptr points into host memory of 256 bytes that has since been detached/,
    );
  });

  test('a buffer shorter than the copy the struct describes is refused (runtime and driver)', () => {
    const p = new cudart.cudaMemcpy3DParms({ extent: { width: 64, height: 2, depth: 1 }, kind: 1 });
    p.srcPtr = new cudart.cudaPitchedPtr({ ptr: new Uint8Array(100), pitch: 64, xsize: 64, ysize: 2 });
    expect(() => cudart.cudaMemcpy3D(p)).toThrow(
      new RangeError("cudaMemcpy3D: parameter 'p': field cudaMemcpy3DParms.srcPtr.ptr holds 100 bytes but the struct's extent needs 128"),
    );
    p.srcPtr.ptr = new Uint8Array(128);
    reachedC(cudart.cudaMemcpy3D(p));
    // The driver's 2D copy from host memory (CU_MEMORYTYPE_HOST), starting at row 1.
    const c = new cuda.CUDA_MEMCPY2D({ srcMemoryType: 1, srcHost: new Uint8Array(40), srcPitch: 32, srcY: 1, WidthInBytes: 16, Height: 1 });
    expect(() => cuda.cuMemcpy2D(c)).toThrow(
      new RangeError("cuMemcpy2D: parameter 'pCopy': field CUDA_MEMCPY2D_st.srcHost holds 40 bytes but the struct's extent needs 48"),
    );
    c.srcHost = new Uint8Array(48);
    expect(() => cuda.cuMemcpy2D(c)).toThrow(/^libcuda: could not load the library/);
  });

  test('a struct passed in an array is checked too', () => {
    const op = new cudart.cudaMemcpy3DBatchOp();
    const host = new Uint8Array(32);
    op.src.op.ptr.ptr = host;
    reachedC(cudart.cudaMemcpy3DBatchAsync(1, [op], 0n, null));
    transfer(host.buffer);
    expect(() => cudart.cudaMemcpy3DBatchAsync(1, [op], 0n, null)).toThrow(
      /^cudaMemcpy3DBatchAsync: parameter 'opList\[0\]': field cudaMemcpy3DBatchOp\.src\.op\.ptr\.ptr points into host memory of 32 bytes/,
    );
  });
});
