// The Prometheus text format (and OpenMetrics), read back for the exporter's tests: each family's
// HELP and TYPE, and each sample's name, labels and value.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One sample line. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A page: the families' HELP and TYPE by name, and every sample; `bad` holds lines that are neither. */
export interface Page {
  help: Map<string, string>;
  type: Map<string, string>;
  samples: Sample[];
  bad: string[];
}

const unescape = (s: string) => s.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** Reads a page of the text format or of OpenMetrics (its `# EOF` accepted). */
export function parseExposition(text: string): Page {
  const page: Page = { help: new Map(), type: new Map(), samples: [], bad: [] };
  for (const line of text.split('\n')) {
    if (line === '' || line === '# EOF') continue;
    const meta = /^# (HELP|TYPE) (\w+) (.*)$/.exec(line);
    if (meta) {
      (meta[1] === 'HELP' ? page.help : page.type).set(meta[2], meta[1] === 'HELP' ? unescape(meta[3]) : meta[3]);
      continue;
    }
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) {
      page.bad.push(line);
      continue;
    }
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    const re = /(\w+)="((?:[^"\\]|\\.)*)"(,|$)/gy;
    let consumed = 0;
    for (let l = re.exec(body); l; l = re.exec(body)) {
      labels[l[1]] = unescape(l[2]);
      consumed = re.lastIndex;
    }
    const value = Number(m[3]);
    if (consumed !== body.length || Number.isNaN(value)) page.bad.push(line);
    else page.samples.push({ name: m[1], labels, value });
  }
  return page;
}

/** The samples of `name` whose labels include `match`. */
export function samplesOf(page: Page, name: string, match: Record<string, string> = {}): Sample[] {
  return page.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** dcgm-exporter's default counters, with the source they were taken from (test/cpu/fixtures). */
export interface CounterFixture {
  source: Record<string, string>;
  gpuLabels: string[];
  counters: { name: string; type: string; help: string; unit: string; nvml: string; extraLabels?: string[] }[];
  commentedOutServed: { name: string; type: string; help: string; unit: string; nvml: string }[];
}

export function dcgmFixture(): CounterFixture {
  return JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'dcgm-exporter-counters.json'), 'utf8'));
}

/** Whether `command` runs here (on PATH). */
export function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, command)));
}
