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

test('the generator fails on a pointer C writes through that has no extent rule, naming it', () => {
  const { nvrtcApi } = require('../../tools/codegen/nvrtc-spec');
  const { nvrtcGetPTX: _dropped, ...queried } = nvrtcApi.spec.queried;
  const api = { ...nvrtcApi, spec: { ...nvrtcApi.spec, queried } };
  expect(() => generate([api])).toThrow(/codegen: nvrtc: C may write through these pointers and no rule says how far[^]*\n  nvrtcGetPTX\(ptx: char \*\)$/);
}, 120_000);

test('the coverage reports list every pointer C writes through with its rule', () => {
  const gen = generate();
  for (const api of ['runtime', 'driver', 'nvrtc']) {
    const report = gen.files.get(`tools/codegen/report-${api}.md`)!;
    const rows = report.split('## Pointers C writes through')[1].split(/## Bound functions|### Pointer fields/)[0].split('\n').filter((l) => l.startsWith('| `'));
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(r).toMatch(/^\| `\w+` \| `[\w[\]]+` \| `[^`]+` \| (type|count|size|query|elements|not written) \| .+ \|$/);
  }
  expect(gen.files.get('tools/codegen/report-driver.md')).toContain('| `cuCoredumpGetAttribute` | `value` | `void *` | size | `size` bytes, checked |');
  expect(gen.files.get('tools/codegen/report-nvrtc.md')).toContain('| `nvrtcGetSupportedArchs` | `supportedArchs` | `int *` | query |');
}, 120_000);
