// CUDA arrays, texture and surface objects and their descriptors without a GPU: checks in this
// process, and what reaches C through the fake libcudart (test/cpu/fixtures/fake-cudart-*.c),
// whose arrays are host memory and whose objects record what they were made from.
import * as fs from 'node:fs';
import { core } from '../../../src';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

const { ChannelFormatDescriptor, TextureDescriptor } = core;

test('ChannelFormatDescriptor: shorthands, sizes, and formats CUDA arrays cannot hold', () => {
  const f = ChannelFormatDescriptor.of('u8', 4);
  expect([f.x, f.y, f.z, f.w, f.kind, f.channels, f.bytesPerElement]).toEqual([8, 8, 8, 8, 'unsigned', 4, 4]);
  const s = ChannelFormatDescriptor.of('f32', 2).toStruct();
  expect([s.x, s.y, s.z, s.w, s.f]).toEqual([32, 32, 0, 0, 2]);
  expect(() => new ChannelFormatDescriptor(32, 32, 32, 0, 'float')).toThrow(
    'ChannelFormatDescriptor: CUDA arrays and textures take 1, 2 or 4 channels, not 3',
  );
  expect(() => new ChannelFormatDescriptor(8, 0, 8, 0, 'unsigned')).toThrow(/no gap/);
  expect(() => new ChannelFormatDescriptor(12, 0, 0, 0, 'signed')).toThrow(
    "ChannelFormatDescriptor: parameter 'x' must be 0, 8, 16 or 32 bits, got 12",
  );
  expect(() => new ChannelFormatDescriptor(8, 0, 0, 0, 'float')).toThrow(/float channels are 16 or 32 bits/);
  expect(() => ChannelFormatDescriptor.of('f64' as never)).toThrow(/parameter 'type' must be one of/);
});

test('TextureDescriptor: defaults, per-dimension address modes, and refused combinations', () => {
  const t = new TextureDescriptor({
    addressMode: ['wrap', 'border'],
    filterMode: 'linear',
    normalizedCoords: true,
    borderColor: [1, 2, 3, 4],
    readMode: 'normalizedFloat',
  }).toStruct();
  expect([t.addressMode, t.filterMode, t.readMode, t.normalizedCoords, t.borderColor]).toEqual([[0, 3, 1], 1, 1, 1, [1, 2, 3, 4]]);
  const d = new TextureDescriptor().options;
  expect([d.addressMode, d.filterMode, d.readMode, d.normalizedCoords]).toEqual([['clamp', 'clamp', 'clamp'], 'point', 'element', false]);
  expect(() => new TextureDescriptor({ addressMode: 'wrap' })).toThrow(
    "TextureDescriptor: address modes 'wrap' and 'mirror' need normalizedCoords: true",
  );
  expect(() => new TextureDescriptor({ filterMode: 'cubic' as never })).toThrow(
    "TextureDescriptor: option 'filterMode' must be 'point' or 'linear', got the string \"cubic\"",
  );
  expect(() => new TextureDescriptor({ addressMode: ['clamp', 'edge' as never] })).toThrow(
    "TextureDescriptor: option 'addressMode[1]' must be one of 'wrap', 'clamp', 'mirror', 'border', got the string \"edge\"",
  );
  expect(() => new TextureDescriptor({ maxAnisotropy: 17 })).toThrow(RangeError);
});

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
});
afterAll(() => fs.rmSync(fake.dir, { recursive: true, force: true }));

test('arrays of every shape, copies from and to host and device memory, textures and surfaces over them, kernel arguments, and lifetimes', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { CudaArray, ChannelFormatDescriptor: C, ResourceDescriptor: R, TextureObject, SurfaceObject, i32 } = core;
    const d = core.Device.get(0);
    const log = [];
    const f32 = C.of('f32');
    const a2 = CudaArray.create({ format: f32, width: 4, height: 3, surface: true });
    a2.copyFrom(Float32Array.from({ length: 12 }, (_, i) => i));
    log.push(fake.object());
    const back = a2.copyTo(new Float32Array(12));
    const viaDevice = d.allocate(48);
    a2.copyTo(viaDevice);
    const a1 = CudaArray.create({ format: C.of('u8', 4), width: 16 });
    const a3 = CudaArray.create({ format: f32, width: 2, height: 2, depth: 5 });
    const layered = CudaArray.create({ format: f32, width: 8, height: 8, layers: 3 });
    const cube = CudaArray.create({ format: f32, width: 4, height: 4, cubemap: true, layers: 2 });
    const m = CudaArray.fromMatrix(new Int32Array([1, 2, 3, 4, 5, 6]), 2);
    cube.copyFrom(new Float32Array(4 * 4 * 12).fill(1));
    log.push(fake.object());
    const shapes = [a1, a2, a3, layered, cube, m].map((a) => [a.dimensions, a.byteLength]);
    const tex = TextureObject.create(a2, { filterMode: 'linear', addressMode: 'border', borderColor: [9, 0, 0, 0] });
    log.push(fake.object());
    const lin = TextureObject.create(R.linear(viaDevice, f32), { readMode: 'element' });
    log.push(fake.object().replace(String(viaDevice.ptr), 'BUF'));
    const pitched = TextureObject.create(R.pitch2D(viaDevice, f32, 3, 4, 12));
    log.push(fake.object().replace(String(viaDevice.ptr), 'BUF'));
    const surf = SurfaceObject.create(a2);
    log.push(fake.object());
    // Objects pass as their 64-bit handles, to launch() and to prepared launches.
    kernel(0x103n, 'k').launch({ grid: 1, block: 1 }, tex, surf, i32(1));
    const out = Buffer.alloc(512); fake.last(out);
    const f = kernel(0x102n, 'k2').prepare('void k2(cudaTextureObject_t t, cudaSurfaceObject_t s)');
    f({ grid: 1, block: 1 }, tex, surf);
    const out2 = Buffer.alloc(512); fake.last(out2);
    const errors = [];
    const t = (g) => { try { g(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    t(() => SurfaceObject.create(a1));
    t(() => a2.copyFrom(new Float32Array(11)));
    t(() => CudaArray.create({ format: f32, width: 4, height: 3, cubemap: true }));
    t(() => CudaArray.create({ format: f32, width: 4, height: 4, depth: 2, layers: 2 }));
    t(() => CudaArray.create({ format: 'f32', width: 4 }));
    t(() => CudaArray.create({ format: f32, width: 0 }));
    t(() => R.pitch2D(viaDevice, f32, 4, 4, 12));
    t(() => R.linear(viaDevice, f32, 50));
    // A texture keeps its array alive; once the array is closed, the texture and array refuse use.
    const objectsBefore = fake.objects();
    a2.close();
    t(() => a2.copyTo(new Float32Array(12)));
    t(() => TextureObject.create(a2));
    tex.close();
    t(() => kernel(0x101n, 'k').launch({ grid: 1, block: 1 }, tex));
    t(() => f({ grid: 1, block: 1 }, tex, surf));
    for (const o of [lin, pitched, surf, a1, a3, layered, cube, m]) o.close();
    console.log(JSON.stringify({ log, back: Array.from(back), device: Array.from(viaDevice.copyTo(new Float32Array(12))), shapes,
      handles: [String(out.readBigUInt64LE(0)) === String(tex.handle), String(out.readBigUInt64LE(16)) === String(surf.handle), String(out2.readBigUInt64LE(0)) === String(tex.handle), String(out2.readBigUInt64LE(16)) === String(surf.handle)],
      errors, objectsBefore, objectsAfter: fake.objects() }));`,
  ) as Record<string, unknown>;
  expect(r).toEqual({
    log: [
      'memcpy3D to array extent=4,3,1 pitch=16 xsize=4 ysize=3 kind=4',
      'memcpy3D to array extent=4,4,12 pitch=16 xsize=4 ysize=4 kind=4',
      'texture array desc=32,0,0,0/2 extent=4,3,0 flags=2 address=3,3,3 filter=1 read=0 normalized=0 border=9,0,0,0 sRGB=0 aniso=0 seamless=0 view=null',
      'texture linear devPtr=BUF desc=32,0,0,0/2 size=48 address=1,1,1 filter=0 read=0 normalized=0 border=0,0,0,0 sRGB=0 aniso=0 seamless=0 view=null',
      'texture pitch2D devPtr=BUF desc=32,0,0,0/2 width=3 height=4 pitch=12 address=1,1,1 filter=0 read=0 normalized=0 border=0,0,0,0 sRGB=0 aniso=0 seamless=0 view=null',
      'surface array desc=32,0,0,0/2 extent=4,3,0 flags=2',
    ],
    back: Array.from({ length: 12 }, (_, i) => i),
    device: Array.from({ length: 12 }, (_, i) => i),
    shapes: [
      [1, 64],
      [2, 48],
      [3, 80],
      [2, 768],
      [2, 768],
      [2, 24],
    ],
    handles: [true, true, true, true],
    errors: [
      'Error: SurfaceObject.create: the CudaArray was not made for surfaces; create it with { surface: true }',
      "RangeError: CudaArray.copyFrom: parameter 'src' has 44 bytes; the array holds 48 (4 × 3 × 1 elements of 4 bytes)",
      'RangeError: CudaArray.create: a cubemap has square faces (height = width) and no depth, got width 4, height 3, depth 0',
      "RangeError: CudaArray.create: a layered array has 'layers' of 1D or 2D, not 'depth'",
      'TypeError: CudaArray.create: option \'format\' must be a ChannelFormatDescriptor, got the string "f32"',
      "RangeError: CudaArray.create: option 'width' must be an integer of at least 1, got 0",
      "RangeError: ResourceDescriptor.pitch2D: parameter 'pitchInBytes' (12) is less than a row of 4 elements (16 bytes)",
      "RangeError: ResourceDescriptor.linear: parameter 'sizeInBytes' must be within [1, 48] (the buffer's size), got 50",
      'Error: CudaArray.copyTo: the CudaArray was closed',
      "Error: ResourceDescriptor.array: parameter 'array' is a CudaArray that was closed",
      'Error: Kernel.launch(k): argument 0 is a TextureObject whose CudaArray was closed',
      'Error: PreparedLaunch(k2): argument 0 is a TextureObject whose CudaArray was closed',
    ],
    objectsBefore: 10,
    objectsAfter: 0,
  });
});

test('closing an array or buffer closes the textures and surfaces over it: every launch path refuses them before C', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { CudaArray, ChannelFormatDescriptor: C, ResourceDescriptor: R, TextureObject, SurfaceObject, GraphBuilder } = core;
    const d = core.Device.get(0);
    const f32 = C.of('f32');
    const arr = CudaArray.create({ format: f32, width: 4, height: 4, surface: true });
    const surf = SurfaceObject.create(arr), tex = TextureObject.create(arr);
    const whole = d.allocate(64), lin = TextureObject.create(R.linear(whole.slice(16), f32));
    const k = kernel(0x102n, 'k2');
    const f = k.prepare(['u64', 'u64']);
    const before = [surf.isClosed, tex.isClosed, lin.isClosed];
    arr.close();
    whole.close();
    const after = [surf.isClosed, tex.isClosed, lin.isClosed];
    const launches = fake.launches();
    const errors = [];
    const t = (g) => { try { g(); errors.push('no error'); } catch (e) { errors.push(e.constructor.name + ': ' + e.message); } };
    t(() => k.launch({ grid: 1, block: 1 }, surf, tex));
    t(() => k.launch({ grid: 1, block: 1 }, lin, lin));
    t(() => f({ grid: 1, block: 1 }, tex, surf));
    t(() => GraphBuilder.create(d).kernel(k, { grid: 1, block: 1 }, [surf, tex]));
    const objects = fake.objects();
    for (const o of [surf, tex, lin]) o.close();
    console.log(JSON.stringify({ before, after, errors, launched: fake.launches() - launches, objects, objectsAfter: fake.objects() }));`,
  );
  expect(r).toEqual({
    before: [false, false, false],
    after: [true, true, true],
    errors: [
      'Error: Kernel.launch(k2): argument 0 is a SurfaceObject whose CudaArray was closed',
      'Error: Kernel.launch(k2): argument 0 is a TextureObject whose DeviceBuffer was closed',
      'Error: PreparedLaunch(k2): argument 0 is a TextureObject whose CudaArray was closed',
      'Error: GraphBuilder.kernel(k2): argument 0 is a SurfaceObject whose CudaArray was closed',
    ],
    launched: 0,
    // The objects themselves are destroyed at their own close(), after the array.
    objects: 3,
    objectsAfter: 0,
  });
});
