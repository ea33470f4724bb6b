// The service benchmark's client (bench/service.ts starts it in a process of its own): `concurrency`
// kept-alive connections, each sending one request after another for `seconds` (every 50th for an
// impossible size), each answer checked; prints one JSON line, a Row of bench/service-stats.ts.
//   node --import tsx bench/service-load.ts <base url> <concurrency> <seconds> <name>
import * as http from 'node:http';
import { N, requestFor, send } from '../examples/lib/saxpy';
import { spread, type Row } from './service-stats';

async function main(): Promise<void> {
  const [url, c, s, name] = process.argv.slice(2);
  const base = new URL(url);
  const concurrency = Number(c);
  const seconds = Number(s);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  const row: Row = { name, concurrency, requests: 0, seconds, latencyMs: spread([]), wrong: 0, bad400: 0, badSent: 0, unexpected: 0 };
  let seq = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const client = async () => {
    while (performance.now() < end) {
      const r = requestFor(seq++);
      const bad = r.n !== N;
      if (bad) row.badSent++;
      try {
        const o = await send(agent, base, r);
        latencies.push(o.ms);
        row.wrong += o.wrong;
        if (bad && o.status === 400) row.bad400++;
        else if (o.status !== (bad ? 400 : 200)) row.unexpected++;
      } catch {
        row.unexpected++;
      }
      row.requests++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  row.seconds = (performance.now() - start) / 1000;
  row.latencyMs = spread(latencies);
  agent.destroy();
  console.log(JSON.stringify(row));
}

main().catch((e) => {
  console.error(`service-load: ${(e as Error).message}`);
  process.exitCode = 1;
});
