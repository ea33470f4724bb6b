// The examples' committed .fatbin files are what tools/build-kernels.sh builds from their .cu
// sources today (nvcc's output is deterministic): rebuilt into a temporary folder, byte for byte.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..');
const kernels = path.join(root, 'examples', 'kernels');
const sources = fs.readdirSync(kernels).filter((f) => f.endsWith('.cu')).sort();
const nvcc = spawnSync('nvcc', ['--version'], { encoding: 'utf8' });
const hasNvcc = !nvcc.error && nvcc.status === 0;

test('every .cu in examples/kernels has its committed .fatbin, and nothing else is there', () => {
  expect(sources.length).toBeGreaterThan(0);
  const fatbins = fs.readdirSync(kernels).filter((f) => f.endsWith('.fatbin')).sort();
  expect(fatbins).toEqual(sources.map((f) => f.replace(/\.cu$/, '.fatbin')));
});

(hasNvcc ? describe : describe.skip)(hasNvcc ? 'built kernels are current' : 'built kernels are current: skipped, nvcc is not on PATH', () => {
  let out: string;
  beforeAll(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'kernels-'));
    execFileSync('bash', [path.join(root, 'tools', 'build-kernels.sh'), out], { stdio: 'pipe' });
  }, 300_000);
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  test.each(sources)('%s: the committed .fatbin is what tools/build-kernels.sh builds', (cu) => {
    const name = cu.replace(/\.cu$/, '.fatbin');
    const built = fs.readFileSync(path.join(out, name));
    const committed = fs.readFileSync(path.join(kernels, name));
    // On a mismatch: run tools/build-kernels.sh and commit the result.
    expect({ name, current: built.equals(committed) }).toEqual({ name, current: true });
  });
});
