// The committed generated files are what the generator writes from the headers today.
import { generate, stale } from '../../tools/codegen/main';
import * as runtime from '../../src/runtime';
import { declarations } from '../../src/ffi/cudart';

test('generated files are current (run `npm run generate` when this fails)', () => {
  const gen = generate();
  const s = stale(gen);
  expect(s.map((d) => `${d.file}\n${d.diff}`)).toEqual([]);
}, 120_000);

test('the generator binds every function the runtime headers declare: each is a facade function with a koffi declaration', () => {
  const gen = generate();
  const fns = gen.models.get('runtime')!.functions;
  const status = [...fns.values()].filter((f) => f.retSpelled === 'cudaError_t' && f.loc.file === 'cuda_runtime_api.h').map((f) => f.name);
  expect(status.length).toBe(307);
  const extra = ['cudaGetErrorName', 'cudaGetErrorString', 'cudaCreateChannelDesc', 'cudaProfilerStart', 'cudaGraphicsGLRegisterBuffer', 'cudaEGLStreamConsumerConnect', 'cudaVDPAUGetDevice'];
  for (const name of extra) expect(fns.has(name)).toBe(true);
  const facade = runtime as unknown as Record<string, unknown>;
  expect([...status, ...extra].filter((n) => typeof facade[n] !== 'function' || !(n in declarations))).toEqual([]);
}, 120_000);
