// Calls every bound function of an API once per parameter and bad value, the other arguments
// well typed, and prints one JSON line per call: what it threw (class and message) or that it
// returned. A parent process checks the outcomes and sees any crash.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as root from '../../../src';
import { ncclSpec } from '../../../src/ffi/nccl-lib.gen';
import { LIBRARIES } from '../../../tools/codegen/libraries';
import { namespaceOf } from '../../../tools/codegen/emit-library';
import { sample, type Param } from './samples';

const api = process.argv[2] ?? 'runtime';
const ns: Record<string, any> = (root as Record<string, any>)[namespaceOf(LIBRARIES.find((l) => l.api.id === api)!)];
// NCCL is never opened here, even where it is installed: what passes validation meets a
// LibraryLoadError, as the runtime's calls meet the absent driver.
if (api === 'nccl')
  Object.assign(ncclSpec, { envVar: 'CUDA_BINDINGS_NCCL_FUZZ_NONE', linuxNames: ['libnccl-fuzz-none.so.2'], wheelDirs: undefined });
const sigs: { name: string; params: (Param & { extent?: { bytes?: string; query?: { fn: string; args: string[] }; unit: number } })[] }[] =
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', `${api}-signatures.json`), 'utf8'));

/** The bad values, by name. */
export const BAD: Record<string, () => unknown> = {
  string: () => 'oops',
  object: () => ({ not: 'a valid value' }),
  array: () => [1, 2, 3],
  undefined: () => undefined,
  NaN: () => NaN,
  Infinity: () => Infinity,
  minusOne: () => -1,
  bigint2p64: () => 2n ** 64n,
  fraction: () => 1.5,
  wrongHandle: () => root.cudart.cudaEvent_t(0x1000),
  shortBuffer: () => Buffer.alloc(1),
};

const mode = process.argv[3] ?? 'values';
if (mode === 'extents') fuzzExtents();
else if (mode === 'transfers') fuzzTransfers();
else fuzzValues();

function fuzzValues(): void {
  for (const sig of sigs) {
    const good = sig.params.map((p) => sample(ns, sig.name, p));
    // Some calls refuse even the plain samples (a NULL kernel where C would crash): their bad-value
    // rows are marked, since the first refusal met need not be the parameter's.
    let baseRefused = false;
    try {
      ns[sig.name](...good);
    } catch (e) {
      baseRefused = e instanceof RangeError;
    }
    sig.params.forEach((p, i) => {
      for (const [kind, make] of Object.entries(BAD)) {
        const args = good.slice();
        args[i] = make();
        let outcome: Record<string, unknown>;
        try {
          const r = ns[sig.name](...args);
          outcome = { returned: Array.isArray(r) ? 'tuple' : typeof r };
        } catch (e) {
          const err = e as Error;
          outcome = {
            threw: err.name === 'LibraryLoadError' ? 'LibraryLoadError' : err.constructor.name,
            message: err.name === 'LibraryLoadError' ? '' : err.message,
          };
        }
        process.stdout.write(JSON.stringify({ fn: sig.name, param: p.name, c: p.c, ts: p.ts, kind, baseRefused, ...outcome }) + '\n');
      }
    });
  }
}

/** What a call did: returned, failed to load the library, or threw (class and message). */
function outcome(call: () => unknown): Record<string, unknown> {
  try {
    const r = call();
    return { returned: Array.isArray(r) ? 'tuple' : typeof r };
  } catch (e) {
    const err = e as Error;
    return err.name === 'LibraryLoadError' ? { threw: 'LibraryLoadError' } : { threw: err.constructor.name, message: err.message };
  }
}

/**
 * For every caller's buffer the facade checks against an extent (the `extent` of the signatures):
 * the call with every count and size 3, every other array long enough, and this buffer one element
 * short of what C reads or writes ('short'), then exactly as long ('exact').
 */
function fuzzExtents(): void {
  const M = require('../../../src/ffi/marshal');
  const X = require('../../../src/ffi/struct-support');
  for (const sig of sigs) {
    sig.params.forEach((p, i) => {
      if (!p.extent) return;
      const args = sig.params.map((q) => {
        if (q.ts === 'number' || q.ts === 'number | bigint' || /^E\.\w+$/.test(q.ts)) return 3;
        if (q.ts.includes('string[]')) return Array(16).fill('x');
        if (q.ts.includes('ArrayBufferView')) return new Uint8Array(4096);
        return sample(ns, sig.name, q);
      });
      const names = sig.params.map((q) => q.name);
      let need: number;
      const ext = p.extent;
      if (ext.query) {
        const [st, n] = ns[ext.query.fn](...ext.query.args.map((a) => args[names.indexOf(a)]));
        if (st !== 0) throw new Error(`${ext.query.fn} failed with ${st}`);
        need = n * ext.unit;
      } else {
        need = new Function('M', 'X', ...names, `return ${ext.bytes};`)(M, X, ...args);
      }
      const row = { fn: sig.name, param: p.name, need, unit: ext.unit };
      if (need < ext.unit) {
        process.stdout.write(JSON.stringify({ ...row, kind: 'skipped' }) + '\n');
        return;
      }
      for (const [kind, n] of [
        ['short', need - ext.unit],
        ['exact', need],
      ] as const) {
        const a = args.slice();
        a[i] = new Uint8Array(n);
        process.stdout.write(JSON.stringify({ ...row, kind, ...outcome(() => ns[sig.name](...a)) }) + '\n');
      }
    });
  }
}

/**
 * Every struct class: its buffer transferred as a user could (getBytes().buffer), then the struct,
 * a new one, and a call still work. Every struct parameter: each pointer field set to host memory
 * that is then transferred away; the call must refuse it, naming the field.
 */
function fuzzTransfers(): void {
  const classes = Object.entries(ns).filter(([, v]) => typeof v === 'function' && (v as { layout?: unknown }).layout);
  for (const [name, cls] of classes) {
    const s = new (cls as new () => any)();
    const ab = s.getBytes().buffer;
    try {
      structuredClone(ab, { transfer: [ab] });
    } catch {
      // refused: as good as a copy
    }
    const after = outcome(() => [
      s.getBytes().byteLength,
      new (cls as new () => any)().getBytes().byteLength,
      new ns[name]().toJSON() && 0,
    ]);
    process.stdout.write(
      JSON.stringify({
        kind: 'slab',
        cls: name,
        size: (cls as any).layout.size,
        detached: ab.byteLength === 0,
        ...after,
        lengths: [s.getBytes().byteLength],
      }) + '\n',
    );
  }
  for (const sig of sigs) {
    const good = sig.params.map((p) => sample(ns, sig.name, p));
    sig.params.forEach((p, i) => {
      const m = /^S\.(\w+) \| S\.\w+Init( \| null)?$/.exec(p.ts);
      if (!m) return;
      const s = new ns[m[1]]();
      const held: Uint8Array[] = [];
      for (const f of Object.keys(ns[m[1]].layout.fields)) {
        const mem = new Uint8Array(8);
        try {
          s[f] = mem;
          if (s._host?.some((h: { mem: unknown }) => h.mem === mem)) held.push(mem);
        } catch {
          // not a pointer field
        }
      }
      if (!held.length) return;
      for (const mem of held) structuredClone(mem.buffer, { transfer: [mem.buffer as ArrayBuffer] });
      const args = good.slice();
      args[i] = s;
      process.stdout.write(
        JSON.stringify({
          kind: 'field',
          fn: sig.name,
          param: p.name,
          cls: m[1],
          fields: held.length,
          ...outcome(() => ns[sig.name](...args)),
        }) + '\n',
      );
    });
  }
}
