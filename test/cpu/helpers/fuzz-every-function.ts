// Calls every bound function of an API once per parameter and bad value, the other arguments
// well typed, and prints one JSON line per call: what it threw (class and message) or that it
// returned. A parent process checks the outcomes and sees any crash.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cudart, cuda, nvrtc, nvjitlink, nvfatbin, nvvm, nccl, nvml } from '../../../src';
import { ncclSpec } from '../../../src/ffi/nccl-lib';
import { sample, type Param } from './samples';

const api = process.argv[2] ?? 'runtime';
const ns: Record<string, any> = ({ driver: cuda, nvrtc, nvjitlink, nvfatbin, nvvm, nccl, nvml } as Record<string, unknown>)[api] as Record<string, any> ?? cudart;
// NCCL is never opened here, even where it is installed: what passes validation meets a
// LibraryLoadError, as the runtime's calls meet the absent driver.
if (api === 'nccl') Object.assign(ncclSpec, { envVar: 'CUDA_BINDINGS_NCCL_FUZZ_NONE', linuxNames: ['libnccl-fuzz-none.so.2'], extraDirs: () => [] });
const sigs: { name: string; params: Param[] }[] = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', `${api}-signatures.json`), 'utf8'));

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
  wrongHandle: () => cudart.cudaEvent_t(0x1000),
  shortBuffer: () => Buffer.alloc(1),
};

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
        outcome = { threw: err.name === 'LibraryLoadError' ? 'LibraryLoadError' : err.constructor.name, message: err.name === 'LibraryLoadError' ? '' : err.message };
      }
      process.stdout.write(JSON.stringify({ fn: sig.name, param: p.name, c: p.c, ts: p.ts, kind, baseRefused, ...outcome }) + '\n');
    }
  });
}
