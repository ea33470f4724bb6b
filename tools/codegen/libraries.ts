// The libraries of the package, one record each (LibraryRecord in apis.ts): where the library is found
// and how it is checked, its namespace and subpath, its spec and headers. The generator writes each
// library's loader (src/ffi/<name>-lib.gen.ts), declarations, facade and index (src/<id>/index.ts), and
// the package root (src/index.ts) from this list; tests check package.json's `exports` and
// `typesVersions` and typedoc.json's entry points against it. Adding a library is its spec (with its
// header or reduced declarations) and a record here.
import type { LibraryRecord, Reexport } from './apis';
import { runtimeApi } from './runtime-spec';
import { driverApi } from './driver-spec';
import { nvrtcApi } from './nvrtc-spec';
import { nvjitlinkApi } from './nvjitlink-spec';
import { nvfatbinApi } from './nvfatbin-spec';
import { nvvmApi } from './nvvm-spec';
import { ncclApi } from './nccl-spec';
import { nvmlApi } from './nvml-spec';

/** What a namespace with struct classes re-exports of their base. */
const structBase: Reexport = { from: '../ffi/struct-base', names: ['CStruct', 'type StructLayout', 'type StructClass'] };
/** The typed kernel arguments, in the runtime's and the driver's namespaces. */
const kernelArgs: Reexport = {
  from: '../ffi/kernel-args',
  names: [
    ...['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64', 'f16', 'f32', 'f64', 'ptr', 'KernelArg', 'KernelArgs'],
    ...['type KernelArgInput', 'type HalfArgument', 'type ScalarType', 'type StructValue'],
  ],
};
const hostCallbacks: Reexport = { from: '../ffi/host-callbacks', names: ['hostCallbacks', 'pendingHostFunctions'] };

const compileDoc = (fn: string, ns: string) =>
  `The compile off the JS thread, on the thread pool: \`await ${ns}.async.${fn}(prog, n, options, { signal })\`.`;

export const runtime: LibraryRecord = {
  api: runtimeApi,
  name: 'cudart',
  namespace: 'cudart',
  eager: true,
  label: 'libcudart',
  statusText: 'cudaGetErrorString',
  envVar: 'CUDA_BINDINGS_CUDART',
  linuxNames: ['libcudart.so.${CUDA_MAJOR}'],
  windowsNames: ['cudart64_${CUDA_MAJOR}.dll', 'cudart64_${CUDA_MAJOR}0.dll'],
  wheelDirs: ['nvidia/cu${CUDA_MAJOR}/lib', 'nvidia/cuda_runtime/lib'],
  hint: 'Install the CUDA ${CUDA_MAJOR} runtime: the CUDA toolkit, pip install "nvidia-cuda-runtime==${CUDA_MAJOR}.*" or conda install cuda-cudart',
  check: { kind: 'cudaVersion', fn: 'cudaRuntimeGetVersion', what: 'CUDA runtime' },
  index: {
    doc: ["The CUDA runtime API as cuda-python's tuple facade."],
    libraryInfo: 'Which libcudart file is loaded, where it resolved, and its version (loads it on first call).',
    helpers: true,
    async: {
      doc: 'Promise forms of the waits (polled from the event loop, no pool thread) and of blocking copies and loads (on the pool): `await cudart.async.cudaStreamSynchronize(s, { signal })`.',
    },
    reexports: [structBase, kernelArgs, hostCallbacks, { from: '../ffi/binding', names: ['perThreadDefaultStream'] }],
  },
};

export const driver: LibraryRecord = {
  api: driverApi,
  name: 'cuda',
  namespace: 'cuda',
  label: 'libcuda',
  statusText: 'cuGetErrorString',
  envVar: 'CUDA_BINDINGS_CUDA',
  linuxNames: ['libcuda.so.1'],
  windowsNames: ['nvcuda.dll'],
  hint: 'Install the NVIDIA driver (libcuda ships with it)',
  // The driver's version is the newest CUDA it runs: 13.x or newer runs CUDA 13 code.
  check: { kind: 'cudaVersion', fn: 'cuDriverGetVersion', what: 'CUDA driver', orNewer: true },
  loaderNote: "Every program imports this module: the runtime facade and core's host functions do",
  index: {
    doc: ["The CUDA driver API as cuda-python's tuple facade."],
    libraryInfo: 'Which libcuda file is loaded, where it resolved, and the CUDA version its driver supports (loads it on first call).',
    reexports: [
      structBase,
      kernelArgs,
      hostCallbacks,
      { from: '../ffi/kernel-args', names: ['launchParamBuffer'] },
      { from: './jit', names: ['JitOptions', 'type JitOptionValues'] },
    ],
  },
};

export const nvrtc: LibraryRecord = {
  api: nvrtcApi,
  name: 'nvrtc',
  label: 'libnvrtc',
  statusText: 'nvrtcGetErrorString',
  envVar: 'CUDA_BINDINGS_NVRTC',
  linuxNames: ['libnvrtc.so.${CUDA_MAJOR}'],
  windowsNames: ['nvrtc64_${CUDA_MAJOR}0_0.dll'],
  wheelDirs: ['nvidia/cu${CUDA_MAJOR}/lib', 'nvidia/cuda_nvrtc/lib'],
  hint: 'Install NVRTC from the CUDA ${CUDA_MAJOR} toolkit, pip install "nvidia-cuda-nvrtc==${CUDA_MAJOR}.*" or conda install cuda-nvrtc',
  check: { kind: 'majorMinor', fn: 'nvrtcVersion', what: 'NVRTC', article: 'an' },
  index: {
    doc: ["NVRTC, the runtime compiler for CUDA C++, as cuda-python's tuple facade."],
    libraryInfo: 'Which libnvrtc file is loaded, where it resolved, and its version (loads it on first call).',
    async: { doc: compileDoc('nvrtcCompileProgram', 'nvrtc'), compile: 'nvrtcCompileProgram' },
  },
};

export const nvjitlink: LibraryRecord = {
  api: nvjitlinkApi,
  name: 'nvjitlink',
  label: 'libnvJitLink',
  envVar: 'CUDA_BINDINGS_NVJITLINK',
  linuxNames: ['libnvJitLink.so.${CUDA_MAJOR}'],
  windowsNames: ['nvJitLink_${CUDA_MAJOR}0_0.dll'],
  wheelDirs: ['nvidia/cu${CUDA_MAJOR}/lib', 'nvidia/nvjitlink/lib'],
  hint: 'Install nvJitLink from the CUDA ${CUDA_MAJOR} toolkit, pip install "nvidia-nvjitlink==${CUDA_MAJOR}.*" or conda install libnvjitlink',
  check: { kind: 'majorMinor', fn: 'nvJitLinkVersion', what: 'nvJitLink' },
  index: {
    doc: [
      'nvJitLink, the link-time optimising linker of CUDA 13 (cubin, PTX, LTO-IR, fatbins, host objects and libraries in; a cubin or PTX out), as a tuple facade.',
    ],
    libraryInfo: 'Which nvJitLink library file is loaded, where it resolved, and its version (loads it on first call).',
  },
};

export const nvfatbin: LibraryRecord = {
  api: nvfatbinApi,
  name: 'nvfatbin',
  label: 'libnvfatbin',
  statusText: 'nvFatbinGetErrorString',
  envVar: 'CUDA_BINDINGS_NVFATBIN',
  linuxNames: ['libnvfatbin.so.${CUDA_MAJOR}'],
  windowsNames: ['nvfatbin_${CUDA_MAJOR}0_0.dll'],
  wheelDirs: ['nvidia/cu${CUDA_MAJOR}/lib', 'nvidia/nvfatbin/lib'],
  hint: 'Install nvFatbin from the CUDA ${CUDA_MAJOR} toolkit, pip install "nvidia-nvfatbin==${CUDA_MAJOR}.*" or conda install libnvfatbin',
  check: { kind: 'majorMinor', fn: 'nvFatbinVersion', what: 'nvFatbin' },
  index: {
    doc: ['nvFatbin, which bundles cubins, PTX and LTO-IR for several architectures into one fat binary, as a tuple facade.'],
    libraryInfo: 'Which nvFatbin library file is loaded, where it resolved, and its version (loads it on first call).',
  },
};

export const nvvm: LibraryRecord = {
  api: nvvmApi,
  name: 'nvvm',
  label: 'libnvvm',
  statusText: 'nvvmGetErrorString',
  envVar: 'CUDA_BINDINGS_NVVM',
  // The soname of the libNVVM that CUDA 13 ships (its API version 2.x).
  linuxNames: ['libnvvm.so.4'],
  windowsNames: ['nvvm64_40_0.dll'],
  // The toolkit keeps it in nvvm/lib64 (nvvm/bin on Windows), where the system search does not look.
  toolkitDirs: ['nvvm/lib64', 'nvvm/bin', 'nvvm/bin/x64'],
  wheelDirs: ['nvidia/cu${CUDA_MAJOR}/lib', 'nvidia/cuda_nvcc/nvvm/lib64'],
  hint: 'Install libNVVM from the CUDA ${CUDA_MAJOR} toolkit, pip install "nvidia-cuda-nvcc==${CUDA_MAJOR}.*" or conda install cuda-nvvm',
  check: { kind: 'majorMinor', fn: 'nvvmVersion', what: 'libNVVM', atLeast: 2 },
  index: {
    doc: ['libNVVM, the compiler from NVVM IR (LLVM IR for CUDA, text or bitcode) to PTX, as a tuple facade.'],
    libraryInfo: 'Which libNVVM library file is loaded, where it resolved, and its version (loads it on first call).',
    async: { doc: compileDoc('nvvmCompileProgram', 'nvvm'), compile: 'nvvmCompileProgram' },
  },
};

export const nccl: LibraryRecord = {
  api: ncclApi,
  name: 'nccl',
  label: 'libnccl',
  statusText: 'ncclGetErrorString',
  envVar: 'CUDA_BINDINGS_NCCL',
  linuxNames: ['libnccl.so.2'],
  windowsNames: ['nccl.dll'],
  wheelDirs: ['nvidia/nccl/lib'],
  hint: 'Install NCCL 2.19 or newer: the libnccl2 package, pip install nvidia-nccl-cu${CUDA_MAJOR} or conda install nccl',
  // Bindings from nccl.h 2.28; a function an older library lacks fails when called.
  check: { kind: 'ncclVersion', fn: 'ncclGetVersion', what: 'NCCL', article: 'an', major: 2, minMinor: 19 },
  loaderNote: "Every program imports this module: the package root's `nccl` namespace and core's Communicator are always there",
  index: {
    doc: ["NCCL, NVIDIA's collective communication library, as cuda-python's tuple facade."],
    libraryInfo: 'Which libnccl file is loaded, where it resolved, and its version (loads it on first call).',
    helpers: true,
  },
};

export const nvml: LibraryRecord = {
  api: nvmlApi,
  name: 'nvml',
  label: 'libnvidia-ml',
  statusText: 'nvmlErrorString',
  envVar: 'CUDA_BINDINGS_NVML',
  linuxNames: ['libnvidia-ml.so.1'],
  windowsNames: ['nvml.dll'],
  hint: 'Install the NVIDIA driver (NVML comes with it)',
  // Every NVML since the 2011 API has nvmlInit_v2; its version is read after nvmlInit.
  check: { kind: 'symbols', symbols: ['nvmlInit_v2', 'nvmlShutdown', 'nvmlErrorString'], what: 'NVML', article: 'an' },
  versionAfterInit: 'nvmlSystemGetCudaDriverVersion_v2',
  index: {
    doc: [
      "NVML, the NVIDIA Management Library behind nvidia-smi, as cuda-python's tuple facade:",
      '`const [err, count] = nvmlDeviceGetCount()`. Call `nvmlInit()` first and `nvmlShutdown()` last',
      "(the core layer's `device.health()` does both for you).",
    ],
    libraryInfo:
      'Which libnvidia-ml file is loaded, where it resolved, and, once nvmlInit has run, the CUDA version its driver supports (loads it on first call).',
    reexports: [structBase],
  },
};

/** Every library, in the order of the package root's namespaces. */
export const LIBRARIES: LibraryRecord[] = [runtime, driver, nvrtc, nvjitlink, nvfatbin, nvvm, nccl, nvml];
