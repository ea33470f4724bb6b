// Argument fuzzing over every generated function of the runtime, driver, NVRTC, nvJitLink, nvFatbin, NVVM, NCCL and NVML facades: each
// parameter gets each bad value with the other arguments well typed. Nothing may crash; what is
// refused is refused with a TypeError or RangeError naming the function and the parameter; and
// what C's type cannot hold is always refused. Runs in child processes so a crash is caught.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildRefusingStubs } from '../helpers/fake-linkers';
import { LIBRARIES } from '../../../tools/codegen/libraries';

interface Row {
  fn: string;
  param: string;
  c: string;
  ts: string;
  kind: string;
  returned?: string;
  threw?: string;
  message?: string;
  baseRefused: boolean;
}

const UNSIGNED = new Set(['uint', 'size_t', 'uchar', 'ushort', 'ullong', 'ulong']);

/** Whether C's type (or the facade's documented form) can take this bad value. */
function mayAccept(r: Row): boolean {
  const nullable = r.ts.includes('null') || r.ts.startsWith('KernelArgs');
  switch (r.kind) {
    case 'string':
      return r.ts === 'string';
    case 'object':
      return false;
    case 'array':
      return r.ts.includes('[]');
    case 'undefined':
      return nullable;
    case 'NaN':
    case 'Infinity':
    case 'fraction':
      return r.c === 'float' || r.c === 'double';
    // An int or enum (also one passed by pointer, in and out) takes -1.
    case 'minusOne':
      return (
        (!UNSIGNED.has(r.c) && r.c !== 'pointer') || r.ts === 'number | bigint' || (r.c === 'pointer' && /^(E\.\w+|number)$/.test(r.ts))
      );
    case 'bigint2p64':
      return false;
    // Handle brands are checked by the compiler; at run time any handle is a bigint.
    case 'wrongHandle':
      return r.c === 'pointer' || r.ts.startsWith('H.') || r.ts.includes('bigint') || r.ts.includes('DevicePointer');
    // Host memory where C reads or writes no size the facade knows.
    case 'shortBuffer':
      return r.c === 'pointer';
    default:
      throw new Error(`unknown kind ${r.kind}`);
  }
}

// nvJitLink, nvFatbin and libNVVM run against stubs that refuse every call without touching an
// argument (the real libNVVM is here, and would crash on a handle of another kind).
const stubDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-fuzz-stubs-'));
afterAll(() => fs.rmSync(stubDir, { recursive: true, force: true }));
let stubs: Record<string, string> | undefined;
const stubEnv = (api: string): NodeJS.ProcessEnv => {
  if (!['nvjitlink', 'nvfatbin', 'nvvm'].includes(api)) return process.env;
  stubs ??= buildRefusingStubs(stubDir);
  return { ...process.env, [`CUDA_BINDINGS_${api.toUpperCase()}`]: stubs[api] };
};

describe.each(LIBRARIES.map((l) => l.api.id))('%s API', (api) => {
  let rows: Row[] = [];
  let child: ReturnType<typeof spawnSync>;
  beforeAll(() => {
    child = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'helpers', 'fuzz-every-function.ts'), api], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: stubEnv(api),
    });
    rows = String(child.stdout)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }, 120_000);

  test('the fuzzer ran to the end without a crash', () => {
    // (How many calls a bad value reached C with, for the record: handles of another kind and short
    // buffers where C's size is not known to the facade.)
    expect({ signal: child.signal, status: child.status, stderr: String(child.stderr).slice(0, 500) }).toEqual({
      signal: null,
      status: 0,
      stderr: '',
    });
    expect(rows.length).toBeGreaterThan(100);
  });

  test('every refusal is a TypeError or RangeError that names the function and the parameter', () => {
    // A value the parameter may take (a bigint count of 4096) can make another parameter wrong (an
    // array now too short for that count): then the refusal names that other parameter.
    const bad = rows
      .filter((r) => r.threw && r.threw !== 'LibraryLoadError' && !r.baseRefused)
      .filter(
        (r) =>
          // (A C parameter named like a JS keyword, `function`, is `function_` in JS; errors use C's name.)
          !['TypeError', 'RangeError'].includes(r.threw!) ||
          !r.message!.startsWith(mayAccept(r) ? `${r.fn}: parameter '` : `${r.fn}: parameter '${r.param.replace(/_$/, '')}`),
      );
    expect(bad.slice(0, 10)).toEqual([]);
  });

  test("every value C's type cannot hold is refused", () => {
    // Passing validation and reaching the (absent) library counts as accepted.
    const accepted = rows.filter((r) => r.returned || r.threw === 'LibraryLoadError');
    const wrong = accepted.filter((r) => !mayAccept(r));
    expect(wrong.slice(0, 10).map((r) => `${r.fn}(${r.param}: ${r.c}) accepted ${r.kind}`)).toEqual([]);
  });
});

// Every caller's buffer that C reads or writes a known extent of, one element short and exact.
// NVRTC's extents come from its size queries: a fake libnvrtc answers them (100 bytes) and its
// getters write that much, as the real one does.
describe.each(['runtime', 'driver', 'nvrtc'])('%s API: buffers one element short', (api) => {
  interface ExtentRow {
    fn: string;
    param: string;
    need: number;
    unit: number;
    kind: string;
    returned?: string;
    threw?: string;
    message?: string;
  }
  let rows: ExtentRow[] = [];
  let child: ReturnType<typeof spawnSync>;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-fuzz-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  beforeAll(() => {
    const lib = path.join(tmp, 'libnvrtc-fuzz.so');
    const getters = ['PTX', 'CUBIN', 'LTOIR', 'OptiXIR', 'ProgramLog']
      .map(
        (w) => `
      int nvrtcGet${w === 'ProgramLog' ? 'ProgramLogSize' : `${w}Size`}(void *prog, size_t *n) { *n = 100; return 0; }
      int nvrtcGet${w}(void *prog, char *out) { memset(out, 'x', 100); return 0; }`,
      )
      .join('\n');
    fs.writeFileSync(
      path.join(tmp, 'nvrtc.c'),
      `#include <string.h>\n#include <stddef.h>\nint nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }\n${getters}`,
    );
    execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, path.join(tmp, 'nvrtc.c')]);
    child = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '..', 'helpers', 'fuzz-every-function.ts'), api, 'extents'],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
        env: { ...process.env, CUDA_BINDINGS_NVRTC: lib },
      },
    );
    rows = String(child.stdout)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }, 120_000);

  test('ran to the end, with every checked buffer tested (none skipped)', () => {
    expect({ signal: child.signal, status: child.status, stderr: String(child.stderr).slice(0, 500) }).toEqual({
      signal: null,
      status: 0,
      stderr: '',
    });
    expect(rows.filter((r) => r.kind === 'skipped')).toEqual([]);
    expect(rows.filter((r) => r.kind === 'short').length).toBeGreaterThan(api === 'nvrtc' ? 4 : 50);
  });

  test('one element short is a RangeError naming the function and the buffer, before C', () => {
    const bad = rows.filter(
      (r) =>
        r.kind === 'short' &&
        !(r.threw === 'RangeError' && r.message!.startsWith(`${r.fn}: parameter '${r.param.replace(/_$/, '')}' holds `)),
    );
    expect(bad.slice(0, 10)).toEqual([]);
  });

  test('exactly long enough passes that check', () => {
    const bad = rows.filter((r) => r.kind === 'exact' && r.message?.startsWith(`${r.fn}: parameter '${r.param.replace(/_$/, '')}' holds `));
    expect(bad.slice(0, 10)).toEqual([]);
  });
});

// Every buffer a user can reach from a struct, transferred; every pointer field's host memory,
// transferred away before the call.
describe.each(['runtime', 'driver'])('%s API: transfers', (api) => {
  interface TransferRow {
    kind: string;
    cls: string;
    fn?: string;
    param?: string;
    detached?: boolean;
    returned?: string;
    threw?: string;
    message?: string;
  }
  let rows: TransferRow[] = [];
  let child: ReturnType<typeof spawnSync>;
  beforeAll(() => {
    child = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '..', 'helpers', 'fuzz-every-function.ts'), api, 'transfers'],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      },
    );
    rows = String(child.stdout)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }, 120_000);

  test('ran to the end without a crash', () => {
    expect({ signal: child.signal, status: child.status, stderr: String(child.stderr).slice(0, 500) }).toEqual({
      signal: null,
      status: 0,
      stderr: '',
    });
  });

  test("no struct's memory is detached by a transfer, and structs keep working after one", () => {
    const slabs = rows.filter((r) => r.kind === 'slab');
    expect(slabs.length).toBeGreaterThan(100);
    // A struct larger than a slab slice has an ArrayBuffer of its own: detaching it affects only it.
    const bad = slabs.filter((r) => (r.detached && (r as any).size <= 4096) || r.threw);
    expect(bad.slice(0, 10)).toEqual([]);
  });

  test('a call given a struct whose host memory was transferred away refuses it, naming the field', () => {
    const fields = rows.filter((r) => r.kind === 'field');
    expect(fields.length).toBeGreaterThan(10);
    const bad = fields.filter(
      (r) =>
        !(
          r.threw === 'TypeError' &&
          new RegExp(`^${r.fn}: parameter '${r.param!.replace(/_$/, '')}': field ${r.cls}\\.\\w+ points into host memory`).test(r.message!)
        ),
    );
    expect(bad.slice(0, 10)).toEqual([]);
  });
});
