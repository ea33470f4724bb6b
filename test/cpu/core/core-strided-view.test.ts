// StridedView and `__cuda_array_interface__` (issue #31, item 2) on the fake libcudart whose device
// memory is host memory: copies (packed and strided, through cudaMemcpy2D), slices that share the
// memory, a view as a kernel argument, and descriptors exported, read back, and refused when bad.
import * as fs from 'node:fs';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

/** Runs `body` on the fake with `StridedView`, `dev`, `count2d()` and `T(name, f)` (records the error of f, or 'ok'); returns what it logs. */
function onFake(body: string): Record<string, unknown> {
  return runWithFake(
    fake.lib,
    `const koffi2 = require('koffi').load(${JSON.stringify(fake.lib)});
    const count2d = koffi2.func('long fake_memcpy2d_count(void)');
    const { StridedView } = core;
    const dev = core.Device.get(0);
    const out = {};
    const T = (name, f) => { try { f(); out[name] = 'ok'; } catch (e) { out[name] = e.constructor.name + ': ' + e.message; } };
    ${body}
    console.log(JSON.stringify(out));`,
  ) as Record<string, unknown>;
}

test('a packed view copies in one piece; a column, a transpose and a stepped slice copy through 2D copies', () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 12);
    const m = buf.view({ dtype: 'f32', shape: [4, 3] });
    m.copyFrom(Float32Array.from({ length: 12 }, (_, i) => i));
    const before = count2d();
    out.whole = Array.from(m.copyTo());
    out.packedCopies2d = count2d() - before;
    const col = m.slice(null, 1);
    out.col = [col.shape, col.strides, col.byteOffset, col.isContiguous, Array.from(col.copyTo())];
    out.t = [m.transpose().shape, Array.from(m.transpose().copyTo())];
    out.rows = Array.from(m.slice([1, 4, 2]).copyTo());
    out.row = [m.slice(2).shape, Array.from(m.slice(2).copyTo())];
    out.stridedCopies2d = count2d() - before;
    col.copyFrom(new Float32Array([-1, -2, -3, -4]));
    out.afterColumnWrite = Array.from(m.copyTo());
    const cube = dev.allocate(2 * 3 * 4).view({ dtype: 'u8', shape: [2, 3, 4] });
    cube.copyFrom(Uint8Array.from({ length: 24 }, (_, i) => i));
    out.cube = Array.from(cube.slice(null, [0, 3, 2], [1, 3]).copyTo());
    out.ptrs = [String(col.ptr - m.ptr), m.ndim, m.length, m.itemSize, m.device === dev];
  `);
  expect(r.whole).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  expect(r.packedCopies2d).toBe(0);
  expect(r.col).toEqual([[4], [3], 4, false, [1, 4, 7, 10]]);
  expect(r.t).toEqual([
    [3, 4],
    [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11],
  ]);
  expect(r.rows).toEqual([3, 4, 5, 9, 10, 11]);
  expect(r.row).toEqual([[3], [6, 7, 8]]);
  expect(r.stridedCopies2d).toBeGreaterThanOrEqual(3);
  expect(r.afterColumnWrite).toEqual([0, -1, 2, 3, -2, 5, 6, -3, 8, 9, -4, 11]);
  // [2, 3, 4] sliced to [:, 0:3:2, 1:3]: rows 0 and 2 of each plane, columns 1 and 2.
  expect(r.cube).toEqual([1, 2, 9, 10, 13, 14, 21, 22]);
  expect(r.ptrs).toEqual(['4', 2, 12, 4, true]);
});

test('a view goes to a kernel as the address of its first element, and a closed one is refused', () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 8);
    const v = buf.view({ dtype: 'f32' });
    v.copyFrom(new Float32Array(8));
    // fake kernel 2: x[i] += 1 for i < n, on the second half of the buffer
    kernel(2n, 'inc').launch({ grid: 1, block: 1 }, v.slice([4]), core.i32(4));
    out.after = Array.from(v.copyTo());
    const closed = buf.view({ dtype: 'f32' }); closed.close();
    T('closed view', () => kernel(2n, 'inc').launch({ grid: 1, block: 1 }, closed, core.i32(4)));
    const gone = dev.allocate(16), goneView = gone.view(); gone.close();
    T('view of a closed buffer', () => kernel(2n, 'inc').launch({ grid: 1, block: 1 }, goneView, core.i32(4)));
    out.goneClosed = goneView.isClosed;
  `);
  expect(r.after).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
  expect(r['closed view']).toBe('Error: Kernel.launch(inc): argument 0 is a StridedView that was closed (or whose DeviceBuffer was)');
  expect(r['view of a closed buffer']).toBe(r['closed view']);
  expect(r.goneClosed).toBe(true);
});

test('copies and views refuse what does not fit, naming the method and the parameter', () => {
  const r = onFake(`
    const buf = dev.allocate(64);
    const v = buf.view({ dtype: 'f32', shape: [4, 4] });
    T('short host array', () => v.copyTo(new Float32Array(15)));
    T('read-only', () => buf.view({ readonly: true }).copyFrom(new Uint8Array(64)));
    T('shape too big', () => buf.view({ dtype: 'f32', shape: [5, 4] }));
    T('strides before the start', () => buf.view({ dtype: 'f32', shape: [4], strides: [-1] }));
    T('unknown dtype', () => buf.view({ dtype: 'float32' }));
    T('negative strides copy', () => buf.view({ dtype: 'f32', shape: [4], strides: [-1], byteOffset: 12 }).copyTo());
    T('slice out of range', () => v.slice(4));
    T('bf16 array interface', () => buf.view({ dtype: 'bf16' }).toArrayInterface());
    T('strided device copy', () => v.slice(null, 0).copyFrom(dev.allocate(16)));
  `);
  expect(r['short host array']).toBe("RangeError: StridedView.copyTo: parameter 'dst' has 60 bytes; the view's 16 f32 elements are 64");
  expect(r['read-only']).toBe('Error: StridedView.copyFrom: the view is read-only');
  expect(r['shape too big']).toBe(
    "RangeError: StridedView.of: option 'shape' [5, 4] with option 'strides' [4, 1] from byte 0 needs 80 bytes; the memory has 64",
  );
  expect(r['strides before the start']).toBe(
    "RangeError: StridedView.of: option 'strides' [-1] with option 'shape' [4] reach 12 bytes before the start of the memory",
  );
  expect(r['unknown dtype']).toMatch(
    /^TypeError: StridedView.of: option 'dtype' must be one of bool, i8, u8, .*, got the string "float32"$/,
  );
  expect(r['negative strides copy']).toMatch(/^RangeError: StridedView.copyTo: the view's strides \[-1\] run backwards/);
  expect(r['slice out of range']).toBe('RangeError: StridedView.slice: index 4 of dimension 0 is outside its 4 elements');
  expect(r['bf16 array interface']).toMatch(/^TypeError: StridedView.toArrayInterface: bf16 has no typestr/);
  expect(r['strided device copy']).toMatch(/^RangeError: StridedView.copyFrom: this view is not contiguous/);
});

test("DeviceBuffer's copies take a contiguous view, and refuse a strided, read-only or closed one", () => {
  const r = onFake(`
    const buf = dev.allocate(16), other = dev.allocate(16);
    buf.copyFrom(Uint8Array.from({ length: 16 }, (_, i) => i));
    const v = other.view({ dtype: 'u8', shape: [4, 4] });
    buf.copyTo(v);
    out.copiedTo = Array.from(v.copyTo());
    const back = dev.allocate(8);
    back.copyFrom(v.slice([2]));
    out.copiedFrom = Array.from(back.copyTo(new Uint8Array(8)));
    T('strided source', () => back.copyFrom(v.slice(null, [0, 2])));
    T('read-only destination', () => buf.copyTo(other.view({ readonly: true })));
    const closed = other.view(); closed.close();
    T('closed source', () => back.copyFrom(closed));
  `);
  expect(r.copiedTo).toEqual(Array.from({ length: 16 }, (_, i) => i));
  expect(r.copiedFrom).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
  expect(r['strided source']).toBe(
    "RangeError: DeviceBuffer.copyFrom: parameter 'src' is a StridedView that is not contiguous; copy it through the host or a kernel",
  );
  expect(r['read-only destination']).toBe("Error: DeviceBuffer.copyTo: parameter 'dst' is a read-only StridedView");
  expect(r['closed source']).toBe("Error: DeviceBuffer.copyFrom: parameter 'src' is a StridedView that was closed");
});

test('the array interface: exported by a buffer and a view, read back (also through JSON), the same memory', () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 12);
    const stream = dev.createStream();
    const m = buf.view({ dtype: 'f32', shape: [4, 3], stream });
    m.copyFrom(Float32Array.from({ length: 12 }, (_, i) => i));
    out.buffer = buf.toArrayInterface();
    out.bufferPtr = Number(buf.ptr);
    const col = m.slice(null, 2);
    out.col = col.toArrayInterface();
    out.streamHandle = Number(stream.handle);
    const back = StridedView.fromArrayInterface(JSON.parse(JSON.stringify(col.toArrayInterface())), { buffer: buf });
    out.back = [back.buffer === buf, back.byteOffset, back.shape, back.strides, back.dtype, back.readonly, String(back.stream.handle), back.stream.owned, Array.from(back.copyTo())];
    const ro = StridedView.fromArrayInterface({ ...m.toArrayInterface(), data: [Number(m.ptr), true], stream: null });
    out.wrapped = [ro.buffer.kind, ro.buffer.size, ro.readonly, ro.stream, Array.from(ro.copyTo())];
    T('write to read-only import', () => ro.copyFrom(new Float32Array(12)));
    const legacy = buf.view({ stream: core.Stream.fromHandle(0) }).toArrayInterface();
    out.legacyStream = legacy.stream;
    // A peer's address, read relative to where the peer's allocation starts (as after an IPC open).
    const peer = StridedView.fromArrayInterface({ ...col.toArrayInterface(), data: [0x7000_0000_0008, false] }, { buffer: buf, base: 0x7000_0000_0000 });
    out.peer = [peer.byteOffset, Array.from(peer.copyTo())];
    const negative = StridedView.fromArrayInterface({ shape: [3], typestr: '<f4', data: [Number(m.ptr) + 8, false], strides: [-4], version: 3 });
    out.negative = [negative.buffer.size, negative.byteOffset, Array.from(negative.slice([0, 3]).transpose().shape)];
  `);
  const base = r.bufferPtr as number;
  expect(r.buffer).toEqual({ shape: [48], typestr: '|u1', data: [base, false], version: 3, strides: null, stream: null });
  expect(r.col).toEqual({ shape: [4], typestr: '<f4', data: [base + 8, false], version: 3, strides: [12], stream: r.streamHandle });
  expect(r.back).toEqual([true, 8, [4], [3], 'f32', false, String(r.streamHandle), false, [2, 5, 8, 11]]);
  expect(r.wrapped).toEqual(['foreign', 48, true, null, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]);
  expect(r['write to read-only import']).toBe('Error: StridedView.copyFrom: the view is read-only');
  expect(r.legacyStream).toBe(1);
  expect(r.peer).toEqual([8, [2, 5, 8, 11]]);
  expect(r.negative).toEqual([12, 8, [3]]);
});

test('bad descriptors are refused, naming StridedView.fromArrayInterface and the field', () => {
  const r = onFake(`
    const buf = dev.allocate(64);
    const good = buf.toArrayInterface({ dtype: 'f32', shape: [4, 4] });
    const from = (d, o) => () => StridedView.fromArrayInterface({ ...good, ...d }, o ?? { buffer: buf });
    T('good', from({}));
    T('shape too big', from({ shape: [8, 4] }));
    T('strides before the start', from({ strides: [-16, 4] }));
    T('unknown typestr', from({ typestr: '<f3' }));
    T('big-endian', from({ typestr: '>f4' }));
    T('strides not whole elements', from({ strides: [16, 2] }));
    T('address outside the buffer', from({ data: [Number(buf.ptr) + 128, false] }));
    T('no data', from({ data: 5 }));
    T('stream 0', from({ stream: 0 }));
    T('version 4', from({ version: 4 }));
    T('a mask', from({ mask: {} }));
    T('not an object', () => StridedView.fromArrayInterface('{}'));
    // The fake has one device; a second Device object stands for device 1.
    const other = Object.create(core.Device.prototype, { ordinal: { value: 1 } });
    T('device mismatch', from({}, { buffer: buf, device: other }));
    T('base without buffer', from({}, { base: 0 }));
  `);
  const fn = 'StridedView.fromArrayInterface';
  expect(r.good).toBe('ok');
  expect(r['shape too big']).toBe(
    `RangeError: ${fn}: field 'shape' [8, 4] with field 'strides' [4, 1] from byte 0 needs 128 bytes; the memory has 64`,
  );
  expect(r['strides before the start']).toBe(
    `RangeError: ${fn}: field 'strides' [-4, 1] with field 'shape' [4, 4] reach 48 bytes before the start of the memory`,
  );
  expect(r['unknown typestr']).toMatch(
    new RegExp(`^TypeError: ${fn}: field 'typestr' must be a typestr this package knows \\(.*\\), got the string "<f3"$`),
  );
  expect(r['big-endian']).toBe(`TypeError: ${fn}: field 'typestr' is big-endian (>f4); device memory is little-endian`);
  expect(r['strides not whole elements']).toBe(`RangeError: ${fn}: field 'strides' has 2 bytes, not a whole number of 4-byte f32 elements`);
  expect(r['address outside the buffer']).toMatch(
    new RegExp(`^RangeError: ${fn}: field 'data' \\(0x[0-9a-f]+\\) is not in option 'buffer' \\(64 bytes from 0x[0-9a-f]+\\)$`),
  );
  expect(r['no data']).toBe(`TypeError: ${fn}: field 'data' must be [address, readonly] (an integer and a boolean), got 5`);
  expect(r['stream 0']).toBe(`RangeError: ${fn}: field 'stream' is 0, which the protocol forbids (1 is the legacy default stream)`);
  expect(r['version 4']).toBe(`RangeError: ${fn}: field 'version' must be 3 (or 2), got 4`);
  expect(r['a mask']).toBe(`TypeError: ${fn}: field 'mask' is set; masked arrays are not supported`);
  expect(r['not an object']).toBe(
    `TypeError: ${fn}: parameter 'descriptor' must be a __cuda_array_interface__ object, got the string "{}"`,
  );
  expect(r['device mismatch']).toBe(`RangeError: ${fn}: option 'device' is device 1, but option 'buffer' is memory of device 0`);
  expect(r['base without buffer']).toBe(`TypeError: ${fn}: option 'base' needs option 'buffer'`);
});
