// What the core-layer examples share: device 0, or one line saying why there is none.
import { core } from 'cuda-bindings';

/** Device 0; null (after printing `<example>: no usable CUDA device: …` on stderr) when CUDA has none or cannot start. */
export function firstDevice(example: string): core.Device | null {
  try {
    if (core.Device.count() === 0) throw new Error('no CUDA device');
    return core.Device.get(0);
  } catch (e) {
    console.error(`${example}: no usable CUDA device: ${(e as Error).message.split('\n')[0]}`);
    return null;
  }
}
