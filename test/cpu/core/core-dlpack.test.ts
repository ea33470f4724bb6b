// DLPack 1.x in one process (issue #31, item 3): the layout against dlpack.h by g++, and tensors
// handed to and taken from a small native library (test/cpu/fixtures/dlpack-native.c, built with
// gcc) that consumes and produces them as frameworks do, on the fake libcudart whose device memory
// is host memory. The deleter is called exactly once: on close, on collection, or on refusal.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DLPACK_LAYOUT } from '../../../src/core/memory/dlpack';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

const FIXTURES = path.join(__dirname, '..', 'fixtures');
let fake: { lib: string; dir: string };
let native = '';
beforeAll(() => {
  fake = buildFakeCudart('kernels');
  native = path.join(fake.dir, 'libdlpack-native.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', `-I${FIXTURES}`, '-o', native, path.join(FIXTURES, 'dlpack-native.c')]);
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

test("the DLPack structs' sizes and field offsets are what g++ makes of dlpack.h", () => {
  const lines = ['#include "dlpack.h"', '#include <cstdio>', '#include <cstddef>', 'int main() {'];
  for (const [name, l] of Object.entries(DLPACK_LAYOUT)) {
    const type = name === 'DLManagedTensorVersioned' ? 'struct DLManagedTensorVersioned' : name;
    lines.push(`  printf("${name} size %zu\\n", sizeof(${type}));`);
    for (const f of Object.keys(l.fields)) lines.push(`  printf("${name} ${f} %zu\\n", offsetof(${type}, ${f}));`);
  }
  lines.push('}');
  const src = path.join(fake.dir, 'dlpack-layout.cpp');
  const exe = path.join(fake.dir, 'dlpack-layout');
  fs.writeFileSync(src, lines.join('\n'));
  execFileSync('g++', ['-std=c++17', `-I${FIXTURES}`, '-o', exe, src]);
  const fromCompiler = execFileSync(exe, { encoding: 'utf8' }).trim().split('\n');
  const ours = Object.entries(DLPACK_LAYOUT).flatMap(([name, l]) => [
    `${name} size ${l.size}`,
    ...Object.entries(l.fields).map(([f, at]) => `${name} ${f} ${at}`),
  ]);
  expect(ours).toEqual(fromCompiler);
});

/** Runs `body` on the fake with the native library's functions as `N`, `held()` (tensors native code still holds), `dev`, and `T(name, f)`. */
function onFake(body: string, nodeArgs: string[] = []): Record<string, unknown> {
  const r = runWithFake(
    fake.lib,
    `const lib = koffi.load(${JSON.stringify(native)});
    const N = {
      consume: lib.func('int consume(uint64_t)'), consumed: lib.func('const char *consumed(void)'),
      sum: lib.func('double consumed_sum(void)'), releaseAll: lib.func('void release_all(void)'),
      produce: lib.func('uint64_t produce(uint64_t, int, int, int, unsigned int, int, unsigned int)'),
      deletions: lib.func('long produced_deletions(void)'),
    };
    const { heldDlpackTensors: held } = require('./src/core/memory/dlpack');
    const dev = core.Device.get(0);
    const out = {};
    const T = (name, f) => { try { f(); out[name] = 'ok'; } catch (e) { out[name] = e.constructor.name + ': ' + e.message; } };
    const settle = async () => { for (let i = 0; i < 5; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 10)); } };
    ${body}
    console.log(JSON.stringify(out));`,
    nodeArgs,
  ) as Record<string, unknown>;
  if (r.error) throw new Error(String(r.error));
  return r;
}

test('a view exported to native code: what the consumer reads, and its memory held until the deleter is called', () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 6);
    const m = buf.view({ dtype: 'f32', shape: [2, 3] });
    m.copyFrom(new Float32Array([1, 2, 3, 4, 5, 6]));
    const liveBefore = fake.live();
    out.rc = N.consume(m.toDlpack());
    out.plain = N.consumed(); out.plainSum = N.sum();
    N.consume(m.transpose().toDlpack());
    out.transposed = N.consumed(); out.transposedSum = N.sum();
    N.consume(buf.view({ dtype: 'f32', shape: [3], strides: [2], readonly: true }).toDlpack());
    out.readonly = N.consumed();
    out.heldBefore = held();
    m.close(); buf.close();
    out.liveWhileHeld = fake.live() - liveBefore;
    N.releaseAll();
    out.heldAfter = held();
    out.liveAfterRelease = fake.live() - liveBefore;
    N.releaseAll();
    out.heldAfterSecondRelease = held();
  `);
  expect(r.rc).toBe(0);
  expect(r.plain).toBe('v1.0 flags=0 device=2:0 dtype=2/32/1 ndim=2 offset=0 shape=2,3 strides=3,1');
  // 1*1 + 2*2 + 3*3 + 4*4 + 5*5 + 6*6: the elements in row-major order.
  expect(r.plainSum).toBe(91);
  expect(r.transposed).toBe('v1.0 flags=0 device=2:0 dtype=2/32/1 ndim=2 offset=0 shape=3,2 strides=1,3');
  // The transpose reads 1, 4, 2, 5, 3, 6.
  expect(r.transposedSum).toBe(1 * 1 + 4 * 2 + 2 * 3 + 5 * 4 + 3 * 5 + 6 * 6);
  expect(r.readonly).toBe('v1.0 flags=1 device=2:0 dtype=2/32/1 ndim=1 offset=0 shape=3 strides=2');
  expect(r.heldBefore).toBe(3);
  expect(r.liveWhileHeld).toBe(0);
  expect(r.heldAfter).toBe(0);
  expect(r.liveAfterRelease).toBe(-1);
  expect(r.heldAfterSecondRelease).toBe(0);
});

test('a tensor native code produced: read through its strides, its deleter called once on close', () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 6);
    buf.copyFrom(new Float32Array([1, 2, 3, 4, 5, 6]));
    const v = core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 1, 0, 2));
    out.plain = [v.shape, v.strides, v.dtype, v.readonly, v.buffer.kind, Array.from(v.copyTo())];
    const t = core.fromDlpack(N.produce(buf.ptr, 1, 2, 0, 1, 1, 2), { device: dev });
    out.transposed = [t.shape, t.strides, t.readonly, Array.from(t.copyTo())];
    T('write to a read-only tensor', () => t.copyFrom(new Float32Array(6)));
    out.beforeClose = N.deletions();
    v.close(); v.close(); t.buffer.close(); t.close();
    out.afterClose = N.deletions();
    out.bufferStillOpen = !buf.isClosed;
  `);
  expect(r.plain).toEqual([[2, 3], [3, 1], 'f32', false, 'foreign', [1, 2, 3, 4, 5, 6]]);
  expect(r.transposed).toEqual([[3, 2], [1, 3], true, [1, 4, 2, 5, 3, 6]]);
  expect(r['write to a read-only tensor']).toBe('Error: StridedView.copyFrom: the view is read-only');
  expect(r.beforeClose).toBe(0);
  expect(r.afterClose).toBe(2);
  expect(r.bufferStillOpen).toBe(true);
});

test('an imported tensor that is garbage-collected has its deleter called once', () => {
  const r = onFake(
    `
    const buf = dev.allocate(4 * 6);
    (() => { core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 1, 0, 2)); core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 1, 0, 2)).close(); })();
    await settle();
    out.afterCollection = N.deletions();
  `,
    ['--expose-gc'],
  );
  expect(r.afterCollection).toBe(2);
});

test('a refused tensor is deleted (once) and the error names fromDlpack and the field', () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 6);
    const other = Object.create(core.Device.prototype, { ordinal: { value: 1 } });
    T('cpu tensor', () => core.fromDlpack(N.produce(buf.ptr, 0, 1, 0, 1, 0, 2)));
    T('version 2', () => core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 2, 0, 2)));
    T('device mismatch', () => core.fromDlpack(N.produce(buf.ptr, 0, 2, 1, 1, 0, 2), { device: dev }));
    T('other device than asked', () => core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 1, 0, 2), { device: other }));
    T('complex', () => core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 1, 0, 5)));
    T('bad option', () => core.fromDlpack(N.produce(buf.ptr, 0, 2, 0, 1, 0, 2), { stram: 1 }));
    T('not a pointer', () => core.fromDlpack('0x5'));
    out.deletions = N.deletions();
  `);
  expect(r['cpu tensor']).toBe(
    "RangeError: fromDlpack: field 'dl_tensor.device.device_type' is 1; a StridedView is CUDA memory (kDLCUDA 2 or kDLCUDAManaged 13)",
  );
  expect(r['version 2']).toBe("RangeError: fromDlpack: field 'version' is 2.0; this package reads DLPack 1.x");
  expect(r['device mismatch']).toBe("RangeError: fromDlpack: field 'dl_tensor.device.device_id' is 1, but option 'device' is device 0");
  expect(r['other device than asked']).toBe(
    "RangeError: fromDlpack: field 'dl_tensor.device.device_id' is 0, but option 'device' is device 1",
  );
  expect(r.complex).toBe(
    "TypeError: fromDlpack: field 'dl_tensor.dtype' is a DLPack type this package does not know (code 5, bits 32, lanes 1)",
  );
  expect(r['bad option']).toMatch(/^TypeError: fromDlpack: unknown option 'stram' \(did you mean 'stream'\?\)/);
  expect(r['not a pointer']).toMatch(/^TypeError: fromDlpack: parameter 'tensor' must be the address of a DLManagedTensorVersioned/);
  expect(r.deletions).toBe(6);
});

test("a round trip in JS: a view exported and imported again is the same memory, and closing the import calls this package's deleter", () => {
  const r = onFake(`
    const buf = dev.allocate(4 * 6);
    const m = buf.view({ dtype: 'f32', shape: [2, 3] });
    m.copyFrom(new Float32Array([1, 2, 3, 4, 5, 6]));
    const back = core.fromDlpack(m.slice(null, [1]).toDlpack());
    out.back = [back.shape, back.strides, String(back.ptr - m.ptr), Array.from(back.copyTo())];
    out.heldWhileImported = held();
    back.close();
    out.heldAfterClose = held();
  `);
  expect(r.back).toEqual([[2, 2], [3, 1], '4', [2, 3, 5, 6]]);
  expect(r.heldWhileImported).toBe(1);
  expect(r.heldAfterClose).toBe(0);
});
