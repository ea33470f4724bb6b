// Calls every bound runtime function once with well-typed arguments and prints one JSON line per
// call, so a parent process can tell which call, if any, crashed the process.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cudart, cuda, nvrtc } from '../../../src';
import { sample, type Param } from './samples';

// Which API: 'runtime' (the default), 'driver' or 'nvrtc'; `--after NAME` starts after that function (to go
// on past a call that crashed the process).
const api = process.argv[2] ?? 'runtime';
const after = process.argv.indexOf('--after') > 0 ? process.argv[process.argv.indexOf('--after') + 1] : undefined;
const ns: Record<string, any> = api === 'driver' ? cuda : api === 'nvrtc' ? nvrtc : cudart;
const sigs: { name: string; params: Param[] }[] = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', `${api}-signatures.json`), 'utf8'),
);

let skipping = after !== undefined;
for (const sig of sigs) {
  if (skipping) {
    skipping = sig.name !== after;
    continue;
  }
  process.stdout.write(JSON.stringify({ start: sig.name }) + '\n');
  const args = sig.params.map((p) => sample(ns, sig.name, p));
  let r: unknown;
  try {
    r = ns[sig.name](...args);
  } catch (e) {
    // Expected: the loader's error (the library is absent), a symbol this library lacks, or a
    // RangeError for an argument C would crash on (a NULL kernel, say).
    const err = e as Error;
    const why =
      err.name === 'LibraryLoadError'
        ? 'LibraryLoadError'
        : / does not export /.test(err.message)
          ? 'not exported'
          : err instanceof RangeError
            ? 'RangeError'
            : null;
    if (!why) throw e;
    process.stdout.write(JSON.stringify({ name: sig.name, status: why, n: -1 }) + '\n');
    continue;
  }
  process.stdout.write(
    JSON.stringify({ name: sig.name, status: Array.isArray(r) ? r[0] : 'not a tuple', n: Array.isArray(r) ? r.length : -1 }) + '\n',
  );
}
