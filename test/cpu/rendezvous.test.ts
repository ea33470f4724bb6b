// The TCP rendezvous of the NCCL unique id, with 4 processes over loopback.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import * as path from 'node:path';
import { rendezvous, rendezvousFromEnv, parseMaster } from '../../src/core/rendezvous';
import { uniqueIdFromBuffer } from '../../src/nccl/helpers';

const root = path.join(__dirname, '..', '..');
const script = path.join(__dirname, 'helpers', 'rendezvous-rank.ts');

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

test("4 processes over loopback: every rank gets rank 0's id intact", async () => {
  const id = randomBytes(128).toString('base64');
  const port = await freePort();
  // Rank 0 starts last: the others retry until it listens.
  const late = runRanks([1, 2, 3], 4, port, id, 60_000);
  await new Promise((r) => setTimeout(r, 300));
  const results = [...(await runRanks([0], 4, port, id, 60_000)), ...(await late)];
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
