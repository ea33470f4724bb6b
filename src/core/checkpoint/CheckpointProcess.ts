// cuda.core's checkpoint.Process: the driver's CUDA checkpoint API (cuCheckpointProcess*), which
// suspends another process's CUDA work, saves its device memory to host memory and puts it back,
// so that a tool such as CRIU can checkpoint the process as a whole. Each step says what the driver
// wants when it refuses: the state the process must be in, a driver that has the call.
import * as cuda from '../../driver';
import { describe } from '../../ffi/checks';
import { driverError } from '../base/errors';
import { Device } from '../device/Device';

/** Where a process is in a checkpoint (CUprocessState). */
export type CheckpointState = 'running' | 'locked' | 'checkpointed' | 'failed';

/** Which GPU a restored process's memory goes to: old → new, each a Device or a UUID ('GPU-xxxxxxxx-…'). */
export type GpuMapping = ReadonlyMap<Device | string, Device | string> | readonly (readonly [from: Device | string, to: Device | string])[];

const STATES: Record<number, CheckpointState> = {
  [cuda.CUprocessState.CU_PROCESS_STATE_RUNNING]: 'running',
  [cuda.CUprocessState.CU_PROCESS_STATE_LOCKED]: 'locked',
  [cuda.CUprocessState.CU_PROCESS_STATE_CHECKPOINTED]: 'checkpointed',
  [cuda.CUprocessState.CU_PROCESS_STATE_FAILED]: 'failed',
};

/** What a refused step's message may add: lock()'s timeout, and what restore() with a mapping needs. */
interface RefusalHints {
  timeoutMs?: number;
  refusedMapping?: string | null;
}

/** The state each step needs the process in. */
const NEEDS: Record<string, CheckpointState> = { lock: 'running', checkpoint: 'locked', restore: 'checkpointed', unlock: 'locked' };

/** A GPU UUID ('GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx', or a Device's) as its 16 bytes. */
function uuidBytes(v: unknown, where: string, param: string): Uint8Array {
  const text = v instanceof Device ? v.uuid : v;
  const hex = typeof text === 'string' ? text.replace(/^GPU-/, '').replace(/-/g, '') : '';
  if (!/^[0-9a-fA-F]{32}$/.test(hex))
    throw new TypeError(
      `${where}: ${param} must be a Device or a GPU UUID ('GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'), got ${describe(v)}`,
    );
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
}

/**
 * Another process's CUDA state, to checkpoint and restore (cuda.core's `checkpoint.Process`): `lock`
 * stops its CUDA calls and waits for its work, `checkpoint` copies its device memory to host memory
 * and releases the GPUs, `restore` puts the memory back (on the same GPUs, or others by UUID), and
 * `unlock` lets it run on. The process must belong to the same user (or the caller be root), and the
 * driver must have the checkpoint API (Linux, driver r570 or later; GPU remapping on restore needs
 * a newer one). It owns nothing: there is nothing to close.
 *
 * @example
 * ```ts
 * const p = new CheckpointProcess(child.pid);
 * p.lock(5000).checkpoint();           // the GPU memory is now in the child's host memory
 * p.restore().unlock();                // back on the GPU, running again
 * ```
 */
export class CheckpointProcess {
  /** A handle on process `pid` (a positive integer); nothing is asked of the driver until a method runs. */
  constructor(
    /** The process id. */
    readonly pid: number,
  ) {
    if (!Number.isInteger(pid) || pid <= 0 || pid > 0x7fffffff)
      throw new RangeError(`CheckpointProcess: parameter 'pid' must be a process id (a positive integer), got ${describe(pid)}`);
  }

  /** Where the process is: 'running', 'locked', 'checkpointed' or 'failed' (cuCheckpointProcessGetState). */
  get state(): CheckpointState {
    const [err, s] = this.call('state', 'cuCheckpointProcessGetState', () => cuda.cuCheckpointProcessGetState(this.pid));
    if (err !== cuda.CUresult.CUDA_SUCCESS || s === null) throw this.refused('state', 'cuCheckpointProcessGetState', err);
    return STATES[s] ?? 'failed';
  }

  /** The id of the process's thread that restores its CUDA state (cuCheckpointProcessGetRestoreThreadId), for a checkpointing tool. */
  get restoreThreadId(): number {
    const [err, tid] = this.call('restoreThreadId', 'cuCheckpointProcessGetRestoreThreadId', () =>
      cuda.cuCheckpointProcessGetRestoreThreadId(this.pid),
    );
    if (err !== cuda.CUresult.CUDA_SUCCESS || tid === null)
      throw this.refused('restoreThreadId', 'cuCheckpointProcessGetRestoreThreadId', err);
    return tid;
  }

  /**
   * Stops the process's CUDA calls and waits for its submitted work to finish (cuCheckpointProcessLock),
   * giving up after `timeoutMs` milliseconds (0: wait as long as it takes). Needs the process running.
   */
  lock(timeoutMs = 0): this {
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 0xffffffff)
      throw new RangeError(
        `CheckpointProcess.lock: parameter 'timeoutMs' must be a non-negative integer of milliseconds, got ${describe(timeoutMs)}`,
      );
    return this.step('lock', 'cuCheckpointProcessLock', () => cuda.cuCheckpointProcessLock(this.pid, { timeoutMs }), { timeoutMs });
  }

  /** Copies the locked process's device memory into its host memory and releases its GPUs (cuCheckpointProcessCheckpoint). */
  checkpoint(): this {
    return this.step('checkpoint', 'cuCheckpointProcessCheckpoint', () => cuda.cuCheckpointProcessCheckpoint(this.pid, null));
  }

  /**
   * Puts the checkpointed process's device memory back (cuCheckpointProcessRestore): on the GPUs it
   * had, or, with `gpuMapping`, each old GPU's memory on the new one it maps to, by Device or UUID.
   * A mapping names every GPU the process could see, not only those it used (driver r580 refuses one
   * that leaves a GPU out, and the process stays checkpointed): map each GPU that stays to itself.
   * The process stays locked until unlock().
   */
  restore(gpuMapping?: GpuMapping): this {
    const fn = 'CheckpointProcess.restore';
    let args: cuda.CUcheckpointRestoreArgs_stInit | null = null;
    if (gpuMapping !== undefined) {
      const pairs = gpuMapping instanceof Map ? [...gpuMapping.entries()] : Array.isArray(gpuMapping) ? gpuMapping : null;
      if (pairs === null || pairs.length === 0)
        throw new TypeError(
          `${fn}: parameter 'gpuMapping' must be a non-empty Map or array of [old, new] GPUs, got ${describe(gpuMapping)}`,
        );
      const gpuPairs = pairs.map((p, i) => {
        if (!Array.isArray(p) || p.length !== 2) throw new TypeError(`${fn}: gpuMapping[${i}] must be [old, new], got ${describe(p)}`);
        return {
          oldUuid: { bytes: uuidBytes(p[0], fn, `gpuMapping[${i}][0]`) },
          newUuid: { bytes: uuidBytes(p[1], fn, `gpuMapping[${i}][1]`) },
        };
      });
      args = { gpuPairs, gpuPairsCount: gpuPairs.length };
    }
    const refusedMapping =
      args &&
      `a gpuMapping must name every GPU the process could see, not only those it used (this one names ${args.gpuPairsCount}): map each GPU that stays to itself and call restore() again`;
    return this.step('restore', 'cuCheckpointProcessRestore', () => cuda.cuCheckpointProcessRestore(this.pid, args), { refusedMapping });
  }

  /** Lets the locked process make CUDA calls again (cuCheckpointProcessUnlock). */
  unlock(): this {
    return this.step('unlock', 'cuCheckpointProcessUnlock', () => cuda.cuCheckpointProcessUnlock(this.pid, null));
  }

  /** Runs one step; a refusal throws an error that says what the step needs. */
  private step(what: string, name: string, call: () => [cuda.CUresult], hints: RefusalHints = {}): this {
    const [err] = this.call(what, name, call);
    if (err !== cuda.CUresult.CUDA_SUCCESS) throw this.refused(what, name, err, hints);
    return this;
  }

  /** Initialises the driver and makes the call; a driver without the call is an Error saying what it needs. */
  private call<R extends [cuda.CUresult, ...unknown[]]>(what: string, name: string, call: () => R): R {
    try {
      const [initErr] = cuda.cuInit(0);
      if (initErr !== cuda.CUresult.CUDA_SUCCESS) throw driverError(initErr, `CheckpointProcess.${what} (cuInit)`);
      return call();
    } catch (e) {
      if (!/does not export/.test((e as Error).message)) throw e;
      throw new Error(
        `CheckpointProcess.${what}: this driver has no ${name}; the CUDA checkpoint API needs a Linux driver r570 (CUDA 12.8) or later`,
        { cause: e },
      );
    }
  }

  /** The error for a refused step: the driver's, with what it needed in the message. */
  private refused(what: string, name: string, err: cuda.CUresult, hints: RefusalHints = {}): Error {
    const e = driverError(err, `CheckpointProcess.${what} (${name}, pid ${this.pid})`);
    const R = cuda.CUresult;
    let why = '';
    if (err === R.CUDA_ERROR_ILLEGAL_STATE && NEEDS[what]) {
      let now = 'unknown';
      try {
        now = this.state;
      } catch {
        // the state itself may be what fails
      }
      why = `${what}() needs the process ${NEEDS[what]}; it is ${now} (the order is lock, checkpoint, restore, unlock)`;
    } else if (err === R.CUDA_ERROR_NOT_READY && what === 'lock')
      why = `the process did not finish its CUDA work within ${hints.timeoutMs} ms; give lock() a longer timeout, or 0 to wait`;
    else if (err === R.CUDA_ERROR_NOT_INITIALIZED) why = `process ${this.pid} has not initialised CUDA, or is not a process of this user`;
    else if (err === R.CUDA_ERROR_NOT_SUPPORTED)
      why =
        'the driver does not support checkpointing here (it needs Linux, driver r570 or later, and no unsupported feature in use: IPC, UVM on some drivers, MPS)';
    else if (err === R.CUDA_ERROR_INVALID_VALUE)
      why = `no CUDA process ${this.pid} (or one of another user), or an argument the driver refused${hints.refusedMapping ? `; ${hints.refusedMapping}` : ''}`;
    if (why) e.message = `${e.message}: ${why}`;
    return e;
  }
}
