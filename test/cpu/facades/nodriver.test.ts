// Without a driver (this machine, CI) every call returns its status; none crashes the process.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cudart, cuda, nvrtc } from '../../../src';
import sigs from '../fixtures/runtime-signatures.json';
import driverSigs from '../fixtures/driver-signatures.json';
import nvrtcSigs from '../fixtures/nvrtc-signatures.json';

const hasDriver = cudart.cudaGetDeviceCount()[0] !== cudart.cudaError_t.cudaErrorInsufficientDriver;

describe('every bound function, called once in a child process', () => {
  let results: { name: string; status: number | string; n: number }[] = [];
  let child: ReturnType<typeof spawnSync>;
  beforeAll(() => {
    child = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'helpers', 'call-every-function.ts')], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    results = String(child.stdout)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.name);
  }, 120_000);

  test('the child ran every call and exited normally', () => {
    const lines = String(child.stdout).trim().split('\n');
    const last = lines.length ? JSON.parse(lines[lines.length - 1]) : {};
    expect({
      signal: child.signal,
      status: child.status,
      lastCall: last.name ?? last.start,
      stderr: String(child.stderr).slice(0, 500),
    }).toEqual({ signal: null, status: 0, lastCall: sigs[sigs.length - 1].name, stderr: '' });
    expect(results.length).toBe(sigs.length);
  });

  test('each call returned a tuple whose first element is a status', () => {
    const bad = results.filter((r) => (typeof r.status !== 'number' || r.n < 1) && r.status !== 'RangeError');
    expect(bad).toEqual([]);
  });

  test('only the arguments C would crash on are refused: NULL kernels', () => {
    // With zeroed arguments these calls crash libcudart 13.0 (tools/find-crashers.sh on an H100).
    expect(results.filter((r) => r.status === 'RangeError').map((r) => r.name)).toEqual([
      'cudaLaunchKernelExC',
      'cudaOccupancyMaxPotentialClusterSize',
      'cudaOccupancyMaxActiveClusters',
      'cudaGraphAddKernelNode',
      'cudaGraphKernelNodeSetParams',
      'cudaGraphExecKernelNodeSetParams',
    ]);
  });

  (hasDriver ? test.skip : test)('without a driver, calls that need the GPU report cudaErrorInsufficientDriver', () => {
    const byName = new Map(results.map((r) => [r.name, r.status]));
    for (const n of [
      'cudaGetDeviceCount',
      'cudaMalloc',
      'cudaStreamCreate',
      'cudaEventCreate',
      'cudaDeviceSynchronize',
      'cudaGraphCreate',
      'cudaLaunchKernel',
      'cudaMemcpy',
    ]) {
      expect([n, byName.get(n)]).toEqual([n, cudart.cudaError_t.cudaErrorInsufficientDriver]);
    }
    for (const n of ['cudaRuntimeGetVersion', 'cudaGetErrorName', 'cudaGetErrorString', 'cudaCreateChannelDesc']) {
      expect([n, byName.get(n)]).toEqual([n, cudart.cudaError_t.cudaSuccess]);
    }
  });
});

(hasDriver ? describe.skip : describe)('no-driver results as the issue states them', () => {
  test('cudaGetDeviceCount() → [cudaErrorInsufficientDriver, null]', () => {
    expect(cudart.cudaGetDeviceCount()).toEqual([cudart.cudaError_t.cudaErrorInsufficientDriver, null]);
  });
  test('cudaRuntimeGetVersion() → [cudaSuccess, CUDART_VERSION]', () => {
    expect(cudart.cudaRuntimeGetVersion()).toEqual([cudart.cudaError_t.cudaSuccess, cudart.CUDART_VERSION]);
  });
  test("cudaGetErrorName(35) → [cudaSuccess, 'cudaErrorInsufficientDriver']", () => {
    expect(cudart.cudaGetErrorName(35)).toEqual([cudart.cudaError_t.cudaSuccess, 'cudaErrorInsufficientDriver']);
  });
  test('libraryInfo() names the file and version loaded', () => {
    const info = cudart.libraryInfo();
    expect(info.version).toBe(cudart.CUDART_VERSION);
    expect(info.path).toMatch(/libcudart\.so\.13/);
  });
});

const libraries = [
  {
    label: 'the driver API without libcuda',
    api: 'driver',
    sigs: driverSigs,
    info: () => cuda.libraryInfo(),
    call: () => cuda.cuInit(0),
    error:
      /^libcuda: could not load the library\. Tried:\n {2}- already loaded: libcuda\.so\.1: not loaded in this process\n {2}- system search: libcuda\.so\.1: .+\nInstall the NVIDIA driver \(libcuda ships with it\), or set CUDA_BINDINGS_CUDA to the library's path\.$/,
    // With zeroed arguments these crash libcuda 580 (tools/find-crashers.sh on an H100).
    refused: ['cuMemcpy3DPeer', 'cuMemcpy3DPeerAsync', 'cuDevResourceGenerateDesc', 'cuVDPAUGetDevice', 'cuVDPAUCtxCreate'],
  },
  {
    label: 'NVRTC without libnvrtc',
    api: 'nvrtc',
    sigs: nvrtcSigs,
    info: () => nvrtc.libraryInfo(),
    call: () => nvrtc.nvrtcVersion(),
    error:
      /^libnvrtc: could not load the library\. Tried:\n {2}- already loaded: libnvrtc\.so\.13: not loaded in this process\n(.|\n)*\n {2}- system search: libnvrtc\.so\.13: .+\n(.|\n)* {2}- toolkit: \/usr\/local\/cuda\/lib64\/libnvrtc\.so\.13: no such file\nInstall NVRTC from the CUDA 13 toolkit, pip install "nvidia-cuda-nvrtc==13\.\*" or conda install cuda-nvrtc, or set CUDA_BINDINGS_NVRTC to the library's path\.$/,
    refused: [] as string[],
  },
];

describe.each(libraries)('$label', ({ api, sigs: apiSigs, info, call, error, refused }) => {
  const present = (() => {
    try {
      info();
      return true;
    } catch {
      return false;
    }
  })();

  (present ? test.skip : test)('a call throws the loader error, which names every path tried', () => {
    expect(call).toThrow(error);
  });

  test('every function, called once in a child process, returns a status or throws only the loader error', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'helpers', 'call-every-function.ts'), api], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    expect({ signal: child.signal, status: child.status, stderr: child.stderr.slice(0, 300) }).toEqual({
      signal: null,
      status: 0,
      stderr: '',
    });
    const results = child.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.name);
    expect(results.length).toBe(apiSigs.length);
    expect(results.filter((r) => r.status === 'RangeError').map((r) => r.name)).toEqual(refused);
    const rest = results.filter((r) => !refused.includes(r.name));
    expect(
      rest.filter((r) => (present ? typeof r.status !== 'number' && r.status !== 'not exported' : r.status !== 'LibraryLoadError')),
    ).toEqual([]);
  }, 120_000);
});
