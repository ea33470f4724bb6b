// The NCCL bindings and core's Communicator against a fake libnccl of one rank (and a fake
// libcudart whose device memory is host memory), both built by gcc here.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import koffi from 'koffi';
import { buildFakes } from '../helpers/fake-nccl';
import type { DeviceBuffer } from '../../../src/core';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-nccl-'));
const saved = { ...process.env };
let fakes: ReturnType<typeof buildFakes>;
let nccl: typeof import('../../../src/nccl');
let core: typeof import('../../../src/core');
let fake: { destroyed: () => number; aborted: () => number; groupDepth: () => number };

beforeAll(() => {
  fakes = buildFakes(tmp);
  Object.assign(process.env, fakes);
  nccl = require('../../../src/nccl');
  core = require('../../../src/core');
  const lib = koffi.load(fakes.CUDA_BINDINGS_NCCL);
  fake = {
    destroyed: lib.func('int fakeDestroyed(void)'),
    aborted: lib.func('int fakeAborted(void)'),
    groupDepth: lib.func('int ncclGroupDepth(void)'),
  };
}, 60_000);
afterAll(() => {
  process.env = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('bindings', () => {
  test('the loader opens CUDA_BINDINGS_NCCL and reads its version', () => {
    expect(nccl.ncclGetVersion()).toEqual([nccl.ncclResult_t.ncclSuccess, 22809]);
    expect(nccl.libraryInfo()).toMatchObject({ file: fakes.CUDA_BINDINGS_NCCL, version: 22809 });
  });

  test('ncclGetUniqueId gives the 128-byte struct, which survives a trip through a Buffer and base64', () => {
    const [err, id] = nccl.ncclGetUniqueId();
    expect(err).toBe(nccl.ncclResult_t.ncclSuccess);
    expect(id!.internal).toEqual(Uint8Array.from({ length: 128 }, (_, i) => (i * 7 + 3) & 0xff));
    const b64 = nccl.uniqueIdToBase64(id!);
    expect(b64).toHaveLength(172);
    expect(nccl.uniqueIdFromBase64(b64).internal).toEqual(id!.internal);
    expect(nccl.uniqueIdFromBuffer(nccl.uniqueIdToBuffer(id!)).internal).toEqual(id!.internal);
    expect(() => nccl.uniqueIdFromBuffer(Buffer.alloc(127))).toThrow(
      new RangeError("uniqueIdFromBuffer: parameter 'bytes' must hold 128 bytes (NCCL_UNIQUE_ID_BYTES), got 127"),
    );
  });

  test('ncclCommInitRank passes the id by value and returns the handle; queries return [status, value]', () => {
    const [, id] = nccl.ncclGetUniqueId();
    const [err, comm] = nccl.ncclCommInitRank(1, id!, 0);
    expect(err).toBe(0);
    expect(typeof comm).toBe('bigint');
    expect([nccl.ncclCommCount(comm), nccl.ncclCommUserRank(comm), nccl.ncclCommCuDevice(comm)]).toEqual([
      [0, 1],
      [0, 0],
      [0, 0],
    ]);
    expect(nccl.ncclCommDestroy(comm)).toEqual([0]);
  });

  test('a failed call returns its status with null outputs, and ncclGetLastError explains it', () => {
    const [, id] = nccl.ncclGetUniqueId();
    expect(nccl.ncclCommInitRank(2, id!, 1)).toEqual([nccl.ncclResult_t.ncclInvalidArgument, null]);
    expect(nccl.ncclGetLastError(null)).toEqual([0, 'fake libnccl: one rank only']);
    expect(nccl.ncclGetErrorString(nccl.ncclResult_t.ncclInvalidArgument)).toEqual([0, 'invalid argument']);
  });

  test('a non-blocking init returns ncclInProgress with the communicator handle', () => {
    const [, id] = nccl.ncclGetUniqueId();
    const [err, comm] = nccl.ncclCommInitRankConfig(1, id!, 0, nccl.ncclConfigInitializer({ blocking: 0 }));
    expect(err).toBe(nccl.ncclResult_t.ncclInProgress);
    expect(comm).not.toBeNull();
    expect(nccl.ncclCommGetAsyncError(comm)).toEqual([0, nccl.ncclResult_t.ncclInProgress]);
    nccl.ncclCommDestroy(comm);
  });

  test('ncclConfigInitializer starts every option undefined, as NCCL_CONFIG_INITIALIZER does', () => {
    const c = nccl.ncclConfigInitializer({ blocking: 0 });
    expect([c.size, c.magic, c.version, c.blocking, c.minCTAs, c.netName, c.nvlinkCentricSched]).toEqual([
      80,
      0xcafebeef,
      22809,
      0,
      nccl.NCCL_CONFIG_UNDEF_INT,
      0n,
      nccl.NCCL_CONFIG_UNDEF_INT,
    ]);
  });

  test("ncclConfigInitializer refuses a name that is not a field, as the struct's constructor does: Object.prototype's too", () => {
    for (const k of ['constructor', 'blockign'])
      expect(() => nccl.ncclConfigInitializer({ [k]: 1 } as never)).toThrow(
        new RegExp(`^ncclConfig_\\w+: no field named '${k}' \\(fields: size, `),
      );
    expect(() => nccl.ncclConfigInitializer(JSON.parse('{"__proto__": {"blocking": 0}}'))).toThrow(
      /^ncclConfig_\w+: no field named '__proto__'/,
    );
  });

  test('a collective on host memory moves count elements of the dtype; a count larger than the buffer is refused first', () => {
    const [, id] = nccl.ncclGetUniqueId();
    const [, comm] = nccl.ncclCommInitRank(1, id!, 0);
    const send = Float64Array.from([1, 2, 3, 4]);
    const recv = new Float64Array(4);
    expect(nccl.ncclAllReduce(send, recv, 3, nccl.ncclDataType_t.ncclFloat64, nccl.ncclRedOp_t.ncclSum, comm, null)).toEqual([0]);
    expect(Array.from(recv)).toEqual([1, 2, 3, 0]);
    expect(() => nccl.ncclAllReduce(send, recv, 5, nccl.ncclDataType_t.ncclFloat64, nccl.ncclRedOp_t.ncclSum, comm, null)).toThrow(
      new RangeError("ncclAllReduce: parameter 'sendbuff' holds 32 bytes but count * ncclTypeSize(datatype) needs 40"),
    );
    expect(() => nccl.ncclAllReduce(send, recv, -1, 7, 0, comm, null)).toThrow(RangeError);
    expect(() => nccl.ncclAllReduce('x' as never, recv, 1, 7, 0, comm, null)).toThrow(TypeError);
    nccl.ncclCommDestroy(comm);
  });

  test('ncclCommInitRankScalable takes an array of ids; ncclCommShrink an array of ranks', () => {
    const [, id] = nccl.ncclGetUniqueId();
    const [err, comm] = nccl.ncclCommInitRankScalable(1, 0, 2, [id!, id!], null);
    expect(err).toBe(0);
    expect(nccl.ncclCommInitRankScalable(1, 0, 2, [id!, new nccl.ncclUniqueId()], null)).toEqual([
      nccl.ncclResult_t.ncclInvalidArgument,
      null,
    ]);
    expect(() => nccl.ncclCommInitRankScalable(1, 0, 2, [id!], null)).toThrow(RangeError);
    const [e2, shrunk] = nccl.ncclCommShrink(comm, [7], 1, null, nccl.NCCL_SHRINK_DEFAULT);
    expect([e2, typeof shrunk]).toEqual([0, 'bigint']);
    nccl.ncclCommDestroy(shrunk);
    nccl.ncclCommDestroy(comm);
  });

  test("ncclGroupSimulateEnd writes its estimate into the caller's ncclSimInfo_t", () => {
    const info = nccl.ncclSimInfoInitializer();
    expect(info.estimatedTime).toBe(-1);
    expect(nccl.ncclGroupSimulateEnd(info)).toEqual([0]);
    expect(info.estimatedTime).toBe(12.5);
  });

  test('ncclCommInitAll takes the device list and returns one handle per device', () => {
    const [err, comms] = nccl.ncclCommInitAll(1, [0]);
    expect(err).toBe(0);
    expect(comms).toHaveLength(1);
    nccl.ncclCommDestroy(comms![0]);
  });
});

describe('the loader', () => {
  test('a missing library is a LibraryLoadError that lists every place tried: a copy already loaded, the wheels, the system search', () => {
    const { openLibrary, LibraryLoadError } = require('../../../src/ffi/loader');
    const { ncclSpec } = require('../../../src/ffi/nccl-lib.gen');
    let e: Error | undefined;
    try {
      openLibrary({ ...ncclSpec, linuxNames: ['libnccl-none.so.2'] }, { VIRTUAL_ENV: '/nowhere' });
    } catch (x) {
      e = x as Error;
    }
    expect(e).toBeInstanceOf(LibraryLoadError);
    expect(e!.message).toMatch(
      /^libnccl: could not load the library\. Tried:\n {2}- already loaded: libnccl-none\.so\.2: not loaded in this process\n {2}- Python wheel: nvidia\/nccl\/lib: no site-packages under \/nowhere\n {2}- system search: libnccl-none\.so\.2: .+\n/,
    );
    expect(e!.message).toContain('or set CUDA_BINDINGS_NCCL');
  });

  test('a library that is not NCCL is refused, saying why', () => {
    const { openLibrary } = require('../../../src/ffi/loader');
    const { ncclSpec } = require('../../../src/ffi/nccl-lib.gen');
    expect(() => openLibrary(ncclSpec, { CUDA_BINDINGS_NCCL: fakes.CUDA_BINDINGS_CUDART })).toThrow(
      `${fakes.CUDA_BINDINGS_CUDART}: not an NCCL library (no ncclGetVersion)`,
    );
  });

  test('importing cuda-bindings loads none of the NCCL declarations; the first NCCL call does', () => {
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `
      const loaded = () => Object.keys(require.cache).filter((k) => /[\\/]ffi[\\/]nccl\\.gen\\.ts$/.test(k)).length;
      const idx = require('./src');
      const seen = [loaded(), typeof idx.core.Communicator, idx.nccl.ncclDataType_t.ncclFloat32, loaded()];
      seen.push(idx.nccl.ncclGetVersion()[1], loaded());
      console.log(JSON.stringify(seen));`,
      ],
      { cwd: path.join(__dirname, '..', '..', '..'), encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...fakes } },
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([0, 'function', 7, 0, 22809, 1]);
  });
});

describe('Communicator', () => {
  // Closes what a test made, whether or not it passed.
  const cleanups: (() => void)[] = [];
  const afterThis = (f: () => void) => cleanups.push(f);
  afterEach(() => cleanups.splice(0).forEach((f) => f()));
  const oneRank = () => core.Communicator.init({ rank: 0, nranks: 1, id: core.Communicator.uniqueId() });

  test('init takes the id as the struct, its bytes or its base64 text; rank, size and device', () => {
    const id = core.Communicator.uniqueId();
    for (const form of [id, nccl.uniqueIdToBuffer(id), nccl.uniqueIdToBase64(id)]) {
      const comm = core.Communicator.init({ rank: 0, nranks: 1, id: form, device: 0 });
      expect([comm.rank, comm.size, comm.device.ordinal, comm.blocking]).toEqual([0, 1, 0, true]);
      comm.close();
    }
  });

  test('initAll([0]) gives one communicator of one rank', () => {
    const comms = core.Communicator.initAll([0]);
    expect(comms.map((c) => [c.rank, c.size, c.device.ordinal])).toEqual([[0, 1, 0]]);
    comms.forEach((c) => c.close());
    expect(() => core.Communicator.initAll([])).toThrow(RangeError);
  });

  test('bad init arguments are RangeErrors and TypeErrors that name the parameter', () => {
    const id = core.Communicator.uniqueId();
    expect(() => core.Communicator.init({ rank: 1, nranks: 1, id })).toThrow(
      new RangeError("Communicator.init: parameter 'rank' must be an integer in [0, 1), got 1"),
    );
    expect(() => core.Communicator.init({ rank: 0, nranks: 0, id })).toThrow(/parameter 'nranks'/);
    expect(() => core.Communicator.init({ rank: 0, nranks: 1, id: Buffer.alloc(3) })).toThrow(
      new RangeError(
        "Communicator.init: parameter 'id': uniqueIdFromBuffer: parameter 'bytes' must hold 128 bytes (NCCL_UNIQUE_ID_BYTES), got 3",
      ),
    );
    expect(() => core.Communicator.init({ rank: 0, nranks: 1, id, config: { blocking: 1 as never } })).toThrow(
      /config\.blocking must be a boolean/,
    );
    expect(() => core.Communicator.init({ rank: 0, nranks: 1, id, config: { nope: 1 } as never })).toThrow(
      "Communicator.init: unknown option 'nope' in 'config'",
    );
  });

  test('a refused init is an NcclError with the code, the C name, the call and ncclGetLastError', () => {
    let e: unknown;
    try {
      core.Communicator.init({ rank: 1, nranks: 2, id: core.Communicator.uniqueId() });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(core.NcclError);
    const err = e as InstanceType<typeof core.NcclError>;
    expect([err.code, err.codeName, err.fn, err.lastError]).toEqual([
      4,
      'ncclInvalidArgument',
      'ncclCommInitRankConfig',
      'fake libnccl: one rank only',
    ]);
    expect(err.message).toBe('ncclInvalidArgument: invalid argument (fake libnccl: one rank only) (in ncclCommInitRankConfig)');
  });

  test.each(['i8', 'u8', 'i32', 'u32', 'i64', 'u64', 'f16', 'bf16', 'f32', 'f64', 'f8e4m3', 'f8e5m2'] as const)(
    'every collective moves count %s elements and no more',
    (dtype) => {
      const comm = oneRank();
      const dev = core.Device.get(0);
      const bytes = core.dtypeBytes(dtype);
      const n = 5;
      const pattern = Uint8Array.from({ length: (n + 1) * bytes }, (_, i) => i + 1);
      const run: [string, (s: DeviceBuffer, r: DeviceBuffer) => void][] = [
        ['allReduce', (s, r) => comm.allReduce(s, r, dtype, { count: n, op: 'max' })],
        ['broadcast', (s, r) => comm.broadcast(s, r, dtype, { count: n, root: 0 })],
        ['reduce', (s, r) => comm.reduce(s, r, dtype, { count: n, op: 'prod' })],
        ['allGather', (s, r) => comm.allGather(s, r, dtype, { count: n })],
        ['reduceScatter', (s, r) => comm.reduceScatter(s, r, dtype, { count: n, op: 'avg' })],
        ['allToAll', (s, r) => comm.allToAll(s, r, dtype, { count: n })],
        [
          'send/recv in a group',
          (s, r) =>
            comm.group(() => {
              comm.send(s, 0, dtype, { count: n });
              comm.recv(r, 0, dtype, { count: n });
            }),
        ],
      ];
      for (const [what, fn] of run) {
        const send = dev.allocate(pattern.length).copyFrom(pattern);
        const recv = dev.allocate(pattern.length).fill(0);
        fn(send, recv);
        const got = recv.copyTo(new Uint8Array(pattern.length));
        const want = Uint8Array.from(pattern, (v, i) => (i < n * bytes ? v : 0));
        expect([what, Array.from(got)]).toEqual([what, Array.from(want)]);
        send.close();
        recv.close();
      }
      comm.close();
    },
  );

  test('the count defaults to what the buffers hold; a larger count is a RangeError before NCCL runs', () => {
    const comm = oneRank();
    const dev = core.Device.get(0);
    const a = dev.allocate(16).copyFrom(Float32Array.from([1, 2, 3, 4]));
    const b = dev.allocate(12);
    afterThis(() => [comm, a, b].forEach((x) => x.close()));
    comm.allReduce(a, b, 'f32');
    expect(Array.from(b.copyTo(new Float32Array(3)))).toEqual([1, 2, 3]);
    expect(() => comm.allReduce(a, b, 'f32', { count: 4 })).toThrow(
      new RangeError("Communicator.allReduce: parameter 'count' (4) is larger than 'recv' holds: 4 f32 is 16 bytes, the buffer has 12"),
    );
    expect(() => comm.allReduce(a, b, 'f64', { count: 2 })).toThrow(/'send' holds: 2 f64 is 16 bytes|'recv' holds: 2 f64 is 16 bytes/);
    expect(() => comm.allReduce(a, b, 'f33' as never)).toThrow(/parameter 'dtype' must be one of i8, u8/);
    expect(() => comm.allReduce(a, b, 'f32', { op: 'mean' as never })).toThrow(
      new RangeError("Communicator.allReduce: parameter 'op' must be one of 'sum', 'prod', 'max', 'min', 'avg', got the string \"mean\""),
    );
    // A name of Object.prototype is not an op either.
    expect(() => comm.reduceScatter(a, b, 'f32', { op: 'constructor' as never })).toThrow(
      new RangeError(
        "Communicator.reduceScatter: parameter 'op' must be one of 'sum', 'prod', 'max', 'min', 'avg', got the string \"constructor\"",
      ),
    );
    expect(() => comm.allReduce(a, null as never, 'f32')).toThrow(
      new TypeError("Communicator.allReduce: parameter 'recv' must be a DeviceBuffer, got null"),
    );
    expect(() => comm.send(a, 1, 'f32')).toThrow(new RangeError("Communicator.send: parameter 'peer' must be a rank in [0, 1), got 1"));
    expect(() => comm.broadcast(a, b, 'f32', { root: 2 })).toThrow(/parameter 'root' must be a rank in \[0, 1\), got 2/);
  });

  test('every collective refuses a stream that is not an open core Stream, naming the method, before NCCL runs', () => {
    const comm = oneRank();
    const dev = core.Device.get(0);
    const send = dev.allocate(16).copyFrom(Float32Array.from([1, 2, 3, 4]));
    const recv = dev.allocate(16).fill(0);
    const closed = dev.createStream();
    closed.close();
    afterThis(() => [comm, send, recv].forEach((x) => x.close()));
    const calls: [string, (o: { stream: never }) => void][] = [
      ['allReduce', (o) => comm.allReduce(send, recv, 'f32', o)],
      ['broadcast', (o) => comm.broadcast(send, recv, 'f32', o)],
      ['reduce', (o) => comm.reduce(send, recv, 'f32', o)],
      ['allGather', (o) => comm.allGather(send, recv, 'f32', o)],
      ['reduceScatter', (o) => comm.reduceScatter(send, recv, 'f32', o)],
      ['allToAll', (o) => comm.allToAll(send, recv, 'f32', o)],
      ['send', (o) => comm.send(send, 0, 'f32', o)],
      ['recv', (o) => comm.recv(recv, 0, 'f32', o)],
    ];
    for (const [f, call] of calls) {
      expect(() => call({ stream: closed as never })).toThrow(
        new Error(`Communicator.${f}: parameter 'options.stream' is a Stream that was closed`),
      );
      expect(() => call({ stream: { handle: 0xdeadbeefn } as never })).toThrow(
        new TypeError(`Communicator.${f}: parameter 'options.stream' must be a Stream, got an object (Object)`),
      );
      expect(() => call({ stream: null as never })).toThrow(
        new TypeError(`Communicator.${f}: parameter 'options.stream' must be a Stream, got null`),
      );
    }
    // The fake copies on every collective: recv untouched means none reached NCCL.
    expect(Array.from(recv.copyTo(new Float32Array(4)))).toEqual([0, 0, 0, 0]);
    const open = dev.createStream();
    afterThis(() => open.close());
    comm.allReduce(send, recv, 'f32', { stream: open });
    expect(Array.from(recv.copyTo(new Float32Array(4)))).toEqual([1, 2, 3, 4]);
    const gone = dev.allocate(16);
    gone.close();
    expect(() => comm.allReduce(gone, recv, 'f32', { stream: open })).toThrow(
      new Error("Communicator.allReduce: parameter 'send' is a DeviceBuffer that was closed"),
    );
  });

  test('broadcast and reduce take their default count from the buffer every rank passes, so that every rank agrees', () => {
    const comm = oneRank();
    const dev = core.Device.get(0);
    const two = dev.allocate(8).copyFrom(Float32Array.from([1, 2]));
    const four = dev.allocate(16).copyFrom(Float32Array.from([5, 6, 7, 8]));
    afterThis(() => [comm, two, four].forEach((x) => x.close()));
    // broadcast: every rank passes recv (send only on root), so its 4 elements are the count.
    expect(() => comm.broadcast(two, four, 'f32')).toThrow(
      new RangeError(
        "Communicator.broadcast: parameter 'send' holds 2 f32, fewer than the 4 of 'recv'; without options.count every rank takes the count from 'recv' (the buffer every rank passes), so pass the count",
      ),
    );
    // reduce: every rank passes send (recv only on root), so its 4 elements are the count.
    expect(() => comm.reduce(four, two, 'f32')).toThrow(
      new RangeError(
        "Communicator.reduce: parameter 'recv' holds 2 f32, fewer than the 4 of 'send'; without options.count every rank takes the count from 'send' (the buffer every rank passes), so pass the count",
      ),
    );
    expect(Array.from(two.copyTo(new Float32Array(2)))).toEqual([1, 2]);
    comm.broadcast(two, four, 'f32', { count: 2 });
    expect(Array.from(four.copyTo(new Float32Array(4)))).toEqual([1, 2, 7, 8]);
    comm.reduce(two, four, 'f32');
    expect(Array.from(four.copyTo(new Float32Array(4)))).toEqual([1, 2, 7, 8]);
    comm.broadcast(four.slice(8), two, 'f32');
    expect(Array.from(two.copyTo(new Float32Array(2)))).toEqual([7, 8]);
  });

  test('group() ends the group even when its function throws, and refuses an async function', () => {
    expect(() =>
      core.Communicator.group(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(fake.groupDepth()).toBe(0);
    expect(() => core.Communicator.group(async () => undefined)).toThrow(/returned a Promise/);
    expect(fake.groupDepth()).toBe(0);
    expect(core.Communicator.group(() => 42)).toBe(42);
  });

  test('a non-blocking init returns at once; ready() polls without blocking the event loop', async () => {
    const comm = core.Communicator.init({ rank: 0, nranks: 1, id: core.Communicator.uniqueId(), config: { blocking: false } });
    expect(comm.blocking).toBe(false);
    expect(comm.asyncError()).toBe(nccl.ncclResult_t.ncclInProgress);
    let ticks = 0;
    const t = setInterval(() => ticks++, 0);
    await expect(comm.ready()).resolves.toBe(comm);
    clearInterval(t);
    expect(comm.asyncError()).toBe(nccl.ncclResult_t.ncclSuccess);
    expect(ticks).toBeGreaterThan(0);
    comm.close();
  });

  test('split: a color gives a new communicator, null gives none', async () => {
    const comm = oneRank();
    afterThis(() => comm.close());
    const child = comm.split(3, 0);
    expect(child).not.toBeNull();
    expect([child!.rank, child!.size]).toEqual([0, 1]);
    child!.close();
    expect(comm.split(null)).toBeNull();
    const nb = comm.split(1, 0, { blocking: false })!;
    await nb.ready();
    expect(nb.size).toBe(1);
    nb.close();
    expect(() => comm.split(-5)).toThrow(RangeError);
  });

  test('close() destroys once; abort() aborts instead; a closed communicator refuses calls', () => {
    const d0 = fake.destroyed();
    const a0 = fake.aborted();
    const comm = oneRank();
    comm.close();
    comm.close();
    expect(fake.destroyed() - d0).toBe(1);
    expect(comm.isClosed).toBe(true);
    const dev = core.Device.get(0);
    const b = dev.allocate(8);
    afterThis(() => b.close());
    expect(() => comm.allReduce(b, b, 'f32')).toThrow('Communicator.allReduce: the Communicator was closed');
    const other = oneRank();
    other.abort();
    other.abort();
    expect([fake.aborted() - a0, fake.destroyed() - d0, other.isAborted, other.isClosed]).toEqual([1, 1, true, true]);
  });
});

describe('the examples, against the fakes', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', ...args], {
      cwd: path.join(__dirname, '..', '..', '..'),
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, ...fakes, NCCL_NVLS_ENABLE: '0' },
    });

  test('ncclAllReduce on one GPU forks one rank, says so, checks every sum and passes', () => {
    const r = run('examples/ncclAllReduce.ts', '--bytes', '4096', '--iters', '2');
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^ncclAllReduce: one GPU, so one rank/m);
    expect(r.stdout).toMatch(/^rank 0 of 1 on GPU 0 \(Fake GPU\): every 1024 sums right$/m);
    expect(r.stdout).toMatch(/^ +4096 +1024 float sum +[\d.]+ +[\d.]+ +0\.00$/m);
    expect(r.stdout).toMatch(/^Result = PASS$/m);
  }, 100_000);

  test('ncclAllReduce --rank 0 --nranks 1 --master: one rank through the TCP rendezvous', () => {
    const r = run('examples/ncclAllReduce.ts', '--rank', '0', '--nranks', '1', '--master', '127.0.0.1:1', '--bytes', '64');
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^Result = PASS$/m);
  }, 100_000);

  test('ncclInitAll drives every GPU from one process and passes', () => {
    const r = run('examples/ncclInitAll.ts');
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^GPU 0 \(Fake GPU\), rank 0 of 1: every sum right$/m);
    expect(r.stdout).toMatch(/^Result = PASS$/m);
  }, 100_000);
});
