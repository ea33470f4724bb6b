// The fake libcudart of the CPU tests (test/cpu/fixtures/fake-cudart.c), built with gcc at test time
// in one of its variants, and ways to run code against it in a child process. Test-only controls:
// fake_set_busy(stream, busy) makes events recorded on a stream incomplete until cleared (the
// host-functions variant); fake_count(name) says how often a function was called.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CUDART_VERSION } from '../../../src/runtime/constants.gen';

const root = path.join(__dirname, '..', '..', '..');
const SOURCE = path.join(__dirname, '..', 'fixtures', 'fake-cudart.c');

/** The parts of the runtime test/cpu/fixtures/fake-cudart.c can fake (see its opening comment). */
export type FakeCudartVariant = 'host-functions' | 'memory' | 'kernels';

/**
 * Builds the fake libcudart of `variant` into `dir` (a fresh temporary folder by default) with gcc;
 * returns the library's path and its folder. It reports the generated CUDART_VERSION.
 */
export function buildFakeCudart(
  variant: FakeCudartVariant,
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-fake-')),
): { lib: string; dir: string } {
  const lib = path.join(dir, `libcudart-fake-${variant}.so`);
  const flags = ['-fPIC', '-O1', `-DFAKE_CUDART_VERSION=${CUDART_VERSION}`, `-DFAKE_${variant.toUpperCase().replace('-', '_')}`];
  if (variant !== 'kernels') {
    execFileSync('gcc', ['-shared', '-pthread', ...flags, '-o', lib, SOURCE]);
    return { lib, dir };
  }
  // The graph and texture half is typed by cuda_runtime_api.h: a second object from the same source.
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  const typed = path.join(dir, 'fake-typed.o');
  execFileSync('gcc', ['-c', ...flags, '-DFAKE_WITH_HEADER', `-I${include}`, '-o', typed, SOURCE]);
  execFileSync('gcc', ['-shared', '-pthread', ...flags, '-o', lib, SOURCE, typed]);
  return { lib, dir };
}

let built: string | undefined;
let dir: string | undefined;

/** Builds the host-functions fake once per test file; returns its path. */
export function fakeCudart(): string {
  if (built) return built;
  ({ lib: built, dir } = buildFakeCudart('host-functions'));
  return built;
}

/** Removes the fake library's directory (call in afterAll). */
export function removeFakeCudart(): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  built = dir = undefined;
}

/** Runs `script` (CommonJS, from the repository root) in a fresh Node on the fake library; `args` go to node. */
export function runOnFake(script: string, args: string[] = []): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...args, '--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDART: fakeCudart() },
    timeout: 30_000,
  });
}

/** Script lines that bind the fake's test controls: `fake.setBusy(stream, busy)`, `fake.count(name)`. */
export const FAKE_CONTROLS = `
  const fake = (() => {
    const lib = require('koffi').load(process.env.CUDA_BINDINGS_CUDART);
    const setBusy = lib.func('void fake_set_busy(uint64_t, int)');
    const count = lib.func('long fake_count(const char *)');
    return { setBusy: (s, busy) => setBusy(s, busy ? 1 : 0), count };
  })();`;

/**
 * Script lines, to come before anything that calls the runtime, that record every libcudart call in
 * `calls`, in order: `{ name, args }`, each argument as a bigint when it is an integer or address
 * (host memory and strings: null). A call on the thread pool (`fn.async`) adds `{ name: name + '
 * done', args: [] }` when it returns. Every path of the library binds through `libcudart.bind`, so
 * this sees the facade's calls, core's direct ones and the awaited forms' alike.
 */
export const CALL_TRACE = `
  const calls = (() => {
    const { libcudart } = require('./src/ffi/cudart-lib.gen');
    const bind = libcudart.bind.bind(libcudart);
    const log = [];
    const big = (v) => (typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : null);
    libcudart.bind = (name, addresses) => {
      const f = bind(name, addresses);
      const traced = (...args) => { log.push({ name, args: args.map(big) }); return f(...args); };
      traced.async = (...args) => {
        const callback = args.pop();
        log.push({ name, args: args.map(big) });
        return f.async(...args, (err, status) => { log.push({ name: name + ' done', args: [] }); callback(err, status); });
      };
      return traced;
    };
    return log;
  })();`;

/**
 * Runs `body` (the inside of an async function, with `core`, `cudart`, `koffi`, `fake` (the fake's
 * own exports) and `kernel(handle, name)` in scope) against the fake; returns what it logs as JSON.
 * A thrown error comes back as { error }.
 */
export function runWithFake(lib: string, body: string, nodeArgs: string[] = []): unknown {
  const script = `
    const koffi = require('koffi');
    const { core, cudart } = require('./src');
    const { Kernel } = require('./src/core/launch/Kernel');
    const L = koffi.load(${JSON.stringify(lib)});
    const fake = { last: L.func('void fake_last(void *)'), launches: L.func('long fake_launches(void)'), live: L.func('long fake_live_allocations(void)'),
      config: L.func('void fake_last_config(void *)'), args: L.func('void *fake_last_args(void)'),
      object: L.func('const char *fake_last_object(void)'), objects: L.func('long fake_live_objects(void)'),
      kernelAt: L.func('const void *fake_last_kernel(void)'), streamAt: L.func('void *fake_last_stream(void)') };
    const kernel = (h, name) => new Kernel(h, name, { isClosed: false });
    (async () => { ${body} })().catch((e) => { console.log(JSON.stringify({ error: String(e && e.stack || e) })); });`;
  const run = spawnSync(process.execPath, [...nodeArgs, '--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDART: lib },
    timeout: 180_000,
  });
  if (run.stderr !== '' || run.status !== 0)
    throw new Error(`the child process failed (status ${run.status}, signal ${run.signal}):\n${run.stderr}\n${run.stdout}`);
  return JSON.parse(run.stdout);
}
