// Getting rank 0's NCCL unique id to every rank, the way launchers do it (torchrun's MASTER_ADDR and
// MASTER_PORT): rank 0 listens on a TCP port and hands the id to each rank that connects.
import * as net from 'node:net';
import { ncclUniqueId } from '../nccl';
import { uniqueIdFromBuffer } from '../nccl/helpers';
import { NCCL_UNIQUE_ID_BYTES } from '../nccl/constants.gen';
import { Communicator } from './Communicator';
import { checkOptions } from './options';

/** Written before the id, so a rank that reaches some other server says so instead of reading garbage. */
const MAGIC = Buffer.from('cudabnd1');

/** Where and how the processes of an NCCL job find each other in {@link rendezvous}. */
export interface RendezvousOptions {
  /** This process's rank. */
  rank: number;
  /** How many ranks take part. */
  nranks: number;
  /** Where rank 0 listens: 'host:port' (`[::1]:port` for IPv6), or the parts. */
  master: string | { host: string; port: number };
  /** How long to wait for rank 0 (other ranks) or for every rank to fetch the id (rank 0); default 60 s. */
  timeoutMs?: number;
  /** Rank 0's id (default: Communicator.uniqueId(), a new one from NCCL). Ignored on other ranks. */
  id?: ncclUniqueId | (() => ncclUniqueId);
}

/** Splits 'host:port' (or '[v6]:port'). */
export function parseMaster(master: string, fn = 'rendezvous'): { host: string; port: number } {
  const m = typeof master === 'string' ? /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(master) : null;
  if (!m) throw new TypeError(`${fn}: parameter 'master' must be 'host:port', got ${JSON.stringify(master)}`);
  const port = Number(m[3]);
  if (port < 1 || port > 65535) throw new RangeError(`${fn}: parameter 'master' has port ${port}, outside [1, 65535]`);
  return { host: m[1] ?? m[2], port };
}

/**
 * The rendezvous options from a launcher's environment, as torchrun sets it: RANK, WORLD_SIZE,
 * MASTER_ADDR (default 127.0.0.1) and MASTER_PORT (default 29500).
 */
export function rendezvousFromEnv(env: NodeJS.ProcessEnv = process.env): RendezvousOptions {
  const int = (k: string, dflt?: number): number => {
    const v = env[k] ?? (dflt === undefined ? undefined : String(dflt));
    if (v === undefined || !/^\d+$/.test(v))
      throw new RangeError(
        `rendezvousFromEnv: environment variable ${k} must be a non-negative integer, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`,
      );
    return Number(v);
  };
  return {
    rank: int('RANK'),
    nranks: int('WORLD_SIZE'),
    master: { host: env.MASTER_ADDR || '127.0.0.1', port: int('MASTER_PORT', 29500) },
  };
}

/**
 * Every rank gets rank 0's unique id: rank 0 makes it (or takes `id`), listens on `master` and
 * resolves once each of the other `nranks - 1` ranks has fetched it (so that its blocking
 * Communicator.init does not stop the event loop that serves them); the others connect (retrying
 * until rank 0 listens) and resolve with the id. Rejects after `timeoutMs` with the address and
 * what was missing.
 */
export async function rendezvous(o: RendezvousOptions): Promise<ncclUniqueId> {
  const fn = 'rendezvous';
  if (typeof o !== 'object' || o === null)
    throw new TypeError(`${fn}: parameter 'options' must be an object with rank, nranks and master, got ${o === null ? 'null' : typeof o}`);
  checkOptions(fn, o, { rank: true, nranks: true, master: true, timeoutMs: true, id: true });
  const { rank, nranks } = o;
  if (!Number.isInteger(nranks) || nranks < 1) throw new RangeError(`${fn}: parameter 'nranks' must be a positive integer, got ${nranks}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= nranks)
    throw new RangeError(`${fn}: parameter 'rank' must be an integer in [0, ${nranks}), got ${rank}`);
  const master = typeof o.master === 'string' ? parseMaster(o.master, fn) : o.master;
  if (typeof master !== 'object' || master === null || typeof master.host !== 'string' || !Number.isInteger(master.port))
    throw new TypeError(`${fn}: parameter 'master' must be 'host:port' or { host, port }`);
  const timeoutMs = o.timeoutMs ?? 60_000;
  if (!(timeoutMs > 0)) throw new RangeError(`${fn}: parameter 'timeoutMs' must be positive, got ${timeoutMs}`);
  if (rank === 0) {
    const id = typeof o.id === 'function' ? o.id() : (o.id ?? Communicator.uniqueId());
    if (!(id instanceof ncclUniqueId)) throw new TypeError(`${fn}: parameter 'id' must be a ncclUniqueId or a function that returns one`);
    await serve(Buffer.concat([MAGIC, Buffer.from(id.getBytes())]), nranks, master, timeoutMs);
    return id;
  }
  return fetchId(rank, master, timeoutMs);
}

const where = (m: { host: string; port: number }) => (m.host.includes(':') ? `[${m.host}]:${m.port}` : `${m.host}:${m.port}`);

/** Rank 0: serves the id until every other rank has it. */
function serve(payload: Buffer, nranks: number, master: { host: string; port: number }, timeoutMs: number): Promise<void> {
  const waiting = new Set(Array.from({ length: nranks - 1 }, (_, i) => i + 1));
  if (waiting.size === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('error', () => undefined);
      // Each rank first says which it is (4 bytes), then gets the magic and the id.
      let got = Buffer.alloc(0);
      sock.on('data', (d) => {
        if (got.length >= 4) return;
        got = Buffer.concat([got, d]);
        if (got.length < 4) return;
        const r = got.readUInt32LE(0);
        sock.end(payload);
        waiting.delete(r);
        if (waiting.size === 0) finish();
      });
    });
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `rendezvous: rank 0 at ${where(master)} waited ${timeoutMs} ms, but rank${waiting.size > 1 ? 's' : ''} ${[...waiting].join(', ')} of ${nranks} never fetched the NCCL unique id; did they start, with this address?`,
          ),
        ),
      timeoutMs,
    );
    let done = false;
    const finish = (e?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      server.close();
      // Sockets still open have had their payload queued by end(); the rest are dropped.
      if (e) for (const s of sockets) s.destroy();
      if (e) reject(e);
      else resolve();
    };
    server.on('error', (e: NodeJS.ErrnoException) =>
      finish(
        new Error(
          `rendezvous: rank 0 could not listen on ${where(master)}: ${e.code ?? e.message}${e.code === 'EADDRINUSE' ? ' (the port is taken: choose another MASTER_PORT)' : ''}`,
        ),
      ),
    );
    // A loopback or literal address is listened on as given; a host name on every interface.
    const host = net.isIP(master.host) ? master.host : undefined;
    server.listen({ port: master.port, host });
  });
}

/** Any other rank: connects to rank 0 (retrying while it is not yet listening) and reads the id. */
function fetchId(rank: number, master: { host: string; port: number }, timeoutMs: number): Promise<ncclUniqueId> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer';
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (Date.now() >= deadline) {
        reject(
          new Error(
            `rendezvous: rank ${rank} could not get the NCCL unique id from rank 0 at ${where(master)} within ${timeoutMs} ms (last: ${lastError}); is rank 0 running and listening there?`,
          ),
        );
        return;
      }
      const sock = net.connect({ host: master.host, port: master.port });
      let buf = Buffer.alloc(0);
      let settled = false;
      const retry = (why: string) => {
        if (settled) return;
        settled = true;
        lastError = why;
        sock.destroy();
        setTimeout(attempt, Math.min(100, Math.max(0, deadline - Date.now())));
      };
      sock.setTimeout(Math.max(1, deadline - Date.now()), () => retry('timed out'));
      sock.on('connect', () => {
        const r = Buffer.alloc(4);
        r.writeUInt32LE(rank);
        sock.write(r);
      });
      sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
      });
      sock.on('end', () => {
        if (settled) return;
        if (buf.length !== MAGIC.length + NCCL_UNIQUE_ID_BYTES || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
          settled = true;
          sock.destroy();
          reject(
            new Error(
              `rendezvous: rank ${rank} got ${buf.length} bytes from ${where(master)} that are not an NCCL unique id from rank 0; is something else listening there?`,
            ),
          );
          return;
        }
        settled = true;
        resolve(uniqueIdFromBuffer(buf.subarray(MAGIC.length)));
      });
      sock.on('error', (e: NodeJS.ErrnoException) => retry(e.code ?? e.message));
    };
    attempt();
  });
}
