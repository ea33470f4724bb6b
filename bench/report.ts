// Merges `impl,operation,value` CSV lines from the given files into one table (ns per call, or GB/s
// for the bandwidth rows) with each implementation's ratio to C, and writes bench/results.json.
import * as fs from 'node:fs';
import * as path from 'node:path';

const rows = new Map<string, Map<string, number>>();
const notes: string[] = [];
for (const f of process.argv.slice(2)) {
  for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
    if (line.startsWith('#')) notes.push(line);
    const m = /^([\w-]+),([^,]+),([\d.]+)$/.exec(line.trim());
    if (!m) continue;
    const op = m[2].trim();
    if (!rows.has(op)) rows.set(op, new Map());
    rows.get(op)!.set(m[1], Number(m[3]));
  }
}
const impls = ['c', 'facade', 'core', 'koffi-same-process', 'koffi-raw', 'cuda-python', 'cupy'];
const gbps = (op: string) => op.endsWith('GBps');
const cell = (op: string, impl: string) => {
  const v = rows.get(op)!.get(impl);
  const c = rows.get(op)!.get('c');
  if (v === undefined) return '';
  const ratio = c ? (gbps(op) ? v / c : v / c) : undefined;
  return `${gbps(op) ? v.toFixed(2) : Math.round(v)}${ratio ? ` (${ratio.toFixed(2)}×)` : ''}`;
};
console.log(`| operation | ${impls.join(' | ')} |`);
console.log(`|---|${impls.map(() => '---:').join('|')}|`);
const unit = (op: string) => (gbps(op) ? ' (GB/s)' : op.endsWith('_percent') ? ' (% of one core)' : ' (ns)');
for (const op of rows.keys()) console.log(`| ${op}${unit(op)} | ${impls.map((i) => cell(op, i)).join(' | ')} |`);
for (const n of notes) console.log(n);
const json = Object.fromEntries([...rows].map(([op, m]) => [op, Object.fromEntries(m)]));
fs.writeFileSync(
  path.resolve('bench', 'results.json'),
  JSON.stringify({ unit: 'ns per call, or GB/s for *_GBps', ratioTo: 'c', results: json }, null, 2) + '\n',
);
