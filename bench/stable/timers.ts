// Timing loops for the Node side of the stable benchmark (node.ts) and the one-process prepared
// launch probe (prepared-gpu.ts). Each operation gets timing loops of its own, compiled from source
// per operation: one shared loop calling every operation's closure in turn sees a call site that goes
// megamorphic, and V8 re-optimises it as the operations take turns, which moved a row's figure from
// round to round (a bimodal cudaPeekAtLastError, 63 or 101 ns, in the first H100 runs). Here each
// loop only ever calls its own operation, as a user's loop does, and V8 may inline it, as C's
// compiler may not.

/** Calls that enqueue work are timed in batches of this many, the stream synchronised (untimed) between batches. */
export const BATCH = 128;

export type Op = () => unknown;
/** Times `n` calls of `f` and returns ns per call; `sync` waits for the queue between batches. */
export type Timer = (f: Op, n: number, sync: () => void) => number;

const timers = new Map<string, { loop: Timer; batch: Timer }>();

/** The timing loops of operation `op` (made on its first use): a plain loop, and synchronised batches. */
export function timersFor(op: string): { loop: Timer; batch: Timer } {
  let t = timers.get(op);
  if (!t) {
    const loop = new Function(
      'f',
      'n',
      'sync',
      `// ${op}\nconst t = process.hrtime.bigint();\nfor (let i = 0; i < n; i++) f();\nreturn Number(process.hrtime.bigint() - t) / n;`,
    ) as Timer;
    const batch = new Function(
      'f',
      'n',
      'sync',
      `// ${op}\nlet total = 0n;\nconst batches = Math.ceil(n / ${BATCH});\nfor (let b = 0; b < batches; b++) {\n  const t = process.hrtime.bigint();\n  for (let i = 0; i < ${BATCH}; i++) f();\n  total += process.hrtime.bigint() - t;\n  sync();\n}\nreturn Number(total) / (batches * ${BATCH});`,
    ) as Timer;
    timers.set(op, (t = { loop, batch }));
  }
  return t;
}
