// Builds the fake libnvidia-ml (test/cpu/fixtures/fake-nvml.c) with gcc, against the committed NVML
// declarations, and a fake libcudart whose two devices are the fake NVML's GPUs in the other order.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import koffi from 'koffi';
import { CUDART_VERSION } from '../../../src/runtime/constants.gen';

const root = path.join(__dirname, '..', '..', '..');

/** Compiles the fake libnvidia-ml into `dir`; returns its path. */
export function buildFakeNvml(dir: string): string {
  const lib = path.join(dir, 'libnvidia-ml-fake.so');
  execFileSync(
    'gcc',
    [
      '-shared',
      '-fPIC',
      '-Wall',
      '-Werror',
      `-I${path.join(root, 'tools', 'codegen')}`,
      '-pthread',
      '-o',
      lib,
      path.join(root, 'test', 'cpu', 'fixtures', 'fake-nvml.c'),
    ],
    { stdio: 'pipe' },
  );
  return lib;
}

/** The fake's test knobs (see fake-nvml.c), as a child process's environment sets them. */
export type FakeNvmlKnob =
  | 'FAKE_NVML_PROCESS_NAME'
  | 'FAKE_NVML_GPU0_NAME'
  | 'FAKE_NVML_PROCESS_CHURN'
  | 'FAKE_NVML_GPUS'
  | 'FAKE_NVML_FAIL_GPU'
  | 'FAKE_NVML_FAIL_STATUS'
  | 'FAKE_NVML_PROCESSES'
  | 'FAKE_NVML_EVENTS'
  | 'FAKE_NVML_SLOW_MS';

/** Sets a knob of the fake loaded in this process (undefined clears it): a jest worker's process.env is a copy C does not read. */
export function setFakeNvmlKnob(lib: string, name: FakeNvmlKnob, value: string | undefined): void {
  koffi.load(lib).func('void fake_nvml_setenv(const char *, const char *)')(name, value ?? null);
}

/** NVML event types, as the fake queues them (nvml.h's nvmlEventType* bits). */
export const FAKE_EVENT = { singleBitEcc: 1, doubleBitEcc: 2, xid: 8 } as const;

/** Queues an NVML event in the fake loaded in this process: GPU `gpu`, type (a FAKE_EVENT bit), data (an XID's number). */
export function queueFakeNvmlEvent(lib: string, gpu: number, type: number, data = 0): void {
  koffi.load(lib).func('void fake_nvml_queue_event(int, unsigned long long, unsigned long long)')(gpu, type, data);
}

/** A C string literal of `s` (UTF-8, every byte outside printable ASCII as an octal escape). */
function cLiteral(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  return `"${Array.from(bytes, (b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b.toString(8).padStart(3, '0')}`)).join('')}"`;
}

/** UUIDs and bus ids of the fake NVML's GPUs 0 and 1 (FAKE_GPUS8 lists all eight of FAKE_NVML_GPUS=8). */
export const FAKE_GPUS = [
  { name: 'Fake H100 80GB HBM3', uuid: 'GPU-11111111-2222-3333-4444-555555555555', busId: '00000000:18:00.0' },
  { name: 'Fake L4', uuid: 'GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', busId: '00000000:3B:00.0' },
];

/** The eight GPUs of FAKE_NVML_GPUS=8: 0 and 1 as FAKE_GPUS, 2 to 7 H100s whose readings follow their index. */
export const FAKE_GPUS8 = [
  ...FAKE_GPUS,
  ...['4C', '5D', '9A', 'AB', 'BA', 'DB'].map((bus, i) => ({
    name: 'Fake H100 80GB HBM3',
    uuid: `GPU-${String(i + 2).repeat(8)}-2222-3333-4444-555555555555`,
    busId: `00000000:${bus}:00.0`,
  })),
];

/** What the fake's GPU `i` reads (FAKE_NVML_GPUS=8): temperature °C, memory used MiB, power W. */
export function fakeReadings(i: number): { temperature: number; usedMiB: number; powerW: number } {
  if (i === 1) return { temperature: 33, usedMiB: 0, powerW: 16 };
  if (i === 0) return { temperature: 41, usedMiB: 1024, powerW: 123.456 };
  return { temperature: 40 + i, usedMiB: i * 1024 + i, powerW: 100 + i };
}

/**
 * A fake libcudart with two devices: CUDA device 0 is NVML's GPU 1 and CUDA device 1 NVML's GPU 0
 * (CUDA orders devices its own way). Offsets of cudaDeviceProp come from the generated layout.
 */
export function buildFakeCudart(
  dir: string,
  layout: { fields: Record<string, { offset: number; size: number }>; size: number },
  /** Other names for CUDA devices 0 and 1 (a file of its own is built). */
  names?: [string, string],
): string {
  const lib = path.join(dir, names ? 'libcudart-nvml-fake-renamed.so' : 'libcudart-nvml-fake.so');
  const src = path.join(dir, names ? 'cudart-renamed.c' : 'cudart.c');
  const order = [FAKE_GPUS[1], FAKE_GPUS[0]];
  const [name0, name1] = (names ?? [order[0].name, order[1].name]).map(cLiteral);
  const uuidBytes = (u: string) => `{${(u.slice(4).replace(/-/g, '').match(/../g) ?? []).map((x) => `0x${x}`).join(',')}}`;
  fs.writeFileSync(
    src,
    `
    #include <string.h>
    #include <stdio.h>
    static const char *names[2] = { ${name0}, ${name1} };
    static const unsigned char uuids[2][16] = { ${uuidBytes(order[0].uuid)}, ${uuidBytes(order[1].uuid)} };
    static const char *buses[2] = { "${order[0].busId.slice(4)}", "${order[1].busId.slice(4)}" };
    int cudaRuntimeGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }
    int cudaDriverGetVersion(int *v) { *v = ${CUDART_VERSION}; return 0; }
    int cudaGetDeviceCount(int *n) { *n = 2; return 0; }
    int cudaGetDeviceProperties(unsigned char *p, int d) {
      if (d < 0 || d > 1) return 101;
      memset(p, 0, ${layout.size});
      strcpy((char *)p + ${layout.fields.name.offset}, names[d]);
      memcpy(p + ${layout.fields.uuid.offset}, uuids[d], 16);
      return 0;
    }
    int cudaDeviceGetPCIBusId(char *s, int len, int d) { if (d < 0 || d > 1) return 101; snprintf(s, len, "%s", buses[d]); return 0; }
    static int current;
    int cudaSetDevice(int d) { if (d < 0 || d > 1) return 101; current = d; return 0; }
    int cudaGetDevice(int *d) { *d = current; return 0; }
    int cudaDeviceGetAttribute(int *v, int attr, int d) { (void)attr; if (d < 0 || d > 1) return 101; *v = 0; return 0; }
    int cudaMemGetInfo(size_t *free, size_t *total) { *total = (size_t)24 << 30; *free = *total; return 0; }
    int cudaDeviceCanAccessPeer(int *can, int d, int peer) { (void)d; (void)peer; *can = 0; return 0; }
    const char *cudaGetErrorName(int e) { return e ? "cudaErrorInvalidDevice" : "cudaSuccess"; }
    const char *cudaGetErrorString(int e) { return e ? "invalid device ordinal" : "no error"; }
  `,
  );
  execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, src], { stdio: 'pipe' });
  return lib;
}
