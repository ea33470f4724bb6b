// What the driver-API examples share: checked calls, the missing-library message, NVRTC builds.
import { cuda, nvrtc } from 'cuda-bindings';
import type { OkOutputs } from 'cuda-bindings';

/** Thrown when a call fails; an example's main() prints it and sets the exit status. */
export class CudaCallError extends Error {}

/** The outputs of a result when it succeeded, none of them null. */
type Outputs<R> = { [K in keyof OkOutputs<R>]: NonNullable<OkOutputs<R>[K]> };

/** The outputs of a driver call that must succeed. */
export function check<R extends readonly [cuda.CUresult, ...unknown[]]>(r: R, what: string): Outputs<R> {
  const [err, ...out] = r;
  if (err !== cuda.CUresult.CUDA_SUCCESS) {
    const [, name] = cuda.cuGetErrorName(err);
    const [, text] = cuda.cuGetErrorString(err);
    throw new CudaCallError(`${what} failed: ${name ?? err} (${err}): ${text ?? 'unknown error'}`);
  }
  return out as Outputs<R>;
}

/** The outputs of an NVRTC call that must succeed. */
export function checkNvrtc<R extends readonly [nvrtc.nvrtcResult, ...unknown[]]>(r: R, what: string, log = ''): Outputs<R> {
  const [err, ...out] = r;
  if (err !== nvrtc.nvrtcResult.NVRTC_SUCCESS) {
    const [, text] = nvrtc.nvrtcGetErrorString(err);
    throw new CudaCallError(`${what} failed: ${text} (${err})${log ? `\n${log}` : ''}`);
  }
  return out as Outputs<R>;
}

/** Which of libcuda and libnvrtc cannot be loaded, with what to do, in one line; null when both load. */
export function missingLibraries(example: string): string | null {
  const missing: string[] = [];
  const hints: string[] = [];
  const probe = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof cuda.LibraryLoadError)) throw e;
      missing.push(e.label);
      hints.push(e.message.split('\n').pop() ?? '');
    }
  };
  probe(() => cuda.cuDriverGetVersion());
  probe(() => nvrtc.nvrtcVersion());
  if (missing.length === 0) return null;
  return `${example} needs ${missing.join(' and ')}, which could not be loaded: ${hints.join(' ')}`;
}

/** The program log of an NVRTC program. */
export function programLog(prog: nvrtc.nvrtcProgram): string {
  const [, size] = nvrtc.nvrtcGetProgramLogSize(prog);
  const log = Buffer.alloc(Math.max(1, size ?? 1));
  nvrtc.nvrtcGetProgramLog(prog, log);
  const end = log.indexOf(0);
  return log.toString('utf8', 0, end < 0 ? log.length : end).trim();
}

/** NVRTC source -> PTX (for `compute_XY`, NUL-terminated as the driver wants it) or a CUBIN (for `sm_XY`). */
export function compile(src: string, name: string, arch: string, output: 'ptx' | 'cubin', options: string[] = []): Buffer {
  const [prog] = checkNvrtc(nvrtc.nvrtcCreateProgram(src, name, 0, null, null), 'nvrtcCreateProgram');
  try {
    const opts = [`--gpu-architecture=${arch}`, ...options];
    const [err] = nvrtc.nvrtcCompileProgram(prog, opts.length, opts);
    if (err !== nvrtc.nvrtcResult.NVRTC_SUCCESS) checkNvrtc([err], `nvrtcCompileProgram(${opts.join(' ')})`, programLog(prog));
    const [size] = checkNvrtc(
      output === 'ptx' ? nvrtc.nvrtcGetPTXSize(prog) : nvrtc.nvrtcGetCUBINSize(prog),
      `nvrtcGet${output.toUpperCase()}Size`,
    );
    const image = Buffer.alloc(size);
    checkNvrtc(output === 'ptx' ? nvrtc.nvrtcGetPTX(prog, image) : nvrtc.nvrtcGetCUBIN(prog, image), `nvrtcGet${output.toUpperCase()}`);
    return image;
  } finally {
    nvrtc.nvrtcDestroyProgram(prog);
  }
}
