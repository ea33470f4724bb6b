// TensorMapDescriptor without a GPU: the options checked in JS, and what reaches
// cuTensorMapEncodeTiled/Im2col (a fake libcuda, test/cpu/fixtures/fake-libcuda-tensormap.c, writes
// its arguments into the map's bytes) — in C's order, innermost dimension first.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildFakeCudart } from '../helpers/fake-cudart';

let fake: { lib: string; dir: string };
let libcuda: string;
beforeAll(() => {
  fake = buildFakeCudart('kernels');
  libcuda = path.join(fake.dir, 'libcuda-fake.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-o', libcuda, path.join(__dirname, '..', 'fixtures', 'fake-libcuda-tensormap.c')]);
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

function run(body: string): unknown {
  const script = `
    const { core } = require('./src');
    const { TensorMapDescriptor } = core;
    const d = core.Device.get(0);
    const errors = [];
    const t = (g) => { try { g(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    ${body}`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..', '..', '..'),
    env: { ...process.env, CUDA_BINDINGS_CUDART: fake.lib, CUDA_BINDINGS_CUDA: libcuda },
    timeout: 180_000,
  });
  if (r.stderr !== '') throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

test('tiled and im2col maps pass shapes, strides, boxes and modes to C innermost first; a kernel takes the 128 bytes by value', () => {
  void os;
  const r = run(`
    const buf = d.allocate(64 * 32 * 4);
    const m = TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [16, 8], swizzle: '32B', l2Promotion: '128B', oobFill: 'nan' });
    const b = Buffer.from(m.bytes);
    const tiled = { type: b[0], rank: b[1], il: b[2], sw: b[3], l2: b[4], oob: b[5], addrOk: b.readBigUInt64LE(8) === buf.ptr,
      dims: [b.readUInt32LE(16), b.readUInt32LE(20)], strides: [b.readUInt32LE(36)], box: [b.readUInt32LE(52), b.readUInt32LE(56)], es: [b.readUInt32LE(76), b.readUInt32LE(80)] };
    const img = d.allocate(2 * 8 * 8 * 16 * 2);
    const c = TensorMapDescriptor.im2col(img, { dataType: 'f16', shape: [2, 8, 8, 16], pixelBoxLowerCorner: [-1, -2], pixelBoxUpperCorner: [1, 2], channelsPerPixel: 16, pixelsPerColumn: 64, elementStrides: [1, 2, 2, 1] });
    const e = Buffer.from(c.bytes);
    const im2col = { type: e[0], rank: e[1], cpp: e[6], ppc: e.readUInt32LE(96), dims: [0, 1, 2, 3].map((i) => e.readUInt32LE(16 + 4 * i)), strides: [0, 1, 2].map((i) => e.readUInt32LE(36 + 4 * i)),
      lo: [e.readInt32LE(52), e.readInt32LE(56)], hi: [e.readInt32LE(64), e.readInt32LE(68)], es: [0, 1, 2, 3].map((i) => e.readUInt32LE(76 + 4 * i)) };
    // By value in a launch: the fake launch (handle 0x101) records the first 16 bytes of its argument.
    const { Kernel } = require('./src/core/launch/Kernel');
    const koffi = require('koffi');
    const k = new Kernel(0x101n, 'tma', { isClosed: false });
    k.launch({ grid: 1, block: 1 }, m);
    const seen = Buffer.alloc(512); koffi.load(${JSON.stringify(fake.lib)}).func('void fake_last(void *)')(seen);
    const prepared = k.prepare('void tma(const __grid_constant__ CUtensorMap map)');
    prepared({ grid: 1, block: 1 }, m);
    const seen2 = Buffer.alloc(512); koffi.load(${JSON.stringify(fake.lib)}).func('void fake_last(void *)')(seen2);
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [16, 3] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [16, 64], swizzle: '128B' }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [65, 32], box: [16, 8] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [16, 8], strides: [100, 4] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [16, 8], strides: [128, 8] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f7', shape: [64], box: [16] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [300, 8] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [1, 1, 1, 1, 1, 1], box: [1, 1, 1, 1, 1, 1] }));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64, 32], box: [16, 8], swizzle: '256B' }));
    t(() => TensorMapDescriptor.im2col(img, { dataType: 'f16', shape: [8, 16], pixelBoxLowerCorner: [], pixelBoxUpperCorner: [], channelsPerPixel: 1, pixelsPerColumn: 1 }));
    buf.close();
    t(() => k.launch({ grid: 1, block: 1 }, m));
    t(() => prepared({ grid: 1, block: 1 }, m));
    t(() => TensorMapDescriptor.tiled(buf, { dataType: 'f32', shape: [64], box: [16] }));
    console.log(JSON.stringify({ tiled, im2col, byValue: [seen.subarray(0, 16).equals(m.bytes.subarray(0, 16)), seen2.subarray(0, 16).equals(m.bytes.subarray(0, 16))], errors }));`);
  expect(r).toEqual({
    tiled: { type: 7, rank: 2, il: 0, sw: 1, l2: 2, oob: 1, addrOk: true, dims: [32, 64], strides: [128], box: [8, 16], es: [1, 1] },
    im2col: {
      type: 6,
      rank: 4,
      cpp: 16,
      ppc: 64,
      dims: [16, 8, 8, 2],
      strides: [32, 256, 2048],
      lo: [-2, -1],
      hi: [2, 1],
      es: [1, 2, 2, 1],
    },
    byValue: [true, true],
    errors: [
      "RangeError: TensorMapDescriptor.tiled: the box's innermost dimension must be a multiple of 16 bytes, got 3 elements of 4 bytes",
      "RangeError: TensorMapDescriptor.tiled: with swizzle '128B', the box's innermost dimension may span at most 128 bytes, got 256",
      "RangeError: TensorMapDescriptor.tiled: the tensor spans 8320 bytes, more than the buffer's 8192",
      "RangeError: TensorMapDescriptor.tiled: option 'strides[0]' (100 bytes) must be a multiple of 16",
      "RangeError: TensorMapDescriptor.tiled: option 'strides' must end with the element size (4 bytes for f32), got 8",
      "RangeError: TensorMapDescriptor.tiled: option 'dataType' must be one of 'u8', 'u16', 'u32', 'i32', 'u64', 'i64', 'f16', 'f32', 'f64', 'bf16', 'f32ftz', 'tf32', 'tf32ftz', got the string \"f7\"",
      "RangeError: TensorMapDescriptor.tiled: option 'box[0]' must be an integer within [1, 256], got 300",
      "RangeError: TensorMapDescriptor.tiled: option 'shape' must have 1 to 5 dimensions, got an array of 6",
      "RangeError: TensorMapDescriptor.tiled: option 'swizzle' must be one of 'none', '32B', '64B', '128B', got the string \"256B\"",
      "RangeError: TensorMapDescriptor.im2col: option 'shape' must have 3 to 5 dimensions, got an array of 2",
      'Error: Kernel.launch(tma): argument 0 is a TensorMapDescriptor whose DeviceBuffer was closed',
      'Error: PreparedLaunch(tma): argument 0 is a TensorMapDescriptor whose DeviceBuffer was closed',
      "Error: TensorMapDescriptor.tiled: parameter 'buffer' is a DeviceBuffer that was closed",
    ],
  });
});

test("option names are the tables' own: Object.prototype's ('constructor', '__proto__', …) are refused, listing the names", () => {
  const r = run(`
    const buf = d.allocate(64 * 32 * 4);
    const o = { dataType: 'f32', shape: [64, 32], box: [16, 8] };
    t(() => TensorMapDescriptor.tiled(buf, { ...o, dataType: 'constructor' }));
    t(() => TensorMapDescriptor.tiled(buf, { ...o, swizzle: 'constructor' }));
    t(() => TensorMapDescriptor.tiled(buf, { ...o, oobFill: '__proto__' }));
    t(() => TensorMapDescriptor.tiled(buf, { ...o, interleave: 'toString' }));
    t(() => TensorMapDescriptor.tiled(buf, { ...o, l2Promotion: 'valueOf' }));
    t(() => TensorMapDescriptor.im2col(buf, { dataType: 'hasOwnProperty', shape: [2, 4, 4, 16], pixelBoxLowerCorner: [0, 0], pixelBoxUpperCorner: [1, 1], channelsPerPixel: 16, pixelsPerColumn: 4 }));
    console.log(JSON.stringify(errors));`);
  const types = "'u8', 'u16', 'u32', 'i32', 'u64', 'i64', 'f16', 'f32', 'f64', 'bf16', 'f32ftz', 'tf32', 'tf32ftz'";
  expect(r).toEqual([
    `RangeError: TensorMapDescriptor.tiled: option 'dataType' must be one of ${types}, got the string "constructor"`,
    "RangeError: TensorMapDescriptor.tiled: option 'swizzle' must be one of 'none', '32B', '64B', '128B', got the string \"constructor\"",
    "RangeError: TensorMapDescriptor.tiled: option 'oobFill' must be one of 'zero', 'nan', got the string \"__proto__\"",
    "RangeError: TensorMapDescriptor.tiled: option 'interleave' must be one of 'none', '16B', '32B', got the string \"toString\"",
    "RangeError: TensorMapDescriptor.tiled: option 'l2Promotion' must be one of 'none', '64B', '128B', '256B', got the string \"valueOf\"",
    `RangeError: TensorMapDescriptor.im2col: option 'dataType' must be one of ${types}, got the string "hasOwnProperty"`,
  ]);
});

/** Script lines: a kernel `k` that takes a map (the fake's 0x101), `cfg`, `tiled(buffer)`, and the fake's counts `live()` (allocations) and `launches()`. */
const KERNEL = (lib: string): string => `
  const { Kernel } = require('./src/core/launch/Kernel');
  const L = require('koffi').load(${JSON.stringify(lib)});
  const live = L.func('long fake_live_allocations(void)'), launches = L.func('long fake_launches(void)');
  const k = new Kernel(0x101n, 'tma', { isClosed: false });
  const cfg = { grid: 1, block: 1 };
  const tiled = (buffer) => TensorMapDescriptor.tiled(buffer, { dataType: 'f32', shape: [64, 32], box: [16, 8] });`;

test('a graph treats a map as its buffer: instantiate() refuses it once the buffer was closed, and a GraphExec frees the buffer only when the exec is closed', () => {
  const r = run(`${KERNEL(fake.lib)}
    const s = d.createStream();
    // Closed before instantiate(): given to builder.kernel, or by node.setParams.
    const b1 = core.GraphBuilder.create(d), buf1 = d.allocate(8192);
    b1.kernel(k, cfg, [tiled(buf1)]);
    buf1.close();
    t(() => b1.instantiate());
    const b2 = core.GraphBuilder.create(d), buf2 = d.allocate(8192);
    b2.kernel(k, cfg, [d.allocate(8192)]).setParams({ args: [tiled(buf2)] });
    buf2.close();
    t(() => b2.instantiate());
    // Closed while a GraphExec runs it: marked closed at once, freed when the exec is closed.
    const heldBy = (instantiate, ofSlice = false) => {
      // The map is of the buffer, or of a slice whose allocation is then closed.
      const whole = d.allocate(ofSlice ? 16384 : 8192), buffer = ofSlice ? whole.slice(4096, 8192) : whole;
      const exec = instantiate(tiled(buffer));
      const n = live();
      whole.close();
      const freedWhileHeld = n - live();
      let launched = 'launched';
      try { exec.launch(s); } catch (e) { launched = e.message; }
      exec.close();
      return { closed: buffer.isClosed, freedWhileHeld, launched, freedAfter: n - live() };
    };
    const node = (b) => b.kernel(k, cfg, [d.allocate(8192)]);
    const held = {
      kernel: heldBy((m) => { const b = core.GraphBuilder.create(d); b.kernel(k, cfg, [m]); return b.instantiate(); }),
      setParams: heldBy((m) => { const b = core.GraphBuilder.create(d); node(b).setParams({ args: [m] }); return b.instantiate(); }),
      setKernelParams: heldBy((m) => { const b = core.GraphBuilder.create(d), n = node(b), x = b.instantiate(); x.setKernelParams(n, { args: [m] }); return x; }),
      // A map of a slice holds the allocation the slice is part of.
      sliceOfClosedAllocation: heldBy((m) => { const b = core.GraphBuilder.create(d); b.kernel(k, cfg, [m]); return b.instantiate(); }, true),
    };
    console.log(JSON.stringify({ errors, held }));`);
  const closed =
    'a kernel node uses a TensorMapDescriptor whose DeviceBuffer was closed; close what a graph uses after the GraphExec (which keeps it alive), not before instantiate()';
  const freedAtExecClose = { closed: true, freedWhileHeld: 0, launched: 'launched', freedAfter: 1 };
  expect(r).toEqual({
    errors: [`Error: GraphBuilder.instantiate: ${closed}`, `Error: GraphBuilder.instantiate: ${closed}`],
    held: {
      kernel: freedAtExecClose,
      setParams: freedAtExecClose,
      setKernelParams: freedAtExecClose,
      sliceOfClosedAllocation: freedAtExecClose,
    },
  });
});

test("every launch refuses a map whose buffer was closed, also after launches with the same config object (the fast paths') and as a 128-byte struct", () => {
  const r = run(`${KERNEL(fake.lib)}
    (async () => {
    const buf = d.allocate(8192), m = tiled(buf);
    const prepared = k.prepare('void tma(const __grid_constant__ CUtensorMap map)');
    const asStruct = k.prepare([{ size: 128, align: 64 }]);
    for (let i = 0; i < 3; i++) { k.launch(cfg, m); prepared(cfg, m); asStruct(cfg, m); }
    const n = launches();
    buf.close();
    t(() => k.launch(cfg, m));
    t(() => prepared(cfg, m));
    t(() => asStruct(cfg, m));
    t(() => k.launch({ ...cfg, cluster: 1 }, m));
    const launchAsync = await k.launchAsync(cfg, m).then(() => 'no error', (e) => e.constructor.name + ': ' + e.message);
    console.log(JSON.stringify({ errors, launchAsync, launched: launches() - n }));
    })();`);
  const closed = 'argument 0 is a TensorMapDescriptor whose DeviceBuffer was closed';
  expect(r).toEqual({
    errors: [
      `Error: Kernel.launch(tma): ${closed}`,
      `Error: PreparedLaunch(tma): ${closed}`,
      `Error: PreparedLaunch(tma): ${closed}`,
      `Error: Kernel.launch(tma): ${closed}`,
    ],
    launchAsync: `Error: Kernel.launch(tma): ${closed}`,
    launched: 0,
  });
});
