// Every bound function is exported by the libcudart.so.13 this package loads on this machine (found
// by the package's own search; the tests need the CUDA 13 runtime), and the per-thread variants the
// generator maps to exist too.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { declarations, perThreadSymbols } from '../../../src/ffi/cudart.gen';
import { cudart } from '../../../src';

let exported = new Set<string>();
beforeAll(() => {
  const lib = fs.realpathSync(cudart.libraryInfo().path);
  exported = new Set(
    execFileSync('nm', ['-D', '--defined-only', lib])
      .toString()
      .split('\n')
      .map((l) => l.split(' ').pop()!.replace(/@.*/, '')),
  );
});

test('the library loaded is a file nm can read, which exports the runtime', () => {
  expect(exported.has('cudaRuntimeGetVersion')).toBe(true);
});

test('every declared function is exported by libcudart.so.13', () => {
  const missing = Object.keys(declarations).filter((n) => !exported.has(n));
  expect(missing).toEqual([]);
  expect(Object.keys(declarations).length).toBeGreaterThanOrEqual(339);
});

test('every per-thread default stream symbol is exported', () => {
  const names = Object.values(perThreadSymbols) as string[];
  expect(names.length).toBeGreaterThan(60);
  expect(names.filter((n) => !exported.has(n))).toEqual([]);
  expect(perThreadSymbols.cudaMemcpy).toBe('cudaMemcpy_ptds');
  expect(perThreadSymbols.cudaStreamQuery).toBe('cudaStreamQuery_ptsz');
});
