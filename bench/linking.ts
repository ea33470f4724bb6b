// The LTO rows: compile bench/lto/math.cu and kernel.cu to LTO-IR with NVRTC and link them with LTO
// through nvJitLink (what examples/ltoLink.ts does before launching), through the core layer, cold
// (no cache) and from the disk cache (programs and linked cubin), beside bench/lto.cpp in C.
// CSV lines `core,<operation>,<ns>`; from the repo root, after the build:
//   node dist-bench/bench/linking.js
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { core } = require(path.resolve('dist')) as typeof import('../src');
const { Device, Program, Linker } = core;

const MATH = fs.readFileSync(path.join('bench', 'lto', 'math.cu'), 'utf8');
const KERNEL = fs.readFileSync(path.join('bench', 'lto', 'kernel.cu'), 'utf8');

/** The median of 5 runs of `f`, in ns. */
function median5(f: () => unknown): number {
  const r: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    f();
    r.push((performance.now() - t) * 1e6);
  }
  return r.sort((a, b) => a - b)[2];
}
const out = (name: string, v: number) => console.log(`core,${name},${v.toFixed(1)}`);

function compileAndLink(cache: boolean | string): Uint8Array {
  const dev = Device.get(0);
  const math = Program.compile(MATH, { name: 'math.cu', arch: dev, target: 'ltoir', cache });
  const kernel = Program.compile(KERNEL, { name: 'kernel.cu', arch: dev, target: 'ltoir', cache });
  return new Linker(math.objectCode, kernel.objectCode, { arch: dev, lto: true, optimization: 3, cache }).link().code;
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-lto-'));
  try {
    compileAndLink(false); // load NVRTC and nvJitLink once, as the C anchor does
    out(
      'lto_compile2+link_cold',
      median5(() => compileAndLink(false)),
    );
    compileAndLink(dir);
    out(
      'lto_compile2+link_cached',
      median5(() => compileAndLink(dir)),
    );
    const dev = Device.get(0);
    const a = Program.compile(MATH, { name: 'math.cu', arch: dev, target: 'ltoir', cache: false }).objectCode;
    const b = Program.compile(KERNEL, { name: 'kernel.cu', arch: dev, target: 'ltoir', cache: false }).objectCode;
    out(
      'lto_link_only',
      median5(() => new Linker(a, b, { arch: dev, lto: true, optimization: 3, cache: false }).link()),
    );
    console.log(
      `# lto rows: ns per compile of both units and LTO link (cold: no cache; cached: ~/.cache-style disk cache in ${dir}); C: bench/lto.cpp`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
