// The built package works for CommonJS and ES module consumers, with types.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cudart } from '../../src';

const root = path.join(__dirname, '..', '..');

beforeAll(() => {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'pipe' });
}, 120_000);

test('require("cuda-bindings") gives the cudart namespace', () => {
  const out = execFileSync(process.execPath, ['-e', "const { cudart } = require('cuda-bindings'); console.log(cudart.cudaGetErrorName(35)[1])"], { cwd: root }).toString().trim();
  expect(out).toBe('cudaErrorInsufficientDriver');
});

test('import from "cuda-bindings" and "cuda-bindings/runtime" work as ES modules', () => {
  const src = "import { cudart } from 'cuda-bindings'; import { cudaRuntimeGetVersion, cudaStreamLegacy } from 'cuda-bindings/runtime'; console.log(JSON.stringify([cudart.cudaRuntimeGetVersion()[1], cudaRuntimeGetVersion()[1], String(cudaStreamLegacy)]));";
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', src], { cwd: root }).toString().trim();
  expect(JSON.parse(out)).toEqual([13000, 13000, '1']);
});

test('type declarations ship beside the code', () => {
  expect(fs.existsSync(path.join(root, 'dist', 'index.d.ts'))).toBe(true);
  expect(fs.readFileSync(path.join(root, 'dist', 'runtime', 'api.d.ts'), 'utf8')).toContain('export declare function cudaStreamCreate(): [E.cudaError_t, H.cudaStream_t | null];');
});

test('the bin runs from the build: `cuda-bindings --help` exits 0, `info` exits 0 with a GPU and 1 without a driver or device', () => {
  const [countErr, count] = cudart.cudaGetDeviceCount();
  const hasGpu = countErr === cudart.cudaError_t.cudaSuccess && (count ?? 0) > 0;
  const bin = path.join(root, 'dist', 'cli', 'main.js');
  expect(fs.readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
  expect([help.status, help.stdout.split('\n')[0]]).toEqual([0, 'usage: cuda-bindings [command] [--json] [--device N] [--help]']);
  const info = spawnSync(process.execPath, [bin, 'info'], { encoding: 'utf8' });
  expect(info.status).toBe(hasGpu ? 0 : 1);
  expect(info.stdout).toMatch(/^CUDA runtime 13\.0/);
});
