// NVRTC precompiled headers: how long a header-heavy program takes to compile with and without a PCH
// (issue #32). Two programs: one including a generated header of 400 templates and structs, and one
// including CCCL's libcu++ headers (cuda/std: complex, tuple, array, functional, type_traits, atomic).
// For each, `runs` compiles of a new kernel body each time (so no compile is a repeat), cache off:
//   - no PCH;
//   - `createPch` once (timed apart), then `usePch` of that file;
//   - `pch: true` in a fresh `pchDir` (the first compile creates it, the rest use it).
// Prints the median and min–max of each in ms. Needs libnvrtc (the GPU machine):
//   npm run build && npx tsc -p tsconfig.bench.json && node dist-bench/bench/pch.js [runs]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { core, nvrtc } = require(path.resolve('dist')) as typeof import('../src');

const RUNS = Number(process.argv[2] ?? 10);

const TEMPLATES = Array.from(
  { length: 400 },
  (_, i) =>
    `template <typename T> __device__ T f${i}(T x) { return x * ${i % 7} + ${i}; }\nstruct S${i} { int v[${(i % 5) + 1}]; __device__ int sum() const { int s = 0; for (int k = 0; k < ${(i % 5) + 1}; k++) s += v[k]; return s; } };`,
).join('\n');

const CCCL = ['complex', 'tuple', 'array', 'functional', 'type_traits', 'atomic', 'limits', 'utility']
  .map((h) => `#include <cuda/std/${h}>`)
  .join('\n');

interface Case {
  name: string;
  header: string;
  body: (i: number) => string;
  options: string[];
}

const cuda = process.env.CUDA_HOME ?? '/usr/local/cuda';
const CASES: Case[] = [
  { name: '400 templates and structs (generated heavy.h)', header: TEMPLATES, body: (i) => `out[0] = f${i % 400}(${i});`, options: [] },
  {
    name: "CCCL's libcu++: 8 cuda/std headers",
    header: CCCL,
    body: (i) =>
      `cuda::std::complex<float> z(${i}.0f, 1.0f); out[0] = (int)cuda::std::abs(z * z) + cuda::std::get<0>(cuda::std::make_tuple(${i}, 2));`,
    options: [`-I${cuda}/include/cccl`, `-I${cuda}/include`, '-std=c++17'],
  },
];

const source = (c: Case, i: number) => `#include "heavy.h"\nextern "C" __global__ void k${i}(int *out) { ${c.body(i)} }\n`;

function timed(fn: () => unknown): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

function summary(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `${s[s.length >> 1].toFixed(1)} (${s[0].toFixed(1)}–${s[s.length - 1].toFixed(1)})`;
}

function measure(c: Case): string[] {
  const headers = { 'heavy.h': c.header };
  const compile = (i: number, extra: object) => core.Program.compile(source(c, i), { headers, options: c.options, cache: false, ...extra });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pch-bench-'));
  try {
    compile(0, {}); // warm-up: NVRTC loaded, the OS's file cache filled
    const plain = Array.from({ length: RUNS }, (_, i) => timed(() => compile(1 + i, {})));
    const file = path.join(dir, 'heavy.pch');
    const create = timed(() => compile(100, { createPch: file }));
    const use = Array.from({ length: RUNS }, (_, i) => timed(() => compile(101 + i, { usePch: file })));
    const autoDir = path.join(dir, 'auto');
    fs.mkdirSync(autoDir);
    const auto = Array.from({ length: RUNS + 1 }, (_, i) => timed(() => compile(200 + i, { pch: true, pchDir: autoDir })));
    return [
      c.name,
      summary(plain),
      create.toFixed(1),
      summary(use),
      auto[0].toFixed(1),
      summary(auto.slice(1)),
      (median(plain) / median(use)).toFixed(2) + '×',
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function median(ms: number[]): number {
  const s = [...ms].sort((a, b) => a - b);
  return s[s.length >> 1];
}

const [, major, minor] = nvrtc.nvrtcVersion();
console.log(`NVRTC ${major}.${minor}, ${RUNS} compiles per cell, ms: median (min–max)\n`);
console.log('| program | no PCH | createPch (once) | usePch | pch: true, first | pch: true, later | no PCH ÷ usePch |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const c of CASES) {
  try {
    console.log(`| ${measure(c).join(' | ')} |`);
  } catch (e) {
    console.log(`| ${c.name} | failed: ${(e as Error).message.split('\n')[0]} |`);
  }
}
