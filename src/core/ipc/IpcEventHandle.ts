// An event shared between processes (cudaIpcGetEventHandle / cudaIpcOpenEventHandle): one process
// records it, another waits on it.
import * as cudart from '../../runtime';
import { describe } from '../../ffi/checks';
import { check } from '../base/errors';
import { Event } from '../device/Event';
import { Device } from '../device/Device';
import { fromSerialised, rawHandle, serialise } from './ipc-format';

const MAGIC = 'CBIE';

/**
 * A handle to an event that another process can open. The event must be made with
 * `device.createEvent({ interprocess: true, timing: false })`. Serialise with `toBuffer()` /
 * `toBase64()`, read back with `IpcEventHandle.from()`.
 */
export class IpcEventHandle {
  private constructor(
    /** The 64 bytes of cudaIpcEventHandle_t. */
    readonly bytes: Uint8Array,
  ) {}

  /** The handle of `event` (cudaIpcGetEventHandle); `event` stays the owner. */
  static export(event: Event): IpcEventHandle {
    if (!(event instanceof Event)) throw new TypeError(`IpcEventHandle.export: parameter 'event' must be an Event, got ${describe(event)}`);
    if (event.isClosed) throw new Error("IpcEventHandle.export: parameter 'event' was closed");
    if (!event.interprocess)
      throw new TypeError(
        "IpcEventHandle.export: parameter 'event' was not made shareable: create it with { interprocess: true, timing: false }",
      );
    const h = check(cudart.cudaIpcGetEventHandle(event.handle), 'IpcEventHandle.export (cudaIpcGetEventHandle)');
    return new IpcEventHandle(new Uint8Array(h.reserved));
  }

  /**
   * A handle another library made, from its raw bytes: the 64 bytes of a cudaIpcEventHandle_t
   * (CuPy's `cupy.cuda.runtime.ipcGetEventHandle(event)`, the event handle in PyTorch's
   * `storage._share_cuda_()`, a native addon's).
   */
  static fromBytes(bytes: Uint8Array): IpcEventHandle {
    return new IpcEventHandle(rawHandle(bytes, 'cudaIpcEventHandle_t', 'IpcEventHandle.fromBytes'));
  }

  /** Reads a handle written by toBuffer() or toBase64(). */
  static from(data: Uint8Array | string): IpcEventHandle {
    return new IpcEventHandle(fromSerialised(data, MAGIC, 0, 'IpcEventHandle.from')[1]);
  }

  /** The handle as bytes: 'CBIE', a version (u32, little-endian), then the 64 bytes of cudaIpcEventHandle_t (72 bytes). */
  toBuffer(): Buffer {
    return serialise(MAGIC, [], this.bytes);
  }

  /** toBuffer() as base64 text. */
  toBase64(): string {
    return this.toBuffer().toString('base64');
  }

  /** Opens the event in this process, on `device` (default: the current one); close() on it lets this process's reference go. */
  open(device: Device = Device.current()): Event {
    if (!(device instanceof Device))
      throw new TypeError(`IpcEventHandle.open: parameter 'device' must be a Device, got ${describe(device)}`);
    device.makeCurrent();
    const h = check(
      cudart.cudaIpcOpenEventHandle(new cudart.cudaIpcEventHandle_st({ reserved: this.bytes })),
      'IpcEventHandle.open (cudaIpcOpenEventHandle)',
    );
    return Event.adopt(h, device, false, true);
  }
}
