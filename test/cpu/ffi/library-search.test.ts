// Where the loader finds each library, and how libraryInfo() says it found it: the variable, a copy
// already loaded, a virtualenv's or conda prefix's wheels, the conda prefix, the system's search,
// CUDA_HOME. Each case runs in a child process with only its own environment, so no other copy is found.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bareEnv, buildFakeLibrary, copyRealCudart, runBare, sonameOf, type LibraryKind } from '../helpers/fake-libraries';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-search-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** libraryInfo() of each namespace in a child with `env`: { ns: { foundVia, file, path } } or { ns: { error } }. */
function infos(kinds: LibraryKind[], env: NodeJS.ProcessEnv, preload: string[] = []): Record<string, Record<string, string>> {
  const r = runBare(
    `
    const koffi = require('koffi');
    // Kept referenced: koffi closes a library whose handle is collected.
    globalThis.preloaded = ${JSON.stringify(preload)}.map((f) => koffi.load(f));
    const root = require('./src');
    const out = {};
    for (const ns of ${JSON.stringify(kinds)}) {
      try { const i = root[ns].libraryInfo(); out[ns] = { foundVia: i.foundVia, file: i.file, path: i.path }; }
      catch (e) { out[ns] = { error: e.name + ': ' + e.message }; }
    }
    console.log(JSON.stringify(out));`,
    env,
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

/** A Python prefix with site-packages for python3.12 (and `nvidia/` in it): the folder of `wheelDir`. */
function wheel(prefix: string, wheelDir: string): string {
  return path.join(prefix, 'lib', 'python3.12', 'site-packages', wheelDir);
}

describe('a virtualenv whose wheels hold the libraries', () => {
  const venv = path.join(tmp, 'venv');
  // The CUDA 13 wheels share nvidia/cu13/lib; the per-package folders are the older layout, still searched.
  const where: [LibraryKind, string][] = [
    ['cudart', 'nvidia/cu13/lib'],
    ['nvrtc', 'nvidia/cuda_nvrtc/lib'],
    ['nvjitlink', 'nvidia/nvjitlink/lib'],
    ['nvfatbin', 'nvidia/cu13/lib'],
    ['nvvm', 'nvidia/cuda_nvcc/nvvm/lib64'],
    ['nccl', 'nvidia/nccl/lib'],
  ];
  beforeAll(() => {
    for (const [kind, dir] of where) {
      if (kind === 'cudart') copyRealCudart(wheel(venv, dir));
      else buildFakeLibrary(kind, wheel(venv, dir));
    }
  });

  test.each(where)('%s is loaded from the wheel folder %s, found via site-packages', (kind, dir) => {
    const got = infos([kind], bareEnv(path.join(tmp, 'home'), { VIRTUAL_ENV: venv }))[kind];
    const file = path.join(wheel(venv, dir), sonameOf(kind));
    expect(got).toEqual({ foundVia: 'site-packages', file, path: fs.realpathSync(file) });
  });

  test('the wheel comes before the system search and CUDA_HOME (/usr/local/cuda has libcudart and libnvvm here)', () => {
    const got = infos(['cudart', 'nvvm'], bareEnv(path.join(tmp, 'home'), { VIRTUAL_ENV: venv, CUDA_HOME: '/usr/local/cuda' }));
    expect([got.cudart.foundVia, got.nvvm.foundVia]).toEqual(['site-packages', 'site-packages']);
  });
});

describe('a conda prefix', () => {
  const conda = path.join(tmp, 'conda');
  beforeAll(() => {
    copyRealCudart(path.join(conda, 'lib'));
    buildFakeLibrary('nvvm', path.join(conda, 'nvvm', 'lib64'));
    buildFakeLibrary('nccl', wheel(conda, 'nvidia/nccl/lib'));
  });

  test("the runtime in $CONDA_PREFIX/lib, libNVVM in its nvvm/lib64, NCCL in its Python's wheels", () => {
    const got = infos(['cudart', 'nvvm', 'nccl'], bareEnv(path.join(tmp, 'home'), { CONDA_PREFIX: conda }));
    expect(got).toEqual({
      cudart: { foundVia: 'conda', file: path.join(conda, 'lib', 'libcudart.so.13'), path: path.join(conda, 'lib', 'libcudart.so.13') },
      nvvm: {
        foundVia: 'conda',
        file: path.join(conda, 'nvvm', 'lib64', 'libnvvm.so.4'),
        path: path.join(conda, 'nvvm', 'lib64', 'libnvvm.so.4'),
      },
      nccl: {
        foundVia: 'site-packages',
        file: path.join(wheel(conda, 'nvidia/nccl/lib'), 'libnccl.so.2'),
        path: path.join(wheel(conda, 'nvidia/nccl/lib'), 'libnccl.so.2'),
      },
    });
  });
});

describe("the driver's libraries (libcuda, NVML): the variable, a copy already loaded, the system search", () => {
  const dir = path.join(tmp, 'driver');
  let cuda: string;
  let nvml: string;
  beforeAll(() => {
    cuda = buildFakeLibrary('cuda', dir);
    nvml = buildFakeLibrary('nvml', dir);
  });

  test('a copy already loaded in the process (here by its path) is the one used: foundVia loaded', () => {
    const got = infos(['cuda', 'nvml'], bareEnv(path.join(tmp, 'home')), [cuda, nvml]);
    expect(got).toEqual({
      cuda: { foundVia: 'loaded', file: 'libcuda.so.1', path: cuda },
      nvml: { foundVia: 'loaded', file: 'libnvidia-ml.so.1', path: nvml },
    });
  });

  test("the system's search by soname (LD_LIBRARY_PATH here): foundVia system", () => {
    const got = infos(['cuda'], bareEnv(path.join(tmp, 'home'), { LD_LIBRARY_PATH: dir }));
    expect(got.cuda).toEqual({ foundVia: 'system', file: 'libcuda.so.1', path: cuda });
  });

  test('the variable: foundVia env, before a copy already loaded', () => {
    const other = buildFakeLibrary('nvml', path.join(tmp, 'other'));
    const got = infos(['nvml'], bareEnv(path.join(tmp, 'home'), { CUDA_BINDINGS_NVML: other }), [nvml]);
    expect(got.nvml).toEqual({ foundVia: 'env', file: other, path: other });
  });
});

test('CUDA_HOME: foundVia cuda-home', () => {
  const home = path.join(tmp, 'toolkit');
  const lib = buildFakeLibrary('nvjitlink', path.join(home, 'lib64'));
  const got = infos(['nvjitlink'], bareEnv(path.join(tmp, 'home'), { CUDA_HOME: home }));
  expect(got.nvjitlink).toEqual({ foundVia: 'cuda-home', file: lib, path: lib });
});

describe('when nothing is found', () => {
  test('the variable, when set, is the only file tried: a wrong path is an error, not a silent search elsewhere', () => {
    const absent = path.join(tmp, 'absent', 'libcudart.so.13');
    const got = infos(['cudart'], bareEnv(path.join(tmp, 'home'), { CUDA_BINDINGS_CUDART: absent }));
    expect(got.cudart.error).toBe(
      'LibraryLoadError: libcudart: could not load the library. Tried:\n' +
        `  - variable: ${absent}: no such file\n` +
        'CUDA_BINDINGS_CUDART names this file: point it at the library, or unset it to search the usual places.',
    );
  });

  test("the error lists this platform's places only, each once, and ends with what to install", () => {
    const venv = path.join(tmp, 'empty-venv');
    fs.mkdirSync(path.join(venv, 'lib', 'python3.12', 'site-packages', 'nvidia'), { recursive: true });
    const msg = infos(['nccl'], bareEnv(path.join(tmp, 'home'), { VIRTUAL_ENV: venv })).nccl.error;
    const site = path.join(venv, 'lib', 'python3.12', 'site-packages');
    const lines = msg.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'LibraryLoadError: libnccl: could not load the library. Tried:',
      '  - already loaded: libnccl.so.2: not loaded in this process',
      `  - Python wheel: ${site}/nvidia/nccl/lib/libnccl.so.2: no such file`,
      '  - system search: libnccl.so.2: cannot open shared object file: No such file or directory',
    ]);
    expect(lines.slice(4, -1).every((l) => /^ {2}- toolkit: \/usr\/local\/cuda[^/]*\/lib64\/libnccl\.so\.2: no such file$/.test(l))).toBe(
      true,
    );
    expect(lines[lines.length - 1]).toBe(
      "Install NCCL 2.19 or newer: the libnccl2 package, pip install nvidia-nccl-cu13 or conda install nccl, or set CUDA_BINDINGS_NCCL to the library's path.",
    );
    expect(msg).not.toMatch(/aarch64|\.dll|python3\.(?!12)/);
    expect(lines.length).toBeLessThan(10);
  });

  test("the driver's libraries are not looked for in wheels, conda or the toolkit, which never hold them", () => {
    const msg = infos(['nvml'], bareEnv(path.join(tmp, 'home'), { VIRTUAL_ENV: tmp, CONDA_PREFIX: tmp, CUDA_HOME: tmp })).nvml.error;
    expect(msg.split('\n')).toEqual([
      'LibraryLoadError: libnvidia-ml: could not load the library. Tried:',
      '  - already loaded: libnvidia-ml.so.1: not loaded in this process',
      '  - system search: libnvidia-ml.so.1: cannot open shared object file: No such file or directory',
      "Install the NVIDIA driver (NVML comes with it), or set CUDA_BINDINGS_NVML to the library's path.",
    ]);
  });

  test('a library of another major version is refused, naming the version found', () => {
    const venv = path.join(tmp, 'old-venv');
    buildFakeLibrary('nvrtc', wheel(venv, 'nvidia/cu13/lib'), 12040);
    const msg = infos(['nvrtc'], bareEnv(path.join(tmp, 'home'), { VIRTUAL_ENV: venv })).nvrtc.error;
    expect(msg).toContain(
      `  - Python wheel: ${wheel(venv, 'nvidia/cu13/lib')}/libnvrtc.so.13: NVRTC 12.4 found, but these bindings need CUDA 13.x\n`,
    );
  });
});
