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
