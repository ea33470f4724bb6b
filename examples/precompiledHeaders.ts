// precompiledHeaders: NVRTC precompiled headers (Program's `pch` options, as cuda.core has them). A
// header with many templates is parsed once into a PCH file; the next programs that include it load
// the PCH instead. Prints each compile's time and checks each kernel's result.
//   npx tsx examples/precompiledHeaders.ts
// Exits with status 1, and one line on stderr saying why, when a device or NVRTC is missing.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { core } from 'cuda-bindings';
import { firstDevice } from './lib/core';

const { Program } = core;

const HEADER = Array.from(
  { length: 2000 },
  (_, i) => `template <typename T> __device__ T op${i}(T x) { return x * ${(i % 9) + 1} - ${i % 13}; }`,
).join('\n');

function main(): number {
  const dev = firstDevice('precompiledHeaders');
  if (dev === null) return 1;
  console.log(`> Using CUDA Device [0]: ${dev.name}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pch-example-'));
  let ok = true;
  try {
    using out = dev.allocate(4);
    for (const [i, mode] of (['none', 'pch', 'pch', 'pch'] as const).entries()) {
      const n = i + 1;
      const source = `#include "ops.h"\nextern "C" __global__ void k(int *out) { out[0] = op${n}(${n * 10}); }\n`;
      const t0 = performance.now();
      let p;
      try {
        p = Program.compile(source, {
          name: `k${n}.cu`,
          headers: { 'ops.h': HEADER },
          compiler: 'nvrtc',
          cache: false,
          ...(mode === 'pch' ? { pch: true, pchDir: dir } : {}),
        });
      } catch (e) {
        console.error(`precompiledHeaders: ${(e as Error).message.split('\n')[0]}`);
        return 1;
      }
      const ms = performance.now() - t0;
      using m = p.load();
      m.kernel('k').launch({ grid: 1, block: 1 }, out);
      const got = out.copyTo(new Int32Array(1))[0];
      const want = n * 10 * ((n % 9) + 1) - (n % 13);
      ok &&= got === want;
      const what = mode === 'none' ? 'no PCH' : p.pchCreated ? 'PCH created' : 'PCH used (or not needed)';
      console.log(`> compile ${n} (${what}): ${ms.toFixed(0)} ms; op${n}(${n * 10}) = ${got}${got === want ? '' : ` (want ${want})`}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`Result = ${ok ? 'PASS' : 'FAIL'}`);
  return ok ? 0 : 1;
}

process.exitCode = main();
