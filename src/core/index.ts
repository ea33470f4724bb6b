// cuda-bindings/core: objects that throw, free themselves and read like JavaScript, over the runtime.
export { CudaError, NvrtcError, check } from './errors';
export { warnOnLeaks } from './lifetime';
export { Device } from './Device';
export { Stream, type StreamOptions } from './Stream';
export { Event, type EventOptions } from './Event';
export { DeviceBuffer, type HostData, type CopyOptions } from './DeviceBuffer';
export { HostBuffer, type HostBufferOptions } from './HostBuffer';
