// NCCL on the GPU through the bindings and core's Communicator. One GPU: one-rank communicators by
// init and by initAll([0]), every collective with every dtype (the result of one rank is its own
// data), non-blocking init, split, an oversized count, abort and close. Two GPUs (skipped on one,
// saying why): initAll([0, 1]), two processes with every collective and dtype checked on both
// ranks, split, and a rank killed mid-run whose peer ends through abort(). NVLink multicast stays
// off: NCCL_NVLS_ENABLE=0 here and in every child.
process.env.NCCL_NVLS_ENABLE = '0';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { core, cudart, nccl } from '../../src';
import { bytesOf, rankValue } from './fixtures/nccl-values';

const { Communicator, Device, NCCL_DTYPES, dtypeBytes } = core;
const root = path.join(__dirname, '..', '..');

function probe(): { count: number; why: string | null } {
  try {
    const [err, count] = cudart.cudaGetDeviceCount();
    if (err !== 0 || !count)
      return { count: 0, why: `no CUDA device (cudaGetDeviceCount: ${cudart.cudaGetErrorName(err)[1]}, ${count ?? 0} devices)` };
  } catch (e) {
    return { count: 0, why: `no CUDA runtime: ${(e as Error).message.split('\n')[0]}` };
  }
  try {
    nccl.libraryInfo();
  } catch (e) {
    return { count: 0, why: `no libnccl: ${(e as Error).message.split('\n')[0]}` };
  }
  return { count: cudart.cudaGetDeviceCount()[1]!, why: null };
}
const gpu = probe();
const N = 4099;
// NCCL's first init in a process (the CUDA context, the library, its topology) takes seconds.
jest.setTimeout(120_000);

(gpu.why === null ? describe : describe.skip)(gpu.why ?? 'NCCL on one GPU', () => {
  const dev = () => Device.get(0).makeCurrent();
  const oneRank = (config?: core.CommunicatorConfig) =>
    Communicator.init({ rank: 0, nranks: 1, id: Communicator.uniqueId(), device: 0, config });

  test('the library is NCCL 2.x and the facade returns tuples', () => {
    const [err, v] = nccl.ncclGetVersion();
    expect(err).toBe(nccl.ncclResult_t.ncclSuccess);
    expect(Math.floor(v! / 10000)).toBe(2);
    console.log(`NCCL ${nccl.libraryInfo().path}: version code ${v}`);
    expect(nccl.ncclGetErrorString(nccl.ncclResult_t.ncclInvalidArgument)[1]).toMatch(/invalid argument/);
  });

  test('a one-rank communicator by init: rank 0, size 1, device 0', () => {
    const comm = oneRank();
    expect([comm.rank, comm.size, comm.device.ordinal]).toEqual([0, 1, 0]);
    expect(nccl.ncclCommCount(comm.handle)).toEqual([0, 1]);
    comm.close();
  });

  test('a one-rank communicator by initAll([0])', () => {
    const [comm] = Communicator.initAll([0]);
    expect([comm.rank, comm.size, comm.device.ordinal]).toEqual([0, 1, 0]);
    comm.close();
  });

  test.each(NCCL_DTYPES)('every collective on one rank with %s gives the input back (sum, prod, max, min, avg)', async (dtype) => {
    const comm = oneRank();
    const d = dev();
    const stream = d.createStream();
    const size = dtypeBytes(dtype);
    const input = bytesOf(
      dtype,
      Array.from({ length: N }, (_, i) => rankValue(dtype, 0, i)),
      size,
    );
    const send = d.allocate(N * size).copyFrom(input);
    const recv = d.allocate(N * size);
    const cases: [string, () => void][] = [
      ...(['sum', 'prod', 'max', 'min', 'avg'] as const).map((op): [string, () => void] => [
        `allReduce ${op}`,
        () => comm.allReduce(send, recv, dtype, { op, stream }),
      ]),
      ['broadcast', () => comm.broadcast(send, recv, dtype, { stream })],
      ['reduce', () => comm.reduce(send, recv, dtype, { stream })],
      ['allGather', () => comm.allGather(send, recv, dtype, { stream })],
      ['reduceScatter', () => comm.reduceScatter(send, recv, dtype, { stream })],
      ['allToAll', () => comm.allToAll(send, recv, dtype, { stream })],
      [
        'send/recv to itself',
        () =>
          comm.group(() => {
            comm.send(send, 0, dtype, { stream });
            comm.recv(recv, 0, dtype, { stream });
          }),
      ],
    ];
    try {
      for (const [what, run] of cases) {
        recv.fill(0);
        try {
          run();
        } catch (e) {
          // NCCL decides which fp8 reductions it supports; a refusal must be NCCL's own, named.
          if (
            dtype.startsWith('f8') &&
            /^(allReduce|reduce)/.test(what) &&
            e instanceof core.NcclError &&
            /ncclInvalidArgument/.test(e.message)
          ) {
            console.log(`${dtype} ${what}: NCCL refuses it here (${e.message.split(' (')[0]})`);
            continue;
          }
          throw e;
        }
        await stream.synchronize();
        const got = recv.copyTo(new Uint8Array(N * size));
        // NCCL 2.28.3 itself zeroes the last of 4099 f64 elements of a one-rank avg: a C program
        // calling ncclAllReduce(ncclAvg, ncclFloat64) on the H100 gives the same (f32, and f64 sum,
        // are exact). That element is NCCL's, not ours: the rest must be the input.
        const n = dtype === 'f64' && what === 'allReduce avg' ? (N - 1) * size : N * size;
        if (n < N * size)
          console.log(`f64 allReduce avg: the last element as NCCL leaves it: ${Buffer.from(got.subarray(n)).toString('hex')}`);
        const same = Buffer.from(got.subarray(0, n)).equals(Buffer.from(input.subarray(0, n)));
        if (!same) {
          const i = got.findIndex((b, k) => b !== input[k]);
          const el = Math.floor(i / size);
          console.log(
            `${dtype} ${what}: first difference at element ${el}: in ${Buffer.from(input.subarray(el * size, el * size + size)).toString('hex')}, out ${Buffer.from(got.subarray(el * size, el * size + size)).toString('hex')}`,
          );
        }
        expect([what, same]).toEqual([what, true]);
      }
    } finally {
      send.close();
      recv.close();
      stream.close();
      comm.close();
    }
  });

  test('a non-blocking init returns at once and ready() resolves; the communicator then works', async () => {
    const comm = oneRank({ blocking: false });
    await comm.ready({ timeoutMs: 60_000 });
    const d = dev();
    const a = d.allocate(64).copyFrom(Float32Array.from({ length: 16 }, (_, i) => i));
    const b = d.allocate(64);
    comm.allReduce(a, b, 'f32');
    await comm.ready({ timeoutMs: 60_000 });
    await d.synchronize();
    expect(Array.from(b.copyTo(new Float32Array(16)))).toEqual(Array.from({ length: 16 }, (_, i) => i));
    a.close();
    b.close();
    comm.close();
  });

  test('split: a color gives a communicator of the ranks with that color, null gives none', async () => {
    const comm = oneRank();
    const child = comm.split(7, 0)!;
    await child.ready();
    expect([child.rank, child.size, child.device.ordinal]).toEqual([0, 1, 0]);
    expect(comm.split(null)).toBeNull();
    child.close();
    comm.close();
  });

  test('a count larger than a buffer is a RangeError before NCCL runs', () => {
    const comm = oneRank();
    const d = dev();
    const a = d.allocate(64);
    expect(() => comm.allReduce(a, a, 'f32', { count: 17 })).toThrow(
      new RangeError("Communicator.allReduce: parameter 'count' (17) is larger than 'send' holds: 17 f32 is 68 bytes, the buffer has 64"),
    );
    expect(() => comm.allGather(a, a, 'f64', { count: 9 })).toThrow(RangeError);
    a.close();
    comm.close();
  });

  test('abort() ends a communicator; close() twice is fine; a closed one refuses calls', () => {
    const a = oneRank();
    a.abort();
    expect([a.isAborted, a.isClosed]).toEqual([true, true]);
    const b = oneRank();
    b.close();
    b.close();
    expect(() => b.asyncError()).toThrow('Communicator.asyncError: the Communicator was closed');
  });
});

/** Runs test/gpu/fixtures/nccl-rank.ts as `nranks` processes; resolves with each one's JSON output. */
function ranks(mode: string, nranks: number, timeoutMs: number): Promise<{ rank: number; code: number | null; out: any; text: string }[]> {
  const id = nccl.uniqueIdToBase64(Communicator.uniqueId());
  return Promise.all(
    Array.from(
      { length: nranks },
      (_, rank) =>
        new Promise<{ rank: number; code: number | null; out: any; text: string }>((resolve) => {
          const p = spawn(
            process.execPath,
            ['--import', 'tsx', path.join(__dirname, 'fixtures', 'nccl-rank.ts'), mode, String(rank), String(nranks), id],
            { cwd: root, env: { ...process.env, NCCL_NVLS_ENABLE: '0' } },
          );
          let text = '';
          p.stdout.on('data', (d) => (text += d));
          p.stderr.on('data', (d) => (text += d));
          const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
          p.on('close', (code) => {
            clearTimeout(t);
            const line = text.split('\n').find((l) => l.startsWith('{'));
            resolve({ rank, code, out: line ? JSON.parse(line) : null, text });
          });
        }),
    ),
  );
}

const two = gpu.why !== null ? gpu.why : gpu.count < 2 ? `needs two GPUs; this machine has ${gpu.count}` : null;
(two === null ? describe : describe.skip)(two === null ? 'NCCL on two GPUs' : `NCCL on two GPUs (skipped: ${two})`, () => {
  test('initAll([0, 1]): one group of two all-reduces sums both GPUs', async () => {
    const comms = Communicator.initAll([0, 1]);
    const bufs = comms.map((c) =>
      c.device
        .makeCurrent()
        .allocate(N * 4)
        .copyFrom(Float32Array.from({ length: N }, (_, i) => rankValue('f32', c.rank, i))),
    );
    Communicator.group(() => comms.forEach((c, i) => c.allReduce(bufs[i], bufs[i], 'f32')));
    for (const [i, c] of comms.entries()) {
      await c.device.synchronize();
      c.device.makeCurrent();
      expect(Array.from(bufs[i].copyTo(new Float32Array(N)))).toEqual(
        Array.from({ length: N }, (_, k) => rankValue('f32', 0, k) + rankValue('f32', 1, k)),
      );
      bufs[i].close();
      c.close();
    }
  }, 120_000);

  test('two processes: every collective with every dtype is right on both ranks', async () => {
    const r = await ranks('collectives', 2, 150_000);
    for (const x of r) console.log(`== rank ${x.rank}: exit ${x.code}\n${x.text}`);
    expect(r.map((x) => [x.code, x.out?.wrong])).toEqual([
      [0, []],
      [0, []],
    ]);
    expect(r[0].out.checked).toBeGreaterThan(NCCL_DTYPES.length * 8);
  }, 160_000);

  test('two processes: split by rank gives two communicators of one rank each', async () => {
    const r = await ranks('split', 2, 60_000);
    expect(r.map((x) => [x.code, x.out])).toEqual([
      [0, { rank: 0, childRank: 0, childSize: 1 }],
      [0, { rank: 1, childRank: 0, childSize: 1 }],
    ]);
  }, 70_000);

  test('a rank killed mid-run: the other ends through abort() with an error, not a hang', async () => {
    const r = await ranks('killed', 2, 90_000);
    for (const x of r) console.log(`== rank ${x.rank}: exit ${x.code}\n${x.text}`);
    expect(r[1].code).not.toBe(0);
    expect(r[0].code).toBe(0);
    expect(r[0].out).toMatchObject({ aborted: true });
  }, 100_000);
});
