// Getting rank 0's NCCL unique id to every rank, the way launchers do it (torchrun's MASTER_ADDR and
// MASTER_PORT): rank 0 listens on a TCP port and hands the id to each rank that proves it belongs to
// the job. The id is a capability (whoever holds it can join the communicator), so rank 0 binds only
// the address it was given, serves each rank once, and off loopback requires a shared secret that both
// sides prove they hold (rendezvous-protocol.ts); every read is bounded in size and by one deadline.
import * as dns from 'node:dns';
import * as net from 'node:net';
import { describe } from '../../ffi/checks';
import { ncclUniqueId } from '../../nccl';
import { uniqueIdFromBuffer } from '../../nccl/helpers';
import { NCCL_UNIQUE_ID_BYTES } from '../../nccl/constants.gen';
import { Communicator } from './Communicator';
import { checkOptions } from '../base/options';
import * as wire from './rendezvous-protocol';

/** The environment variable that holds the job's shared secret when `secret` is not given. */
export const RENDEZVOUS_SECRET_ENV = 'CUDA_BINDINGS_RENDEZVOUS_SECRET';
/** The shortest secret taken, in bytes. */
const MIN_SECRET_BYTES = 16;
/** The largest world: NCCL's nranks is a C int. */
const MAX_NRANKS = 2 ** 31 - 1;
/** Connections rank 0 holds at once before their rank is served (or refused); more are closed at once. */
const MAX_PENDING = 1024;
/**
 * Of those, how many may come from one address, so that one host cannot take every place. A rank
 * turned away asks again (fetchId retries while rank 0 closes on it), and a host runs a few ranks.
 */
const MAX_PENDING_PER_ADDRESS = 64;
/** How long a connection may take from its start to acknowledging the id (capped by the rendezvous's deadline). */
const CLAIM_MS = 10_000;
/** The longest timeoutMs: setTimeout's limit (a signed 32-bit count), past which it fires after 1 ms. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Whether `port` is a TCP port to listen on and connect to. 0 is not one: rank 0 would listen on a
 * port of the system's choosing that no other rank knows.
 */
const isPort = (port: unknown): port is number => Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535;

/** Where and how the processes of an NCCL job find each other in {@link rendezvous}. */
export interface RendezvousOptions {
  /** This process's rank. */
  rank: number;
  /** How many ranks take part. */
  nranks: number;
  /** Where rank 0 listens: 'host:port' (`[::1]:port` for IPv6), or the parts. */
  master:
    | string
    | {
        /** Rank 0's host name or IP address (an IPv6 address without brackets). */
        host: string;
        /** The TCP port rank 0 listens on, within [1, 65535]. */
        port: number;
      };
  /** How long to wait for rank 0 (other ranks) or for every rank to fetch the id (rank 0); default 60 s, at most 2^31 - 1 ms. */
  timeoutMs?: number;
  /** Rank 0's id (default: Communicator.uniqueId(), a new one from NCCL). Ignored on other ranks. */
  id?: ncclUniqueId | (() => ncclUniqueId);
  /**
   * The job's shared secret, the same on every rank (at least 16 bytes; default: the environment
   * variable CUDA_BINDINGS_RENDEZVOUS_SECRET). Required unless `master` is a loopback address.
   */
  secret?: string | Uint8Array;
}

/** Splits 'host:port' (or '[v6]:port'). */
export function parseMaster(
  master: string,
  fn = 'rendezvous',
): {
  /** The host name or IP address before the port (an IPv6 address without its brackets). */
  host: string;
  /** The port after it, within [1, 65535]. */
  port: number;
} {
  const m = typeof master === 'string' ? /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(master) : null;
  if (!m) throw new TypeError(`${fn}: parameter 'master' must be 'host:port', got ${JSON.stringify(master)}`);
  const port = Number(m[3]);
  if (!isPort(port)) throw new RangeError(`${fn}: parameter 'master' has port ${port}, outside [1, 65535]`);
  return { host: m[1] ?? m[2], port };
}

/**
 * The rendezvous options from a launcher's environment, as torchrun sets it: RANK, WORLD_SIZE,
 * MASTER_ADDR (default 127.0.0.1) and MASTER_PORT (default 29500), and the secret in
 * CUDA_BINDINGS_RENDEZVOUS_SECRET when it is set.
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
  const port = int('MASTER_PORT', 29500);
  if (!isPort(port))
    throw new RangeError(
      `rendezvousFromEnv: environment variable MASTER_PORT must be a TCP port within [1, 65535], got ${JSON.stringify(env.MASTER_PORT)}`,
    );
  const o: RendezvousOptions = {
    rank: int('RANK'),
    nranks: int('WORLD_SIZE'),
    master: { host: env.MASTER_ADDR || '127.0.0.1', port },
  };
  const secret = env[RENDEZVOUS_SECRET_ENV];
  return secret === undefined ? o : { ...o, secret };
}

/** A host and port, as parsed from `master`. */
interface Endpoint {
  host: string;
  port: number;
}

/**
 * Every rank gets rank 0's unique id: rank 0 makes it (or takes `id`), listens on `master` and
 * resolves once each of the other `nranks - 1` ranks has acknowledged receiving it (so that its
 * blocking Communicator.init does not stop the event loop that serves them); the others connect
 * (retrying until rank 0 listens) and resolve with the id once rank 0 has their acknowledgement. Each
 * rank is served once, after proving that it holds the secret; rank 0 proves it too. A rank whose
 * connection breaks before it acknowledged the id is not served, and may ask again. Rejects after `timeoutMs` with the address and what was
 * missing, and at once when rank 0 refuses a rank (a wrong secret, a rank already served).
 */
export async function rendezvous(o: RendezvousOptions): Promise<ncclUniqueId> {
  const { rank, nranks, master, timeoutMs, secret } = checkRendezvous(o);
  if (rank === 0) {
    const id = typeof o.id === 'function' ? o.id() : (o.id ?? Communicator.uniqueId());
    if (!(id instanceof ncclUniqueId))
      throw new TypeError(`rendezvous: parameter 'id' must be a ncclUniqueId or a function that returns one`);
    if (nranks === 1) return id;
    await serve(Buffer.from(id.getBytes()), await exchange(rank, nranks, master, timeoutMs, secret));
    return id;
  }
  return fetchId(rank, await exchange(rank, nranks, master, timeoutMs, secret));
}

/** What both sides of one rendezvous know: the deadline counted from now, the master's address resolved. */
async function exchange(rank: number, nranks: number, master: Endpoint, timeoutMs: number, secret: Buffer): Promise<Exchange> {
  const deadline = Date.now() + timeoutMs;
  return { nranks, master: { host: await masterAddress(master, secret, rank), port: master.port }, timeoutMs, deadline, secret };
}

/** The options, checked, with their defaults. */
function checkRendezvous(o: RendezvousOptions): {
  rank: number;
  nranks: number;
  master: Endpoint;
  timeoutMs: number;
  secret: Buffer;
} {
  const fn = 'rendezvous';
  if (typeof o !== 'object' || o === null)
    throw new TypeError(`${fn}: parameter 'options' must be an object with rank, nranks and master, got ${o === null ? 'null' : typeof o}`);
  checkOptions(fn, o, { rank: true, nranks: true, master: true, timeoutMs: true, id: true, secret: true });
  const { rank, nranks } = o;
  if (!Number.isInteger(nranks) || nranks < 1 || nranks > MAX_NRANKS)
    throw new RangeError(`${fn}: parameter 'nranks' must be an integer in [1, ${MAX_NRANKS}] (NCCL's int), got ${nranks}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= nranks)
    throw new RangeError(`${fn}: parameter 'rank' must be an integer in [0, ${nranks}), got ${rank}`);
  const master = typeof o.master === 'string' ? parseMaster(o.master, fn) : o.master;
  if (typeof master !== 'object' || master === null || typeof master.host !== 'string' || typeof master.port !== 'number')
    throw new TypeError(`${fn}: parameter 'master' must be 'host:port' or { host, port }`);
  if (!isPort(master.port))
    throw new RangeError(`${fn}: parameter 'master.port' must be a TCP port (an integer within [1, 65535]), got ${master.port}`);
  const timeoutMs = o.timeoutMs ?? 60_000;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMEOUT_MS)
    throw new RangeError(
      `${fn}: parameter 'timeoutMs' must be a positive number of milliseconds up to ${MAX_TIMEOUT_MS} (setTimeout's limit, about 24.8 days), got ${describe(timeoutMs)}`,
    );
  return { rank, nranks, master, timeoutMs, secret: secretBytes(o.secret ?? process.env[RENDEZVOUS_SECRET_ENV]) };
}

/** The secret as bytes (empty when there is none), refused when too short or of the wrong type. */
function secretBytes(secret: string | Uint8Array | undefined): Buffer {
  if (secret === undefined || secret === '') return Buffer.alloc(0);
  if (typeof secret !== 'string' && !(secret instanceof Uint8Array))
    throw new TypeError(`rendezvous: parameter 'secret' must be a string or a Uint8Array, got ${typeof secret}`);
  const b = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  if (b.length < MIN_SECRET_BYTES)
    throw new RangeError(
      `rendezvous: parameter 'secret' must hold at least ${MIN_SECRET_BYTES} bytes, got ${b.length}; make one with \`node -e "console.log(crypto.randomBytes(32).toString('hex'))"\` and give it to every rank (${RENDEZVOUS_SECRET_ENV})`,
    );
  return b;
}

/** @internal Whether an IP address is a loopback one (127.0.0.0/8, ::1, or 127.x mapped into IPv6). */
export function isLoopback(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  return address === '::1' || address === '0:0:0:0:0:0:0:1';
}

/**
 * @internal The address `master.host` stands for (a literal as given, a host name resolved by the system's
 * resolver): rank 0 binds it, the others connect to it. Refused when it is not loopback and there is no secret.
 */
export async function masterAddress(master: Endpoint, secret: Buffer, rank: number): Promise<string> {
  let address = master.host;
  if (!net.isIP(address)) {
    try {
      address = (await dns.promises.lookup(master.host)).address;
    } catch (e) {
      throw new Error(`rendezvous: rank ${rank} could not resolve '${master.host}': ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  }
  if (secret.length === 0 && !isLoopback(address))
    throw new Error(
      `rendezvous: '${master.host}' is ${address === master.host ? 'not a loopback address' : `${address}, not a loopback address`}, so the job needs a shared secret: give every rank the same 'secret' option or ${RENDEZVOUS_SECRET_ENV} (at least ${MIN_SECRET_BYTES} bytes)`,
    );
  return address;
}

const where = (m: Endpoint) => (m.host.includes(':') ? `[${m.host}]:${m.port}` : `${m.host}:${m.port}`);

/** What both sides of one rendezvous know. */
interface Exchange {
  nranks: number;
  master: Endpoint;
  timeoutMs: number;
  /** When the whole exchange gives up (Date.now() time). */
  deadline: number;
  /** The shared secret; empty when there is none (loopback only). */
  secret: Buffer;
}

/** Up to 8 of the ranks in [1, nranks) not in `served`, and how many there are in all. */
function missingRanks(served: Set<number>, nranks: number): string {
  const some: number[] = [];
  for (let r = 1; r < nranks && some.length < 8; r++) if (!served.has(r)) some.push(r);
  const count = nranks - 1 - served.size;
  return `rank${count > 1 ? 's' : ''} ${some.join(', ')}${count > some.length ? `, … (${count} in all)` : ''}`;
}

/** Rank 0: serves the id until every other rank has it, or rejects at the deadline. */
function serve(id: Buffer, x: Exchange): Promise<void> {
  const ranks: Ranks = { served: new Set(), granting: new Map() };
  const { served } = ranks;
  const sockets = new Set<net.Socket>();
  /** How many of `sockets` each remote address holds. */
  const perAddress = new Map<string, number>();
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (e?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      server.close();
      // Served sockets left the set: each closes itself once its id is flushed. The rest are dropped.
      for (const s of sockets) s.destroy();
      if (e) reject(e);
      else resolve();
    };
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `rendezvous: rank 0 at ${where(x.master)} waited ${x.timeoutMs} ms, but ${missingRanks(served, x.nranks)} of ${x.nranks} never fetched the NCCL unique id; did they start, with this address${x.secret.length ? ' and secret' : ''}?`,
          ),
        ),
      Math.max(0, x.deadline - Date.now()),
    );
    const server = net.createServer((sock) => {
      const from = sock.remoteAddress;
      if (done || from === undefined || sockets.size >= MAX_PENDING || (perAddress.get(from) ?? 0) >= MAX_PENDING_PER_ADDRESS)
        return void sock.destroy();
      sockets.add(sock);
      perAddress.set(from, (perAddress.get(from) ?? 0) + 1);
      /** Gives the connection's place back, once: when it closes, or when its rank is served. */
      const leave = () => {
        if (!sockets.delete(sock)) return;
        const n = perAddress.get(from)! - 1;
        if (n === 0) perAddress.delete(from);
        else perAddress.set(from, n);
      };
      sock.on('close', leave);
      const onServed = () => {
        leave();
        if (served.size === x.nranks - 1) finish();
      };
      serveOne(sock, { id, x, ranks, onServed });
    });
    const unable = (e: NodeJS.ErrnoException) =>
      finish(
        new Error(
          `rendezvous: rank 0 could not listen on ${where(x.master)}: ${e.code ?? e.message}${e.code === 'EADDRINUSE' ? ' (the port is taken: choose another MASTER_PORT)' : ''}`,
        ),
      );
    server.on('error', unable);
    // listen() throws at once on arguments it refuses: that is a failure like any other, and it
    // must clear the deadline timer, which would otherwise hold the process until it fires.
    try {
      server.listen({ port: x.master.port, host: x.master.host });
    } catch (e) {
      unable(e as NodeJS.ErrnoException);
    }
  });
}

/** What rank 0 knows of the ranks, shared by its connections. */
interface Ranks {
  /** Ranks that acknowledged the id: they hold it. */
  served: Set<number>;
  /** Ranks whose id is on its way, by the connection that carries it, until they acknowledge it or it closes. */
  granting: Map<number, net.Socket>;
}

/**
 * Rank 0's side of one connection: hello, then one claim of fixed size, then a refusal, or the id
 * followed by the rank's acknowledgement and rank 0's receipt. The rank counts as served only on its
 * acknowledgement: one whose connection breaks before the id reached it has not got it, and may ask again.
 */
function serveOne(sock: net.Socket, c: { id: Buffer; x: Exchange; ranks: Ranks; onServed: () => void }): void {
  const { served, granting } = c.ranks;
  const { bytes, nonce } = wire.hello();
  let reader = new wire.FixedReader(wire.CLAIM_BYTES);
  let claim: wire.Claim | undefined;
  // One bound for the whole conversation, hello to acknowledgement: a peer that stalls anywhere is dropped.
  const drop = setTimeout(() => sock.destroy(), Math.max(0, Math.min(CLAIM_MS, c.x.deadline - Date.now())));
  sock.on('close', () => clearTimeout(drop));
  sock.on('error', () => undefined);
  // Every answer that ends the conversation is destroyed once flushed: a peer that never closes its side
  // would otherwise keep its place among the pending connections, and enough such peers would keep every rank out.
  const last = (b: Buffer) => {
    sock.removeAllListeners('data');
    clearTimeout(drop);
    sock.end(b, () => sock.destroy());
  };
  sock.write(bytes);
  sock.on('data', (d: Buffer) => {
    const state = reader.push(d);
    if (state === 'more') return;
    if (state === 'overflow') return void sock.destroy();
    if (!claim) {
      claim = wire.readClaim(c.x.secret, nonce, reader.bytes);
      if (!claim) return void sock.destroy();
      const refusal = refusalOf(claim, c.x.nranks, c.ranks);
      if (refusal !== undefined) return last(Buffer.from([refusal]));
      const { rank } = claim;
      granting.set(rank, sock);
      sock.on('close', () => {
        if (granting.get(rank) === sock) granting.delete(rank);
      });
      reader = new wire.FixedReader(wire.ACK_BYTES);
      sock.write(wire.grant(claim.keys, c.id, rank, c.x.nranks));
      return;
    }
    if (!wire.readAck(claim.keys, c.id, claim.rank, c.x.nranks, reader.bytes)) return void sock.destroy();
    granting.delete(claim.rank);
    served.add(claim.rank);
    last(wire.RECEIPT);
    c.onServed();
  });
}

/** Why a claim is refused, or undefined when its rank is to be given the id. */
function refusalOf(claim: wire.Claim, nranks: number, ranks: Ranks): number | undefined {
  if (!claim.authentic) return wire.Refusal.badSecret;
  if (claim.nranks !== nranks) return wire.Refusal.worldSize;
  if (claim.rank < 1 || claim.rank >= nranks) return wire.Refusal.badRank;
  if (ranks.served.has(claim.rank)) return wire.Refusal.alreadyServed;
  if (ranks.granting.has(claim.rank)) return wire.Refusal.inProgress;
  return undefined;
}

/** Why rank 0 refused `rank`, for the rank's error. */
function refusalText(code: number, rank: number, x: Exchange): string {
  const at = `rendezvous: rank 0 at ${where(x.master)}`;
  switch (code) {
    case wire.Refusal.badSecret:
      return `${at} refused rank ${rank}: the two do not hold the same secret (or one of them has none); give every rank the same 'secret' or ${RENDEZVOUS_SECRET_ENV}`;
    case wire.Refusal.alreadyServed:
      return `${at} has already given the NCCL unique id to a rank ${rank}; is another process running with this rank?`;
    case wire.Refusal.worldSize:
      return `${at} refused rank ${rank}: its job has another number of ranks than this one's ${x.nranks}`;
    default:
      return `${at} refused rank ${rank} as not a rank of its job of ${x.nranks}`;
  }
}

/**
 * Any other rank: connects to rank 0 (retrying while it is not yet listening, or while it is handing
 * the id to another connection of this rank), reads the id, acknowledges it, and resolves on rank 0's receipt.
 */
function fetchId(rank: number, x: Exchange): Promise<ncclUniqueId> {
  let lastError = 'no answer';
  let sock: net.Socket | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** The id once this rank has opened a grant and acknowledged it. */
  let held: Buffer | undefined;
  return new Promise<ncclUniqueId>((resolve, reject) => {
    let settled = false;
    const settle = (e: Error | undefined, id?: ncclUniqueId) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(retryTimer);
      sock?.destroy();
      if (e) reject(e);
      else resolve(id!);
    };
    const timer = setTimeout(
      () =>
        settle(
          new Error(
            `rendezvous: rank ${rank} could not get the NCCL unique id from rank 0 at ${where(x.master)} within ${x.timeoutMs} ms (last: ${lastError}); is rank 0 running and listening there?`,
          ),
        ),
      Math.max(0, x.deadline - Date.now()),
    );
    const attempt = () => {
      if (settled) return;
      let s: net.Socket;
      try {
        s = sock = net.connect({ host: x.master.host, port: x.master.port });
      } catch (e) {
        // Arguments connect() refuses at once: no retry mends them, and the deadline timer must not outlive the rejection.
        const why = (e as NodeJS.ErrnoException).code ?? String(e);
        return settle(new Error(`rendezvous: rank ${rank} could not connect to rank 0 at ${where(x.master)}: ${why}`));
      }
      const retry = (why: string) => {
        if (settled || s !== sock) return;
        lastError = why;
        s.destroy();
        sock = undefined;
        retryTimer = setTimeout(attempt, 100);
      };
      s.on('error', (e: NodeJS.ErrnoException) => retry(e.code ?? e.message));
      // After an 'error' this attempt was retried already, and its 'close' is ignored.
      s.on('close', () => retry('closed by rank 0'));
      s.on(
        'data',
        exchangeReader(s, rank, x, {
          fail: (e) => settle(e),
          refused: (code) => {
            if (code === wire.Refusal.inProgress) return retry(`rank 0 was handing the id to another connection of rank ${rank}`);
            // Our acknowledgement reached rank 0 on an earlier connection, and its receipt did not reach us.
            if (code === wire.Refusal.alreadyServed && held) return settle(undefined, uniqueIdFromBuffer(held));
            settle(new Error(refusalText(code, rank, x)));
          },
          acknowledged: (id) => {
            held = id;
            lastError = 'closed by rank 0 before its receipt of the id';
          },
          received: (id) => settle(undefined, uniqueIdFromBuffer(id)),
        }),
      );
    };
    attempt();
  });
}

/** What one attempt's reader reports to fetchId. */
interface AttemptEvents {
  /** The wait is over: rank 0 is not one of this job, or something else answers there. */
  fail(e: Error): void;
  /** Rank 0 refused the claim with this status byte. */
  refused(code: number): void;
  /** The id was opened and its acknowledgement sent. */
  acknowledged(id: Buffer): void;
  /** Rank 0 confirmed the acknowledgement: it counts this rank as served. */
  received(id: Buffer): void;
}

/**
 * The data handler of one attempt: reads rank 0's hello, sends the claim, reads the answer,
 * acknowledges the id and reads the receipt. Every read has a fixed size; more bytes than a message
 * holds, or bytes that are not ours, end the wait.
 */
function exchangeReader(s: net.Socket, rank: number, x: Exchange, on: AttemptEvents): (d: Buffer) => void {
  const foreign = (n: number) =>
    new Error(
      `rendezvous: rank ${rank} got ${n} bytes from ${where(x.master)} that are not an NCCL unique id from rank 0; is something else listening there?`,
    );
  const hello = new wire.FixedReader(wire.HELLO_BYTES);
  const answer = new wire.FixedReader(wire.grantBytes(NCCL_UNIQUE_ID_BYTES));
  const receipt = new wire.FixedReader(wire.RECEIPT.length);
  let keys: wire.SessionKeys | undefined;
  let id: Buffer | undefined;
  return (d) => {
    if (!keys) {
      const state = hello.push(d);
      if (state === 'more') return;
      const nonce = state === 'done' ? wire.readHello(hello.bytes) : undefined;
      if (!nonce) return on.fail(foreign(hello.received + (state === 'overflow' ? d.length : 0)));
      const c = wire.claim(x.secret, nonce, rank, x.nranks);
      keys = c.keys;
      s.write(c.bytes);
      return;
    }
    if (!id) {
      const state = answer.push(d);
      if (state === 'overflow') return on.fail(foreign(answer.received + d.length));
      if (answer.bytes[0] !== 0) return on.refused(answer.bytes[0]);
      if (state === 'more') return;
      id = wire.openGrant(keys, answer.bytes, rank, x.nranks);
      if (!id)
        return on.fail(
          new Error(
            `rendezvous: rank ${rank} got an answer from ${where(x.master)} that is not sealed with this job's secret; rank 0 there does not hold the same secret (or is not rank 0 of this job)`,
          ),
        );
      s.write(wire.ack(keys, id, rank, x.nranks));
      return on.acknowledged(id);
    }
    const state = receipt.push(d);
    if (state === 'overflow' || (state === 'done' && !receipt.bytes.equals(wire.RECEIPT)))
      return on.fail(foreign(answer.received + receipt.received + (state === 'overflow' ? d.length : 0)));
    if (state === 'done') on.received(id);
  };
}
