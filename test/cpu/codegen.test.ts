// The committed generated files are what the generator writes from the headers today.
import { generate, stale } from '../../tools/codegen/main';

test('generated files are current (run `npm run generate` when this fails)', () => {
  const gen = generate();
  const s = stale(gen);
  expect(s.map((d) => `${d.file}\n${d.diff}`)).toEqual([]);
}, 120_000);

test('the generator binds every function the runtime headers declare', () => {
  const gen = generate();
  const status = [...gen.models.get('runtime')!.functions.values()].filter((f) => f.retSpelled === 'cudaError_t' && f.loc.file === 'cuda_runtime_api.h');
  expect(status.length).toBe(307);
  for (const name of ['cudaGetErrorName', 'cudaGetErrorString', 'cudaCreateChannelDesc', 'cudaProfilerStart', 'cudaGraphicsGLRegisterBuffer', 'cudaEGLStreamConsumerConnect', 'cudaVDPAUGetDevice']) {
    expect(gen.models.get('runtime')!.functions.has(name)).toBe(true);
  }
}, 120_000);

test('the generator binds every nvmlReturn_t function of nvml.h from the committed declarations, following its renames', () => {
  const gen = generate();
  const model = gen.models.get('nvml')!;
  const fns = [...model.functions.values()];
  // 374 nvmlReturn_t functions (the header repeats some declarations) and nvmlErrorString.
  expect([fns.length, fns.filter((f) => f.retSpelled === 'nvmlReturn_t').length]).toEqual([375, 374]);
  expect(model.functions.get('nvmlInit')?.symbol).toBe('nvmlInit_v2');
  expect(model.functions.get('nvmlDeviceGetComputeRunningProcesses')?.symbol).toBe('nvmlDeviceGetComputeRunningProcesses_v3');
  // An old name of a current function is not a rename: nvmlGetExcludedDeviceCount keeps its name.
  expect(model.functions.get('nvmlGetExcludedDeviceCount')?.symbol).toBe('nvmlGetExcludedDeviceCount');
  expect(model.records.size).toBeGreaterThan(150);
}, 120_000);

test('every function the NVML spec describes exists (a rename would silently drop its entry)', () => {
  const { nvmlApi } = require('../../tools/codegen/nvml-spec') as typeof import('../../tools/codegen/nvml-spec');
  const model = generate().models.get('nvml')!;
  const named = [...Object.keys(nvmlApi.spec.paramSpecs), ...Object.keys(nvmlApi.spec.extents), ...Object.keys(nvmlApi.spec.checks ?? {})];
  expect(named.filter((n) => !model.functions.has(n))).toEqual([]);
}, 120_000);
