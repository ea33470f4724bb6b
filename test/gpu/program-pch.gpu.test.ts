// NVRTC precompiled headers on the GPU machine: a header-heavy program compiled with `pch: true`
// creates a PCH in `pchDir` (growing NVRTC's PCH heap when it asks), a second compile of another
// source with the same header uses it, and both kernels run and give the right answer.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { core } from '../../src';
import { describeGpu } from './helpers';

const { Device, Program } = core;

// A header with many templates, so that parsing it is worth saving.
const HEADER = Array.from(
  { length: 400 },
  (_, i) =>
    `template <typename T> __device__ T f${i}(T x) { return x * ${i % 7} + ${i}; }\nstruct S${i} { int v[${(i % 5) + 1}]; __device__ int sum() const { int s = 0; for (int k = 0; k < ${(i % 5) + 1}; k++) s += v[k]; return s; } };`,
).join('\n');

const source = (k: string, body: string) => `#include "heavy.h"\nextern "C" __global__ void ${k}(int *out) { ${body} }\n`;

describeGpu('NVRTC precompiled headers', () => {
  test('pch: true creates a PCH that a later compile with the same header uses; both kernels run', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pch-gpu-'));
    try {
      const headers = { 'heavy.h': HEADER };
      const first = Program.compile(source('a', 'out[0] = f3(10);'), { headers, pch: true, pchDir: dir, pchMessages: true, cache: false });
      expect(first.pchCreated).toBe(true);
      expect(fs.readdirSync(dir).length).toBeGreaterThan(0);
      const second = Program.compile(source('b', 'out[0] = f5(2);'), { headers, pch: true, pchDir: dir, pchMessages: true, cache: false });
      const d = Device.get(0);
      using out = d.allocate(4);
      for (const [p, k, want] of [
        [first, 'a', 10 * 3 + 3],
        [second, 'b', 2 * 5 + 5],
      ] as const) {
        using m = p.load();
        m.kernel(k).launch({ grid: 1, block: 1 }, out);
        expect(out.copyTo(new Int32Array(1))[0]).toBe(want);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
