// The TCP rendezvous of the NCCL unique id, with 4 processes over loopback.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import * as path from 'node:path';
import { isLoopback, masterAddress, rendezvous, rendezvousFromEnv, parseMaster } from '../../../src/core/nccl/rendezvous';
import * as wire from '../../../src/core/nccl/rendezvous-protocol';
import { uniqueIdFromBuffer } from '../../../src/nccl/helpers';
import type { ncclUniqueId } from '../../../src/nccl';

const root = path.join(__dirname, '..', '..', '..');
const script = path.join(__dirname, '..', 'helpers', 'rendezvous-rank.ts');

/** A port nobody listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Runs the given ranks of a world of `nranks` as separate processes; resolves with what each printed. */
function runRanks(
  ranks: number[],
  nranks: number,
  port: number,
  id: string,
  timeoutMs: number,
  secret = '',
): Promise<{ rank: number; id?: string; error?: string; status: number | null }[]> {
  return Promise.all(
    ranks.map(
      (rank) =>
        new Promise<{ rank: number; id?: string; error?: string; status: number | null }>((resolve) => {
          const env = {
            ...process.env,
            RANK: String(rank),
            WORLD_SIZE: String(nranks),
            MASTER_ADDR: '127.0.0.1',
            MASTER_PORT: String(port),
            RENDEZVOUS_ID: id,
            RENDEZVOUS_TIMEOUT_MS: String(timeoutMs),
            CUDA_BINDINGS_RENDEZVOUS_SECRET: secret,
          };
          const p = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env });
          let out = '';
          let err = '';
          p.stdout.on('data', (d) => (out += d));
          p.stderr.on('data', (d) => (err += d));
          const kill = setTimeout(() => p.kill('SIGKILL'), timeoutMs + 60_000);
          p.on('close', (status) => {
            clearTimeout(kill);
            try {
              resolve({ ...JSON.parse(out), status });
            } catch {
              resolve({ rank, error: `no JSON from rank ${rank}: ${out}${err}`, status });
            }
          });
        }),
    ),
  );
}

test("4 processes over loopback, the secret in the environment: every rank gets rank 0's id intact", async () => {
  const id = randomBytes(128).toString('base64');
  const port = await freePort();
  const secret = randomBytes(32).toString('hex');
  // Rank 0 starts last: the others retry until it listens.
  const late = runRanks([1, 2, 3], 4, port, id, 60_000, secret);
  await new Promise((r) => setTimeout(r, 300));
  const results = [...(await runRanks([0], 4, port, id, 60_000, secret)), ...(await late)];
  expect(results.sort((a, b) => a.rank - b.rank)).toEqual([0, 1, 2, 3].map((rank) => ({ rank, id, status: 0 })));
}, 120_000);

test('without rank 0, a rank times out with an error that names the address', async () => {
  const port = await freePort();
  const [r] = await runRanks([2], 4, port, '', 1500);
  expect(r.status).toBe(1);
  expect(r.error).toMatch(
    new RegExp(
      `^rendezvous: rank 2 could not get the NCCL unique id from rank 0 at 127\\.0\\.0\\.1:${port} within 1500 ms \\(last: ECONNREFUSED\\); is rank 0 running and listening there\\?$`,
    ),
  );
}, 90_000);

test('rank 0 times out naming the ranks that never came', async () => {
  const port = await freePort();
  const id = uniqueIdFromBuffer(randomBytes(128));
  await expect(rendezvous({ rank: 0, nranks: 3, master: `127.0.0.1:${port}`, timeoutMs: 300, id })).rejects.toThrow(
    `rendezvous: rank 0 at 127.0.0.1:${port} waited 300 ms, but ranks 1, 2 of 3 never fetched the NCCL unique id; did they start, with this address?`,
  );
});

test('one rank needs no network; bad options name the parameter', async () => {
  const id = uniqueIdFromBuffer(randomBytes(128));
  await expect(rendezvous({ rank: 0, nranks: 1, master: '127.0.0.1:1', id })).resolves.toBe(id);
  await expect(rendezvous({ rank: 4, nranks: 4, master: '127.0.0.1:1' })).rejects.toThrow(
    "rendezvous: parameter 'rank' must be an integer in [0, 4), got 4",
  );
  expect(() => parseMaster('localhost')).toThrow(`rendezvous: parameter 'master' must be 'host:port', got "localhost"`);
  expect(parseMaster('[::1]:29500')).toEqual({ host: '::1', port: 29500 });
  expect(rendezvousFromEnv({ RANK: '1', WORLD_SIZE: '2', MASTER_ADDR: 'node0' })).toEqual({
    rank: 1,
    nranks: 2,
    master: { host: 'node0', port: 29500 },
  });
  expect(() => rendezvousFromEnv({ WORLD_SIZE: '2' })).toThrow(
    'rendezvousFromEnv: environment variable RANK must be a non-negative integer, got nothing',
  );
});

/** How many timers are pending in this process now. */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('a port outside [1, 65535] is refused wherever it enters, naming where, and leaves no timer behind', async () => {
  const before = timers();
  // From the environment: 0 would have rank 0 listen on a port no rank knows; 70000 is no port.
  for (const port of ['0', '70000'])
    expect(() => rendezvousFromEnv({ RANK: '0', WORLD_SIZE: '2', MASTER_PORT: port })).toThrow(
      new RangeError(`rendezvousFromEnv: environment variable MASTER_PORT must be a TCP port within [1, 65535], got "${port}"`),
    );
  // In the object form, on rank 0 (which listens) and on another rank (which connects).
  for (const rank of [0, 1])
    for (const port of [0, 65536, 70000, -1, 1.5])
      await expect(rendezvous({ rank, nranks: 2, master: { host: '127.0.0.1', port }, timeoutMs: 30_000 })).rejects.toThrow(
        new RangeError(`rendezvous: parameter 'master.port' must be a TCP port (an integer within [1, 65535]), got ${port}`),
      );
  await expect(rendezvous({ rank: 1, nranks: 2, master: { host: '127.0.0.1', port: '29500' as never } })).rejects.toThrow(
    new TypeError("rendezvous: parameter 'master' must be 'host:port' or { host, port }"),
  );
  // In the string form.
  for (const port of [0, 70000])
    await expect(rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}` })).rejects.toThrow(
      new RangeError(`rendezvous: parameter 'master' has port ${port}, outside [1, 65535]`),
    );
  expect(timers()).toBe(before);
});

test("a timeoutMs past setTimeout's limit is refused (it would fire after 1 ms); the limit itself is taken", async () => {
  const id = uniqueIdFromBuffer(randomBytes(128));
  for (const timeoutMs of [2 ** 31, 3e9])
    await expect(rendezvous({ rank: 1, nranks: 2, master: '127.0.0.1:29500', timeoutMs })).rejects.toThrow(
      new RangeError(
        `rendezvous: parameter 'timeoutMs' must be a positive number of milliseconds up to 2147483647 (setTimeout's limit, about 24.8 days), got ${timeoutMs}`,
      ),
    );
  await expect(rendezvous({ rank: 1, nranks: 2, master: '127.0.0.1:29500', timeoutMs: '5000' as never })).rejects.toThrow(
    `rendezvous: parameter 'timeoutMs' must be a positive number of milliseconds up to 2147483647 (setTimeout's limit, about 24.8 days), got the string "5000"`,
  );
  await expect(rendezvous({ rank: 0, nranks: 1, master: '127.0.0.1:29500', timeoutMs: 2 ** 31 - 1, id })).resolves.toBe(id);
});

test('a listen() or connect() that throws at once rejects the rendezvous and clears its deadline', async () => {
  const id = uniqueIdFromBuffer(randomBytes(128));
  const before = timers();
  const refused = Object.assign(new Error('refused at once'), { code: 'ERR_SOCKET_BAD_PORT' });
  const listen = jest.spyOn(net.Server.prototype, 'listen').mockImplementationOnce(() => {
    throw refused;
  });
  const connect = jest.spyOn(net.Socket.prototype, 'connect').mockImplementationOnce(() => {
    throw refused;
  });
  try {
    await expect(rendezvous({ rank: 0, nranks: 2, master: '127.0.0.1:29500', id, timeoutMs: 30_000 })).rejects.toThrow(
      'rendezvous: rank 0 could not listen on 127.0.0.1:29500: ERR_SOCKET_BAD_PORT',
    );
    await expect(rendezvous({ rank: 1, nranks: 2, master: '127.0.0.1:29500', timeoutMs: 30_000 })).rejects.toThrow(
      'rendezvous: rank 1 could not connect to rank 0 at 127.0.0.1:29500: ERR_SOCKET_BAD_PORT',
    );
  } finally {
    listen.mockRestore();
    connect.mockRestore();
  }
  expect(timers()).toBe(before);
});

describe('a rendezvous that a hostile peer cannot take over', () => {
  const SECRET = 'the job secret, 32 bytes long!!!';
  const id = uniqueIdFromBuffer(randomBytes(128));
  const hex = (u: ncclUniqueId) => Buffer.from(u.getBytes()).toString('hex');

  /** Rank 0 of a world of `nranks` on a fresh loopback port. */
  async function rank0(nranks: number, o: { secret?: string; timeoutMs?: number } = {}) {
    const port = await freePort();
    const served = rendezvous({ rank: 0, nranks, master: `127.0.0.1:${port}`, id, timeoutMs: 10_000, ...o });
    served.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50)); // listening
    return { port, served };
  }

  /** A raw connection to rank 0, after its hello. */
  interface Peer {
    sock: net.Socket;
    hello: Buffer;
    /** Everything rank 0 sent after its hello, once it closed its side. */
    closed: Promise<Buffer>;
    /** The next `n` bytes rank 0 sends. */
    read(n: number): Promise<Buffer>;
  }

  /** A raw connection to `port` (from `localAddress` when given); resolves with rank 0's hello. */
  function connect(port: number, o: { localAddress?: string; allowHalfOpen?: boolean } = {}): Promise<Peer> {
    return new Promise((resolve, reject) => {
      const sock = net.connect({ host: '127.0.0.1', port, ...o });
      const chunks: Buffer[] = [];
      let unread = Buffer.alloc(0);
      let waiting: (() => void) | undefined;
      // Rank 0 closing its side is what counts: a half-open peer sees 'end' and never 'close'.
      const closed = new Promise<Buffer>((r) => {
        sock.on('end', () => r(Buffer.concat(chunks)));
        sock.on('close', () => r(Buffer.concat(chunks)));
      });
      const read = async (n: number) => {
        while (unread.length < n) await new Promise<void>((r) => (waiting = r));
        const b = unread.subarray(0, n);
        unread = unread.subarray(n);
        return b;
      };
      sock.on('error', () => undefined);
      sock.once('data', (d) => {
        sock.on('data', (more) => {
          chunks.push(more);
          unread = Buffer.concat([unread, more]);
          waiting?.();
        });
        resolve({ sock, hello: d, closed, read });
      });
      sock.once('error', reject);
    });
  }

  /** Claims `rank` on `peer` and opens the grant: the id and the connection's keys. */
  async function claimId(peer: Peer, secret: string, rank: number, nranks: number) {
    const c = wire.claim(Buffer.from(secret), wire.readHello(peer.hello)!, rank, nranks);
    peer.sock.write(c.bytes);
    const got = wire.openGrant(c.keys, await peer.read(wire.grantBytes(128)), rank, nranks)!;
    expect(hex(uniqueIdFromBuffer(got))).toBe(hex(id));
    return { id: got, keys: c.keys };
  }

  test('a claim without the secret is refused, and the real rank still gets the id', async () => {
    const { port, served } = await rank0(2, { secret: SECRET });
    const { sock, hello, closed } = await connect(port);
    const forged = wire.claim(Buffer.from('a guess at the secret, 32 bytes!'), wire.readHello(hello)!, 1, 2);
    sock.write(forged.bytes);
    expect([...(await closed)]).toEqual([wire.Refusal.badSecret]);
    await expect(rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}`, secret: 'not the secret of this job' })).rejects.toThrow(
      `rendezvous: rank 0 at 127.0.0.1:${port} refused rank 1: the two do not hold the same secret (or one of them has none); give every rank the same 'secret' or CUDA_BINDINGS_RENDEZVOUS_SECRET`,
    );
    expect(hex(await rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}`, secret: SECRET }))).toBe(hex(id));
    await expect(served).resolves.toBe(id);
  });

  test('each rank is served once, and only ranks of the job', async () => {
    const { port, served } = await rank0(3, { secret: SECRET });
    const master = `127.0.0.1:${port}`;
    expect(hex(await rendezvous({ rank: 1, nranks: 3, master, secret: SECRET }))).toBe(hex(id));
    await expect(rendezvous({ rank: 1, nranks: 3, master, secret: SECRET })).rejects.toThrow(
      `rendezvous: rank 0 at ${master} has already given the NCCL unique id to a rank 1; is another process running with this rank?`,
    );
    await expect(rendezvous({ rank: 1, nranks: 4, master, secret: SECRET })).rejects.toThrow(
      `rendezvous: rank 0 at ${master} refused rank 1: its job has another number of ranks than this one's 4`,
    );
    for (const rank of [0, 3, 2 ** 32 - 1]) {
      const { sock, hello, closed } = await connect(port);
      sock.write(wire.claim(Buffer.from(SECRET), wire.readHello(hello)!, rank, 3).bytes);
      expect([...(await closed)]).toEqual([wire.Refusal.badRank]);
    }
    expect(hex(await rendezvous({ rank: 2, nranks: 3, master, secret: SECRET }))).toBe(hex(id));
    await expect(served).resolves.toBe(id);
  });

  test('a rank accepts only an id sealed with its secret: an impostor rank 0 is found out', async () => {
    const server = net.createServer((sock) => {
      const h = wire.hello();
      sock.write(h.bytes);
      sock.once('data', () => {
        const keys = wire.sessionKeys(Buffer.from('the impostor has its own secret'), h.nonce, randomBytes(32));
        sock.end(wire.grant(keys, randomBytes(128), 1, 2));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    try {
      await expect(rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}`, secret: SECRET, timeoutMs: 5000 })).rejects.toThrow(
        `rendezvous: rank 1 got an answer from 127.0.0.1:${port} that is not sealed with this job's secret`,
      );
    } finally {
      server.close();
    }
  });

  test('off loopback a secret is required, and too short a secret is refused', async () => {
    await expect(rendezvous({ rank: 0, nranks: 2, master: '0.0.0.0:29500', id })).rejects.toThrow(
      `rendezvous: '0.0.0.0' is not a loopback address, so the job needs a shared secret: give every rank the same 'secret' option or CUDA_BINDINGS_RENDEZVOUS_SECRET (at least 16 bytes)`,
    );
    await expect(rendezvous({ rank: 1, nranks: 2, master: '10.0.0.1:29500' })).rejects.toThrow(
      `rendezvous: '10.0.0.1' is not a loopback address, so the job needs a shared secret`,
    );
    await expect(rendezvous({ rank: 1, nranks: 2, master: '127.0.0.1:29500', secret: 'short' })).rejects.toThrow(
      "rendezvous: parameter 'secret' must hold at least 16 bytes, got 5",
    );
    expect(rendezvousFromEnv({ RANK: '0', WORLD_SIZE: '2', CUDA_BINDINGS_RENDEZVOUS_SECRET: SECRET }).secret).toBe(SECRET);
  });

  test('a host name is bound at the address it resolves to, never the wildcard', async () => {
    const address = await masterAddress({ host: 'localhost', port: 1 }, Buffer.alloc(0), 0);
    expect(isLoopback(address)).toBe(true);
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1']) expect(isLoopback(a)).toBe(false);
    const port = await freePort();
    const served = rendezvous({ rank: 0, nranks: 2, master: `localhost:${port}`, id, timeoutMs: 10_000 });
    expect(hex(await rendezvous({ rank: 1, nranks: 2, master: `localhost:${port}` }))).toBe(hex(id));
    await expect(served).resolves.toBe(id);
  });

  test('a rank 0 that trickles bytes or floods them does not hold a rank past its deadline', async () => {
    const trickle = net.createServer((sock) => {
      const t = setInterval(() => sock.write(Buffer.from([0x63])), 300);
      sock.on('close', () => clearInterval(t));
      sock.on('error', () => undefined);
    });
    const flood = net.createServer((sock) => {
      sock.on('error', () => undefined);
      sock.write(Buffer.alloc(1 << 20, 0x63));
    });
    const ports = await Promise.all(
      [trickle, flood].map((s) => new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as net.AddressInfo).port)))),
    );
    try {
      const t0 = Date.now();
      await expect(rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${ports[0]}`, timeoutMs: 1000 })).rejects.toThrow(
        `rendezvous: rank 1 could not get the NCCL unique id from rank 0 at 127.0.0.1:${ports[0]} within 1000 ms`,
      );
      expect(Date.now() - t0).toBeLessThan(2500);
      await expect(rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${ports[1]}`, timeoutMs: 30_000 })).rejects.toThrow(
        /^rendezvous: rank 1 got \d+ bytes from 127\.0\.0\.1:\d+ that are not an NCCL unique id from rank 0/,
      );
    } finally {
      trickle.close();
      flood.close();
    }
  });

  test('rank 0 drops a peer that floods it, and closes idle peers when it is done', async () => {
    const { port, served } = await rank0(2);
    const flooder = await connect(port);
    flooder.sock.write(Buffer.alloc(1 << 20, 0x63));
    await flooder.closed;
    const idle = await connect(port);
    expect(hex(await rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}` }))).toBe(hex(id));
    await expect(served).resolves.toBe(id);
    await idle.closed; // would wait for ever if rank 0 left it open
    const late = await rank0(2, { timeoutMs: 300 });
    const idle2 = await connect(late.port);
    await expect(late.served).rejects.toThrow('never fetched the NCCL unique id');
    await idle2.closed;
  });

  test('a refused peer that never closes its side is closed by rank 0 and holds no place: the real rank still gets in', async () => {
    const { port, served } = await rank0(2, { secret: SECRET });
    // As many as one address may hold pending: kept, they would turn away every later connection from it.
    const forgers = await Promise.all(Array.from({ length: 64 }, () => connect(port, { allowHalfOpen: true })));
    for (const f of forgers)
      f.sock.write(wire.claim(Buffer.from('a guess at the secret, 32 bytes!'), wire.readHello(f.hello)!, 1, 2).bytes);
    for (const f of forgers) expect([...(await f.closed)]).toEqual([wire.Refusal.badSecret]);
    const t0 = Date.now();
    expect(hex(await rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}`, secret: SECRET, timeoutMs: 3000 }))).toBe(hex(id));
    expect(Date.now() - t0).toBeLessThan(1000);
    await expect(served).resolves.toBe(id);
    for (const f of forgers) f.sock.destroy();
  });

  test('one address holds at most 64 pending connections; another address still gets a place', async () => {
    const { port, served } = await rank0(2, { timeoutMs: 5000 });
    const idle = await Promise.all(Array.from({ length: 64 }, () => connect(port)));
    // The 65th from 127.0.0.1 is closed before rank 0 says anything.
    const turnedAway = net.connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    turnedAway.on('data', (d) => got.push(d));
    turnedAway.on('error', () => undefined);
    await new Promise((r) => turnedAway.on('close', r));
    expect(Buffer.concat(got).length).toBe(0);
    // 127.0.0.2 is loopback too, and another address: it is greeted and served.
    const other = await connect(port, { localAddress: '127.0.0.2' });
    const granted = await claimId(other, '', 1, 2);
    other.sock.write(wire.ack(granted.keys, granted.id, 1, 2));
    expect([...(await other.read(1))]).toEqual([...wire.RECEIPT]);
    await expect(served).resolves.toBe(id);
    for (const i of idle) await i.closed; // rank 0 closed them when it was done
  });

  /** 'pending' if `p` has not settled within `ms`. */
  const within = (p: Promise<unknown>, ms: number) =>
    Promise.race([
      p.then(
        () => 'settled',
        () => 'settled',
      ),
      new Promise((r) => setTimeout(() => r('pending'), ms)),
    ]);

  test('a rank whose connection breaks before it acknowledges the id is not counted as served: it comes back and gets it', async () => {
    const { port, served } = await rank0(2, { secret: SECRET });
    // Dies right after its claim, before the id can reach it.
    const early = await connect(port);
    early.sock.write(wire.claim(Buffer.from(SECRET), wire.readHello(early.hello)!, 1, 2).bytes, () => early.sock.resetAndDestroy());
    // Dies with the id in hand, before acknowledging it.
    const late = await connect(port);
    await claimId(late, SECRET, 1, 2);
    late.sock.resetAndDestroy();
    expect(await within(served, 300)).toBe('pending');
    // The restarted rank is not refused as "already served".
    expect(hex(await rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${port}`, secret: SECRET, timeoutMs: 3000 }))).toBe(hex(id));
    await expect(served).resolves.toBe(id);
  });

  test('while the id is on its way to one connection of a rank, another waits its turn; a wrong acknowledgement counts for nothing', async () => {
    const { port, served } = await rank0(2, { secret: SECRET });
    const master = `127.0.0.1:${port}`;
    const first = await connect(port);
    const granted = await claimId(first, SECRET, 1, 2);
    // A second claim of rank 1 now is told to ask again, not that the rank was served.
    const second = await connect(port);
    second.sock.write(wire.claim(Buffer.from(SECRET), wire.readHello(second.hello)!, 1, 2).bytes);
    expect([...(await second.closed)]).toEqual([wire.Refusal.inProgress]);
    // A real rank 1 keeps asking until the first connection ends.
    const real = rendezvous({ rank: 1, nranks: 2, master, secret: SECRET, timeoutMs: 5000 });
    expect(await within(real, 300)).toBe('pending');
    // An acknowledgement that is not of this id on this connection: dropped, no receipt, nothing served.
    first.sock.write(wire.ack(granted.keys, randomBytes(128), 1, 2));
    expect((await first.closed).length).toBe(wire.grantBytes(128));
    expect(hex(await real)).toBe(hex(id));
    await expect(served).resolves.toBe(id);
  });

  test('a rank that missed the receipt asks again and takes "already served" as its receipt; a receipt that is not one is refused', async () => {
    /** A rank 0 of this job that answers each connection with `answer` once the claim has come. */
    const fake = (answer: (sock: net.Socket, claim: wire.Claim) => void) =>
      net.createServer((sock) => {
        const h = wire.hello();
        sock.on('error', () => undefined);
        sock.write(h.bytes);
        sock.once('data', (d) => answer(sock, wire.readClaim(Buffer.from(SECRET), h.nonce, d)!));
      });
    let connections = 0;
    const missed = fake((sock, claim) => {
      if (connections++ > 0) return void sock.end(Buffer.from([wire.Refusal.alreadyServed]));
      sock.write(wire.grant(claim.keys, Buffer.from(id.getBytes()), 1, 2));
      sock.once('data', (ack) => {
        expect(wire.readAck(claim.keys, Buffer.from(id.getBytes()), 1, 2, ack)).toBe(true);
        sock.destroy(); // closed before the receipt
      });
    });
    const wrong = fake((sock, claim) => {
      sock.write(wire.grant(claim.keys, Buffer.from(id.getBytes()), 1, 2));
      sock.once('data', () => sock.end(Buffer.from([7])));
    });
    const ports = await Promise.all(
      [missed, wrong].map((s) => new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as net.AddressInfo).port)))),
    );
    try {
      expect(hex(await rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${ports[0]}`, secret: SECRET, timeoutMs: 5000 }))).toBe(hex(id));
      expect(connections).toBe(2);
      await expect(rendezvous({ rank: 1, nranks: 2, master: `127.0.0.1:${ports[1]}`, secret: SECRET, timeoutMs: 5000 })).rejects.toThrow(
        `rendezvous: rank 1 got ${wire.grantBytes(128) + 1} bytes from 127.0.0.1:${ports[1]} that are not an NCCL unique id from rank 0`,
      );
    } finally {
      missed.close();
      wrong.close();
    }
  });

  test('a huge world is not allocated up front; one larger than NCCL takes is refused', async () => {
    const t0 = Date.now();
    const { served, port } = await rank0(2 ** 24 + 2, { timeoutMs: 200 });
    await expect(served).rejects.toThrow(
      `rendezvous: rank 0 at 127.0.0.1:${port} waited 200 ms, but ranks 1, 2, 3, 4, 5, 6, 7, 8, … (16777217 in all) of 16777218 never fetched the NCCL unique id`,
    );
    expect(Date.now() - t0).toBeLessThan(3000);
    await expect(rendezvous({ rank: 0, nranks: 2 ** 31, master: '127.0.0.1:1', id })).rejects.toThrow(
      "rendezvous: parameter 'nranks' must be an integer in [1, 2147483647] (NCCL's int), got 2147483648",
    );
  });
});
