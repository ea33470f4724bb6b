// NCCL all-reduce bus bandwidth across the GPUs of this machine, one process per GPU, 8 B to 1 GiB,
// computed as nccl-tests' all_reduce_perf computes it, beside the same sizes through PyTorch's
// torch.distributed (NCCL backend, bench/nccl_torch.py) on the same machine (issue #19).
//   npx tsx bench/nccl-busbw.ts [--min 8] [--max 1073741824] [--python /opt/torch/.venv/bin/python] [--no-torch] [--out f.json]
//   npx tsx bench/nccl-busbw.ts --rank R --nranks N   (one rank; forked by the above, the id in the environment)
// Per size: every rank fills its buffer with the byte r + 1, one out-of-place u8 all-reduce is checked
// byte by byte on every rank (each must be n(n+1)/2), then f32 all-reduces are timed: 5 warm-up calls,
// then `iters` calls (as many as fill ~0.1 s, 20 to 2000, agreed by rank 0's estimate) and one
// stream sync, three times; the median loop's time per call gives algbw = bytes / time and busbw =
// algbw * 2 (n - 1) / n. In place (recv = send, as torch.distributed's all_reduce) and out of place.
// NCCL_NVLS_ENABLE=0 in every process (NVLink multicast stays off on the lent machines).
import { fork, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { core, nccl } from '../src';
import { bytesText } from '../src/cli/common';

process.env.NCCL_NVLS_ENABLE = '0';
const ID_ENV = 'NCCL_BUSBW_UNIQUE_ID';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const MIN = Number(arg('min') ?? 8);
const MAX = Number(arg('max') ?? 1 << 30);

/** One size's figures (time in µs per call, bandwidths in GB/s). */
interface Row {
  bytes: number;
  iters: number;
  inPlaceUs: number;
  inPlaceAlgbw: number;
  inPlaceBusbw: number;
  outOfPlaceUs: number;
  outOfPlaceBusbw: number;
  wrong: number;
}

/** The sizes of the sweep: MIN, doubling, to MAX. */
function sizes(): number[] {
  const out: number[] = [];
  for (let b = MIN; b <= MAX; b *= 2) out.push(b);
  return out;
}

/** One rank: the whole sweep; rank 0 prints one JSON line per size. */
async function rank(r: number, n: number): Promise<number> {
  const dev = core.Device.get(r % core.Device.count()).makeCurrent();
  const id = process.env[ID_ENV]!;
  const comm = core.Communicator.init({ rank: r, nranks: n, id, device: dev });
  const stream = dev.createStream({ nonBlocking: true });
  const send = dev.allocate(MAX);
  const recv = dev.allocate(MAX);
  // Every rank runs the same number of calls: rank 0's estimate is all-reduced (max) in this buffer.
  const agree = dev.allocate(4);
  const agreeHost = new Int32Array(1);
  const busFactor = (2 * (n - 1)) / n;
  let wrong = 0;
  try {
    for (const bytes of sizes()) {
      const s = send.slice(0, bytes);
      const d = recv.slice(0, bytes);
      s.fill(r + 1, { stream });
      d.fill(0, { stream });
      comm.allReduce(s, d, 'u8', { stream });
      await stream.synchronize();
      const got = d.copyTo(new Uint8Array(bytes));
      const want = (n * (n + 1)) / 2;
      let bad = 0;
      for (let i = 0; i < bytes; i++) if (got[i] !== want) bad++;
      wrong += bad;
      /** The median of three timed loops of `iters` calls, in µs per call. */
      const time = async (recvBuf: core.DeviceBuffer, iters: number): Promise<number> => {
        const loops: number[] = [];
        for (let k = 0; k < 3; k++) {
          const t0 = performance.now();
          for (let i = 0; i < iters; i++) comm.allReduce(s, recvBuf, 'f32', { stream });
          await stream.synchronize();
          loops.push(((performance.now() - t0) * 1000) / iters);
        }
        return loops.sort((a, b) => a - b)[1];
      };
      for (let i = 0; i < 5; i++) comm.allReduce(s, s, 'f32', { stream });
      await stream.synchronize();
      const t0 = performance.now();
      for (let i = 0; i < 5; i++) comm.allReduce(s, s, 'f32', { stream });
      await stream.synchronize();
      const estimate = (performance.now() - t0) / 5; // ms per call
      agreeHost[0] = Math.min(2000, Math.max(20, Math.round(100 / Math.max(estimate, 1e-6))));
      agree.copyFrom(agreeHost);
      comm.allReduce(agree, agree, 'i32', { op: 'max', stream });
      await stream.synchronize();
      const iters = agree.copyTo(new Int32Array(1))[0];
      const inPlaceUs = await time(s, iters);
      const outOfPlaceUs = await time(d, iters);
      const algbw = bytes / (inPlaceUs * 1e3);
      const row: Row = {
        bytes,
        iters,
        inPlaceUs,
        inPlaceAlgbw: algbw,
        inPlaceBusbw: algbw * busFactor,
        outOfPlaceUs,
        outOfPlaceBusbw: (bytes / (outOfPlaceUs * 1e3)) * busFactor,
        wrong: bad,
      };
      if (r === 0) console.log(JSON.stringify(row));
      else if (bad) console.error(`rank ${r}: ${bad} of ${bytes} bytes wrong at ${bytes} B`);
      s.close();
      d.close();
    }
  } finally {
    [send, recv, agree].forEach((b) => b.close());
    stream.close();
    comm.close();
  }
  return wrong === 0 ? 0 : 1;
}

/** Runs one process per GPU; resolves with rank 0's rows. */
async function ours(): Promise<Row[]> {
  const n = core.Device.count();
  if (n < 2) throw new Error(`nccl-busbw: ${n} GPU on this machine; the bus bandwidth needs two or more`);
  const env = { ...process.env, NCCL_NVLS_ENABLE: '0', [ID_ENV]: nccl.uniqueIdToBase64(core.Communicator.uniqueId()) };
  const rows: Row[] = [];
  const codes = await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<number>((resolve) => {
          const child = fork(__filename, ['--rank', String(i), '--nranks', String(n), '--min', String(MIN), '--max', String(MAX)], {
            env,
            stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
          });
          let out = '';
          child.stdout!.on('data', (c) => (out += c));
          child.on('exit', (code, signal) => {
            if (i === 0) for (const l of out.split('\n')) if (l.startsWith('{')) rows.push(JSON.parse(l) as Row);
            resolve(code ?? (signal ? 128 : 1));
          });
        }),
    ),
  );
  if (codes.some((c) => c !== 0)) throw new Error(`nccl-busbw: ranks exited with ${codes.join(', ')}`);
  return rows;
}

/** PyTorch's rows from bench/nccl_torch.py (same sizes, same method), or null with the reason. */
function torch(python: string, n: number): { rows: Row[] | null; why: string; version: string } {
  const r = spawnSync(python, [path.join(__dirname, 'nccl_torch.py'), String(MIN), String(MAX), String(n)], {
    encoding: 'utf8',
    env: { ...process.env, NCCL_NVLS_ENABLE: '0' },
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0)
    return { rows: null, why: `${python} bench/nccl_torch.py failed (${r.status}): ${r.stderr.slice(-2000)}`, version: '' };
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('{'));
  const meta = JSON.parse(lines.find((l) => l.includes('"torch"')) ?? '{}') as { torch?: string; nccl?: string };
  return {
    rows: lines.filter((l) => l.includes('"bytes"')).map((l) => JSON.parse(l) as Row),
    why: '',
    version: `torch ${meta.torch}, NCCL ${meta.nccl}`,
  };
}

async function main(): Promise<number> {
  const r = arg('rank');
  if (r !== undefined) return rank(Number(r), Number(arg('nranks')));
  const n = core.Device.count();
  // NCCL's version code (22803 for 2.28.3) as text.
  const v = nccl.libraryInfo().version;
  const version = `${Math.floor(v / 10000)}.${Math.floor(v / 100) % 100}.${v % 100}`;
  const rows = await ours();
  const t = process.argv.includes('--no-torch')
    ? { rows: null, why: 'not asked (--no-torch)', version: '' }
    : torch(arg('python') ?? process.env.PYTHON ?? '/opt/torch/.venv/bin/python', n);
  const tr = new Map((t.rows ?? []).map((x) => [x.bytes, x]));
  console.log(
    `\n${n} GPUs (${core.Device.get(0).name}), one process each; cuda-bindings with NCCL ${version}${t.rows ? `; PyTorch: ${t.version}` : `; PyTorch: ${t.why}`}\n`,
  );
  console.log(
    '| size | iters | ours in place µs | ours busbw GB/s (in place) | ours busbw (out of place) | PyTorch µs | PyTorch busbw GB/s | ours ÷ PyTorch busbw | wrong |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const x of rows) {
    const p = tr.get(x.bytes);
    console.log(
      `| ${bytesText(x.bytes)} | ${x.iters} | ${x.inPlaceUs.toFixed(2)} | ${x.inPlaceBusbw.toFixed(2)} | ${x.outOfPlaceBusbw.toFixed(2)} | ${p ? p.inPlaceUs.toFixed(2) : '–'} | ${p ? p.inPlaceBusbw.toFixed(2) : '–'} | ${p ? (x.inPlaceBusbw / p.inPlaceBusbw).toFixed(3) : '–'} | ${x.wrong}${p ? ` / ${p.wrong}` : ''} |`,
    );
  }
  const big = rows.filter((x) => x.bytes >= 256 << 20 && tr.has(x.bytes));
  const within = big.every((x) => x.inPlaceBusbw >= 0.95 * tr.get(x.bytes)!.inPlaceBusbw);
  if (big.length) console.log(`\n256 MiB and above: ours within 5% of PyTorch's busbw (or faster) at every size: ${within ? 'yes' : 'NO'}`);
  const out = arg('out');
  if (out)
    fs.writeFileSync(out, JSON.stringify({ gpus: n, nccl: version, torch: t.version || t.why, ours: rows, pytorch: t.rows }, null, 1));
  return rows.every((x) => x.wrong === 0) && (t.rows ?? []).every((x) => x.wrong === 0) ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    console.error(`nccl-busbw: ${(e as Error).message}`);
    process.exitCode = 1;
  },
);
