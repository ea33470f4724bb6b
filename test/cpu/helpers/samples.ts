// Well-typed sample arguments for a bound function, from its generated signature.
import * as os from 'node:os';
import * as path from 'node:path';

export interface Param {
  name: string;
  ts: string;
  c: string;
}

const tmp = path.join(os.tmpdir(), `cuda-bindings-samples-${process.pid}`);

/** A well-typed value for parameter `p` of `fn` (ns: the API namespace, for struct classes). */
export function sample(ns: Record<string, any>, fn: string, p: Param): unknown {
  const ts = p.ts;
  // A struct even where NULL is allowed: some calls refuse NULL before looking at anything else.
  const s = /^S\.(\w+) \| S\.\w+Init( \| null)?$/.exec(ts);
  if (s) return new ns[s[1]]();
  // Output lengths must be at least 1.
  if (ts === 'number' && (/^len$/.test(p.name) || (fn.startsWith('nvml') && /^(length|size)$/.test(p.name)))) return 32;
  if (ts.endsWith('[] | null') || ts.endsWith('[] | ArrayBufferView | null')) return null;
  if (ts.endsWith('[]') || ts.endsWith('[] | ArrayBufferView')) return [];
  if (ts.startsWith('KernelArgs')) return [];
  if (ts === 'string') return /path|file/i.test(p.name) ? path.join(tmp, `${fn}.out`) : 'x';
  if (ts === 'number' || /^E\.\w+$/.test(ts)) return 0;
  if (ts === 'Pointer' || ts === 'Memory' || ts.endsWith('| null')) return null;
  if (ts === 'bigint | number' || ts === 'DevicePointer | number') return 0n;
  if (ts === 'number | bigint') return 0;
  throw new Error(`no sample for ${fn}(${p.name}: ${ts})`);
}
