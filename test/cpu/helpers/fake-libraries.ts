// Tiny stand-ins for each of the eight libraries, built with gcc under their sonames: each exports what
// the loader checks (its version function, or NVML's init symbols) and reports the version asked for.
// The runtime can also be the toolkit's own libcudart.so.13, copied. For the loader's search tests
// (test/cpu/ffi/library-search.test.ts) and the doctor's scenarios (test/cpu/core/doctor.test.ts).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');

/** The eight libraries by their namespace on the package root. */
export type LibraryKind = 'cudart' | 'cuda' | 'nvrtc' | 'nvjitlink' | 'nvfatbin' | 'nvvm' | 'nccl' | 'nvml';

/** Each library's soname and the C that makes a file pass the loader's check at a version. */
const SOURCES: Record<LibraryKind, { soname: string; source: (version: number, later: number) => string }> = {
  cudart: { soname: 'libcudart.so.13', source: (v, l) => `int cudaRuntimeGetVersion(int *v) { ${later(l)} *v = ${v}; return 0; }` },
  cuda: { soname: 'libcuda.so.1', source: (v, l) => `int cuDriverGetVersion(int *v) { ${later(l)} *v = ${v}; return 0; }` },
  nvrtc: { soname: 'libnvrtc.so.13', source: (v, l) => majorMinor('nvrtcVersion', v, l) },
  nvjitlink: { soname: 'libnvJitLink.so.13', source: (v, l) => majorMinor('nvJitLinkVersion', v, l) },
  nvfatbin: { soname: 'libnvfatbin.so.13', source: (v, l) => majorMinor('nvFatbinVersion', v, l) },
  nvvm: { soname: 'libnvvm.so.4', source: (v, l) => majorMinor('nvvmVersion', v, l) },
  nccl: { soname: 'libnccl.so.2', source: (v, l) => `int ncclGetVersion(int *v) { ${later(l)} *v = ${v}; return 0; }` },
  nvml: {
    soname: 'libnvidia-ml.so.1',
    source: (v, l) =>
      [
        `int nvmlInit_v2(void) { return ${l}; }`,
        'int nvmlShutdown(void) { return 0; }',
        'const char *nvmlErrorString(int r) { return r ? "Unknown Error" : "Success"; }',
        `int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = ${v}; return 0; }`,
      ].join('\n'),
  },
};

/** The version each fake reports unless told otherwise: what these bindings were generated for. */
export const DEFAULT_VERSIONS: Record<LibraryKind, number> = {
  cudart: 13000,
  cuda: 13000,
  nvrtc: 13000,
  nvjitlink: 13000,
  nvfatbin: 13000,
  nvvm: 2000,
  nccl: 22809,
  nvml: 13000,
};

function majorMinor(fn: string, v: number, l: number): string {
  return `int ${fn}(int *major, int *minor) { ${later(l)} *major = ${Math.floor(v / 1000)}; *minor = ${(v % 1000) / 10}; return 0; }`;
}

/** C that makes a version function answer `status` from its second call on (the loader's check is the first). */
function later(status: number): string {
  return status ? `static int calls; if (calls++) return ${status};` : '';
}

/** The soname of a library: the file name a fake gets. */
export function sonameOf(kind: LibraryKind): string {
  return SOURCES[kind].soname;
}

/**
 * Builds a fake `kind` into `dir` under its soname (and with it as DT_SONAME), reporting `version`;
 * `extra` is more C for the same file (a fake driver's or NVML's other functions); with `laterStatus`,
 * its version function (NVML's nvmlInit) answers that status after the loader's check. Returns its path.
 */
export function buildFakeLibrary(kind: LibraryKind, dir: string, version = DEFAULT_VERSIONS[kind], extra = '', laterStatus = 0): string {
  fs.mkdirSync(dir, { recursive: true });
  const { soname, source } = SOURCES[kind];
  const lib = path.join(dir, soname);
  const src = path.join(dir, `${soname}.c`);
  fs.writeFileSync(src, `${source(version, laterStatus)}\n${extra}\n`);
  execFileSync('gcc', ['-shared', '-fPIC', `-Wl,-soname,${soname}`, '-o', lib, src], { stdio: 'pipe' });
  fs.rmSync(src);
  return lib;
}

/** The toolkit's libcudart.so.13 (on this machine, /usr/local/cuda), copied into `dir`; returns the copy's path. */
export function copyRealCudart(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const home = process.env.CUDA_HOME || '/usr/local/cuda';
  const from = ['lib64', 'lib'].map((d) => path.join(home, d, 'libcudart.so.13')).find((f) => fs.existsSync(f));
  if (!from) throw new Error(`copyRealCudart: no libcudart.so.13 under ${home}`);
  const to = path.join(dir, 'libcudart.so.13');
  fs.copyFileSync(fs.realpathSync(from), to);
  return to;
}

/**
 * A bare environment for a child process: PATH and HOME (an empty folder, so that no ~/.local
 * Python is found) and what `env` adds, nothing else of this one's (no CUDA_HOME, no CUDA_BINDINGS_*).
 */
export function bareEnv(home: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  fs.mkdirSync(home, { recursive: true });
  return { PATH: process.env.PATH, HOME: home, ...env };
}

/** Runs a CommonJS script (from the repository root, with tsx) in a child with exactly `env`; returns its stdout, stderr and status. */
export function runBare(script: string, env: NodeJS.ProcessEnv): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}
