// The development warning for copies that block the event loop: a copy between the device and
// pageable host memory queued on a stream (copyFrom/copyTo with { stream }) waits on the JS thread
// (for the stream's earlier work, or while the driver stages the bytes). Off unless the environment
// sets CUDA_BINDINGS_WARN_BLOCKING_COPIES=1 when the package loads; then each method warns once per process.
import * as cudart from '../../runtime';

const warned = new Set<string>();
// Read once: process.env is slow to read, and this is on the path of every copy on a stream.
const enabled = process.env.CUDA_BINDINGS_WARN_BLOCKING_COPIES === '1';

/** Warns (process.emitWarning, once per `what`) when the variable is set and `host` is pageable memory. */
export function warnIfBlocking(host: ArrayBufferView | ArrayBuffer, what: string): void {
  // The check apart: this function stays small enough for V8 to inline into a copy's hot path.
  if (enabled) warnIfPageable(host, what);
}

/** warnIfBlocking once the variable is set. */
function warnIfPageable(host: ArrayBufferView | ArrayBuffer, what: string): void {
  if (warned.has(what) || host.byteLength === 0) return;
  const [err, attributes] = cudart.cudaPointerGetAttributes(host);
  if (err !== cudart.cudaError_t.cudaSuccess || attributes.type !== cudart.cudaMemoryType.cudaMemoryTypeUnregistered) return;
  warned.add(what);
  const instead = what.endsWith('copyTo') ? 'await buf.download(Float32Array, { stream })' : 'buf.upload(src, { stream })';
  process.emitWarning(
    `${what}: a copy between the device and pageable host memory on a stream blocks the event loop until the stream's earlier work is done; ${instead} does not`,
    { code: 'CUDA_BINDINGS_BLOCKING_COPY' },
  );
}
