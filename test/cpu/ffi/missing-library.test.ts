// One rule for all eight facades (README, "When a library is missing"): a facade whose own library
// cannot be loaded throws LibraryLoadError (a CudaBindingsError) from each call; once the library is
// loaded, every status it returns comes back in the tuple, never as a throw. Each half runs in a
// child whose variables point every library at a missing file, or at a fake that answers a failure.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bareEnv, buildFakeLibrary, runBare, type LibraryKind } from '../helpers/fake-libraries';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-missing-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Each facade: its loader's variable and label, a first call, and the status its fake answers that call with. */
const FACADES: { ns: LibraryKind; envVar: string; label: string; call: string; status: number; outputs: number }[] = [
  { ns: 'cudart', envVar: 'CUDA_BINDINGS_CUDART', label: 'libcudart', call: 'cudaRuntimeGetVersion()', status: 1, outputs: 1 },
  { ns: 'cuda', envVar: 'CUDA_BINDINGS_CUDA', label: 'libcuda', call: 'cuDriverGetVersion()', status: 3, outputs: 1 },
  { ns: 'nvrtc', envVar: 'CUDA_BINDINGS_NVRTC', label: 'libnvrtc', call: 'nvrtcVersion()', status: 1, outputs: 2 },
  { ns: 'nvjitlink', envVar: 'CUDA_BINDINGS_NVJITLINK', label: 'libnvJitLink', call: 'nvJitLinkVersion()', status: 1, outputs: 2 },
  { ns: 'nvfatbin', envVar: 'CUDA_BINDINGS_NVFATBIN', label: 'libnvfatbin', call: 'nvFatbinVersion()', status: 1, outputs: 2 },
  { ns: 'nvvm', envVar: 'CUDA_BINDINGS_NVVM', label: 'libnvvm', call: 'nvvmVersion()', status: 1, outputs: 2 },
  { ns: 'nccl', envVar: 'CUDA_BINDINGS_NCCL', label: 'libnccl', call: 'ncclGetVersion()', status: 1, outputs: 1 },
  { ns: 'nvml', envVar: 'CUDA_BINDINGS_NVML', label: 'libnvidia-ml', call: 'nvmlInit()', status: 9, outputs: 0 },
];

/** Each facade's first call, twice, in a child with `env`: what came back, or what was thrown. */
function callEach(env: NodeJS.ProcessEnv): Record<string, unknown[]> {
  const r = runBare(
    `
    const root = require('./src');
    const out = {};
    for (const [ns, call] of ${JSON.stringify(FACADES.map((f) => [f.ns, f.call]))}) {
      out[ns] = [0, 1].map(() => {
        try { return { returned: eval('root[ns].' + call) }; }
        catch (e) { return { thrown: e.name, base: e instanceof root.CudaBindingsError, library: e.library, first: e.message.split('\\n')[0] }; }
      });
    }
    console.log(JSON.stringify(out));`,
    env,
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

describe('a facade whose library cannot be loaded throws LibraryLoadError from every call', () => {
  let got: Record<string, unknown[]>;
  beforeAll(() => {
    got = callEach(
      bareEnv(path.join(tmp, 'home'), Object.fromEntries(FACADES.map((f) => [f.envVar, path.join(tmp, 'absent', `${f.ns}.so`)]))),
    );
  });

  test.each(FACADES)('$ns: $call', ({ ns, label }) => {
    const thrown = { thrown: 'LibraryLoadError', base: true, library: label, first: `${label}: could not load the library. Tried:` };
    // The second call throws again: a failed load is not remembered as a library.
    expect(got[ns]).toEqual([thrown, thrown]);
  });
});

describe('once loaded, every status the library returns comes back in the tuple', () => {
  let got: Record<string, unknown[]>;
  beforeAll(() => {
    const env: NodeJS.ProcessEnv = {};
    for (const f of FACADES) env[f.envVar] = buildFakeLibrary(f.ns, path.join(tmp, 'fakes'), undefined, '', f.status);
    got = callEach(bareEnv(path.join(tmp, 'home'), env));
  });

  test.each(FACADES)('$ns: $call → [$status, null…]', ({ ns, status, outputs }) => {
    const tuple = [status, ...Array<null>(outputs).fill(null)];
    expect(got[ns]).toEqual([{ returned: tuple }, { returned: tuple }]);
  });
});

test('without a driver, the runtime loads and answers cudaErrorInsufficientDriver as a status (its own library loaded)', () => {
  const r = runBare(`console.log(JSON.stringify(require('./src').cudart.cudaGetDeviceCount()));`, bareEnv(path.join(tmp, 'home')));
  if (fs.existsSync('/dev/nvidia0')) return; // a machine with a driver answers otherwise
  expect(JSON.parse(r.stdout)).toEqual([35, null]);
});
