// The facade against raw koffi calls of the same functions, on whatever libcudart loads (without a
// driver every call returns cudaErrorInsufficientDriver at once, so this measures marshalling). Those
// rows pass made-up handles, which only the no-driver library tolerates: where a driver answers they
// are left out, with a line saying so (`npm run bench` measures the calls there).
// `bench/core-cpu.ts` measures core's rows on a fake libcudart.
// Runs against the build from the repo root: `npm run bench:cpu`; `node dist-bench/bench/cpu.js --startup`
// measures only the start-up, on any machine (`--entries cuda-bindings,cuda-bindings/core` for those two only).
import koffi from 'koffi';
import * as path from 'node:path';

// The compiled package, as users load it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { cudart } = require(path.resolve('dist')) as typeof import('../src');

// A timing loop compiled for each case (its name in the source keeps V8 from sharing one): a loop
// shared by every case would call a megamorphic site and be re-optimised as the cases take turns.
// The median of 3 timed loops of n calls, in ns per call.
function timer(name: string): (fn: () => unknown, n: number) => number {
  return new Function(
    'fn',
    'n',
    `// ${name.replace(/\n/g, ' ')}\nconst r = [];\nfor (let rep = 0; rep < 3; rep++) {\n  const t = process.hrtime.bigint();\n  for (let i = 0; i < n; i++) fn();\n  r.push(Number(process.hrtime.bigint() - t) / n);\n}\nreturn r.sort((a, b) => a - b)[1];`,
  ) as (fn: () => unknown, n: number) => number;
}

const info = cudart.libraryInfo();
const lib = koffi.load(info.path);
const raw = {
  cudaGetDevice: lib.func('int cudaGetDevice(void *)'),
  cudaPeekAtLastError: lib.func('int cudaPeekAtLastError()'),
  cudaStreamQuery: lib.func('int cudaStreamQuery(void *)'),
  cudaEventRecord: lib.func('int cudaEventRecord(void *, void *)'),
  cudaMemcpy: lib.func('int cudaMemcpy(void *, void *, size_t, int)'),
  cudaGetDeviceProperties: lib.func('int cudaGetDeviceProperties(void *, int)'),
  cudaMallocAsync: lib.func('int cudaMallocAsync(void *, size_t, void *)'),
  // dim3 by value as its two 8-byte words, as the facade declares it on x86-64 and AArch64.
  cudaLaunchKernel: lib.func('int cudaLaunchKernel(void *, uint64_t, uint64_t, uint64_t, uint64_t, void *, size_t, void *)'),
  cudaMemcpy3D: lib.func('int cudaMemcpy3D(void *)'),
};
const i32 = new Int32Array(2);
const u64 = new BigUint64Array(1);
const prop = Buffer.alloc(1008);
const host = new Int32Array(1);
const s = cudart.cudaStream_t(0x1234);
const e = cudart.cudaEvent_t(0x5678);
const g = { x: 1, y: 1, z: 1 };
const d3 = new cudart.dim3(g);
// A struct whose pointer field holds host memory: the call checks it is attached and large enough.
const p3 = new cudart.cudaMemcpy3DParms({
  kind: 1,
  extent: { width: 64, height: 1, depth: 1 },
  srcPtr: { ptr: new Uint8Array(64), pitch: 64 },
});

const cases: [string, () => unknown, () => unknown, number][] = [
  ['cudaPeekAtLastError', () => raw.cudaPeekAtLastError(), () => cudart.cudaPeekAtLastError(), 2_000_000],
  ['cudaGetDevice', () => raw.cudaGetDevice(i32), () => cudart.cudaGetDevice(), 2_000_000],
  ['cudaStreamQuery', () => raw.cudaStreamQuery(s), () => cudart.cudaStreamQuery(s), 2_000_000],
  ['cudaEventRecord', () => raw.cudaEventRecord(e, s), () => cudart.cudaEventRecord(e, s), 2_000_000],
  ['cudaMemcpy 4 B', () => raw.cudaMemcpy(0x1000n, host, 4, 1), () => cudart.cudaMemcpy(0x1000n, host, 4, 1), 1_000_000],
  ['cudaMallocAsync', () => raw.cudaMallocAsync(u64, 1024, s), () => cudart.cudaMallocAsync(1024, s), 1_000_000],
  ['cudaGetDeviceProperties', () => raw.cudaGetDeviceProperties(prop, 0), () => cudart.cudaGetDeviceProperties(0), 200_000],
  [
    'cudaLaunchKernel',
    () => raw.cudaLaunchKernel(0x10n, 4294967297, 1, 4294967297, 1, null, 0, s),
    () => cudart.cudaLaunchKernel(0x10n, d3, d3, null, 0, s),
    500_000,
  ],
  ['cudaMemcpy3D, a host buffer in srcPtr', () => raw.cudaMemcpy3D(p3.getBytes()), () => cudart.cudaMemcpy3D(p3), 1_000_000],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** What says a CUDA driver is here (its version, or libcuda loading), or null: the made-up handles below would crash it. */
function driverHere(): string | null {
  const [err, version] = cudart.cudaDriverGetVersion();
  if (err === 0 && version !== null && version > 0) return `cudaDriverGetVersion gives ${version}`;
  try {
    koffi.load(process.platform === 'win32' ? 'nvcuda.dll' : 'libcuda.so.1');
    return 'libcuda loads';
  } catch {
    return null;
  }
}

// With `--startup`, only the start-up part.
const driver = process.argv.includes('--startup') || process.argv.includes('--nvtx') ? null : driverHere();
if (driver !== null)
  console.log(
    `# A CUDA driver is here (${driver}): the facade-against-koffi rows pass made-up handles that only the no-driver library tolerates, so they are left out; use \`npm run bench\` on this machine.`,
  );
if (!process.argv.includes('--startup') && !process.argv.includes('--nvtx') && driver === null) {
  // Interleaved: each round times every case raw then through the facade, so a slow stretch of the
  // machine hits both; the ratio is the median of the per-round ratios.
  const ROUNDS = 10;
  const samples = cases.map(() => ({ raw: [] as number[], facade: [] as number[] }));
  const timers = cases.map(([name]) => ({ raw: timer(`raw ${name}`), facade: timer(`facade ${name}`) }));
  for (const [, r, f] of cases) {
    r();
    f();
  }
  for (let round = 0; round < ROUNDS; round++) {
    cases.forEach(([, r, f, n], i) => {
      samples[i].raw.push(timers[i].raw(r, Math.ceil(n / 10)));
      samples[i].facade.push(timers[i].facade(f, Math.ceil(n / 10)));
    });
  }
  console.log(
    `# ${info.path} ${info.version}; node ${process.version}; koffi ${koffi.version}; ${ROUNDS} interleaved rounds, median [min–max] ns per call`,
  );
  console.log('| call | raw koffi | facade | facade / raw |');
  console.log('|---|---:|---:|---:|');
  cases.forEach(([name], i) => {
    const { raw: a, facade: b } = samples[i];
    const span = (xs: number[]) => `${median(xs).toFixed(1)} [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}]`;
    console.log(`| ${name} | ${span(a)} | ${span(b)} | ${median(b.map((x, k) => x / a[k])).toFixed(2)}× |`);
  });
}

// NVTX with no tool attached (NVTX_INJECTION64_PATH unset): what a range or a marker costs an
// application that is not being profiled, beside an empty function call. `--nvtx` runs only this.
if (!process.argv.includes('--startup')) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { core } = require(path.resolve('dist')) as typeof import('../src');
  const { nvtx } = core;
  if (nvtx.tool !== null) console.log(`\n# NVTX: a tool is attached (${nvtx.tool}); these figures are with it`);
  const empty = (): void => undefined;
  const attrs = { message: 'step', color: 'green' as const, payload: 1 };
  const nvtxCases: [string, () => unknown, number][] = [
    ['an empty JS function call', () => empty(), 5_000_000],
    ["nvtx.rangePush('step') + nvtx.rangePop()", () => (nvtx.rangePush('step'), nvtx.rangePop()), 5_000_000],
    ["nvtx.mark('here')", () => nvtx.mark('here'), 5_000_000],
    ['nvtx.rangePush({ message, color, payload }) + rangePop()', () => (nvtx.rangePush(attrs), nvtx.rangePop()), 5_000_000],
  ];
  const nvtxTimers = nvtxCases.map(([name]) => timer(`nvtx ${name}`));
  const nvtxSamples = nvtxCases.map(() => [] as number[]);
  for (let round = 0; round < 10; round++) nvtxCases.forEach(([, f, n], i) => nvtxSamples[i].push(nvtxTimers[i](f, Math.ceil(n / 10))));
  console.log(`\n# NVTX, no tool attached: 10 interleaved rounds, median [min–max] ns per call`);
  console.log('| call | ns |');
  console.log('|---|---:|');
  nvtxCases.forEach(([name], i) => {
    const xs = nvtxSamples[i];
    console.log(`| ${name} | ${median(xs).toFixed(1)} [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}] |`);
  });
  if (process.argv.includes('--nvtx')) process.exit(0);
}

// Start-up in fresh processes, for every entry point of package.json's `exports`, loaded by a script
// file as CommonJS (`require`) and by one as an ES module (`await import`): from just before the load
// until the first call has returned, the wall time, the process's CPU time (all threads; a loaded
// machine stretches the first, hardly the second) and what the RSS grew by. The first call is the
// runtime's cudaGetDeviceCount where the entry has it (the root's `cudart` too), core's Device.get(0),
// else the library's libraryInfo(), which opens it: an absent library's LibraryLoadError is its answer.
// The processes take turns, entry by entry, CommonJS then ES module, so that a slow spell of the machine
// falls on both; median of 7 of each (`--reps n`), and the median of the per-turn ratios of CPU time.
const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
const fs = require('node:fs') as typeof import('node:fs');
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { name: string; exports: Record<string, unknown> };
// `--entries a,b` keeps only those (e.g. `cuda-bindings,cuda-bindings/core`: where a driver makes each
// process's first call slow, the whole table takes minutes).
const only = process.argv.includes('--entries') ? process.argv[process.argv.indexOf('--entries') + 1].split(',') : null;
const entries = Object.keys(pkg.exports)
  .filter((k) => k !== './package.json')
  .map((k) => (k === '.' ? pkg.name : `${pkg.name}/${k.slice(2)}`))
  .filter((e) => only === null || only.includes(e));
// The scripts sit beside this one, inside the package, so that they import it by name as a user does.
const probe = (load: string) =>
  [
    'const r0 = process.memoryUsage().rss; const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();',
    load,
    'let answer;',
    'try {',
    "  answer = m.cudaGetDeviceCount ? m.cudaGetDeviceCount()[0] : m.cudart ? m.cudart.cudaGetDeviceCount()[0] : m.Device ? 'Device ' + m.Device.get(0).ordinal : m.libraryInfo().version;",
    '} catch (e) {',
    '  answer = e.constructor.name;',
    '}',
    'const cpu = process.cpuUsage(c0);',
    'console.log(JSON.stringify([Number(process.hrtime.bigint() - t0) / 1e6, (cpu.user + cpu.system) / 1e3, (process.memoryUsage().rss - r0) / 1048576, answer]));',
  ].join('\n');
const scripts = { cjs: path.join(__dirname, 'startup-probe.cjs'), esm: path.join(__dirname, 'startup-probe.mjs') };
fs.writeFileSync(scripts.cjs, probe('const m = require(process.argv[2]);'));
fs.writeFileSync(scripts.esm, probe('const m = await import(process.argv[2]);'));
type Sample = [ms: number, cpu: number, rss: number, answer: unknown];
const run = (script: string, entry: string) => JSON.parse(execFileSync(process.execPath, [script, entry]).toString()) as Sample;
const REPS = Number(process.argv.includes('--reps') ? process.argv[process.argv.indexOf('--reps') + 1] : 7);
const samples = entries.map(() => ({ cjs: [] as Sample[], esm: [] as Sample[] }));
for (let rep = 0; rep < REPS; rep++)
  entries.forEach((entry, i) => {
    samples[i].cjs.push(run(scripts.cjs, entry));
    samples[i].esm.push(run(scripts.esm, entry));
  });
const col = (xs: Sample[], k: 0 | 1 | 2) => median(xs.map((x) => x[k])).toFixed(1);
console.log(
  `\n# start-up: ${REPS} fresh processes each, median; ms and CPU ms (all threads) from the load to the first call's return; RSS growth MiB`,
);
console.log('| entry | first call gives | require: ms | CPU ms | RSS MiB | import: ms | CPU ms | RSS MiB | import / require (CPU) |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
entries.forEach((entry, i) => {
  const { cjs, esm } = samples[i];
  const ratio = median(cjs.map((c, k) => esm[k][1] / c[1]));
  console.log(
    `| ${entry} | ${cjs[0][3]} | ${col(cjs, 0)} | ${col(cjs, 1)} | ${col(cjs, 2)} | ${col(esm, 0)} | ${col(esm, 1)} | ${col(esm, 2)} | ${ratio.toFixed(2)}× |`,
  );
});
// Issue #37: `require('cuda-bindings/core')` + Device.get(0) against the root's require + its first call,
// the processes of each turn compared (median of the per-turn differences).
const rootAt = entries.indexOf(pkg.name);
const coreAt = entries.indexOf(`${pkg.name}/core`);
if (rootAt >= 0 && coreAt >= 0) {
  const diff = (k: 0 | 1 | 2) => median(samples[coreAt].cjs.map((c, i) => c[k] - samples[rootAt].cjs[i][k])).toFixed(1);
  console.log(
    `\nrequire('${pkg.name}/core') + Device.get(0) over require('${pkg.name}') + cudaGetDeviceCount: ${diff(0)} ms, ${diff(1)} CPU ms, ${diff(2)} MiB RSS (median of ${REPS} per-turn differences)`,
  );
}
