// The examples' committed .fatbin files are what tools/build-kernels.sh builds from their .cu
// sources today (nvcc's output is deterministic): rebuilt into a temporary folder, byte for byte.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..', '..', '..');
const kernels = path.join(root, 'examples', 'kernels');
const sources = fs
  .readdirSync(kernels)
  .filter((f) => f.endsWith('.cu'))
  .sort();
const fatbinOf = (cu: string) => cu.replace(/\.cu$/, '.fatbin');

/** nvcc's "Cuda compilation tools, release 13.0, V13.0.88" line, as nvcc prints it and as it is in every fatbin it builds. */
const RELEASE = /Cuda compilation tools, release [\d.]+, V[\d.]+/;

/** nvcc as tools/build-kernels.sh looks for it: $NVCC, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin; with its release line. */
function findNvcc(): { path: string; release: string } | null {
  const candidates = [
    process.env.NVCC,
    'nvcc',
    process.env.CUDA_HOME && path.join(process.env.CUDA_HOME, 'bin', 'nvcc'),
    '/usr/local/cuda/bin/nvcc',
  ];
  for (const c of candidates) {
    if (!c) continue;
    const r = spawnSync(c, ['--version'], { encoding: 'utf8' });
    const release = !r.error && r.status === 0 ? RELEASE.exec(r.stdout)?.[0] : undefined;
    if (release) return { path: c, release };
  }
  return null;
}

const nvcc = findNvcc();
const committedRelease = (cu: string) =>
  RELEASE.exec(fs.readFileSync(path.join(kernels, fatbinOf(cu))).toString('latin1'))?.[0] ?? 'no nvcc release line';

test('every .cu in examples/kernels has its committed .fatbin, and nothing else is there', () => {
  expect(sources.length).toBeGreaterThan(0);
  const fatbins = fs
    .readdirSync(kernels)
    .filter((f) => f.endsWith('.fatbin'))
    .sort();
  expect(fatbins).toEqual(sources.map(fatbinOf));
});

test.each(sources)('%s: the committed .fatbin was built by nvcc of CUDA 13.0', (cu) => {
  expect(committedRelease(cu)).toMatch(/release 13\.0,/);
});

(nvcc ? describe : describe.skip)(
  nvcc
    ? `built kernels are current (${nvcc.release})`
    : 'built kernels are current: skipped, nvcc is not found ($NVCC, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)',
  () => {
    let out: string;
    beforeAll(() => {
      out = fs.mkdtempSync(path.join(os.tmpdir(), 'kernels-'));
      execFileSync('bash', [path.join(root, 'tools', 'build-kernels.sh'), out], {
        stdio: 'pipe',
        env: { ...process.env, NVCC: nvcc!.path },
      });
    }, 300_000);
    afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

    for (const cu of sources) {
      const committed = committedRelease(cu);
      if (committed !== nvcc?.release) {
        // Another nvcc builds other bytes, stale or not: nothing to compare.
        test.skip(`${cu}: not compared: the committed .fatbin was built by "${committed}", this nvcc is "${nvcc?.release}"`, () =>
          undefined);
        continue;
      }
      test(`${cu}: the committed .fatbin is what tools/build-kernels.sh builds`, () => {
        const built = fs.readFileSync(path.join(out, fatbinOf(cu)));
        const current = built.equals(fs.readFileSync(path.join(kernels, fatbinOf(cu))));
        // On a mismatch: run tools/build-kernels.sh and commit the result.
        expect({ fatbin: fatbinOf(cu), current }).toEqual({ fatbin: fatbinOf(cu), current: true });
      });
    }
  },
);
