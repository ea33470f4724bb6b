// One set of kernel arguments through the three paths that convert them — Kernel.launch,
// GraphBuilder.kernel and a prepared launch — on the fake libcudart (and the fake libcuda for tensor
// maps): each is accepted by all three, or refused by all three in the same words (issue #30).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildFakeCudart, runWithFake } from '../helpers/fake-cudart';

let fake: { lib: string; dir: string };
beforeAll(() => {
  fake = buildFakeCudart('kernels');
  const libcuda = path.join(fake.dir, 'libcuda-fake.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-o', libcuda, path.join(__dirname, '..', 'fixtures', 'fake-libcuda-tensormap.c')]);
  process.env.CUDA_BINDINGS_CUDA = libcuda;
});
afterAll(() => {
  delete process.env.CUDA_BINDINGS_CUDA;
  fs.rmSync(fake.dir, { recursive: true, force: true });
});

test('the same argument gets the same answer from Kernel.launch, GraphBuilder.kernel and a prepared launch', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { GraphBuilder, CudaArray, ChannelFormatDescriptor: C, TextureObject, SurfaceObject, TensorMapDescriptor, HostBuffer, In, i32, f32 } = core;
    const d = core.Device.get(0);
    const closedBuf = d.allocate(64); closedBuf.close();
    const whole = d.allocate(64), view = whole.slice(16);
    const gone = d.allocate(64), goneView = gone.slice(16); gone.close();
    const mapped = new HostBuffer(16, { mapped: true }), unmapped = new HostBuffer(16);
    const closedHost = new HostBuffer(16, { mapped: true }); closedHost.close();
    const arr = CudaArray.create({ format: C.of('f32'), width: 4, height: 4, surface: true });
    const tex = TextureObject.create(arr), surf = SurfaceObject.create(arr);
    const arr2 = CudaArray.create({ format: C.of('f32'), width: 4, height: 4, surface: true });
    const tex2 = TextureObject.create(arr2), surf2 = SurfaceObject.create(arr2); arr2.close();
    const closedTex = TextureObject.create(arr); closedTex.close();
    const owner = GraphBuilder.create(d), cond = owner.conditionalHandle();
    const dead = GraphBuilder.create(d), deadCond = dead.conditionalHandle(); dead.close();
    const mapBuf = d.allocate(64 * 32 * 4), map = TensorMapDescriptor.tiled(mapBuf, { dataType: 'f32', shape: [64, 32], box: [16, 8] });
    const mapBuf2 = d.allocate(64 * 32 * 4), deadMap = TensorMapDescriptor.tiled(mapBuf2, { dataType: 'f32', shape: [64, 32], box: [16, 8] }); mapBuf2.close();
    const cases = {
      'a DeviceBuffer': ['ptr', d.allocate(64)],
      'a view': ['ptr', view],
      'a closed DeviceBuffer': ['ptr', closedBuf],
      'a view of a closed allocation': ['ptr', goneView],
      'a mapped HostBuffer': ['ptr', mapped],
      'an unmapped HostBuffer': ['ptr', unmapped],
      'a closed HostBuffer': ['ptr', closedHost],
      'a TextureObject': ['u64', tex],
      'a SurfaceObject': ['u64', surf],
      'a closed TextureObject': ['u64', closedTex],
      'a TextureObject whose array was closed': ['u64', tex2],
      'a SurfaceObject whose array was closed': ['u64', surf2],
      'a ConditionalHandle': ['u64', cond],
      'a ConditionalHandle of a closed graph': ['u64', deadCond],
      'a TensorMapDescriptor': ['tensormap', map],
      'a TensorMapDescriptor whose buffer was closed': ['tensormap', deadMap],
      'an In host array': ['ptr', In(new Float32Array(4))],
      'i32(5)': ['i32', i32(5)],
      'f32(1.5)': ['f32', f32(1.5)],
      'a bigint pointer': ['ptr', 16n],
    };
    const k = kernel(0x101n, 'k');
    const answer = (prefix, g) => {
      try { g(); return 'accepted'; } catch (e) { return e.constructor.name + ': ' + e.message.replace(prefix, '<where>'); }
    };
    const out = {};
    for (const [name, [type, a]] of Object.entries(cases)) {
      const b = GraphBuilder.create(d);
      out[name] = {
        launch: answer('Kernel.launch(k)', () => k.launch({ grid: 1, block: 1 }, a)),
        graph: answer('GraphBuilder.kernel(k)', () => b.kernel(k, { grid: 1, block: 1 }, [a])),
        prepared: answer('PreparedLaunch(k)', () => k.prepare([type])({ grid: 1, block: 1 }, a)),
      };
    }
    console.log(JSON.stringify(out));`,
  ) as Record<string, { launch: string; graph: string; prepared: string }>;
  const same = (answer: string) => ({ launch: answer, graph: answer, prepared: answer });
  const closed = (what: string) => same(`Error: <where>: argument 0 is ${what}`);
  expect(r).toEqual({
    'a DeviceBuffer': same('accepted'),
    'a view': same('accepted'),
    'a closed DeviceBuffer': closed('a DeviceBuffer that was closed'),
    'a view of a closed allocation': closed('a DeviceBuffer that was closed'),
    'a mapped HostBuffer': same('accepted'),
    'an unmapped HostBuffer': same(
      'TypeError: <where>: argument 0 is a HostBuffer that is not mapped; allocate it with { mapped: true } to pass it to a kernel',
    ),
    'a closed HostBuffer': closed('a HostBuffer that was closed'),
    'a TextureObject': same('accepted'),
    'a SurfaceObject': same('accepted'),
    'a closed TextureObject': closed('a TextureObject that was closed'),
    'a TextureObject whose array was closed': closed('a TextureObject whose CudaArray was closed'),
    'a SurfaceObject whose array was closed': closed('a SurfaceObject whose CudaArray was closed'),
    'a ConditionalHandle': same('accepted'),
    'a ConditionalHandle of a closed graph': closed('a ConditionalHandle of a graph that was closed'),
    'a TensorMapDescriptor': same('accepted'),
    'a TensorMapDescriptor whose buffer was closed': closed('a TensorMapDescriptor whose DeviceBuffer was closed'),
    // Kernel.launch copies an In/Out/InOut in and back around the launch; a graph node and a prepared launch cannot.
    'an In host array': {
      launch: 'accepted',
      ...(({ graph, prepared }) => ({ graph, prepared }))(
        same(
          'TypeError: <where>: argument 0 is an In/Out/InOut host array, which only Kernel.launch and launchAsync copy in and back; elsewhere pass a DeviceBuffer (in a graph, with copy nodes around the kernel)',
        ),
      ),
    },
    'i32(5)': same('accepted'),
    'f32(1.5)': same('accepted'),
    'a bigint pointer': same('accepted'),
  });
});

test('a plain number or a bad value: launch and graph refuse it alike; a prepared launch, which knows the C type, takes a number and names the type it wants', () => {
  const r = runWithFake(
    fake.lib,
    `
    const { GraphBuilder } = core;
    const d = core.Device.get(0);
    const k = kernel(0x101n, 'k');
    const answer = (prefix, g) => {
      try { g(); return 'accepted'; } catch (e) { return e.constructor.name + ': ' + e.message.replace(prefix, '<where>'); }
    };
    const out = {};
    for (const [name, a] of Object.entries({ number: 3, string: 'x', object: {}, null: null })) {
      out[name] = {
        launch: answer('Kernel.launch(k)', () => k.launch({ grid: 1, block: 1 }, a)),
        graph: answer('GraphBuilder.kernel(k)', () => GraphBuilder.create(d).kernel(k, { grid: 1, block: 1 }, [a])),
        prepared: answer('PreparedLaunch(k)', () => k.prepare(['ptr'])({ grid: 1, block: 1 }, a)),
      };
    }
    console.log(JSON.stringify(out));`,
  );
  const bad = (v: string) =>
    `TypeError: <where>: argument 0 must be a DeviceBuffer, a mapped HostBuffer, a TextureObject, SurfaceObject, TensorMapDescriptor or ConditionalHandle, a typed scalar (i32(n), f32(x), …), a pointer (bigint) or a struct, got ${v}`;
  const ptr = (v: string) =>
    `TypeError: <where>: argument 0 (ptr) must be a DeviceBuffer, a mapped HostBuffer, or an address (bigint or number), got ${v}`;
  const number = 'TypeError: <where>: argument 0 is a plain number (3); say its C type: i32(n), u32(n), f32(x), f64(x), …';
  expect(r).toEqual({
    number: { launch: number, graph: number, prepared: 'accepted' },
    string: { launch: bad('the string "x"'), graph: bad('the string "x"'), prepared: ptr('the string "x"') },
    object: { launch: bad('an object (Object)'), graph: bad('an object (Object)'), prepared: ptr('an object (Object)') },
    null: { launch: bad('null'), graph: bad('null'), prepared: ptr('null') },
  });
});
