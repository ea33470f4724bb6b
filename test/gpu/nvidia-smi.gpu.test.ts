// Field by field against nvidia-smi: `query --query-gpu=<every field nvidia-smi supports>` prints what
// `nvidia-smi --query-gpu=... --format=csv` prints, and `info --json` covers at least 95% of the fields
// nvidia-smi has a value for. Identities and counters exact; temperatures ±2 °C; power and clocks ±10%.
// One compact report of every mismatch and every uncovered field is printed, so one run is enough.
import { execFileSync } from 'node:child_process';
import { main } from '../../src/cli/main';
import { QUERY_FIELDS, formatCell, queryField, valueAt, type QueryField } from '../../src/cli/query';
import { describeGpu } from './helpers';

/**
 * The fields nvidia-smi on this machine knows (`nvidia-smi --help-query-gpu`: each first quoted name).
 * Quoted lines that are not names (`"0: Default"` under compute_mode lists its values) are left out.
 */
function smiFields(): string[] {
  const help = execFileSync('nvidia-smi', ['--help-query-gpu']).toString();
  return [...help.matchAll(/^"([^"]+)"/gm)].map((m) => m[1]).filter((n) => /^[A-Za-z][\w.]*$/.test(n));
}

/**
 * Fields the query table marks as not read (`path: null`: NVML's public header has no call for them).
 * One with a rule for another case (fabric.health.partition_assigned: 'N/A' where the GPU has no
 * fabric) is still unread where that case does not hold (an NVSwitch system's H200: nvidia-smi 'N/A').
 */
const unreadable = (f: QueryField) => f.path === null;

/** The CSV of `--query-gpu`, as header and rows of cells. */
function csv(text: string): { header: string[]; rows: string[][] } {
  const [h, ...rows] = text.trim().split('\n');
  return { header: h.split(', '), rows: rows.map((r) => r.split(', ')) };
}

/** Whether nvidia-smi has no value for a field here (`[N/A]`, `N/A`, or a reason in brackets). */
const absent = (v: string) => v === 'N/A' || /^\[.*\]$/.test(v);

/** Whether our text agrees with nvidia-smi's for a field, within the tolerance of its kind. */
function agrees(f: QueryField, smi: string, ours: string): boolean {
  if (smi === ours) return true;
  const a = parseFloat(smi);
  const b = parseFloat(ours);
  if (Number.isNaN(a) || Number.isNaN(b) || absent(smi) || absent(ours)) return false;
  const name = f.names[0];
  if (name.startsWith('temperature.')) return Math.abs(a - b) <= 2;
  if (f.unit === 'W' || f.unit === 'MHz') return Math.abs(a - b) <= Math.max(0.1 * Math.abs(a), 1);
  // Readings that move between two samples: utilization points, memory in use, time counters (ours is read later).
  if (f.unit === '%') return Math.abs(a - b) <= 10;
  if (name === 'memory.used' || name === 'memory.free') return Math.abs(a - b) <= 16;
  if (f.unit === 'us') return b >= a && b - a <= 10_000_000;
  return false;
}

/**
 * Waits (up to 15 s) until every GPU's power draw holds within 3% over three reads 300 ms apart: right
 * after the previous test file's GPU work an H200's draw moved by 10 W between two reads a second apart.
 */
async function powerSettled(): Promise<void> {
  const read = () =>
    execFileSync('nvidia-smi', ['--query-gpu=power.draw', '--format=csv,noheader,nounits']).toString().trim().split('\n').map(Number);
  const reads: number[][] = [];
  for (const end = Date.now() + 15_000; Date.now() < end;) {
    reads.push(read());
    const last = reads.slice(-3);
    if (last.length === 3 && last[0].every((_, g) => Math.max(...last.map((r) => r[g])) <= 1.03 * Math.min(...last.map((r) => r[g]))))
      return;
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function run(argv: string[]): Promise<string> {
  const out: string[] = [];
  const errs: string[] = [];
  const code = await main(argv, { log: (s) => out.push(s), err: (s) => errs.push(s) });
  if (code !== 0) throw new Error(`cuda-bindings ${argv.join(' ')} failed: ${errs.join(' ')}`);
  return out.join('\n');
}

describeGpu('nvidia-smi --query-gpu, field by field', () => {
  // Read in beforeAll: a skipped suite still runs this body to collect its tests, and has no nvidia-smi.
  let known: string[] = [];
  let ours: string[] = [];
  let unknown: string[] = [];
  const fieldOf = (n: string) => queryField(n)!;
  let smi: ReturnType<typeof csv>;
  let smiAfter: ReturnType<typeof csv>;
  let mine: ReturnType<typeof csv>;

  beforeAll(async () => {
    await powerSettled();
    known = smiFields();
    ours = known.filter((n) => queryField(n) !== undefined && n !== 'timestamp');
    unknown = known.filter((n) => queryField(n) === undefined);
    smi = csv(execFileSync('nvidia-smi', [`--query-gpu=${ours.join(',')}`, '--format=csv']).toString());
    mine = csv(await run(['query', `--query-gpu=${ours.join(',')}`, '--format=csv']));
    // nvidia-smi again after ours: a reading that moved between the two (power averaged over the last
    // second, right after the previous test's GPU work) agrees when it agrees with either read.
    smiAfter = csv(execFileSync('nvidia-smi', [`--query-gpu=${ours.join(',')}`, '--format=csv']).toString());
  }, 120_000);

  test('every field nvidia-smi knows is in the table', () => {
    if (unknown.length) console.log(`fields nvidia-smi knows that query does not: ${unknown.join(', ')}`);
    expect(unknown).toEqual([]);
    expect(QUERY_FIELDS.length).toBeGreaterThanOrEqual(known.length);
  });

  test('query prints the same header and, field by field, the same values', () => {
    expect(mine.header).toEqual(smi.header);
    expect(mine.rows.length).toBe(smi.rows.length);
    const bad: string[] = [];
    const notRead: string[] = [];
    smi.rows.forEach((row, g) =>
      row.forEach((v, i) => {
        const f = fieldOf(ours[i]);
        if (agrees(f, v, mine.rows[g][i]) || agrees(f, smiAfter.rows[g][i], mine.rows[g][i])) return;
        // A field with no public NVML call prints [N/A]; it is listed, not counted as a wrong value.
        if (unreadable(f) && mine.rows[g][i] === '[N/A]') notRead.push(`GPU${g} ${ours[i]}: nvidia-smi '${v}'`);
        else bad.push(`GPU${g} ${ours[i]}: nvidia-smi '${v}' query '${mine.rows[g][i]}'`);
      }),
    );
    console.log(
      `query vs nvidia-smi: ${bad.length} mismatches${bad.length ? `:\n${bad.join('\n')}` : ''}\n` +
        `values nvidia-smi has that NVML's public header gives no call for: ${notRead.length}${notRead.length ? `:\n${notRead.join('\n')}` : ''}`,
    );
    expect(bad).toEqual([]);
  });

  test('info --json covers at least 95% of the fields nvidia-smi has a value for, each agreeing', async () => {
    const info = JSON.parse(await run(['info', '--json']));
    // A second sample right after: a reading that moves (power, clocks, utilization) agrees with either.
    const after = csv(execFileSync('nvidia-smi', [`--query-gpu=${ours.join(',')}`, '--format=csv']).toString());
    const uuidAt = ours.indexOf('uuid');
    const report: string[] = [];
    let supported = 0;
    let covered = 0;
    for (const [g, row] of smi.rows.entries()) {
      const dev = info.devices.find((d: { uuid: string }) => d.uuid === row[uuidAt]);
      expect(dev?.live).toBeTruthy();
      const live = { ...dev.live, $count: info.deviceCount };
      row.forEach((v, i) => {
        if (absent(v)) return;
        supported++;
        const f = fieldOf(ours[i]);
        const value = f.path === null ? undefined : valueAt(live, f.path);
        const text = formatCell(f, live);
        if (value === null || value === undefined) report.push(`${dev.uuid} ${ours[i]}: not in info --json (nvidia-smi '${v}')`);
        else if (!agrees(f, v, text) && !agrees(f, after.rows[g][i], text))
          report.push(`${dev.uuid} ${ours[i]}: info --json ${f.path}=${JSON.stringify(value)} ('${text}'), nvidia-smi '${v}'`);
        else covered++;
      });
    }
    const share = covered / supported;
    console.log(
      `info --json coverage: ${covered} of ${supported} values nvidia-smi reports (${(100 * share).toFixed(1)}%)\n${report.join('\n')}`,
    );
    expect(share).toBeGreaterThanOrEqual(0.95);
  });
});
