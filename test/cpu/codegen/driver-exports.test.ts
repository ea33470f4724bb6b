// Every driver symbol the generator binds is exported by libcuda.so.1 of NVIDIA driver 580 (CUDA
// 13.0); the list was read with `nm -D` on the GPU machine (tools/gpu-session.sh writes it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { declarations, perThreadSymbols } from '../../../src/ffi/cuda.gen';
import * as nvrtc from '../../../src/ffi/nvrtc.gen';

const exported = new Set(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'libcuda-580-exports.txt'), 'utf8').split('\n'));

test('every bound driver symbol is exported by libcuda 580, but the Tegra-only EGL sync import', () => {
  const missing = Object.values(declarations)
    .map(([symbol]) => symbol)
    .filter((s) => !exported.has(s));
  expect(missing).toEqual(['cuEventCreateFromEGLSync']);
});

test('the versioned symbols are the ones the header maps the names to', () => {
  expect(declarations.cuMemAlloc[0]).toBe('cuMemAlloc_v2');
  expect(declarations.cuCtxCreate[0]).toBe('cuCtxCreate_v4');
  expect(declarations.cuStreamGetCaptureInfo[0]).toBe('cuStreamGetCaptureInfo_v3');
  expect(declarations.cuInit[0]).toBe('cuInit');
});

test('every per-thread default stream variant is exported', () => {
  const names = Object.values(perThreadSymbols) as string[];
  expect(names.length).toBeGreaterThan(50);
  expect(names.filter((s) => !exported.has(s))).toEqual([]);
  expect(perThreadSymbols.cuMemcpyHtoD).toBe('cuMemcpyHtoD_v2_ptds');
});

test('every NVRTC function of nvrtc.h is bound and exported by libnvrtc.so.13 (CUDA 13.0)', () => {
  const nvrtcExports = new Set(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'libnvrtc-13.0-exports.txt'), 'utf8').split('\n'));
  const symbols = Object.values(nvrtc.declarations).map(([symbol]) => symbol);
  expect(symbols.length).toBe(24);
  expect(symbols.filter((s) => !nvrtcExports.has(s))).toEqual([]);
});
