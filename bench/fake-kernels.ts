// The fake libcudart the CPU benchmarks run on: test/cpu/fixtures/fake-cudart.c's kernels variant
// (its graph and texture half typed by cuda_runtime_api.h, a second object from the same source),
// built with gcc -O2 and linked with a benchmark's own C sources.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { CUDART_VERSION } from '../src/runtime/constants.gen';

/**
 * Builds the kernels variant into `dir` as `name`, linked with `extra` C sources; the functions named
 * in `renamed` become kernels_<name> in the variant's own object, so that an extra source defines them
 * its own way. Paths are the repository's, `root` (the working directory by default). Returns the library's path.
 */
export function buildKernelsFake(dir: string, name: string, extra: string[] = [], renamed: string[] = [], root = process.cwd()): string {
  const lib = path.join(dir, name);
  const source = path.join(root, 'test', 'cpu', 'fixtures', 'fake-cudart.c');
  const flags = ['-fPIC', '-O2', '-DFAKE_KERNELS', `-DFAKE_CUDART_VERSION=${CUDART_VERSION}`];
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  const typed = path.join(dir, 'typed.o');
  execFileSync('gcc', ['-c', ...flags, '-DFAKE_WITH_HEADER', `-I${include}`, '-o', typed, source]);
  let kernels = source;
  if (renamed.length > 0) {
    kernels = path.join(dir, 'kernels.o');
    execFileSync('gcc', ['-c', ...flags, ...renamed.map((f) => `-D${f}=kernels_${f}`), '-o', kernels, source]);
  }
  execFileSync('gcc', ['-shared', '-pthread', ...flags, '-o', lib, kernels, typed, ...extra.map((f) => path.join(root, f))]);
  return lib;
}
