// The doctor's checks of the machine around CUDA: the device files the driver makes, and whether this
// process runs in a container and was given the GPUs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DoctorCheck } from './report';

/** The NVIDIA device files in `devDir`: the GPUs (nvidia0, …) and the control files. */
export function nvidiaDevices(devDir: string): { gpus: string[]; others: string[] } {
  let names: string[];
  try {
    names = fs.readdirSync(devDir).filter((n) => /^nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset)$/.test(n));
  } catch {
    names = [];
  }
  const gpus = names.filter((n) => /^nvidia\d+$/.test(n)).sort((a, b) => Number(a.slice(6)) - Number(b.slice(6)));
  return { gpus, others: names.filter((n) => !gpus.includes(n)).sort() };
}

/** Whether this user can read and write a device file (CUDA opens them read-write). */
function usable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK | fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The device-file check: /dev/nvidia0…, nvidiactl and nvidia-uvm present, and usable by this user. */
export function checkDevices(devDir: string, inContainer: boolean): DoctorCheck {
  const base = { id: 'devices', title: `${devDir}/nvidia*` };
  if (process.platform !== 'linux') return { ...base, status: 'skip', why: `not Linux (${process.platform})`, todo: null };
  if (fs.existsSync(path.join(devDir, 'dxg')) && !fs.existsSync(path.join(devDir, 'nvidia0')))
    return { ...base, status: 'ok', why: `WSL: the GPUs come through ${devDir}/dxg`, todo: null };
  const { gpus, others } = nvidiaDevices(devDir);
  const passIn = inContainer ? 'start the container with the GPUs (docker run --gpus all, with the NVIDIA Container Toolkit)' : null;
  if (!gpus.length || !others.includes('nvidiactl'))
    return {
      ...base,
      status: 'fail',
      why: `no ${gpus.length ? 'nvidiactl' : 'nvidia0'} in ${devDir}: the NVIDIA kernel driver is not loaded${inContainer ? ', or the GPUs were not passed into this container' : ''}`,
      todo: passIn ?? 'install or load the NVIDIA driver (nvidia-smi should list the GPUs; sudo modprobe nvidia)',
    };
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const closed = [...gpus, ...others].filter((n) => !usable(path.join(devDir, n)));
  if (closed.length)
    return {
      ...base,
      status: 'fail',
      why: `${closed.map((n) => path.join(devDir, n)).join(', ')} not readable and writable by this user (uid ${uid})`,
      todo: `give the user access (ls -l ${devDir}/nvidia*: add it to the owning group, often video or render)`,
    };
  const found = `${gpus.length} GPU${gpus.length === 1 ? '' : 's'} (${gpus.join(', ')}) and ${others.join(', ')}, usable by uid ${uid}`;
  if (!others.includes('nvidia-uvm'))
    return {
      ...base,
      status: 'warn',
      why: `${found}; no nvidia-uvm yet`,
      todo: passIn ?? 'nothing if CUDA runs: the driver makes nvidia-uvm on first use (nvidia-modprobe); else sudo modprobe nvidia-uvm',
    };
  return { ...base, status: 'ok', why: found, todo: null };
}

/** Whether this process runs in a container: Docker's /.dockerenv, Podman's /run/.containerenv, or a container's cgroup for PID 1. */
export function detectContainer(root: string): boolean {
  if (fs.existsSync(path.join(root, '.dockerenv')) || fs.existsSync(path.join(root, 'run', '.containerenv'))) return true;
  try {
    return /docker|kubepods|containerd|libpod|lxc/.test(fs.readFileSync(path.join(root, 'proc', '1', 'cgroup'), 'utf8'));
  } catch {
    return false;
  }
}

/** The container check: NVIDIA_VISIBLE_DEVICES, and whether GPUs were passed in (device files present). */
export function checkContainer(inContainer: boolean, visible: string | null, gpuFiles: number): DoctorCheck {
  const base = { id: 'container', title: 'container' };
  if (!inContainer) return { ...base, status: 'ok', why: 'not in a container', todo: null };
  const passIn =
    'start the container with the GPUs: docker run --gpus all (NVIDIA Container Toolkit), or request nvidia.com/gpu in Kubernetes';
  const setting = visible === null ? 'NVIDIA_VISIBLE_DEVICES is not set' : `NVIDIA_VISIBLE_DEVICES=${visible}`;
  if (visible !== null && /^(void|none|)$/.test(visible.trim()))
    return { ...base, status: 'fail', why: `in a container with ${setting}: no GPU is passed in`, todo: passIn };
  if (!gpuFiles) return { ...base, status: 'fail', why: `in a container (${setting}) with no GPU device files`, todo: passIn };
  return { ...base, status: 'ok', why: `in a container (${setting}), ${gpuFiles} GPU${gpuFiles === 1 ? '' : 's'} passed in`, todo: null };
}
