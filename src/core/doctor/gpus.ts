// The doctor's GPU checks: each GPU's compute capability against what NVRTC can target, its MIG and
// persistence modes (NVML), and a smoke test: an allocation and a kernel launched and checked.
import * as cudart from '../../runtime';
import * as nvrtc from '../../nvrtc';
import * as nvml from '../../nvml';
import { CUDA_MAJOR } from '../../ffi/versions';
import { Device } from '../device/Device';
import { Module } from '../launch/Module';
import { Program } from '../compile/Program';
import '../memory/extensions'; // device.allocate()
import '../launch/extensions'; // module.kernel()
import type { DoctorCheck, GpuFinding } from './report';

/** The oldest architecture CUDA 13 builds for (Turing); older GPUs need CUDA 12. */
const OLDEST_SM: Record<number, number> = { 12: 50, 13: 75 };

/** `GPU-431c7c37-cdb8-…`, as nvidia-smi prints a UUID. */
function uuidText(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The CUDA devices as the runtime sees them, or the check that says why there are none. */
export function findGpus(): { gpus: GpuFinding[]; check: DoctorCheck | null } {
  const base = { id: 'gpus', title: 'CUDA devices' };
  const [err, count] = cudart.cudaGetDeviceCount();
  if (err !== 0) {
    const name = cudart.cudaGetErrorName(err)[1] ?? String(err);
    return {
      gpus: [],
      check: { ...base, status: 'fail', why: `cudaGetDeviceCount failed: ${name}`, todo: 'see the driver and device checks above' },
    };
  }
  if (!count)
    return {
      gpus: [],
      check: { ...base, status: 'fail', why: 'the driver sees no CUDA device', todo: 'check CUDA_VISIBLE_DEVICES and nvidia-smi' },
    };
  const gpus: GpuFinding[] = [];
  for (let index = 0; index < count; index++) {
    const [e, p] = cudart.cudaGetDeviceProperties(index);
    const [, bus] = cudart.cudaDeviceGetPCIBusId(32, index);
    if (e !== 0 || !p) continue;
    gpus.push({
      index,
      name: p.name,
      uuid: uuidText(p.uuid.bytes),
      pciBusId: bus ?? '',
      computeCapability: `${p.major}.${p.minor}`,
      nvrtcTargets: null,
      migEnabled: null,
      persistenceMode: null,
      launched: null,
    });
  }
  return { gpus, check: null };
}

/** NVRTC's targets (nvrtcGetSupportedArchs: 75, 80, …), or null without NVRTC. */
function nvrtcArchs(): number[] | null {
  try {
    const [err, archs] = nvrtc.nvrtcGetSupportedArchs();
    return err === 0 ? archs : null;
  } catch {
    return null;
  }
}

/** Each GPU's compute capability against what NVRTC (or, without it, CUDA 13) can build for. */
export function checkArchitectures(gpus: GpuFinding[]): DoctorCheck[] {
  const archs = nvrtcArchs();
  return gpus.map((g) => {
    const sm = Number(g.computeCapability.replace('.', ''));
    const base = { id: `gpu:${g.index}`, title: `GPU ${g.index} (${g.name})` };
    const cc = `compute capability ${g.computeCapability} (sm_${sm})`;
    const oldest = archs ? Math.min(...archs) : (OLDEST_SM[CUDA_MAJOR] ?? 0);
    g.nvrtcTargets = archs ? archs.includes(sm) : null;
    if (sm < oldest)
      return {
        ...base,
        status: 'fail',
        why: `${cc}: CUDA ${CUDA_MAJOR} builds for sm_${oldest} and newer`,
        todo: 'use a CUDA version that supports this GPU (CUDA 12 for Maxwell, Pascal, Volta)',
      };
    if (!archs)
      return { ...base, status: 'ok', why: `${cc}, supported by CUDA ${CUDA_MAJOR} (NVRTC not found: its targets not listed)`, todo: null };
    if (!archs.includes(sm)) {
      const newest = Math.max(...archs);
      return {
        ...base,
        status: 'warn',
        why: `${cc}: NVRTC builds for sm_${oldest}…sm_${newest}, not this GPU`,
        todo: `compile for compute_${newest} (PTX, which the driver JIT-compiles) or update NVRTC`,
      };
    }
    return { ...base, status: 'ok', why: `${cc}, one of NVRTC's ${archs.length} targets`, todo: null };
  });
}

/** MIG and persistence modes of each GPU (NVML, matched by UUID then PCI bus id); a skip where NVML is not there. */
export function checkModes(gpus: GpuFinding[]): DoctorCheck[] {
  let ready = false;
  try {
    ready = nvml.nvmlInit()[0] === 0;
  } catch {
    /* no NVML: each check says so */
  }
  try {
    return gpus.flatMap((g) => modesOf(g, ready));
  } finally {
    if (ready) nvml.nvmlShutdown();
  }
}

/** One GPU's MIG and persistence checks. */
function modesOf(g: GpuFinding, ready: boolean): DoctorCheck[] {
  const mig = { id: `mig:${g.index}`, title: `GPU ${g.index} MIG mode` };
  const persistence = { id: `persistence:${g.index}`, title: `GPU ${g.index} persistence mode` };
  if (!ready) {
    const why = 'NVML not available (libnvidia-ml did not load or initialise)';
    return [
      { ...mig, status: 'skip', why, todo: null },
      { ...persistence, status: 'skip', why, todo: null },
    ];
  }
  let [err, handle] = nvml.nvmlDeviceGetHandleByUUID(g.uuid);
  if (err !== 0) [err, handle] = nvml.nvmlDeviceGetHandleByPciBusId(g.pciBusId);
  if (err !== 0) {
    const why = `NVML does not know this GPU (${nvml.nvmlErrorString(err)[1]})`;
    return [
      { ...mig, status: 'skip', why, todo: null },
      { ...persistence, status: 'skip', why, todo: null },
    ];
  }
  const [me, current] = nvml.nvmlDeviceGetMigMode(handle);
  const [pe, mode] = nvml.nvmlDeviceGetPersistenceMode(handle);
  g.migEnabled = me === 0 ? current === 1 : null;
  g.persistenceMode = pe === 0 ? mode === 1 : null;
  return [
    g.migEnabled
      ? {
          ...mig,
          status: 'warn',
          why: 'enabled: CUDA sees only the MIG instances that CUDA_VISIBLE_DEVICES names',
          todo: `pick one with CUDA_VISIBLE_DEVICES=MIG-<uuid> (nvidia-smi -L), or turn MIG off: sudo nvidia-smi -i ${g.index} -mig 0`,
        }
      : { ...mig, status: 'ok', why: me === 0 ? 'disabled' : 'not supported by this GPU', todo: null },
    g.persistenceMode === false
      ? {
          ...persistence,
          status: 'warn',
          why: 'disabled: the driver starts afresh for each program when no other holds the GPU (a slower first CUDA call)',
          todo: 'sudo nvidia-smi -pm 1, or run nvidia-persistenced',
        }
      : { ...persistence, status: 'ok', why: g.persistenceMode ? 'enabled' : 'not supported here', todo: null },
  ];
}

/** The smoke kernel: out[i] = i * 3 + 1, as CUDA C++ (for NVRTC) and as PTX (for the driver's JIT). */
const SOURCE =
  'extern "C" __global__ void doctor_fill(unsigned *out, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = i * 3 + 1; }';
const PTX = `.version 7.0
.target sm_75
.address_size 64
.visible .entry doctor_fill(.param .u64 out, .param .u32 n) {
  .reg .pred %p; .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x; mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p, %r5, %r1; @%p ret;
  cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r5, 4; add.s64 %rd2, %rd2, %rd3;
  mul.lo.s32 %r2, %r5, 3; add.s32 %r2, %r2, 1; st.global.u32 [%rd2], %r2; ret;
}
`;

/** Allocates on each GPU, launches the smoke kernel there and checks what it wrote; one check per GPU. */
export function checkLaunches(gpus: GpuFinding[]): DoctorCheck[] {
  const compiled = nvrtcArchs() !== null;
  return gpus.map((g) => {
    const base = { id: `launch:${g.index}`, title: `GPU ${g.index} allocation and kernel` };
    const n = 1 << 16;
    try {
      const dev = Device.get(g.index).makeCurrent();
      const module = compiled
        ? Program.compile(SOURCE, { arch: dev, compiler: 'nvrtc', cache: false }).load()
        : Module.load(Buffer.from(`${PTX}\0`));
      const buf = dev.allocate(n * 4);
      try {
        module.kernel('doctor_fill').launch({ grid: n / 256, block: 256 }, buf, cudart.u32(n));
        const back = buf.copyTo(new Uint32Array(n));
        const bad = back.findIndex((v, i) => v !== i * 3 + 1);
        g.launched = bad < 0;
        if (bad >= 0)
          return {
            ...base,
            status: 'fail',
            why: `the kernel ran but element ${bad} is ${back[bad]}, not ${bad * 3 + 1}`,
            todo: 'run nvidia-smi -q for errors (ECC, Xid) and report it',
          };
        const how = compiled ? 'compiled by NVRTC' : 'loaded from PTX (no NVRTC)';
        return {
          ...base,
          status: 'ok',
          why: `allocated ${(n * 4) / 1024} KiB, launched a kernel ${how}, read back what it wrote`,
          todo: null,
        };
      } finally {
        buf.close();
        module.close();
      }
    } catch (e) {
      g.launched = false;
      return {
        ...base,
        status: 'fail',
        why: String((e as Error).message ?? e).split('\n')[0],
        todo: 'see the checks above; nvidia-smi should list this GPU',
      };
    }
  });
}
