// Core's argument messages name core: a misspelt option is a TypeError naming the method and the key
// (one helper, checkOptions, for every options bag), a copy from an Array names DeviceBuffer.copyFrom,
// and HostBuffer.as takes only a TypedArray class or DataView. What needs a device runs on the fake
// libcudart (test/cpu/helpers/fake-cudart.ts); the rest fails before any CUDA call.
import { core, cudart } from '../../../src';
import { checkOptions } from '../../../src/core/base/options';
import { removeFakeCudart, runOnFake } from '../helpers/fake-cudart';

afterAll(() => removeFakeCudart());

type StreamOpts = { nonBlocking?: boolean; priority?: number };

describe('checkOptions', () => {
  test('absent options and known keys pass; an unknown key names the method, the key and the near miss', () => {
    expect(() => checkOptions<StreamOpts>('Device.createStream', undefined, { nonBlocking: true, priority: true })).not.toThrow();
    expect(() => checkOptions<StreamOpts>('Device.createStream', { priority: -1 }, { nonBlocking: true, priority: true })).not.toThrow();
    expect(() =>
      checkOptions('Device.createStream', { nonblocking: true } as object, { nonBlocking: true, priority: true } as never),
    ).toThrow(
      new TypeError(
        "Device.createStream: unknown option 'nonblocking' (did you mean 'nonBlocking'?); the options are nonBlocking, priority",
      ),
    );
    expect(() => checkOptions('new CachingAllocator', { limti: 5 } as object, { limit: true } as never)).toThrow(
      "new CachingAllocator: unknown option 'limti' (did you mean 'limit'?)",
    );
    expect(() => checkOptions('Kernel.launch(k)', { colour: 1 } as object, { grid: true } as never, 'config')).toThrow(
      "Kernel.launch(k): unknown option 'colour' in 'config'; the options are grid",
    );
  });

  test('options that are not an object: TypeError naming the parameter', () => {
    expect(() => checkOptions<{ names?: unknown }>('Module.load', null as never, { names: true })).toThrow(
      new TypeError("Module.load: parameter 'options' must be an object of options, got null"),
    );
    expect(() => checkOptions<{ names?: unknown }>('Module.load', 5 as never, { names: true })).toThrow(
      "Module.load: parameter 'options' must be an object of options, got number 5",
    );
    expect(() => checkOptions<{ names?: unknown }>('Module.load', [] as never, { names: true })).toThrow('got an array');
  });

  test('inherited keys (a prototype) are not options', () => {
    const o = Object.create({ inherited: 1 }) as { limit?: number };
    o.limit = 4;
    expect(() => checkOptions('x', o, { limit: true })).not.toThrow();
  });
});

describe('options bags that fail before any CUDA call (no driver needed)', () => {
  const cases: [string, () => unknown, string][] = [
    [
      'new CachingAllocator',
      () => new core.CachingAllocator({ limti: 5 } as never),
      "new CachingAllocator: unknown option 'limti' (did you mean 'limit'?)",
    ],
    [
      'new HostBuffer',
      () => new core.HostBuffer(16, { maped: true } as never),
      "new HostBuffer: unknown option 'maped' (did you mean 'mapped'?)",
    ],
    ['new PinnedMemoryPool', () => new core.PinnedMemoryPool({ limits: 1 } as never), "new PinnedMemoryPool: unknown option 'limits'"],
    [
      'new TextureDescriptor',
      () => new core.TextureDescriptor({ filter: 'linear' } as never),
      "new TextureDescriptor: unknown option 'filter'",
    ],
    [
      'new DebugPrintHook',
      () => new core.DebugPrintHook({ install: false, prefix: '>' } as never),
      "new DebugPrintHook: unknown option 'prefix'",
    ],
    [
      'new LineProfileHook',
      () => new core.LineProfileHook({ instal: false } as never),
      "new LineProfileHook: unknown option 'instal' (did you mean 'install'?)",
    ],
    [
      'Program.compile',
      () => core.Program.compile('__global__ void k() {}', { option: ['-O3'] } as never),
      "Program.compile: unknown option 'option' (did you mean 'options'?)",
    ],
    [
      'Module.load',
      () => core.Module.load(new Uint8Array(4), { name: {} } as never),
      "Module.load: unknown option 'name' (did you mean 'names'?)",
    ],
    [
      'ObjectCode.fromBytes',
      () => core.ObjectCode.fromBytes('.version 8.0', 'ptx', { archs: 'sm_90' } as never),
      "ObjectCode.fromBytes: unknown option 'archs' (did you mean 'arch'?)",
    ],
    [
      'ObjectCode.load',
      () => core.ObjectCode.fromBytes('.version 8.0', 'ptx').load({ name: {} } as never),
      "ObjectCode.load: unknown option 'name'",
    ],
    [
      'ObjectCode.fatbin',
      () => core.ObjectCode.fatbin([core.ObjectCode.fromBytes('.version 8.0', 'ptx', { arch: 'sm_90' })], { compress: true } as never),
      "ObjectCode.fatbin: unknown option 'compress'",
    ],
    [
      'new ElementwiseKernel',
      () => new core.ElementwiseKernel('float x', 'float y', 'y = x', 'copy', { preambel: '' } as never),
      "new ElementwiseKernel: unknown option 'preambel' (did you mean 'preamble'?)",
    ],
    [
      'Communicator.init',
      () => core.Communicator.init({ rank: 0, nranks: 1, id: '', rnak: 0 } as never),
      "Communicator.init: unknown option 'rnak'",
    ],
  ];
  test.each(cases)('%s refuses an unknown key with a TypeError naming it', (_, f, message) => {
    expect(f).toThrow(TypeError);
    expect(f).toThrow(message);
  });

  test('rendezvous refuses an unknown key too', async () => {
    await expect(core.rendezvous({ rank: 0, nranks: 1, master: '127.0.0.1:1', timeout: 5 } as never)).rejects.toThrow(
      "rendezvous: unknown option 'timeout' (did you mean 'timeoutMs'?)",
    );
  });
});

describe("names looked up in a table are the table's own, never Object.prototype's (no device needed)", () => {
  test('ChannelFormatDescriptor: a kind and a type', () => {
    expect(() => new core.ChannelFormatDescriptor(8, 0, 0, 0, 'constructor' as never)).toThrow(
      new RangeError(
        "ChannelFormatDescriptor: parameter 'kind' must be one of 'signed', 'unsigned', 'float', got the string \"constructor\"",
      ),
    );
    expect(() => core.ChannelFormatDescriptor.of('toString' as never)).toThrow(
      new RangeError(
        "ChannelFormatDescriptor.of: parameter 'type' must be one of 'i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'f16', 'f32', got the string \"toString\"",
      ),
    );
  });

  test('TextureDescriptor: an address mode', () => {
    expect(() => new core.TextureDescriptor({ addressMode: ['clamp', '__proto__' as never] })).toThrow(
      new RangeError(
        "TextureDescriptor: option 'addressMode[1]' must be one of 'wrap', 'clamp', 'mirror', 'border', got the string \"__proto__\"",
      ),
    );
  });

  test('parseSignature and ElementwiseKernel: a C type named like a key of Object.prototype is no type', () => {
    expect(() => core.parseSignature('void k(constructor x)')).toThrow(/^parseSignature: parameter 0 \('constructor x'\) has a type/);
    expect(() => core.parseSignature('void k(int n, toString)')).toThrow(/^parseSignature: parameter 1 \('toString'\) has a type/);
    expect(() => new core.ElementwiseKernel('constructor x', 'float y', 'y = 1', 'k')).toThrow(
      /^ElementwiseKernel: parameter 'constructor x' must be '<type> <name>' with a type among bool, char,/,
    );
  });

  test("Program.loweredName: a name that is not one of the program's name expressions is itself", () => {
    const make = (core.Program as unknown as { make(...a: unknown[]): core.Program }).make;
    const p = make(new Uint8Array(1), 'cubin', 'sm_90', '', 'nvrtc 13.0', false, { 'k<int>': '_Z1kIiEvv' }, 'p.cu');
    expect([p.loweredName('k<int>'), p.loweredName('constructor'), p.loweredName('toString')]).toEqual([
      '_Z1kIiEvv',
      'constructor',
      'toString',
    ]);
  });

  test('a nested struct given as a plain object: a key of Object.prototype is no field', () => {
    expect(() => new cudart.cudaMemcpy3DParms({ extent: { constructor: 1 } as never })).toThrow(
      /^cudaMemcpy3DParms\.extent must be a cudaExtent or a plain object of its fields \(it has no field 'constructor'\)/,
    );
  });

  test('KernelArgs: a KernelArg whose type is none of the types', () => {
    expect(() => new cudart.KernelArgs([cudart.i32(1), new cudart.KernelArg('constructor' as never, 1)])).toThrow(
      new RangeError(
        "KernelArgs: the type of parameter 'args[1]' must be one of 'i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64', 'f16', 'f32', 'f64', 'ptr', got the string \"constructor\"",
      ),
    );
  });
});

describe('on a device (fake libcudart)', () => {
  let results: Record<string, string>;
  beforeAll(() => {
    const r = runOnFake(`
      const { core } = require('./src');
      const out = {};
      const t = (name, f) => { try { const v = f(); out[name] = 'returned ' + Object.prototype.toString.call(v); } catch (e) { out[name] = e.constructor.name + ': ' + e.message; } };
      const dev = core.Device.get(0);
      const buf = dev.allocate(16);
      const stream = dev.createStream();
      t('copyFrom array', () => buf.copyFrom([1, 2, 3]));
      t('copyTo array', () => buf.copyTo([0, 0]));
      t('copyFrom string', () => buf.copyFrom('abc'));
      t('copyFrom stream 5', () => buf.copyFrom(new Uint8Array(4), { stream: 5 }));
      t('copyFrom unknown', () => buf.copyFrom(new Uint8Array(4), { stram: stream }));
      t('copyTo unknown', () => buf.copyTo(new Uint8Array(4), { async: true }));
      t('fill unknown', () => buf.fill(0, { steam: stream }));
      t('copyFrom ok', () => buf.copyFrom(new Uint8Array(4), { stream }));
      t('waitEvent stream', () => stream.waitEvent(stream));
      t('createStream nonblocking', () => dev.createStream({ nonblocking: true }));
      t('createStream ok', () => dev.createStream({ nonBlocking: true, priority: 0 }));
      t('createEvent unknown', () => dev.createEvent({ timings: false }));
      t('allocate unknown', () => dev.allocate(16, { stream, device: dev }));
      t('allocateManaged unknown', () => dev.allocateManaged(16, { attach: true }));
      t('createMemoryPool unknown', () => dev.createMemoryPool({ maxsize: 1 }));
      const host = new core.HostBuffer(16);
      t('as Array', () => host.as(Array));
      t('as Object', () => host.as(Object));
      t('as not a class', () => host.as(5));
      t('as Float64Array of 16 bytes', () => host.as(Float64Array));
      t('as Float32Array', () => host.as(Float32Array));
      t('as DataView', () => host.as(DataView));
      t('as Buffer', () => host.as(Buffer));
      const odd = new core.HostBuffer(6);
      t('as Float32Array of 6 bytes', () => odd.as(Float32Array));
      const mod = core.Module.load(new Uint8Array([0x2e, 0x76, 0x65, 0x72]));
      const k = mod.kernel('k');
      t('launch unknown', () => k.launch({ grid: 1, block: 1, sharedmem: 128 }));
      t('launch ok', () => k.launch({ grid: 1, block: 1, sharedMem: 0, stream }));
      // Names of Object.prototype are not names of a table.
      t('kernel toString', () => { const named = mod.kernel('toString'); if (named.name !== 'toString') throw new Error(named.name); return named; });
      t('load PTX with a NUL', () => core.Module.load(Buffer.from('.version 9.0\\0.entry k')));
      t('load PTX ending in NULs', () => core.Module.load(Buffer.from('.version 9.0\\n\\0\\0')));
      const managed = dev.allocateManaged(16);
      t('advise constructor', () => managed.advise('constructor', dev));
      const settle = (name, p) => p.then(() => { out[name] = 'resolved'; }, (e) => { out[name] = e.constructor.name + ': ' + e.message; });
      settle('capture unknown', stream.capture(() => {}, { mdoe: 'relaxed' }))
        .then(() => settle('capture mode constructor', stream.capture(() => {}, { mode: 'constructor' })))
        .then(() => settle('builder capture mode constructor', new core.GraphBuilder().capture(stream, () => {}, { mode: 'constructor' })))
        .then(() => process.stdout.write(JSON.stringify(out)));
    `);
    if (r.status !== 0) throw new Error(`the script failed: ${r.stderr}`);
    results = JSON.parse(r.stdout);
  });

  test("buf.copyFrom([1, 2, 3]) names DeviceBuffer.copyFrom and 'src', not cudaMemcpy", () => {
    expect(results['copyFrom array']).toBe(
      "TypeError: DeviceBuffer.copyFrom: parameter 'src' must be a DeviceBuffer, Buffer, TypedArray, DataView or ArrayBuffer, got an Array (copy it into a TypedArray first, e.g. new Float32Array(array))",
    );
    expect(results['copyTo array']).toMatch(
      /^TypeError: DeviceBuffer\.copyTo: parameter 'dst' must be a DeviceBuffer, Buffer, TypedArray, DataView or ArrayBuffer, got an Array/,
    );
    expect(results['copyFrom string']).toBe(
      "TypeError: DeviceBuffer.copyFrom: parameter 'src' must be a DeviceBuffer, Buffer, TypedArray, DataView or ArrayBuffer, got string abc",
    );
  });

  test('copyFrom(x, { stream: 5 }) names the option and what it got', () => {
    expect(results['copyFrom stream 5']).toBe("TypeError: DeviceBuffer.copyFrom: parameter 'options.stream' must be a Stream, got 5");
    expect(results['copyFrom ok']).toBe('returned [object Object]');
  });

  test('stream.waitEvent(stream) is a TypeError', () => {
    expect(results['waitEvent stream']).toBe("TypeError: Stream.waitEvent: parameter 'event' must be an Event, got a Stream");
  });

  test.each([
    ['copyFrom unknown', "TypeError: DeviceBuffer.copyFrom: unknown option 'stram' (did you mean 'stream'?); the options are stream"],
    ['copyTo unknown', "TypeError: DeviceBuffer.copyTo: unknown option 'async'; the options are stream"],
    ['fill unknown', "TypeError: DeviceBuffer.fill: unknown option 'steam' (did you mean 'stream'?); the options are stream"],
    [
      'createStream nonblocking',
      "TypeError: Device.createStream: unknown option 'nonblocking' (did you mean 'nonBlocking'?); the options are nonBlocking, priority",
    ],
    [
      'createEvent unknown',
      "TypeError: Device.createEvent: unknown option 'timings' (did you mean 'timing'?); the options are timing, blockingSync, interprocess",
    ],
    ['allocate unknown', "TypeError: Device.allocate: unknown option 'device'; the options are stream, memoryResource"],
    ['allocateManaged unknown', "TypeError: Device.allocateManaged: unknown option 'attach'; the options are attachHost"],
    [
      'createMemoryPool unknown',
      "TypeError: Device.createMemoryPool: unknown option 'maxsize' (did you mean 'maxSize'?); the options are releaseThreshold, maxSize, location, numaNode",
    ],
    ['capture unknown', "TypeError: Stream.capture: unknown option 'mdoe' (did you mean 'mode'?); the options are mode"],
    [
      'launch unknown',
      "TypeError: Kernel.launch(k): unknown option 'sharedmem' in 'config' (did you mean 'sharedMem'?); the options are grid, block, sharedMem, stream, cluster, cooperative, programmaticStreamSerialization, programmaticEvent, launchCompletionEvent",
    ],
  ])('%s: a TypeError naming the method and the key', (name, message) => {
    expect(results[name]).toBe(message);
  });

  test("names looked up in a table are the table's own: Object.prototype's are refused, and the message lists the names", () => {
    expect(results['advise constructor']).toBe(
      "RangeError: DeviceBuffer.advise: parameter 'advice' must be one of 'readMostly', 'preferredLocation', 'accessedBy', got the string \"constructor\"",
    );
    expect(results['capture mode constructor']).toBe(
      "RangeError: Stream.capture: option 'mode' must be one of 'global', 'threadLocal', 'relaxed', got the string \"constructor\"",
    );
    // GraphBuilder.capture reads the same table (CAPTURE_MODES), in the same words.
    expect(results['builder capture mode constructor']).toBe(
      "RangeError: GraphBuilder.capture: option 'mode' must be one of 'global', 'threadLocal', 'relaxed', got the string \"constructor\"",
    );
    // A kernel name that is no name expression is the symbol itself.
    expect(results['kernel toString']).toBe('returned [object Object]');
  });

  test('Module.load refuses PTX text with a NUL before its end, which the driver would stop at; NULs that end it are fine', () => {
    expect(results['load PTX with a NUL']).toBe(
      "RangeError: Module.load: parameter 'code' holds PTX text with a NUL at byte 12, before its end at byte 21; PTX may end with NULs, not hold one",
    );
    expect(results['load PTX ending in NULs']).toBe('returned [object Object]');
  });

  test('the options a method knows still pass', () => {
    expect([results['createStream ok'], results['launch ok']]).toEqual(['returned [object Object]', 'returned [object Undefined]']);
  });

  test('HostBuffer.as takes a TypedArray class or DataView, and refuses Array and the like', () => {
    expect(results['as Array']).toBe(
      "TypeError: HostBuffer.as: parameter 'kind' must be a TypedArray class (Float32Array, Uint8Array, …) or DataView, got Array",
    );
    expect(results['as Object']).toMatch(/^TypeError: HostBuffer\.as: .* got Object$/);
    expect(results['as not a class']).toMatch(/^TypeError: HostBuffer\.as: .* got 5$/);
    expect([results['as Float64Array of 16 bytes'], results['as Float32Array'], results['as DataView'], results['as Buffer']]).toEqual([
      'returned [object Float64Array]',
      'returned [object Float32Array]',
      'returned [object DataView]',
      'returned [object Uint8Array]',
    ]);
    expect(results['as Float32Array of 6 bytes']).toBe(
      "RangeError: HostBuffer.as: the buffer's 6 bytes are not a whole number of Float32Array elements (4 bytes each)",
    );
  });
});
