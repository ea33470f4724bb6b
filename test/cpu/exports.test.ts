// Every bound function is exported by the libcudart.so.13 on this machine, and the per-thread
// variants the generator maps to exist too.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { declarations, perThreadSymbols } from '../../src/ffi/cudart';

const lib = ['/usr/local/cuda/lib64/libcudart.so.13', `${process.env.CUDA_HOME}/lib64/libcudart.so.13`].find((p) => fs.existsSync(p));
const exported = new Set(
  lib ? execFileSync('nm', ['-D', '--defined-only', lib]).toString().split('\n').map((l) => l.split(' ').pop()!.replace(/@.*/, '')) : [],
);

(lib ? test : test.skip)('every declared function is exported by libcudart.so.13', () => {
  const missing = Object.keys(declarations).filter((n) => !exported.has(n));
  expect(missing).toEqual([]);
  expect(Object.keys(declarations).length).toBeGreaterThanOrEqual(339);
});

(lib ? test : test.skip)('every per-thread default stream symbol is exported', () => {
  const names = Object.values(perThreadSymbols) as string[];
  expect(names.length).toBeGreaterThan(60);
  expect(names.filter((n) => !exported.has(n))).toEqual([]);
  expect(perThreadSymbols.cudaMemcpy).toBe('cudaMemcpy_ptds');
  expect(perThreadSymbols.cudaStreamQuery).toBe('cudaStreamQuery_ptsz');
});
