// CheckpointProcess without a GPU: a fake libcuda (test/cpu/fixtures/fake-checkpoint.c, built with
// gcc here) whose process 4242 moves through the driver's checkpoint states; the arguments that
// reach C (the lock's timeout, the restore's GPU pairs) and the errors that say what a refused step
// needed; and a driver without the checkpoint API.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../../src';

const root = path.join(__dirname, '..', '..', '..');
let dir: string;
let lib: string;
let old: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-checkpoint-'));
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  const src = path.join(__dirname, '..', 'fixtures', 'fake-checkpoint.c');
  lib = path.join(dir, 'libcuda-fake-checkpoint.so');
  old = path.join(dir, 'libcuda-fake-old.so');
  execFileSync('gcc', ['-shared', '-fPIC', `-I${include}`, '-o', lib, src]);
  execFileSync('gcc', ['-shared', '-fPIC', '-DOLD_DRIVER', `-I${include}`, '-o', old, src]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `body` (with `core`, `P` = CheckpointProcess, `err(f)`, `out(v)` and `log()` in scope) on the fake driver `driver`. */
function onFake(body: string, driver = lib): unknown {
  const script = `
    const { core } = require('./src');
    const P = core.CheckpointProcess;
    const log = () => require('koffi').load(process.env.CUDA_BINDINGS_CUDA).func('const char *fake_log(void)')().split('\\n');
    const out = (v) => console.log(JSON.stringify(v));
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, CUDA_BINDINGS_CUDA: driver },
    timeout: 60_000,
  });
  if (r.stderr !== '' || r.status !== 0) throw new Error(`the child failed (status ${r.status}):\n${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout);
}

test('lock, checkpoint, restore onto mapped GPUs and unlock move the process through its states', () => {
  const r = onFake(`
    const p = new P(4242);
    const states = [p.state];
    p.lock(2500); states.push(p.state);
    p.checkpoint(); states.push(p.state);
    p.restore(new Map([['GPU-00112233-4455-6677-8899-aabbccddeeff', 'GPU-ffeeddcc-bbaa-9988-7766-554433221100']])); states.push(p.state);
    p.unlock(); states.push(p.state);
    p.lock().checkpoint().restore().unlock();
    out({ states, tid: p.restoreThreadId, log: log() });`);
  expect(r).toEqual({
    states: ['running', 'locked', 'checkpointed', 'locked', 'running'],
    tid: 4243,
    log: [
      'lock pid=4242 timeout=2500',
      'checkpoint pid=4242 args=null',
      'restore pid=4242 pairs=1 00112233445566778899aabbccddeeff>ffeeddccbbaa99887766554433221100',
      'unlock pid=4242',
      'lock pid=4242 timeout=0',
      'checkpoint pid=4242 args=null',
      'restore pid=4242 pairs=0',
      'unlock pid=4242',
      '',
    ],
  });
});

test('a step from the wrong state, a lock that times out, an unknown process and a refused mapping say what was needed', () => {
  const r = onFake(`
    out([
      err(() => new P(4242).checkpoint()),
      err(() => new P(4242).unlock()),
      err(() => new P(4243).lock(10)),
      err(() => new P(999).lock()),
      err(() => new P(999).state),
      err(() => new P(999).restore([['GPU-00112233-4455-6677-8899-aabbccddeeff', 'GPU-00112233-4455-6677-8899-aabbccddeeff']])),
    ]);`);
  expect(r).toEqual([
    'CudaError: CUDA_ERROR_ILLEGAL_STATE: fake driver error (in CheckpointProcess.checkpoint (cuCheckpointProcessCheckpoint, pid 4242)): checkpoint() needs the process locked; it is running (the order is lock, checkpoint, restore, unlock)',
    'CudaError: CUDA_ERROR_ILLEGAL_STATE: fake driver error (in CheckpointProcess.unlock (cuCheckpointProcessUnlock, pid 4242)): unlock() needs the process locked; it is running (the order is lock, checkpoint, restore, unlock)',
    'CudaError: CUDA_ERROR_NOT_READY: fake driver error (in CheckpointProcess.lock (cuCheckpointProcessLock, pid 4243)): the process did not finish its CUDA work within 10 ms; give lock() a longer timeout, or 0 to wait',
    'CudaError: CUDA_ERROR_INVALID_VALUE: fake driver error (in CheckpointProcess.lock (cuCheckpointProcessLock, pid 999)): no CUDA process 999 (or one of another user), or an argument the driver refused',
    'CudaError: CUDA_ERROR_INVALID_VALUE: fake driver error (in CheckpointProcess.state (cuCheckpointProcessGetState, pid 999)): no CUDA process 999 (or one of another user), or an argument the driver refused',
    // A mapping the driver refuses: the usual reason on a machine of several GPUs is one left out.
    'CudaError: CUDA_ERROR_INVALID_VALUE: fake driver error (in CheckpointProcess.restore (cuCheckpointProcessRestore, pid 999)): no CUDA process 999 (or one of another user), or an argument the driver refused; a gpuMapping must name every GPU the process could see, not only those it used (this one names 1): map each GPU that stays to itself and call restore() again',
  ]);
});

test('a driver without the checkpoint API: an Error naming the call and the driver it needs', () => {
  const r = onFake(`out([err(() => new P(4242).lock()), err(() => new P(4242).state)]);`, old);
  expect(r).toEqual([
    'Error: CheckpointProcess.lock: this driver has no cuCheckpointProcessLock; the CUDA checkpoint API needs a Linux driver r570 (CUDA 12.8) or later',
    'Error: CheckpointProcess.state: this driver has no cuCheckpointProcessGetState; the CUDA checkpoint API needs a Linux driver r570 (CUDA 12.8) or later',
  ]);
});

test('bad arguments are refused before the driver is asked', () => {
  const P = core.CheckpointProcess;
  expect(() => new P(0)).toThrow(new RangeError("CheckpointProcess: parameter 'pid' must be a process id (a positive integer), got 0"));
  expect(() => new P(1.5)).toThrow(RangeError);
  const p = new P(4242);
  expect(() => p.lock(-1)).toThrow("CheckpointProcess.lock: parameter 'timeoutMs' must be a non-negative integer of milliseconds, got -1");
  expect(() => p.restore(new Map())).toThrow(
    "CheckpointProcess.restore: parameter 'gpuMapping' must be a non-empty Map or array of [old, new] GPUs",
  );
  expect(() => p.restore([['GPU-123', 'GPU-00112233-4455-6677-8899-aabbccddeeff']])).toThrow(
    'CheckpointProcess.restore: gpuMapping[0][0] must be a Device or a GPU UUID (\'GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\'), got the string "GPU-123"',
  );
  expect(() => p.restore([['GPU-00112233-4455-6677-8899-aabbccddeeff'] as never])).toThrow(
    'CheckpointProcess.restore: gpuMapping[0] must be [old, new]',
  );
});
