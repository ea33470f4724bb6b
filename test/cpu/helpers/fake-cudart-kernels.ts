// The fake libcudart of test/cpu/fixtures (fake-cudart-kernels.c, -graphs.c, -textures.c), built
// with gcc, and a way to run core code against it in a child process.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
const fixtures = path.join(__dirname, '..', 'fixtures');

/** Builds the fake into a fresh temporary folder; returns the library's path. */
export function buildFakeCudart(): { lib: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-fake-'));
  const lib = path.join(dir, 'libcudart-fake.so');
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', `-I${include}`, '-o', lib, path.join(fixtures, 'fake-cudart-kernels.c'), path.join(fixtures, 'fake-cudart-graphs.c'), path.join(fixtures, 'fake-cudart-textures.c')]);
  return { lib, dir };
}

/**
 * Runs `body` (the inside of an async function, with `core`, `cudart`, `koffi`, `fake` (the fake's
 * own exports) and `kernel(handle, name)` in scope) against the fake; returns what it logs as JSON.
 * A thrown error comes back as { error }.
 */
export function runWithFake(lib: string, body: string): unknown {
  const script = `
    const koffi = require('koffi');
    const { core, cudart } = require('./src');
    const { Kernel } = require('./src/core/Kernel');
    const L = koffi.load(${JSON.stringify(lib)});
    const fake = { last: L.func('void fake_last(void *)'), launches: L.func('long fake_launches(void)'), live: L.func('long fake_live_allocations(void)'),
      config: L.func('void fake_last_config(void *)'), args: L.func('void *fake_last_args(void)'),
      object: L.func('const char *fake_last_object(void)'), objects: L.func('long fake_live_objects(void)') };
    const kernel = (h, name) => new Kernel(h, name, { isClosed: false });
    (async () => { ${body} })().catch((e) => { console.log(JSON.stringify({ error: String(e && e.stack || e) })); });`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', cwd: root, env: { ...process.env, CUDA_BINDINGS_CUDART: lib }, timeout: 180_000 });
  if (run.stderr !== '' || run.status !== 0) throw new Error(`the child process failed (status ${run.status}, signal ${run.signal}):\n${run.stderr}\n${run.stdout}`);
  return JSON.parse(run.stdout);
}
