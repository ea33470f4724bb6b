// GPU memory shared with CuPy and PyTorch processes through CUDA IPC (issue #31): Node allocates,
// fills and exports, a Python peer opens, checks and writes back; and the reverse, with the peer's
// handle (CuPy's ipcGetMemHandle, PyTorch's storage._share_cuda_() with its storage offset) opened
// here; and an IpcMemoryPool passed as a file descriptor with one allocation's descriptor. Ordering
// goes through an IPC event both ways, never a host copy between the processes; the
// array travels as a __cuda_array_interface__. The peer is test/gpu/fixtures/sharing_peer.py, which
// uses no part of this package. A library whose Python module is missing is skipped, saying so.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { core } from '../../src';
import { describeGpu } from './helpers';
import { Peer, hex, missing, PYTHONS, type PeerLibrary } from './fixtures/sharing-peer';

const { Device, IpcMemoryHandle, IpcEventHandle, IpcMemoryPool, StridedView } = core;
const root = path.join(__dirname, '..', '..');
const N = 1 << 16;
// Long enough for a Python process to import PyTorch and make its context (seconds), short enough
// that a peer that hangs fails its test and the file still ends with every failure printed (on the
// H100 a file cut off from outside printed nothing of why).
const PEER_TIMEOUT_MS = 40_000;
const note = (what: string, v: unknown) => console.log(`sharing: ${what} ${JSON.stringify(v)}`);

/** Runs fixtures/sharing-dying-peer.ts for `lib` in its own Node; resolves with its exit and its RESULT. */
function dyingPeer(lib: PeerLibrary): Promise<{ status: number | null; signal: string | null; result: Record<string, unknown> | null }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures', 'sharing-dying-peer.ts'), lib], { cwd: root });
    let output = '';
    p.stdout.on('data', (d) => (output += d));
    p.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), PEER_TIMEOUT_MS);
    p.on('error', reject);
    p.on('close', (status, signal) => {
      clearTimeout(timer);
      console.log(`== fixtures/sharing-dying-peer.ts ${lib}: exit ${status}${signal ? ` (${signal})` : ''}\n${output}`);
      const line = output.split('\n').find((l) => l.startsWith('RESULT '));
      resolve({ status, signal, result: line ? JSON.parse(line.slice(7)) : null });
    });
  });
}

for (const lib of Object.keys(PYTHONS) as PeerLibrary[]) {
  describeGpu(`sharing GPU memory with ${lib}`, () => {
    const why = missing(lib);
    // A narrow skip: only when the library's Python module (or its interpreter) is missing, and saying so.
    const maybe = why === null ? describe : describe.skip;
    maybe(why === null ? `${lib} (${PYTHONS[lib]})` : `skipped: ${why}`, () => {
      let peer: Peer;
      beforeAll(async () => {
        peer = new Peer(lib);
        note(`${lib} peer`, await peer.next());
      }, PEER_TIMEOUT_MS);
      afterAll(async () => {
        note(`${lib} peer exit`, await peer.exit());
      });

      test(
        `Node → ${lib}: Node fills and records an IPC event; ${lib} waits on it, reads 0…n-1 through the array interface, writes ×-2 and records; Node waits and reads it`,
        async () => {
          const dev = Device.get(0).makeCurrent();
          using stream = dev.createStream({ nonBlocking: true });
          using event = dev.createEvent({ interprocess: true });
          using buf = dev.allocate(4 * N);
          // Element 256 + k holds k: the view from element 256 holds 0, 1, 2, …
          const host = Float32Array.from({ length: N }, (_, i) => i - 256);
          buf.copyFrom(host, { stream });
          event.record(stream);
          // A view from element 256 on: the peer finds it through the array interface's address.
          const view = buf.view({ dtype: 'f32' }).slice([256]);
          const handle = IpcMemoryHandle.export(buf);
          const answer = await peer.ask({
            op: 'open',
            handle: hex(handle.bytes),
            offset: handle.offset,
            size: handle.size,
            base: Number(buf.ptr),
            event: hex(IpcEventHandle.export(event).bytes),
            cai: view.toArrayInterface(),
          });
          note(`Node → ${lib}`, answer);
          stream.waitEvent(event);
          const back = buf.copyTo(new Float32Array(N), { stream });
          await stream.synchronize();
          // The peer's ×-2 lands on the view (elements 256…) only.
          const wrong = back.reduce((n, v, i) => n + (v !== (i < 256 ? i - 256 : -2 * (i - 256)) ? 1 : 0), 0);
          expect(await peer.ask({ op: 'close' })).toEqual({ closed: true });
          expect(answer).toEqual({ mismatches: 0, first: [0, 1, 2, 3], shape: [N - 256] });
          expect(wrong).toBe(0);
        },
        PEER_TIMEOUT_MS,
      );

      test(
        `${lib} → Node: ${lib} fills 3i+1 and records an IPC event; Node opens its handle (with the storage offset), waits on the event, reads, writes back, and ${lib} reads Node's bytes`,
        async () => {
          const dev = Device.get(0).makeCurrent();
          const e = await peer.ask({ op: 'export', n: N });
          note(`${lib} → Node`, { ...e, handle: `${String(e.handle).slice(0, 16)}…`, event: `${String(e.event).slice(0, 16)}…` });
          using stream = dev.createStream({ nonBlocking: true });
          using mem = IpcMemoryHandle.fromBytes(Buffer.from(e.handle as string, 'hex'), e.size as number, e.offset as number).open(dev);
          using event = IpcEventHandle.fromBytes(Buffer.from(e.event as string, 'hex')).open(dev);
          const cai = e.cai as core.CudaArrayInterface;
          using view = StridedView.fromArrayInterface(cai, { buffer: mem, base: cai.data[0] });
          stream.waitEvent(event);
          const got = view.copyTo(new Float32Array(N), { stream });
          await stream.synchronize();
          const wrong = got.reduce((n, v, i) => n + (v !== 3 * i + 1 ? 1 : 0), 0);
          view.copyFrom(got.map((v) => -v));
          const check = await peer.ask({ op: 'check' });
          expect({ kind: mem.kind, size: mem.size, shape: view.shape, dtype: view.dtype, wrong }).toEqual({
            kind: 'ipc',
            size: 4 * N,
            shape: [N],
            dtype: 'f32',
            wrong: 0,
          });
          expect(check).toEqual({ mismatches: 0, first: [-1, -4, -7, -10] });
          // PyTorch's own sharing call gave the handle, and the storage starts inside the allocator's block.
          if (lib === 'torch') expect([e.how, (e.offset as number) > 0]).toEqual(['_share_cuda_', true]);
        },
        PEER_TIMEOUT_MS,
      );

      test(
        `IpcMemoryPool → ${lib}: the pool goes as file descriptor 3, the allocation as its 64-byte descriptor; ${lib} imports both through the driver, waits on the IPC event, checks and writes back`,
        async () => {
          const dev = Device.get(0).makeCurrent();
          using stream = dev.createStream({ nonBlocking: true });
          using event = dev.createEvent({ interprocess: true });
          using pool = IpcMemoryPool.create(dev);
          using buf = pool.allocate(4 * N, stream);
          buf.view({ dtype: 'f32' }).copyFrom(
            Float32Array.from({ length: N }, (_, i) => i),
            { stream },
          );
          event.record(stream);
          const fd = pool.exportHandle();
          const poolPeer = new Peer(lib, [fd]);
          fs.closeSync(fd);
          try {
            note(`${lib} pool peer`, await poolPeer.next());
            const answer = await poolPeer.ask({
              op: 'pool',
              descriptor: hex(pool.exportBuffer(buf).bytes),
              size: buf.size,
              event: hex(IpcEventHandle.export(event).bytes),
            });
            note(`IpcMemoryPool → ${lib}`, answer);
            stream.waitEvent(event);
            const back = buf.view({ dtype: 'f32' }).copyTo(new Float32Array(N), { stream });
            await stream.synchronize();
            expect(await poolPeer.ask({ op: 'pool_close' })).toEqual({ closed: true });
            expect(answer).toEqual({ mismatches: 0, first: [0, 1, 2, 3], shape: [N] });
            expect(back.reduce((n, v, i) => n + (v !== -2 * i ? 1 : 0), 0)).toBe(0);
          } finally {
            note(`${lib} pool peer exit`, await poolPeer.exit());
          }
        },
        PEER_TIMEOUT_MS,
      );

      test(
        `a ${lib} process killed while Node holds its memory: Node gets the bytes or a CudaError, never a crash, and its own work still runs`,
        async () => {
          const r = await dyingPeer(lib);
          note(`${lib} dies`, r);
          expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
          expect(r.result).not.toBeNull();
          const read = r.result!.read as { intact?: boolean; error?: string };
          if (read.error !== undefined) expect(read.error).toMatch(/^CudaError: /);
          else expect(read.intact).toBe(true);
          expect(r.result!.ownWorkRuns).toBe(true);
        },
        PEER_TIMEOUT_MS + 30_000,
      );
    });
  });
}
