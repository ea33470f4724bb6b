// Prepared launches and In/Out/InOut host arguments without a GPU: signature parsing and range
// checks in this process; what reaches C through a fake libcudart (test/cpu/fixtures/
// fake-cudart-*.c, built with gcc here) whose "device" memory is host memory and whose
// kernels run on the CPU.
import * as fs from 'node:fs';
import { core } from '../../../src';
import { Kernel } from '../../../src/core/launch/Kernel';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

const { parseSignature, In, Out, InOut } = core;

/** A Kernel over handle `h` of a module that is open until `closed.value` is set. */
function fakeKernel(h: bigint, name = 'k', closed = { value: false }): Kernel {
  return new Kernel(h as never, name, {
    get isClosed() {
      return closed.value;
    },
  } as never);
}

describe('parseSignature', () => {
  test('a whole declaration: pointers, qualifiers, unsigned and 64-bit types, a tensor map', () => {
    expect(
      parseSignature(
        'extern "C" __global__ void k(const float * __restrict__ x, float *y, float a, int n, unsigned int m, unsigned long long big, size_t s, double d, short h, unsigned char c, __grid_constant__ const CUtensorMap tmap, cudaTextureObject_t tex)',
      ),
    ).toEqual(['ptr', 'ptr', 'f32', 'i32', 'u32', 'u64', 'u64', 'f64', 'i16', 'u8', 'tensormap', 'u64']);
  });
  test('a parameter list, types without names, arrays, templates, comments, and none', () => {
    expect(parseSignature('float *x, int /* count */ n, const Pair<int, float> *p, int v[]')).toEqual(['ptr', 'i32', 'ptr', 'ptr']);
    expect(parseSignature('int, unsigned, long long')).toEqual(['i32', 'u32', 'i64']);
    expect(parseSignature('void k()')).toEqual([]);
    expect(parseSignature('void k(void)')).toEqual([]);
  });
  test('an unknown type or a reference is a TypeError naming the parameter', () => {
    expect(() => parseSignature('void k(float *x, MyStruct s)')).toThrow(
      new TypeError(
        "parseSignature: parameter 1 ('MyStruct s') has a type this layer cannot pack from a plain value; use an array of types ('i32', 'f32', 'ptr', …, a struct's layout { size, align }) or Kernel.launch with typed arguments",
      ),
    );
    expect(() => parseSignature('void k(int &r)')).toThrow(/parameter 0 \('int &r'\) is a C\+\+ reference/);
    expect(() => parseSignature('void k(int a,, int b)')).toThrow(/parameter 1 of .* is empty/);
  });
});

describe('Kernel.prepare (no C call needed)', () => {
  test('types are checked when prepared', () => {
    const k = fakeKernel(0x104n, 'saxpy');
    expect(() => k.prepare(['ptr', 'float' as never])).toThrow(
      /^Kernel\.prepare\(saxpy\): types\[1\] must be one of i8, u8, .*, got 'float'$/,
    );
    expect(() => k.prepare(42 as never)).toThrow(/^Kernel\.prepare\(saxpy\): parameter 'signature' must be an array of types/);
    const f = k.prepare('void saxpy(float *x, float a, int n)');
    expect(f.types).toEqual(['ptr', 'f32', 'i32']);
    expect(f.kernel).toBe(k);
  });

  test('a fraction, a value out of range or the wrong count is refused before any C call, naming the argument', () => {
    const f = fakeKernel(0x104n, 'saxpy').prepare(['ptr', 'f32', 'i32', 'u8']);
    const cfg = { grid: 1, block: 1 };
    expect(() => f(cfg, 0x1000n, 2, 1.5, 0)).toThrow(
      new RangeError('PreparedLaunch(saxpy): argument 2 (i32) must be an integer within [-2147483648, 2147483647], got 1.5'),
    );
    expect(() => f(cfg, 0x1000n, 2, 2 ** 31, 0)).toThrow(RangeError);
    expect(() => f(cfg, 0x1000n, 2, 1, 256)).toThrow('PreparedLaunch(saxpy): argument 3 (u8) must be an integer within [0, 255], got 256');
    expect(() => f(cfg, -1, 2, 1, 0)).toThrow(/argument 0 \(ptr\) must be an integer within \[0, 2\^64 - 1\]/);
    expect(() => f(cfg, 0x1000n, '2' as never, 1, 0)).toThrow(
      new TypeError('PreparedLaunch(saxpy): argument 1 (f32) must be a number, got the string "2"'),
    );
    expect(() => f(cfg, {} as never, 2, 1, 0)).toThrow(
      'PreparedLaunch(saxpy): argument 0 (ptr) must be a DeviceBuffer, a mapped HostBuffer, or an address (bigint or number), got an object (Object)',
    );
    expect(() => f(cfg, 0x1000n, 2, 1)).toThrow(new TypeError('PreparedLaunch(saxpy): takes 4 arguments (ptr, f32, i32, u8), got 3'));
    expect(() => f({ grid: 0, block: 1 }, 0x1000n, 2, 1, 0)).toThrow(
      "PreparedLaunch(saxpy): 'config.grid' must be a positive integer or [x, y, z] of them, got 0",
    );
    expect(() => f(null as never, 0x1000n, 2, 1, 0)).toThrow(/^PreparedLaunch\(saxpy\): the first parameter must be a launch config/);
    // A stream that is not a Stream would reach C as NULL (the legacy stream) or as a wrong handle.
    expect(() => f({ grid: 1, block: 1, stream: 5n as never }, 0x1000n, 2, 1, 0)).toThrow(
      new TypeError("PreparedLaunch(saxpy): parameter 'config.stream' must be a Stream, got 5n"),
    );
    expect(() => f({ grid: 1, block: 1, stream: {} as never }, 0x1000n, 2, 1, 0)).toThrow(
      "PreparedLaunch(saxpy): parameter 'config.stream' must be a Stream, got an object (Object)",
    );
    expect(() => f(cfg, 2n ** 64n, 2, 1, 0)).toThrow(/argument 0 \(ptr\) must be an integer within \[0, 2\^64 - 1\]/);
  });

  test('Kernel.launch reads grid and block as a prepared launch does, and names a bad one', () => {
    const k = fakeKernel(0x104n, 'k');
    expect(() => k.launch({ grid: 0, block: 1 })).toThrow(
      new RangeError("Kernel.launch: 'grid' must be a positive integer or [x, y, z] of them, got 0"),
    );
    expect(() => k.launch({ grid: [2, 1.5], block: 1 })).toThrow(
      "Kernel.launch: 'grid' must be a positive integer or [x, y, z] of them, got [2,1.5]",
    );
    expect(() => k.launch({ grid: 1, block: { x: 2 ** 32 } })).toThrow(
      'Kernel.launch: \'block\' must be a positive integer or [x, y, z] of them, got {"x":4294967296}',
    );
  });

  test('a kernel whose module was closed refuses to prepare and to launch', () => {
    const closed = { value: false };
    const k = fakeKernel(0x104n, 'k', closed);
    const f = k.prepare(['i32']);
    // A config already checked once (the launch itself fails here: no driver) is no way around the test.
    const cfg = { grid: 1, block: 1 };
    expect(() => f(cfg, 1)).toThrow(/\(in cudaLaunchKernel\(k\)\)$/);
    closed.value = true;
    expect(() => f({ grid: 1, block: 1 }, 1)).toThrow('PreparedLaunch(k): the Module the kernel belongs to was closed');
    expect(() => f(cfg, 1)).toThrow('PreparedLaunch(k): the Module the kernel belongs to was closed');
    expect(() => k.prepare(['i32'])).toThrow('Kernel.prepare(k): the Module it belongs to was closed');
  });

  test('In/Out/InOut take only host views; a Kernel refuses them where no copy can happen', () => {
    expect(() => In([1, 2] as never)).toThrow("In: parameter 'data' must be a TypedArray, Buffer or DataView, got an array");
    expect(() => Out(null as never)).toThrow("Out: parameter 'data' must be a TypedArray, Buffer or DataView, got null");
    const a = InOut(new Float32Array(4));
    expect([a.direction, a.copiesIn, a.copiesOut]).toEqual(['inout', true, true]);
    expect([In(new Uint8Array(1)).copiesOut, Out(new Uint8Array(1)).copiesIn]).toEqual([false, false]);
  });
});

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));
const withFake = (body: string, nodeArgs: string[] = []) => runWithFake(fake.lib, body, nodeArgs);

// A prepared launch is compiled for its parameter list (numbers stored in line); where Node may not
// make code from strings, the generic launcher does the same work. Both must pack the same bytes.
test.each([
  ['compiled for its parameters', [], true],
  ['generic (node --disallow-code-generation-from-strings)', ['--disallow-code-generation-from-strings'], false],
] as const)(
  'a prepared launch (%s) packs plain numbers as their declared C types, reuses its memory, and passes the config',
  (_name, nodeArgs, compiled) => {
    const r = withFake(
      `
    const f = kernel(0x108n, 'all').prepare('void all(float *p, int a, unsigned b, long long c, unsigned long long d, float e, double g, short h)');
    const compiled = f.toString().includes('dv.setInt32(');
    f({ grid: [3, 2], block: 64, sharedMem: 128 }, 0xdeadbeefn, -7, 4e9, -(2 ** 40), 2n ** 63n, 1.5, -0.125, -300);
    const first = fake.args();
    f({ grid: 1, block: 1 }, 0x1000, 8, 9, 10, 11, 12.5, 13, 14);
    const again = fake.args();
    const out = Buffer.alloc(16 * 32); fake.last(out);
    const cfg = new Uint32Array(7); fake.config(cfg);
    f({ grid: [3, 2], block: 64, sharedMem: 128 }, 0xdeadbeefn, -7, 4e9, -(2 ** 40), 2n ** 63n, 1.5, -0.125, -300);
    const out1 = Buffer.alloc(16 * 32); fake.last(out1);
    const cfg1 = new Uint32Array(7); fake.config(cfg1);
    // A y of 2^22 makes dim3's first word x | y << 32 past 2^53 (a bigint then); a 64-bit signed bigint.
    f({ grid: [5, 2 ** 22, 3], block: { x: 2, y: 3 } }, 2n ** 64n - 1n, 0, 0, -(2n ** 63n), 0, 0, 0, 0);
    const out2 = Buffer.alloc(16 * 32); fake.last(out2);
    const cfg2 = new Uint32Array(7); fake.config(cfg2);
    f({ grid: 7, block: 1 }, 0, 0, 0, 0, 0, 0, 0, 0);
    const cfg3 = new Uint32Array(7); fake.config(cfg3);
    // One config object changed in place between launches: every value is read again each time.
    const c = { grid: [2, 2], block: 8 };
    const seen = [];
    const launch = () => { f(c, 0, 0, 0, 0, 0, 0, 0, 0); const u = new Uint32Array(7); fake.config(u); seen.push(Array.from(u)); };
    launch();
    c.grid[0] = 4; launch();
    c.grid = 6; launch();
    c.block = [3, 2]; c.sharedMem = 64; launch();
    const refused = [];
    const tryLaunch = (...a) => { try { f(c, ...a); refused.push('launched'); } catch (e) { refused.push(e.constructor.name + ': ' + e.message); } };
    c.sharedMem = -1; tryLaunch(0, 0, 0, 0, 0, 0, 0, 0);
    c.sharedMem = 0; c.grid = 0; tryLaunch(0, 0, 0, 0, 0, 0, 0, 0);
    c.grid = 1; tryLaunch(0, 0, 0);
    c.stream = 7n; tryLaunch(0, 0, 0, 0, 0, 0, 0, 0);
    delete c.stream; c.Stream = null; tryLaunch(0, 0, 0, 0, 0, 0, 0, 0);
    console.log(JSON.stringify({
      same: koffi.address(first) === koffi.address(again),
      second: [String(out.readBigUInt64LE(0)), out.readInt32LE(16), out.readUInt32LE(32), String(out.readBigInt64LE(48)), String(out.readBigUInt64LE(64)), out.readFloatLE(80), out.readDoubleLE(96), out.readInt16LE(112)],
      first: [String(out1.readBigUInt64LE(0)), out1.readInt32LE(16), out1.readUInt32LE(32), String(out1.readBigInt64LE(48)), String(out1.readBigUInt64LE(64)), out1.readFloatLE(80), out1.readDoubleLE(96), out1.readInt16LE(112)],
      config: [Array.from(cfg), Array.from(cfg1), Array.from(cfg2), Array.from(cfg3)],
      third: [String(out2.readBigUInt64LE(0)), String(out2.readBigInt64LE(48))],
      seen,
      refused,
      compiled,
    }));`,
      [...nodeArgs],
    );
    expect(r).toEqual({
      compiled,
      same: true,
      second: [String(0x1000), 8, 9, '10', '11', 12.5, 13, 14],
      first: [String(0xdeadbeefn), -7, 4e9, String(-(2 ** 40)), String(2n ** 63n), 1.5, -0.125, -300],
      config: [
        [1, 1, 1, 1, 1, 1, 0],
        [3, 2, 1, 64, 1, 1, 128],
        [5, 2 ** 22, 3, 2, 3, 1, 0],
        [7, 1, 1, 1, 1, 1, 0],
      ],
      third: [String(2n ** 64n - 1n), String(-(2n ** 63n))],
      seen: [
        [2, 2, 1, 8, 1, 1, 0],
        [4, 2, 1, 8, 1, 1, 0],
        [6, 1, 1, 8, 1, 1, 0],
        [6, 1, 1, 3, 2, 1, 64],
      ],
      refused: [
        "RangeError: PreparedLaunch(all): 'config.sharedMem' must be a byte count, got -1",
        "RangeError: PreparedLaunch(all): 'config.grid' must be a positive integer or [x, y, z] of them, got 0",
        'TypeError: PreparedLaunch(all): takes 8 arguments (ptr, i32, u32, i64, u64, f32, f64, i16), got 3',
        "TypeError: PreparedLaunch(all): parameter 'config.stream' must be a Stream, got 7n",
        // A key added to a config object after its first launch is not looked at again (see PreparedLaunch).
        'launched',
      ],
    });
  },
);

test('prepared timed and async forms, and DeviceBuffer arguments', () => {
  const r = withFake(`
    const d = core.Device.get(0);
    const x = d.allocate(16);
    x.copyFrom(new Float32Array([1, 2, 3, 4]));
    const y = d.allocate(16);
    const f = kernel(1n, 'twice').prepare(['ptr', 'ptr', 'i32']);
    const ms = await f.timed({ grid: 1, block: 4 }, x, y, 4);
    await f.async({ grid: 1, block: 4 }, x, y, 4);
    const out = y.copyTo(new Float32Array(4));
    x.close();
    let closed = '';
    try { f({ grid: 1, block: 4 }, x, y, 4); } catch (e) { closed = e.message; }
    y.close();
    console.log(JSON.stringify({ ms, out: Array.from(out), closed, launches: fake.launches(), live: fake.live() }));`);
  expect(r).toEqual({
    ms: 0.25,
    out: [2, 4, 6, 8],
    closed: 'PreparedLaunch(twice): argument 0 is a DeviceBuffer that was closed',
    launches: 2,
    live: 0,
  });
});

test('In/Out/InOut copy host arrays through temporaries and back, sync and awaited, and release them', () => {
  const r = withFake(`
    const { In, Out, InOut, i32 } = core;
    const twice = kernel(1n, 'twice'), inc = kernel(2n, 'inc');
    const xs = Float32Array.from({ length: 1000 }, (_, i) => i), ys = new Float32Array(1000);
    twice.launch({ grid: 4, block: 256 }, In(xs), Out(ys), i32(1000));
    const sync = ys.slice(0, 4);
    const zs = new Float32Array([10, 20, 30]);
    inc.launch({ grid: 1, block: 3 }, InOut(zs), i32(3));
    const ws = new Float32Array(1000);
    await twice.launchAsync({ grid: 4, block: 256 }, In(ys), Out(ws), i32(1000));
    const zs2 = new Float32Array([1, 2]);
    await inc.launchAsync({ grid: 1, block: 2 }, InOut(zs2), i32(2));
    const liveAfter = fake.live();
    // From the installed allocator, given back after the copy back.
    const cache = new core.CachingAllocator();
    core.setAllocator(cache);
    inc.launch({ grid: 1, block: 2 }, InOut(zs2), i32(2));
    const cached = [cache.usedBytes(), cache.totalBytes()];
    core.setAllocator(null);
    console.log(JSON.stringify({ sync: Array.from(sync), zs: Array.from(zs), ws: [ws[0], ws[1], ws[999]], zs2: Array.from(zs2), liveAfter, cached }));`);
  expect(r).toEqual({ sync: [0, 2, 4, 6], zs: [11, 21, 31], ws: [0, 4, 3996], zs2: [3, 4], liveAfter: 0, cached: [0, 512] });
});
