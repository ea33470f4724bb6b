// The doctor's library checks: where each of the eight libraries was found and how, its version
// against the one these bindings were generated from, and the driver's version against what the
// CUDA runtime needs.
import * as cudart from '../../runtime';
import * as cuda from '../../driver';
import * as nvrtc from '../../nvrtc';
import * as nvjitlink from '../../nvjitlink';
import * as nvfatbin from '../../nvfatbin';
import * as nvvm from '../../nvvm';
import * as nccl from '../../nccl';
import * as nvml from '../../nvml';
import koffi from 'koffi';
import { LibraryLoadError } from '../../ffi/loader';
import { CUDA_MAJOR } from '../../ffi/versions';
import type { LibraryInfo } from '../../ffi/binding';
import type { CudaLibrary } from '../../ffi/errors';
import type { DoctorCheck, LibraryFinding } from './report';

/** A koffi declaration as the generated tables hold it: the C symbol first. */
type Decl = readonly [symbol: string, ...rest: unknown[]];

/** The driver branch that first runs each CUDA major (CUDA 13.0 needs R580, 12.0 needed R525). */
const DRIVER_BRANCH: Record<number, number> = { 12: 525, 13: 580 };

/** What these bindings need of the driver: the CUDA version it must run and the first branch that does. */
export const DRIVER_NEEDS = { cudaVersion: CUDA_MAJOR * 1000, branch: DRIVER_BRANCH[CUDA_MAJOR] ?? 0 };

/** How the doctor treats one library: how to load it, what it was generated from, and whether CUDA can work without it. */
interface LibraryRule {
  library: CudaLibrary;
  info: () => LibraryInfo;
  generatedFrom: number;
  /** Without it CUDA cannot run (the runtime, the driver); the others are warned about. */
  required: boolean;
  /** Its version as text: `13.0`, NCCL's `2.28.9`. */
  text: (v: number) => string;
  /** The C functions the bindings declare for it (koffi declarations, the symbol first); read only when a check needs them. */
  declarations: () => Record<string, Decl>;
}

const cudaText = (v: number) => `${Math.floor(v / 1000)}.${(v % 1000) / 10}`;
const ncclText = (v: number) => `${Math.floor(v / 10000)}.${Math.floor(v / 100) % 100}.${v % 100}`;

const RULES: LibraryRule[] = [
  {
    library: 'libcudart',
    info: cudart.libraryInfo,
    generatedFrom: cudart.CUDART_VERSION,
    required: true,
    text: cudaText,
    declarations: () => (require('../../ffi/cudart.gen') as typeof import('../../ffi/cudart.gen')).declarations,
  },
  {
    library: 'libcuda',
    info: cuda.libraryInfo,
    generatedFrom: cudart.CUDART_VERSION,
    required: true,
    text: cudaText,
    declarations: () => (require('../../ffi/cuda.gen') as typeof import('../../ffi/cuda.gen')).declarations,
  },
  {
    library: 'libnvrtc',
    info: nvrtc.libraryInfo,
    generatedFrom: cudart.CUDART_VERSION,
    required: false,
    text: cudaText,
    declarations: () => (require('../../ffi/nvrtc.gen') as typeof import('../../ffi/nvrtc.gen')).declarations,
  },
  {
    library: 'libnvJitLink',
    info: nvjitlink.libraryInfo,
    generatedFrom: cudart.CUDART_VERSION,
    required: false,
    text: cudaText,
    declarations: () => (require('../../ffi/nvjitlink.gen') as typeof import('../../ffi/nvjitlink.gen')).declarations,
  },
  {
    library: 'libnvvm',
    info: nvvm.libraryInfo,
    generatedFrom: 2000,
    required: false,
    text: cudaText,
    declarations: () => (require('../../ffi/nvvm.gen') as typeof import('../../ffi/nvvm.gen')).declarations,
  },
  {
    library: 'libnvfatbin',
    info: nvfatbin.libraryInfo,
    generatedFrom: cudart.CUDART_VERSION,
    required: false,
    text: cudaText,
    declarations: () => (require('../../ffi/nvfatbin.gen') as typeof import('../../ffi/nvfatbin.gen')).declarations,
  },
  {
    library: 'libnccl',
    info: nccl.libraryInfo,
    generatedFrom: nccl.NCCL_VERSION_CODE,
    required: false,
    text: ncclText,
    declarations: () => (require('../../ffi/nccl.gen') as typeof import('../../ffi/nccl.gen')).declarations,
  },
  // NVML's version is the CUDA version of its driver, known once nvmlInit has run (the driver check reads it).
  {
    library: 'libnvidia-ml',
    info: nvml.libraryInfo,
    generatedFrom: cudart.CUDART_VERSION,
    required: false,
    text: cudaText,
    declarations: () => (require('../../ffi/nvml.gen') as typeof import('../../ffi/nvml.gen')).declarations,
  },
];

/** Where the loader looked, in one line: `not found (tried: already loaded, Python wheel, system search)`. */
function notFound(e: LibraryLoadError): string {
  const steps = [...new Set(e.attempts.map((a) => (a.via === undefined ? a.candidate : STEP_TEXT[a.via])))];
  return `not found (tried ${e.attempts.length} place${e.attempts.length === 1 ? '' : 's'}: ${steps.join(', ')})`;
}

/** Each step of the search in words. */
const STEP_TEXT: Record<NonNullable<LibraryLoadError['attempts'][number]['via']>, string> = {
  env: 'its variable',
  loaded: 'already loaded',
  'site-packages': 'Python wheels',
  conda: 'conda',
  system: 'the system search',
  'cuda-home': 'CUDA_HOME/CUDA_PATH',
  toolkit: '/usr/local/cuda*',
};

/** Finds each library (loading it) and checks it: a finding and a check per library. */
export function checkLibraries(): { findings: LibraryFinding[]; checks: DoctorCheck[]; refusedDriver: number | null } {
  const findings: LibraryFinding[] = [];
  const checks: DoctorCheck[] = [];
  let refusedDriver: number | null = null;
  for (const rule of RULES) {
    const id = `library:${rule.library}`;
    const missing = rule.required ? 'fail' : 'warn';
    try {
      const info = rule.info();
      const version = rule.library === 'libnvidia-ml' ? null : info.version;
      findings.push({
        library: rule.library,
        found: true,
        path: info.path,
        foundVia: info.foundVia,
        version,
        generatedFrom: rule.generatedFrom,
        error: null,
      });
      checks.push(versionCheck(rule, id, info, version));
    } catch (e) {
      if (!(e instanceof LibraryLoadError)) throw e;
      // A file that was the library but of a version refused: say which, rather than "not found".
      const refused = e.attempts.find((a) => a.version !== undefined);
      if (rule.library === 'libcuda' && refused) refusedDriver = refused.version!;
      findings.push({
        library: rule.library,
        found: false,
        path: refused ? refused.candidate : null,
        foundVia: null,
        version: refused?.version ?? null,
        generatedFrom: rule.generatedFrom,
        error: e.message,
      });
      const why = refused ? `${refused.candidate}: ${refused.reason}` : notFound(e);
      const todo = rule.library === 'libcuda' ? driverTodo() : (e.message.split('\n').pop() ?? null);
      checks.push({ id, title: rule.library, status: missing, why, todo });
    }
  }
  return { findings, checks, refusedDriver };
}

/** The functions of `declarations` that the library file at `path` does not export (looked up, never called). */
export function missingFunctions(path: string, declarations: Record<string, Decl>): string[] {
  const lib = koffi.load(path);
  try {
    return Object.values(declarations)
      .map((d) => d[0])
      .filter((name) => {
        try {
          lib.func(name, 'void', []);
          return false;
        } catch {
          return true;
        }
      });
  } finally {
    lib.unload();
  }
}

/**
 * A loaded library's check: its place, and its version against the headers'. An older library is
 * looked into: it is ok when it exports every function the bindings declare (an older patch release,
 * NCCL 2.28.3 under bindings of 2.28.9), a warning naming those it lacks otherwise.
 */
function versionCheck(rule: LibraryRule, id: string, info: LibraryInfo, version: number | null): DoctorCheck {
  const where = `${info.path} (found via ${info.foundVia})`;
  if (version === null || version >= rule.generatedFrom || rule.library === 'libcuda')
    return { id, title: rule.library, status: 'ok', why: `${version === null ? '' : `${rule.text(version)} at `}${where}`, todo: null };
  const older = `${rule.text(version)} at ${where}, older than the ${rule.text(rule.generatedFrom)} these bindings were generated from`;
  const declarations = rule.declarations();
  const all = Object.keys(declarations).length;
  const missing = missingFunctions(info.path, declarations);
  if (missing.length === 0)
    return { id, title: rule.library, status: 'ok', why: `${older}; it has all ${all} functions they bind`, todo: null };
  const named = missing.length > 5 ? `${missing.slice(0, 5).join(', ')}, …` : missing.join(', ');
  return {
    id,
    title: rule.library,
    status: 'warn',
    why: `${older}: ${missing.length} of the ${all} functions they bind are not in it (${named}) and fail when called`,
    todo: `update ${rule.library} to ${rule.text(rule.generatedFrom)} or newer`,
  };
}

/** What to do about a driver that is missing or too old. */
export function driverTodo(): string {
  return `install NVIDIA driver R${DRIVER_NEEDS.branch} or newer (it runs CUDA ${CUDA_MAJOR}); in a container, start it with the GPUs (docker run --gpus all, with the NVIDIA Container Toolkit)`;
}

/** The driver's own version (580.65.06) and the CUDA version it runs, from NVML; nulls where NVML cannot say. */
export function nvmlDriverVersions(): { version: string | null; cudaVersion: number | null } {
  try {
    if (nvml.nvmlInit()[0] !== 0) return { version: null, cudaVersion: null };
  } catch {
    return { version: null, cudaVersion: null };
  }
  try {
    const [e1, version] = nvml.nvmlSystemGetDriverVersion(80);
    const [e2, cudaVersion] = nvml.nvmlSystemGetCudaDriverVersion();
    return { version: e1 === 0 ? version : null, cudaVersion: e2 === 0 ? cudaVersion : null };
  } finally {
    nvml.nvmlShutdown();
  }
}

/** The driver check: its CUDA version (from libcuda, or NVML, or the refused libcuda) against what the runtime needs. */
export function checkDriver(refused: number | null): { check: DoctorCheck; cudaVersion: number | null; version: string | null } {
  const fromNvml = nvmlDriverVersions();
  let cudaVersion: number | null = refused;
  try {
    const [err, v] = cuda.cuDriverGetVersion();
    if (err === 0) cudaVersion = v;
  } catch {
    cudaVersion ??= fromNvml.cudaVersion;
  }
  const branch = fromNvml.version === null ? '' : ` (R${fromNvml.version})`;
  const needs = `these bindings need CUDA ${CUDA_MAJOR} (R${DRIVER_NEEDS.branch} or newer)`;
  const base = { id: 'driver', title: 'NVIDIA driver' };
  const result = (check: Omit<DoctorCheck, 'id' | 'title'>) => ({ check: { ...base, ...check }, cudaVersion, version: fromNvml.version });
  if (cudaVersion === null)
    return result({ status: 'fail', why: `no NVIDIA driver found (libcuda.so.1 did not load); ${needs}`, todo: driverTodo() });
  if (cudaVersion < DRIVER_NEEDS.cudaVersion)
    return result({
      status: 'fail',
      why: `the driver${branch} runs CUDA ${cudaText(cudaVersion)} at most; ${needs}`,
      todo: `upgrade the NVIDIA driver to R${DRIVER_NEEDS.branch} or newer`,
    });
  return result({ status: 'ok', why: `the driver${branch} runs CUDA ${cudaText(cudaVersion)}; ${needs}`, todo: null });
}
