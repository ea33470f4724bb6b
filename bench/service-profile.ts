// What the JS thread did in its long stretches of work, from a `--cpu-prof` profile (bench/service-cpu.ts
// reads the service's): a stretch is a run of samples with no idle one between (the event loop did not
// wait for I/O or a timer), so a stretch longer than a few milliseconds is what the event-loop delay
// measures. Each sample is put in one bucket by its innermost frame that says where the time went.
// No I/O here, so the CPU tests check it.

/** The part of a V8 `.cpuprofile` read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  /** Microseconds from each sample to the one before. */
  timeDeltas: number[];
}

/** Long stretches of work of a profile: how many, their time, and where it went (ms by bucket). */
export interface LongStretches {
  count: number;
  totalMs: number;
  maxMs: number;
  /** Milliseconds of the long stretches by bucket (gc, package, http, …). */
  byBucket: Record<string, number>;
  /** The functions with the most time in the long stretches: [name (file), ms]. */
  topFunctions: [string, number][];
  /** Busy time of the whole profile (ms), and of its stretches of any length. */
  busyMs: number;
}

/** The bucket of a frame: where a sample's time went, or null to look at its caller. */
function bucketOf(functionName: string, url: string): string | null {
  if (functionName === '(garbage collector)') return 'gc';
  // Native code is named by the nearest exported symbol: a CUDA function (on a fake GPU, its own
  // static helpers show under one) or a binding of Node's (writev, …).
  if (url === '' && /^cu[A-Z]|^cuda/.test(functionName)) return 'CUDA library (native)';
  if (/\/src\/(core|ffi|runtime)\//.test(url) || /\/koffi\//.test(url)) return 'package (cuda-bindings, koffi)';
  if (/examples\//.test(url)) return 'service code (examples/)';
  if (/_http_|node:http/.test(url)) return 'node:http';
  if (/node:net|node:internal\/stream|node:stream|_stream_/.test(url)) return 'net and streams';
  if (/node:internal\/(timers|process\/task_queues)/.test(url)) return null;
  if (url.startsWith('node:')) return 'other node internals';
  if (url === '' && functionName === '(program)') return 'program (V8, native)';
  if (url === '' && !functionName.startsWith('(')) return 'native code of node';
  return null;
}

/** The stretches of `profile` longer than `minMs`, and where their time went. */
export function longStretches(profile: CpuProfile, minMs: number): LongStretches {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sampleBucket = new Map<number, string>();
  const bucket = (id: number): string => {
    const known = sampleBucket.get(id);
    if (known) return known;
    let b: string | null = null;
    for (let at: number | undefined = id; at !== undefined && b === null; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      b = bucketOf(f.functionName, f.url);
    }
    sampleBucket.set(id, b ?? 'other JavaScript');
    return b ?? 'other JavaScript';
  };
  const out: LongStretches = { count: 0, totalMs: 0, maxMs: 0, byBucket: {}, topFunctions: [], busyMs: 0 };
  const functions = new Map<string, number>();
  let stretch: [number, number][] = []; // [node id, ms]
  const close = () => {
    const ms = stretch.reduce((t, [, d]) => t + d, 0);
    if (ms > minMs) {
      out.count++;
      out.totalMs += ms;
      out.maxMs = Math.max(out.maxMs, ms);
      for (const [id, d] of stretch) {
        const b = bucket(id);
        out.byBucket[b] = (out.byBucket[b] ?? 0) + d;
        const f = byId.get(id)!.callFrame;
        const name = `${f.functionName || '(anonymous)'} (${f.url.split('/').slice(-2).join('/')})`;
        functions.set(name, (functions.get(name) ?? 0) + d);
      }
    }
    stretch = [];
  };
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    // A sample's delta is the time since the one before: the time of the one before, roughly.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (byId.get(id)!.callFrame.functionName === '(idle)') close();
    else {
      stretch.push([id, ms]);
      out.busyMs += ms;
    }
  }
  close();
  out.topFunctions = [...functions].sort((a, b) => b[1] - a[1]).slice(0, 12);
  return out;
}
