// What the host knows of a process that uses a GPU, from /proc (Linux): its user, command line,
// resident memory and CPU time, as gpustat and nvitop show beside its GPU memory. A process of
// another PID namespace (the exporter in a container, the process outside it) is not in our /proc:
// each value is then null.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A process as /proc describes it; null where it cannot be read. */
export interface HostProcess {
  /** The user the process runs as (its real uid's name, or the uid where /etc/passwd lacks it). */
  user: string | null;
  /** The command line, arguments joined by spaces, at most COMMAND_MAX characters. */
  command: string | null;
  /** Resident memory, bytes (VmRSS). */
  rssBytes: number | null;
  /** User and system CPU time, seconds. */
  cpuSeconds: number | null;
}

/** Longer command lines are cut there (an ellipsis ends them): a label value is not the place for a whole script. */
export const COMMAND_MAX = 200;
/** Clock ticks a second in /proc/<pid>/stat (USER_HZ: 100 on every Linux architecture Node runs on). */
const TICKS = 100;

/** Control characters (C0, DEL, C1) as `\xNN`: a label value may reach a terminal or a dashboard. */
export function escapeControls(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

let users: { mtimeMs: number; byUid: Map<number, string> } | undefined;

/** The name of `uid` from `passwd` (re-read when the file changes), or the uid as text. */
function userName(uid: number, passwd: string): string {
  try {
    const st = fs.statSync(passwd);
    if (!users || users.mtimeMs !== st.mtimeMs) {
      const byUid = new Map<number, string>();
      for (const line of fs.readFileSync(passwd, 'utf8').split('\n')) {
        const f = line.split(':');
        if (f.length >= 3 && /^\d+$/.test(f[2]) && !byUid.has(Number(f[2]))) byUid.set(Number(f[2]), f[0]);
      }
      users = { mtimeMs: st.mtimeMs, byUid };
    }
    return users.byUid.get(uid) ?? String(uid);
  } catch {
    return String(uid);
  }
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch {
    return null;
  }
}

/**
 * What /proc says of process `pid` (each part null where it cannot be read). The user and command come
 * with their control characters escaped (for a label value); `escape: false` gives them as they are.
 */
export function hostProcess(pid: number, proc = '/proc', passwd = '/etc/passwd', escape = true): HostProcess {
  const esc = escape ? escapeControls : (s: string) => s;
  const dir = path.join(proc, String(pid));
  const out: HostProcess = { user: null, command: null, rssBytes: null, cpuSeconds: null };
  const status = readText(path.join(dir, 'status'));
  if (status !== null) {
    const uid = /^Uid:\s+(\d+)/m.exec(status);
    if (uid) out.user = esc(userName(Number(uid[1]), passwd));
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (rss) out.rssBytes = Number(rss[1]) * 1024;
  }
  try {
    const raw = fs.readFileSync(path.join(dir, 'cmdline')).toString('utf8');
    const words = raw.split('\0').filter((w, i, all) => w !== '' || i < all.length - 1);
    const text = esc(words.join(' ').trim());
    if (text) out.command = text.length > COMMAND_MAX ? `${text.slice(0, COMMAND_MAX - 1)}…` : text;
  } catch {
    /* gone, or not ours to read */
  }
  const stat = readText(path.join(dir, 'stat'));
  if (stat !== null) {
    // The name in parentheses may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 3 (state) is fields[0]: utime and stime, fields 14 and 15, are fields[11] and fields[12].
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (Number.isFinite(utime) && Number.isFinite(stime)) out.cpuSeconds = (utime + stime) / TICKS;
  }
  return out;
}
