// The doctor's report: what `diagnose()` returns and `cuda-bindings doctor --json` prints. Its shape is
// part of the package's API (README, "doctor"): fields are added, never renamed or removed, while
// `schema` stays 1.
import type { FoundVia } from '../../ffi/loader';
import type { CudaLibrary } from '../../ffi/errors';

/** One check's outcome: `ok`, `warn` (CUDA works, something deserves a look), `fail` (CUDA cannot work), `skip` (not run, and why). */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One item of the check list. */
export interface DoctorCheck {
  /** Stable id: `driver`, `devices`, `container`, `library:libcudart`, `gpu:0`, `mig:0`, `persistence:0`, `launch:0`. */
  id: string;
  /** What is checked, in words: 'NVIDIA driver', 'libnvrtc', 'GPU 0 (NVIDIA H100 80GB HBM3)'. */
  title: string;
  /** The outcome. */
  status: CheckStatus;
  /** One line: what was found. */
  why: string;
  /** One line: what to do about it; null when there is nothing to do. */
  todo: string | null;
}

/** Where one of the eight libraries was found, or why it was not. */
export interface LibraryFinding {
  /** Which of the eight. */
  library: CudaLibrary;
  /** Whether it loaded. */
  found: boolean;
  /** The file loaded (after links), or null. */
  path: string | null;
  /** How the search found it, or null. */
  foundVia: FoundVia | null;
  /** Its version in its own numbering (CUDA's 13000, NCCL's 22809, libNVVM's 2000), or null when unknown. */
  version: number | null;
  /** The version these bindings were generated from, in the same numbering. */
  generatedFrom: number;
  /** Why it did not load (the loader's message), or null. */
  error: string | null;
}

/** What the doctor read of one GPU. */
export interface GpuFinding {
  /** The CUDA device number. */
  index: number;
  /** The device's name (`NVIDIA H100 80GB HBM3`). */
  name: string;
  /** `GPU-…` as nvidia-smi prints it. */
  uuid: string;
  /** `0000:18:00.0`. */
  pciBusId: string;
  /** `'9.0'`. */
  computeCapability: string;
  /** Whether NVRTC can compile for it (`sm_90` among nvrtcGetSupportedArchs), or null without NVRTC. */
  nvrtcTargets: boolean | null;
  /** MIG mode (NVML): true enabled, false disabled, null unsupported or unknown. */
  migEnabled: boolean | null;
  /** Persistence mode (NVML): null unsupported or unknown. */
  persistenceMode: boolean | null;
  /** Whether the smoke test's kernel ran and wrote what it should; null when not run. */
  launched: boolean | null;
}

/** What `diagnose()` returns: the check list, what it read, and the verdict. */
export interface DoctorReport {
  /** The shape's version: 1 until a field is renamed or removed (never, so far). */
  schema: 1;
  /** `fail` when any check failed (CUDA cannot run), `warn` when one warned, else `ok`. */
  verdict: 'ok' | 'warn' | 'fail';
  /** Whether CUDA works here: no check failed. The CLI's exit status is 0 exactly when this is true. */
  works: boolean;
  /** One line: why CUDA works or why not. */
  reason: string;
  /** Every check, in the order run. */
  checks: DoctorCheck[];
  /** What the driver said of itself. */
  driver: {
    /** The newest CUDA the driver runs (cuDriverGetVersion's numbering: 13000), or null without a driver. */
    cudaVersion: number | null;
    /** The driver's own version (`580.65.06`, from NVML), or null. */
    version: string | null;
    /** What these bindings need: the CUDA version and the driver branch that first runs it. */
    needs: {
      /** The CUDA version the driver must run, in cuDriverGetVersion's numbering (13000 for 13.0). */
      cudaVersion: number;
      /** The first driver branch that runs it (580 for R580); 0 when this package does not know it. */
      branch: number;
    };
  };
  /** The eight libraries, in the package root's order. */
  libraries: LibraryFinding[];
  /** Each CUDA device (empty when none could be read). */
  gpus: GpuFinding[];
  /** Whether this process runs in a container, and NVIDIA_VISIBLE_DEVICES there (null when unset). */
  container: {
    /** Whether this process runs in a container: `/.dockerenv` or `/run/.containerenv` exists, or PID 1's cgroup names a container runtime. */
    detected: boolean;
    /** The value of NVIDIA_VISIBLE_DEVICES, or null when it is unset. */
    visibleDevices: string | null;
  };
  /** process.platform, process.arch and process.version. */
  host: {
    /** process.platform, e.g. `'linux'`. */
    platform: string;
    /** process.arch, e.g. `'x64'` or `'arm64'`. */
    arch: string;
    /** process.version, Node.js's version, e.g. `'v22.11.0'`. */
    node: string;
  };
}

/** How `diagnose()` looks: all optional. */
export interface DiagnoseOptions {
  /** Whether to allocate on each GPU and launch a kernel there (default true; the CLI's --no-launch turns it off). */
  launch?: boolean;
  /** Where the device files are (default '/dev'). */
  devDir?: string;
  /** The root under which `/.dockerenv`, `/run/.containerenv` and `/proc/1/cgroup` are read (default '/'). */
  root?: string;
  /** The environment read for NVIDIA_VISIBLE_DEVICES (default process.env). */
  env?: NodeJS.ProcessEnv;
}
