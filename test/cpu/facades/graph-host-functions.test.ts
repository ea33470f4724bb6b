// JS host functions in graphs (captured, or set on host node params) and cached blocks across
// streams, against a fake libcudart that runs host functions from its own thread as CUDA does.
import { fakeCudart, removeFakeCudart, runOnFake, FAKE_CONTROLS } from '../helpers/fake-cudart';

beforeAll(() => void fakeCudart());
afterAll(removeFakeCudart);

/** The child's stdout lines; fails with its stderr when it did not exit cleanly. */
function lines(script: string, args: string[] = []): string[] {
  const r = runOnFake(script, args);
  expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
  return r.stdout.trim().split('\n');
}

const GC_ROUNDS = `async function collect() { for (let i = 0; i < 5; i++) { global.gc(); await new Promise((r) => setImmediate(r)); } }`;

describe('a JS host function captured into a graph', () => {
  test('stream.capture: it runs at every launch, is pending only from a launch until it ran, and is released with the Graph and its GraphExec', () => {
    expect(
      lines(`
      const { core, cudart } = require('./src');
      const HC = require('./src/ffi/host-callbacks');
      (async () => {
        const s = core.Device.get(0).createStream();
        let runs = 0;
        const graph = await s.capture((st) => st.onComplete(() => runs++));
        console.log('pending', cudart.pendingHostFunctions(), 'kept', HC.graphHostFunctions());
        console.log('deviceSynchronize', JSON.stringify(cudart.cudaDeviceSynchronize()));
        const exec = graph.instantiate();
        for (let i = 0; i < 3; i++) exec.launch(s);
        // Launched through core, each run is pending until it ran: a blocking wait is refused, not a deadlock.
        console.log('pending', cudart.pendingHostFunctions());
        try { cudart.cudaStreamSynchronize(s.handle); } catch (e) { console.log(e.message.slice(0, 70)); }
        await s.synchronize();
        console.log('runs', runs, 'pending', cudart.pendingHostFunctions());
        graph.close();
        console.log('kept after graph.close', HC.graphHostFunctions());
        // Closed right after its launch, before the function ran: the launch still runs it.
        exec.launch(s);
        exec.close();
        await s.synchronize();
        console.log('runs', runs, 'kept after exec.close', HC.graphHostFunctions());
        s.close();
      })();`),
    ).toEqual([
      'pending 0 kept 1',
      'deviceSynchronize [0]',
      'pending 3',
      'cudaStreamSynchronize: 3 JS host functions are still pending, and they',
      'runs 3 pending 0',
      'kept after graph.close 1',
      'runs 4 kept after exec.close 0',
    ]);
  });

  test('a Graph and GraphExec that are collected without close() release it', () => {
    expect(
      lines(
        `
      const { core } = require('./src');
      const HC = require('./src/ffi/host-callbacks');
      ${GC_ROUNDS}
      (async () => {
        const s = core.Device.get(0).createStream();
        await (async () => {
          const graph = await s.capture((st) => { st.onComplete(() => undefined); st.onComplete(() => undefined); });
          graph.instantiate();
          console.log('kept', HC.graphHostFunctions());
        })();
        await collect();
        console.log('kept', HC.graphHostFunctions());
      })();`,
        ['--expose-gc'],
      ),
    ).toEqual(['kept 2', 'kept 0']);
  });

  test('a capture whose work throws releases what it captured', () => {
    expect(
      lines(`
      const { core } = require('./src');
      const HC = require('./src/ffi/host-callbacks');
      (async () => {
        const s = core.Device.get(0).createStream();
        await s.capture((st) => { st.onComplete(() => undefined); throw new Error('work failed'); }).catch((e) => console.log(e.message));
        console.log('kept', HC.graphHostFunctions());
      })();`),
    ).toEqual(['work failed', 'kept 0']);
  });

  test('the facade: captured with cudaLaunchHostFunc, it runs at every launch; never launched, it does not keep the process alive', () => {
    expect(
      lines(`
      const { cudart } = require('./src');
      const [, s] = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking);
      const out = [];
      cudart.cudaStreamBeginCapture(s, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal);
      console.log(JSON.stringify(cudart.cudaLaunchHostFunc(s, (u) => out.push(String(u)), 7n)), 'pending', cudart.pendingHostFunctions());
      const [, graph] = cudart.cudaStreamEndCapture(s);
      const [, exec] = cudart.cudaGraphInstantiate(graph, 0);
      for (let i = 0; i < 3; i++) cudart.cudaGraphLaunch(exec, s);
      cudart.async.cudaStreamSynchronize(s).then(() => {
        console.log(out.join(','));
        // A second capture, never launched: the process still ends.
        cudart.cudaStreamBeginCapture(s, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal);
        cudart.cudaLaunchHostFunc(s, () => console.log('never'), null);
        cudart.cudaStreamEndCapture(s);
      });`),
    ).toEqual(['[0] pending 0', '7,7,7']);
  });
});

describe('graph host node functions', () => {
  test('9,000 cudaHostNodeParams with JS functions take no koffi callback each, and cudaLaunchHostFunc works after them', () => {
    expect(
      lines(`
      const { cudart } = require('./src');
      const koffi = require('koffi');
      const params = [];
      for (let i = 0; i < 9000; i++) params.push(new cudart.cudaHostNodeParams({ fn: () => i }));
      console.log('callbacks', koffi.stats().callbacks);
      const [, s] = cudart.cudaStreamCreateWithFlags(0);
      console.log(JSON.stringify(cudart.cudaLaunchHostFunc(s, () => console.log('ran'), null)));`),
    ).toEqual(['callbacks 1', '[0]', 'ran']);
  });

  test('the driver struct too', () => {
    expect(
      lines(`
      const { cuda } = require('./src');
      const koffi = require('koffi');
      const params = [];
      for (let i = 0; i < 9000; i++) params.push(new cuda.CUDA_HOST_NODE_PARAMS({ fn: () => i, userData: 5n }));
      console.log('callbacks', koffi.stats().callbacks, String(params[8999].userData));`),
    ).toEqual(['callbacks 1 5']);
  });

  test('a host node runs its JS function with its userData at every launch; userData reads back as set', () => {
    expect(
      lines(`
      const { cudart } = require('./src');
      const out = [];
      const p = new cudart.cudaHostNodeParams({ userData: 0x1234n, fn: (u) => out.push(String(u)) });
      const q = new cudart.cudaHostNodeParams({ fn: (u) => out.push('q' + String(u)) });
      q.userData = 9n;
      console.log(String(p.userData), String(q.userData), p.fn === q.fn);
      const [, g] = cudart.cudaGraphCreate(0);
      cudart.cudaGraphAddHostNode(g, null, 0, p);
      cudart.cudaGraphAddHostNode(g, null, 0, q);
      const [, exec] = cudart.cudaGraphInstantiate(g, 0);
      const [, s] = cudart.cudaStreamCreateWithFlags(0);
      cudart.cudaGraphLaunch(exec, s);
      cudart.cudaGraphLaunch(exec, s);
      cudart.async.cudaStreamSynchronize(s).then(() => console.log(out.join(',')));`),
    ).toEqual(['4660 9 true', '4660,q9,4660,q9']);
  });

  test('params reused for a second node after changing userData: each node keeps the userData it was added with; a copy is independent', () => {
    expect(
      lines(`
      const { cudart } = require('./src');
      const out = [];
      const p = new cudart.cudaHostNodeParams({ fn: (u) => out.push(String(u)), userData: 1n });
      const [, g] = cudart.cudaGraphCreate(0);
      cudart.cudaGraphAddHostNode(g, null, 0, p);
      p.userData = 2n;
      cudart.cudaGraphAddHostNode(g, null, 0, p);
      const copy = new cudart.cudaHostNodeParams(p);
      copy.userData = 3n;
      console.log(String(p.userData), String(copy.userData));
      const [, exec] = cudart.cudaGraphInstantiate(g, 0);
      const [, s] = cudart.cudaStreamCreateWithFlags(0);
      cudart.cudaGraphLaunch(exec, s);
      cudart.async.cudaStreamSynchronize(s).then(() => console.log(out.join(',')));`),
    ).toEqual(['2 3', '1,2']);
  });

  test('a node function passed to CUDA is kept after its params are collected (a graph may run it); params never passed are released', () => {
    expect(
      lines(
        `
      const { cudart } = require('./src');
      const HC = require('./src/ffi/host-callbacks');
      ${GC_ROUNDS}
      const [, g] = cudart.cudaGraphCreate(0);
      // A plain object: the struct made of it is garbage as soon as the call returns.
      (() => cudart.cudaGraphAddHostNode(g, null, 0, { fn: (u) => console.log('ran', String(u)), userData: 3n }))();
      (() => { for (let i = 0; i < 100; i++) new cudart.cudaHostNodeParams({ fn: () => i }); })();
      const [, exec] = cudart.cudaGraphInstantiate(g, 0);
      const [, s] = cudart.cudaStreamCreateWithFlags(0);
      console.log('kept', HC.graphHostFunctions());
      (async () => {
        await collect();
        console.log('kept', HC.graphHostFunctions());
        cudart.cudaGraphLaunch(exec, s);
        await cudart.async.cudaStreamSynchronize(s);
      })();`,
        ['--expose-gc'],
      ),
    ).toEqual(['kept 101', 'kept 1', 'ran 3']);
  });
});

describe('CachingAllocator across streams', () => {
  test('with shareAcrossStreams, a block freed on one stream is reused at once on that stream, and on another only once the work before its free is done', () => {
    expect(
      lines(`
      const { core } = require('./src');
      ${FAKE_CONTROLS}
      const dev = core.Device.get(0);
      core.setAllocator(new core.CachingAllocator({ shareAcrossStreams: true }));
      const s1 = dev.createStream({ nonBlocking: true }), s2 = dev.createStream({ nonBlocking: true });
      fake.setBusy(s1.handle, true);             // a slow kernel on s1
      const a = dev.allocate(1000, { stream: s1 });
      const first = a.ptr;
      a.close();
      const b = dev.allocate(1000, { stream: s2 });
      console.log('other stream while busy', b.ptr === first ? 'reused' : 'fresh');
      const c = dev.allocate(1000, { stream: s1 });
      console.log('same stream', c.ptr === first ? 'reused' : 'fresh');
      c.close();
      fake.setBusy(s1.handle, false);            // the kernel finished
      const d = dev.allocate(1000, { stream: s2 });
      console.log('other stream once done', d.ptr === first ? 'reused' : 'fresh');
      const e = dev.allocate(1000);
      console.log('legacy stream, nothing free', e.ptr === first ? 'reused' : 'fresh');`),
    ).toEqual([
      'other stream while busy fresh',
      'same stream reused',
      'other stream once done reused',
      'legacy stream, nothing free fresh',
    ]);
  });

  test('a block of a stream closed before the block is freed goes back to the device', () => {
    expect(
      lines(`
      const { core } = require('./src');
      ${FAKE_CONTROLS}
      const dev = core.Device.get(0);
      const pool = new core.CachingAllocator();
      core.setAllocator(pool);
      const s = dev.createStream();
      const a = dev.allocate(1000, { stream: s });
      s.close();
      a.close();
      console.log(fake.count('cudaFree'), pool.freeBytes());`),
    ).toEqual(['1 0']);
  });
});
