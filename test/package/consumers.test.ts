// The package as a user gets it. A copy of the clone (its files as git sees them, node_modules linked)
// runs `npm pack --json`, whose prepack builds: stdout must be JSON only, the built bin executable,
// and `npx cuda-bindings --version` must run from the clone. TypeScript consumers of the tarball then
// compile with `strict` and `skipLibCheck: false` under node16 (CommonJS and ES module), nodenext
// (both) and bundler (module esnext and preserve), each importing every subpath of package.json's
// `exports` and using something of each; once with the consumer's own @types/node, once with
// `"types": []` and none of its own (the package's dependency brings it). Every example compiles
// against the tarball too. Slow (a build, a pack, thirteen tsc runs): `npm run test:package`, a step
// of .ci/run, not part of `npm test`.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  exports: Record<string, unknown>;
};
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cb-package-'));
const clone = path.join(work, 'clone');
let pack: SpawnSyncReturns<string>;
let tarball = '';

/** What a consumer writes to use each subpath: a value and a type of it, at least. Keyed as in `exports`. */
const USES: Record<string, string> = {
  '.': 'export const namespaces: [typeof root.cudart, typeof root.core.Device] = [root.cudart, root.core.Device];',
  './runtime': [
    'const [err, count] = runtime.cudaGetDeviceCount();',
    'export const devices: number = err === runtime.cudaError_t.cudaSuccess ? count : 0;',
    'export const block = new runtime.dim3({ x: 256 });',
    'export const noStream: runtime.cudaStream_t | null = null;',
  ].join('\n'),
  './driver': 'export const init: typeof driver.cuInit = driver.cuInit;\nexport const ok: driver.CUresult = driver.CUresult.CUDA_SUCCESS;',
  './core': [
    'export const streamOptions: core.StreamOptions = {};',
    'export const isCudaError = (e: unknown): e is core.CudaError => e instanceof core.CudaError;',
    'export const bandwidth: (device: number) => core.BandwidthRow[] = core.measureBandwidth;',
  ].join('\n'),
  './nvrtc':
    'export const nvrtcOk: nvrtc.nvrtcResult = nvrtc.nvrtcResult.NVRTC_SUCCESS;\nexport const nvrtcVersion: typeof nvrtc.nvrtcVersion = nvrtc.nvrtcVersion;',
  './nvjitlink': 'export const ltoir: nvjitlink.nvJitLinkInputType = nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_LTOIR;',
  './nvfatbin': 'export const fatbinOk: nvfatbin.nvFatbinResult = nvfatbin.nvFatbinResult.NVFATBIN_SUCCESS;',
  './nvvm': 'export const nvvmOk: nvvm.nvvmResult = nvvm.nvvmResult.NVVM_SUCCESS;',
  './nccl': 'export const idBytes: number = nccl.NCCL_UNIQUE_ID_BYTES;\nexport const sum: nccl.ncclRedOp_t = nccl.ncclRedOp_t.ncclSum;',
  './nvml': 'export const memory = new nvml.nvmlMemory_v2_st();\nexport const nvmlOk: nvml.nvmlReturn_t = nvml.nvmlReturn_t.NVML_SUCCESS;',
  './package.json': 'export const version: string = package_json.version;',
};

/** How a consumer imports a JSON subpath: CommonJS requires it; an ES module under nodenext or a bundler needs the attribute. */
type JsonImport = 'require' | 'import' | 'attribute';

interface Consumer {
  name: string;
  type: 'commonjs' | 'module';
  module: string;
  moduleResolution: string;
  json: JsonImport;
}

const CONSUMERS: Consumer[] = [
  { name: 'node16, CommonJS', type: 'commonjs', module: 'node16', moduleResolution: 'node16', json: 'require' },
  { name: 'node16, ES module', type: 'module', module: 'node16', moduleResolution: 'node16', json: 'import' },
  { name: 'nodenext, CommonJS', type: 'commonjs', module: 'nodenext', moduleResolution: 'nodenext', json: 'require' },
  { name: 'nodenext, ES module', type: 'module', module: 'nodenext', moduleResolution: 'nodenext', json: 'attribute' },
  { name: 'bundler, module esnext', type: 'module', module: 'esnext', moduleResolution: 'bundler', json: 'attribute' },
  { name: 'bundler, module preserve', type: 'module', module: 'preserve', moduleResolution: 'bundler', json: 'attribute' },
];

/** The identifier a consumer binds a subpath to: `root` for `.`, else the subpath as an identifier. */
function binding(subpath: string): string {
  return subpath === '.' ? 'root' : subpath.slice(2).replace(/\W/g, '_');
}

/** The consumer's index.ts: an import of every subpath of `exports`, then its uses. */
function consumerSource(json: JsonImport): string {
  const lines = Object.keys(pkg.exports).map((subpath) => {
    const spec = subpath === '.' ? pkg.name : pkg.name + subpath.slice(1);
    const id = binding(subpath);
    if (!subpath.endsWith('.json')) return `import * as ${id} from '${spec}';`;
    if (json === 'require') return `import ${id} = require('${spec}');`;
    return `import ${id} from '${spec}'${json === 'attribute' ? " with { type: 'json' }" : ''};`;
  });
  return [...lines, ...Object.keys(pkg.exports).map((subpath) => USES[subpath])].join('\n') + '\n';
}

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, npm_config_loglevel: 'warn' } });
}

/** Copies the clone's files (tracked, and untracked but not ignored) to `dest`, with node_modules linked. */
function copyClone(dest: string): void {
  const files = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root).stdout.split('\0').filter(Boolean);
  for (const f of files) {
    const from = path.join(root, f);
    if (!fs.existsSync(from)) continue; // deleted in the working tree, not yet committed
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    fs.copyFileSync(from, path.join(dest, f));
  }
  fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(dest, 'node_modules'));
}

/**
 * A project with the tarball installed as npm lays it out. With `ownNodeTypes`, the consumer has
 * installed @types/node itself and the package's dependencies sit beside it; without, the consumer
 * has none of its own and the package's dependencies sit in the package's own node_modules.
 */
function project(dir: string, ownNodeTypes: boolean): string {
  const modules = path.join(dir, 'node_modules');
  const installed = path.join(modules, pkg.name);
  fs.mkdirSync(installed, { recursive: true });
  expect(run('tar', ['xzf', tarball, '-C', installed, '--strip-components=1'], dir).status).toBe(0);
  const deps = Object.keys(JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')).dependencies ?? {});
  expect(deps).toContain('@types/node');
  for (const dep of deps) {
    const link = path.join(ownNodeTypes ? modules : path.join(installed, 'node_modules'), dep);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules', dep)), link);
  }
  return dir;
}

/** Writes a consumer's package.json and tsconfig.json into `dir` and compiles it; returns tsc's status and output. */
function compile(dir: string, type: string, compilerOptions: Record<string, unknown>, files: Record<string, string>) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type }));
  const options = { target: 'es2022', strict: true, skipLibCheck: false, noEmit: true, resolveJsonModule: true, ...compilerOptions };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, include: ['**/*.ts'] }));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const r = run(process.execPath, [tsc, '-p', dir], dir);
  return { status: r.status, diagnostics: (r.stdout + r.stderr).trim() };
}

beforeAll(() => {
  copyClone(clone);
  const dest = path.join(work, 'pack');
  fs.mkdirSync(dest);
  pack = run('npm', ['pack', '--json', '--pack-destination', dest], clone);
  if (pack.status !== 0) throw new Error(`npm pack failed (${pack.status}):\n${pack.stderr}`);
  tarball = path.join(dest, JSON.parse(pack.stdout)[0].filename);
}, 600_000);

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

test('npm pack --json prints only JSON on stdout: the build that prepack runs reports on stderr', () => {
  const report = JSON.parse(pack.stdout);
  expect(report).toHaveLength(1);
  expect(report[0]).toMatchObject({ name: pkg.name, version: pkg.version, filename: `${pkg.name}-${pkg.version}.tgz` });
  expect(pack.stderr).toMatch(/^flatten-exports: \d+ re-exports/m);
  expect(pack.stderr).toMatch(/^entry points: \d+ declaration files reference Node's types/m);
});

test('after the build every bin is executable, and `npx cuda-bindings --version` runs from the clone', () => {
  for (const file of Object.values(pkg.bin)) expect((fs.statSync(path.join(clone, file)).mode & 0o111).toString(8)).toBe('111');
  const r = run('npx', ['--no-install', 'cuda-bindings', '--version'], clone);
  expect([r.status, r.stdout.split('\n')[0]]).toEqual([0, `cuda-bindings ${pkg.version}`]);
  expect(r.stdout).toMatch(/^CUDA runtime /m);
});

test("every subpath of package.json's exports has a use in the consumers, and every use a subpath", () => {
  expect(Object.keys(USES).sort()).toEqual(Object.keys(pkg.exports).sort());
});

describe.each([
  ['with its own @types/node', true],
  ['with "types": [] and no @types/node of its own (the package\'s dependency brings it)', false],
])('a strict consumer (skipLibCheck false) %s compiles', (_label, own) => {
  let dir = '';
  beforeAll(() => {
    dir = project(path.join(work, own ? 'own-node-types' : 'no-node-types'), own);
    if (!own) expect(fs.existsSync(path.join(dir, 'node_modules', '@types'))).toBe(false);
  });

  test.each(CONSUMERS.map((c) => [c.name, c] as const))(
    '%s',
    (_name, c) => {
      const options = { module: c.module, moduleResolution: c.moduleResolution, ...(own ? {} : { types: [] }) };
      const sub = path.join(dir, c.name.replace(/\W+/g, '-'));
      expect(compile(sub, c.type, options, { 'index.ts': consumerSource(c.json) })).toEqual({ status: 0, diagnostics: '' });
    },
    300_000,
  );
});

// Bundler resolution (what tsx does): under node16 a CommonJS file cannot import koffi, whose types are
// an ES module's, and examples/lib/runtime.ts views cudaHostAlloc's memory through koffi.view.
test('every example compiles against the packed package (bundler resolution, strict, skipLibCheck false)', () => {
  const examples = path.join(root, 'examples');
  const files: Record<string, string> = {};
  for (const f of fs.readdirSync(examples, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')))
    files[f] = fs.readFileSync(path.join(examples, f), 'utf8');
  expect(Object.keys(files).length).toBeGreaterThan(20);
  // Nothing outside examples/ but the package and what it installs: a user can copy them into a project.
  const reaching = Object.entries(files).filter(
    ([f, text]) => /from '(\.\.\/)+(src|tools|test)\b/.test(text) || (!f.includes('/') && /from '\.\.\//.test(text)),
  );
  expect(reaching.map(([f]) => f)).toEqual([]);
  const dir = project(path.join(work, 'examples-consumer'), true);
  expect(compile(path.join(dir, 'examples'), 'commonjs', { module: 'preserve', moduleResolution: 'bundler' }, files)).toEqual({
    status: 0,
    diagnostics: '',
  });
}, 300_000);
