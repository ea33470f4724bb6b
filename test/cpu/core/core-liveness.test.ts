// Every core method checks that its own resource is open and that every core object it receives is
// open, before any handle reaches C (a closed object's handle is freed memory to CUDA). Against a
// fake libcudart, which counts the calls that would take the handles.
import { fakeCudart, removeFakeCudart, runOnFake, FAKE_CONTROLS } from '../helpers/fake-cudart';

beforeAll(() => void fakeCudart());
afterAll(removeFakeCudart);

/** Runs the script's `cases` ([name, () => call]) and returns each one's error message (or 'no error'). */
function outcomes(setup: string): { results: Record<string, string>; reachedC: Record<string, number> } {
  const r = runOnFake(`
    const { core } = require('./src');
    ${FAKE_CONTROLS}
    const CALLS = ['cudaStreamWaitEvent', 'cudaEventRecord', 'cudaGraphLaunch', 'cudaGraphUpload', 'cudaGraphExecUpdate', 'cudaGraphInstantiate',
      'cudaMemcpy', 'cudaMemcpyAsync', 'cudaMemsetAsync', 'cudaMemPrefetchAsync', 'cudaLaunchKernel', 'cudaFuncGetAttributes',
      'cudaKernelSetAttributeForDevice', 'cudaOccupancyMaxActiveBlocksPerMultiprocessor', 'cudaMalloc', 'cudaLaunchHostFunc'];
    (async () => {
      ${setup}
      const before = Object.fromEntries(CALLS.map((c) => [c, fake.count(c)]));
      const results = {};
      for (const [name, call] of cases) {
        try { await call(); results[name] = 'no error'; } catch (e) { results[name] = e.constructor.name + ': ' + e.message; }
      }
      const reachedC = Object.fromEntries(CALLS.map((c) => [c, fake.count(c) - before[c]]).filter(([, n]) => n !== 0));
      console.log(JSON.stringify({ results, reachedC }));
    })();`);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(r.stdout);
}

const SETUP = `
  const dev = core.Device.get(0);
  const open = () => {
    const s = dev.createStream(), e = dev.createEvent(), buf = dev.allocate(64), managed = dev.allocateManaged(64);
    const module = core.Module.load(new Uint8Array([0x2e, 0x76, 0x65, 0x72]));
    return { s, e, buf, managed, module, kernel: module.kernel('k'), pool: dev.createMemoryPool() };
  };
  const closed = (r) => { r.close(); return r; };
  const { s, e, buf, managed, kernel, pool } = open();
  const other = dev.allocate(64);
  const graph = await s.capture(() => undefined);
  const exec = graph.instantiate();
  const cs = closed(dev.createStream()), ce = closed(dev.createEvent()), cbuf = closed(dev.allocate(64));
  const parent = dev.allocate(64), view = parent.slice(0, 32);
  parent.close();
  const cgraph = closed(await s.capture(() => undefined));
`;

test('every core method refuses a closed core argument, naming the method and the argument, before C sees its handle', () => {
  const { results, reachedC } = outcomes(`${SETUP}
    const ew = new core.ElementwiseKernel('float x', 'float y', 'y = x');
    const host = new Uint8Array(8);
    const cases = [
      ['Stream.waitEvent', () => s.waitEvent(ce)],
      ['Event.record', () => e.record(cs)],
      ['Event.elapsedSince', () => e.elapsedSince(ce)],
      ['GraphExec.launch', () => exec.launch(cs)],
      ['GraphExec.upload', () => exec.upload(cs)],
      ['GraphExec.update', () => exec.update(cgraph)],
      ['DeviceBuffer.copyFrom src', () => buf.copyFrom(cbuf)],
      ['DeviceBuffer.copyFrom view', () => buf.copyFrom(view)],
      ['DeviceBuffer.copyFrom stream', () => buf.copyFrom(host, { stream: cs })],
      ['DeviceBuffer.copyTo dst', () => buf.copyTo(cbuf)],
      ['DeviceBuffer.copyTo stream', () => buf.copyTo(host, { stream: cs })],
      ['DeviceBuffer.fill', () => buf.fill(0, { stream: cs })],
      ['DeviceBuffer.prefetch', () => managed.prefetch(dev, cs)],
      ['MemoryPool.allocate', () => pool.allocate(64, cs)],
      ['Kernel.launch stream', () => kernel.launch({ grid: 1, block: 1, stream: cs })],
      ['Kernel.launch argument', () => kernel.launch({ grid: 1, block: 1 }, other, cbuf)],
      ['Device.allocate', () => dev.allocate(64, { stream: cs })],
      ['CachingAllocator.allocate', () => new core.CachingAllocator().allocate(64, { device: dev, stream: cs })],
      ['ElementwiseKernel.call array', () => ew.call(cbuf, buf)],
      ['ElementwiseKernel.call stream', () => ew.call(other, buf, { stream: cs })],
      ['Stream.waitEvent (not an Event)', () => s.waitEvent(s)],
      ['PreparedLaunch.timed', () => kernel.prepare([]).timed({ grid: 1, block: 1, stream: cs })],
      ['PreparedLaunch.async', () => kernel.prepare([]).async({ grid: 1, block: 1, stream: cs })],
    ];`);
  expect(results).toEqual({
    'Stream.waitEvent': "Error: Stream.waitEvent: parameter 'event' is an Event that was closed",
    'Event.record': "Error: Event.record: parameter 'stream' is a Stream that was closed",
    'Event.elapsedSince': "Error: Event.elapsedSince: parameter 'start' is an Event that was closed",
    'GraphExec.launch': "Error: GraphExec.launch: parameter 'stream' is a Stream that was closed",
    'GraphExec.upload': "Error: GraphExec.upload: parameter 'stream' is a Stream that was closed",
    'GraphExec.update': "Error: GraphExec.update: parameter 'graph' is a Graph that was closed",
    'DeviceBuffer.copyFrom src': "Error: DeviceBuffer.copyFrom: parameter 'src' is a DeviceBuffer that was closed",
    'DeviceBuffer.copyFrom view': "Error: DeviceBuffer.copyFrom: parameter 'src' is a DeviceBuffer that was closed",
    'DeviceBuffer.copyFrom stream': "Error: DeviceBuffer.copyFrom: parameter 'options.stream' is a Stream that was closed",
    'DeviceBuffer.copyTo dst': "Error: DeviceBuffer.copyTo: parameter 'dst' is a DeviceBuffer that was closed",
    'DeviceBuffer.copyTo stream': "Error: DeviceBuffer.copyTo: parameter 'options.stream' is a Stream that was closed",
    'DeviceBuffer.fill': "Error: DeviceBuffer.fill: parameter 'options.stream' is a Stream that was closed",
    'DeviceBuffer.prefetch': "Error: DeviceBuffer.prefetch: parameter 'stream' is a Stream that was closed",
    'MemoryPool.allocate': "Error: MemoryPool.allocate: parameter 'stream' is a Stream that was closed",
    'Kernel.launch stream': "Error: Kernel.launch: parameter 'config.stream' is a Stream that was closed",
    'Kernel.launch argument': 'Error: Kernel.launch(k): argument 1 is a DeviceBuffer that was closed',
    'Device.allocate': "Error: Device.allocate: parameter 'options.stream' is a Stream that was closed",
    'CachingAllocator.allocate': "Error: CachingAllocator.allocate: parameter 'options.stream' is a Stream that was closed",
    'ElementwiseKernel.call array': "Error: ElementwiseKernel(elementwise).call: parameter 'x' is a DeviceBuffer that was closed",
    'ElementwiseKernel.call stream': "Error: ElementwiseKernel(elementwise).call: parameter 'options.stream' is a Stream that was closed",
    'Stream.waitEvent (not an Event)': "TypeError: Stream.waitEvent: parameter 'event' must be an Event, got a Stream",
    'PreparedLaunch.timed': "Error: PreparedLaunch(k): parameter 'config.stream' is a Stream that was closed",
    'PreparedLaunch.async': "Error: PreparedLaunch(k): parameter 'config.stream' is a Stream that was closed",
  });
  expect(reachedC).toEqual({});
});

test('every method of every closed core resource throws, naming the method, and calls nothing in C', () => {
  const { results, reachedC } = outcomes(`${SETUP}
    const c = open();
    const module = c.module, k = c.kernel;
    for (const r of [c.s, c.e, c.buf, c.managed, c.pool, module]) r.close();
    const g = await s.capture(() => undefined), x = g.instantiate();
    g.close();
    x.close();
    const host = new Uint8Array(8);
    const cases = [
      ['Stream.synchronize', () => c.s.synchronize()], ['Stream.query', () => c.s.query()], ['Stream.waitEvent', () => c.s.waitEvent(e)],
      ['Stream.onComplete', () => c.s.onComplete(() => undefined)], ['Stream.hostCallback', () => c.s.hostCallback(() => undefined)],
      ['Stream.capture', () => c.s.capture(() => undefined)],
      ['Event.record', () => c.e.record(s)], ['Event.synchronize', () => c.e.synchronize()], ['Event.query', () => c.e.query()],
      ['Event.elapsedSince', () => c.e.elapsedSince(e)],
      ['Graph.nodeCount', () => g.nodeCount], ['Graph.instantiate', () => g.instantiate()],
      ['GraphExec.launch', () => x.launch(s)], ['GraphExec.upload', () => x.upload(s)], ['GraphExec.update', () => x.update(graph)],
      ['DeviceBuffer.ptr', () => c.buf.ptr], ['DeviceBuffer.slice', () => c.buf.slice(0)], ['DeviceBuffer.copyFrom', () => c.buf.copyFrom(host)],
      ['DeviceBuffer.copyTo', () => c.buf.copyTo(host)], ['DeviceBuffer.copyFromAsync', () => c.buf.copyFromAsync(host)],
      ['DeviceBuffer.copyToAsync', () => c.buf.copyToAsync(host)], ['DeviceBuffer.fill', () => c.buf.fill(0)],
      ['DeviceBuffer.prefetch', () => c.managed.prefetch(dev, s)], ['DeviceBuffer.advise', () => c.managed.advise('readMostly', dev)],
      ['DeviceBuffer.copyFrom (view of a closed allocation)', () => view.copyFrom(host)],
      ['MemoryPool.allocate', () => c.pool.allocate(8, s)], ['MemoryPool.trim', () => c.pool.trim()], ['MemoryPool.stats', () => c.pool.stats],
      ['MemoryPool.resetPeaks', () => c.pool.resetPeaks()], ['MemoryPool.releaseThreshold', () => c.pool.releaseThreshold],
      ['Module.kernel', () => module.kernel('k')], ['Module.kernelNames', () => module.kernelNames()],
      ['Kernel.launch', () => k.launch({ grid: 1, block: 1 })], ['Kernel.attributes', () => k.attributes()],
      ['Kernel.setAttribute', () => k.setAttribute('MaxDynamicSharedMemorySize', 1024)],
      ['Kernel.maxActiveBlocksPerMultiprocessor', () => k.maxActiveBlocksPerMultiprocessor(128)],
      ['Kernel.suggestedBlockSize', () => k.suggestedBlockSize()],
    ];`);
  const expected: Record<string, string> = {};
  for (const name of Object.keys(results)) {
    const [cls, method] = name.split(' ')[0].split('.');
    expected[name] =
      cls === 'Kernel'
        ? `Error: Kernel.${method}(k): the Module it belongs to was closed`
        : `Error: ${cls}.${method}: the ${cls} was closed`;
  }
  expected['DeviceBuffer.copyFrom (view of a closed allocation)'] =
    'Error: DeviceBuffer.copyFrom: the allocation this view belongs to was closed';
  expect(Object.keys(results)).toHaveLength(37);
  expect(results).toEqual(expected);
  expect(reachedC).toEqual({});
});
