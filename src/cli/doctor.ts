// `cuda-bindings doctor`: core's diagnose() as a check list, or its report as JSON. The exit status
// is 0 when CUDA works and 1 when it cannot; the last line says why.
import { diagnose, type DoctorCheck, type DoctorReport } from '../core/doctor/diagnose';
import type { Options } from './args';
import { printable, type Output } from './common';

const MARK: Record<DoctorCheck['status'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' };

/** The check list as lines: `ok    title: why`, and `      → todo` under each item that has something to do. */
export function doctorLines(report: DoctorReport): string[] {
  const lines: string[] = [];
  for (const c of report.checks) {
    lines.push(`${MARK[c.status]}  ${printable(c.title)}: ${printable(c.why)}`);
    if (c.todo) lines.push(`      → ${printable(c.todo)}`);
  }
  return lines;
}

/** Runs `cuda-bindings doctor`; returns the exit status (0 when CUDA works). */
export function doctor(o: Options, out: Output): number {
  const report = diagnose({ launch: o.launch !== false, ...(o.devDir === undefined ? {} : { devDir: o.devDir }) });
  if (o.json) out.log(JSON.stringify(report, null, 2));
  else {
    for (const l of doctorLines(report)) out.log(l);
    if (report.works) out.log(printable(report.reason));
  }
  // A failure's reason goes where the CLI's failures go, as its last line: stderr.
  if (!report.works) out.err(`cuda-bindings doctor: ${printable(report.reason)}`);
  return report.works ? 0 : 1;
}
