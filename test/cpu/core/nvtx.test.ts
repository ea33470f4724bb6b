// NVTX without a GPU or a native build: a fake injection library (test/cpu/fixtures/
// fake-nvtx-injection.c, built with gcc against NVTX 3's header) attaches through
// NVTX_INJECTION64_PATH as Nsight Systems does, and records every call as a profiler sees it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
let dir: string;
let tool: string;
let notATool: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-nvtx-'));
  const include = process.env.CUDA_HOME ? path.join(process.env.CUDA_HOME, 'include') : '/usr/local/cuda/include';
  tool = path.join(dir, 'libfake-nvtx-injection.so');
  execFileSync('gcc', ['-shared', '-fPIC', `-I${include}`, '-o', tool, path.join(__dirname, '..', 'fixtures', 'fake-nvtx-injection.c')]);
  notATool = path.join(dir, 'libnot-a-tool.so');
  fs.writeFileSync(path.join(dir, 'n.c'), 'int something(void) { return 1; }\n');
  execFileSync('gcc', ['-shared', '-fPIC', '-o', notATool, path.join(dir, 'n.c')]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `body` (with `core`, `nvtx`, `out(v)` and `toolLog()` in scope) with NVTX_INJECTION64_PATH = `injection`; returns its output and warnings. */
function run(body: string, injection: string | undefined): { out: unknown; stderr: string } {
  const env = { ...process.env };
  delete env.NVTX_INJECTION64_PATH;
  if (injection) env.NVTX_INJECTION64_PATH = injection;
  const script = `
    const { core } = require('./src');
    const { nvtx } = core;
    const toolLog = () => require('koffi').load(process.env.NVTX_INJECTION64_PATH).func('const char *fake_nvtx_log(void)')().split('\\n');
    const out = (v) => console.log(JSON.stringify(v));
    (async () => { ${body} })().catch((e) => out({ error: String(e && e.stack || e) }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', cwd: root, env, timeout: 60_000 });
  if (r.status !== 0) throw new Error(`the child failed (status ${r.status}):\n${r.stderr}\n${r.stdout}`);
  return { out: JSON.parse(r.stdout), stderr: r.stderr };
}

test('a tool sees ranges, markers, colours, categories, payloads, domains and registered strings as it would in C', () => {
  const { out } = run(
    `
    const depths = [nvtx.rangePush('outer'), nvtx.rangePush({ message: 'inner', color: 'green', category: 3, payload: 2.5 })];
    nvtx.mark('here');
    nvtx.mark({ message: 'tick', color: 0x123456, payload: 2n ** 63n });
    nvtx.rangePop();
    nvtx.rangePop();
    const id = nvtx.rangeStart({ message: 'io', payload: -5n });
    nvtx.rangeEnd(id);
    nvtx.nameCategory(3, 'compute');
    const result = nvtx.range('wrapped', () => 42);
    await nvtx.rangeAsync('awaited', async () => undefined);
    const d = core.NvtxDomain.create('app');
    const hot = d.registerString('hot loop');
    d.nameCategory(1, 'io');
    d.rangePush(hot);
    d.mark({ message: hot, category: 1, color: 'red' });
    d.rangePop();
    d.rangeEnd(d.rangeStart('phase'));
    d.close();
    out({ tool: nvtx.tool === process.env.NVTX_INJECTION64_PATH, depths, id: typeof id, result, log: toolLog() });`,
    tool,
  );
  expect(out).toEqual({
    tool: true,
    depths: [0, 1],
    id: 'bigint',
    result: 42,
    log: [
      'init version=3 core=16 core2=16 cudart=7 last-core=null',
      "push 'outer' depth=0",
      "push@default 'inner' color=ff76b900 category=3 payload=double:2.5 depth=1",
      "mark 'here'",
      "mark@default 'tick' color=ff123456 payload=uint64:9223372036854775808",
      'pop depth=1',
      'pop depth=0',
      "start@default 'io' payload=int64:-5 id=100",
      'end id=100',
      "category 3 'compute'@default",
      "push 'wrapped' depth=0",
      'pop depth=0',
      "start 'awaited' id=101",
      'end id=101',
      "domain 'app'",
      "register 'hot loop'@app",
      "category 1 'io'@app",
      "push@app registered 'hot loop'@app depth=0",
      "mark@app registered 'hot loop'@app color=ffff0000 category=1",
      'pop@app depth=0',
      "start@app 'phase' id=102",
      'end@app id=102',
      'destroy@app',
      '',
    ],
  });
});

test('without a tool nothing is loaded: calls return at once (push/pop -2, start 0n) and bad messages are still refused', () => {
  const { out } = run(
    `
    const before = require('fs').readFileSync('/proc/self/maps', 'utf8').split('\\n').length;
    const r = [nvtx.tool, nvtx.rangePush('a'), nvtx.rangePop(), String(nvtx.rangeStart('b')), nvtx.mark('c')];
    const d = core.NvtxDomain.create('quiet');
    const s = d.registerString('x');
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return e.constructor.name + ': ' + e.message; } };
    out({ r, handle: String(d.handle), registered: String(s.handle), push: d.rangePush(s),
      maps: require('fs').readFileSync('/proc/self/maps', 'utf8').includes('nvtx'),
      bad: [err(() => nvtx.rangePush(5)), err(() => nvtx.mark({ message: 'm', color: 'mauve' })), err(() => nvtx.rangeEnd(1)),
            err(() => nvtx.rangePush({ message: 'm', category: -1 })), err(() => nvtx.rangePush({ payload: '1' }))],
      closed: (d.close(), err(() => d.rangePush('late'))) });`,
    undefined,
  );
  expect(out).toEqual({
    r: [null, -2, -2, '0', null],
    handle: '0',
    registered: '0',
    push: -2,
    maps: false,
    bad: [
      'TypeError: nvtx.rangePush: the message must be a string, a RegisteredString or { message, color, category, payload }, got 5',
      'TypeError: nvtx.mark: \'color\' must be a colour name (green, blue, yellow, purple, cyan, red, white, orange, gray), 0xRRGGBB or 0xAARRGGBB, got the string "mauve"',
      "TypeError: nvtx.rangeEnd: parameter 'id' must be the bigint rangeStart returned, got 1",
      "RangeError: nvtx.rangePush: 'category' must be an integer within [0, 2^32 - 1], got -1",
      'TypeError: nvtx.rangePush: \'payload\' must be a number or a bigint, got the string "1"',
    ],
    closed: 'Error: NvtxDomain.rangePush: the NvtxDomain was closed',
  });
});

test('a library that is not an NVTX tool: one warning that says so, and the calls do nothing', () => {
  const { out, stderr } = run(`out([nvtx.rangePush('a'), nvtx.tool]);`, notATool);
  expect(out).toEqual([-2, null]);
  expect(stderr).toContain(
    `NvtxWarning: nvtx: the tool ${notATool} does not export InitializeInjectionNvtx2, so it is not an NVTX injection library; NVTX calls do nothing`,
  );
});
