// shareWithPython: GPU memory crossing to a CuPy process with no copy through the host. Node fills a
// 4×256 float32 matrix on GPU 0 and records an interprocess event after the fill; it sends a Python
// process (python3, or $PYTHON) the memory's and the event's IPC handles as hex, with the matrix's
// __cuda_array_interface__, as one JSON line on stdin. The Python side (PYTHON_SIDE below: CuPy
// only, no cuda-bindings) opens both, waits for the event on its stream, sums each row, doubles the
// matrix in place, records the event and answers with the sums. Node waits for the event, reads
// the matrix back and checks both. Without CuPy for that Python, it says so and is waived (exit 0).
//   npx tsx examples/shareWithPython.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { spawnSync } from 'node:child_process';
import { Device, IpcEventHandle, IpcMemoryHandle, StridedView } from 'cuda-bindings/core';
import { runExample } from './lib/runtime';

const PYTHON = process.env.PYTHON ?? 'python3';
const ROWS = 4;
const COLS = 256;

/** What the Python process runs: the README's "Sharing GPU memory" shows the same lines. */
const PYTHON_SIDE = `
import json, sys, cupy
msg = json.loads(sys.stdin.readline())
base = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(msg["handle"]))
event = cupy.cuda.runtime.ipcOpenEventHandle(bytes.fromhex(msg["event"]))
stream = cupy.cuda.get_current_stream()
cupy.cuda.runtime.streamWaitEvent(stream.ptr, event, 0)          # Node's fill is done first
cai = dict(msg["array"], shape=tuple(msg["array"]["shape"]), stream=None,
           data=(base + msg["offset"] + msg["array"]["data"][0] - msg["base"], False))
class Shared:
    __cuda_array_interface__ = cai
a = cupy.asarray(Shared())                                       # no copy: Node's memory
sums = a.sum(axis=1).tolist()
a *= 2
cupy.cuda.runtime.eventRecord(event, stream.ptr)                 # Node waits for this
stream.synchronize()
cupy.cuda.runtime.ipcCloseMemHandle(base)
print(json.dumps({"rowSums": sums}))
`;

runExample('shareWithPython', async () => {
  const probe = spawnSync(PYTHON, ['-c', 'import cupy'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    console.log(`${PYTHON} has no CuPy (${probe.error?.message ?? probe.stderr.trim().split('\n').pop()}): waived`);
    return true;
  }
  const dev = Device.get(0).makeCurrent();
  console.log(`GPU0: ${dev.name}`);
  using stream = dev.createStream({ nonBlocking: true });
  using event = dev.createEvent({ interprocess: true });
  using buf = dev.allocate(ROWS * COLS * 4);
  const matrix = StridedView.of(buf, { dtype: 'f32', shape: [ROWS, COLS] });
  const host = Float32Array.from({ length: ROWS * COLS }, (_, i) => (i % COLS) + Math.floor(i / COLS));
  matrix.copyFrom(host, { stream });
  event.record(stream);
  const handle = IpcMemoryHandle.export(buf);
  const message = {
    handle: Buffer.from(handle.bytes).toString('hex'),
    offset: handle.offset,
    base: Number(buf.ptr),
    event: Buffer.from(IpcEventHandle.export(event).bytes).toString('hex'),
    array: matrix.toArrayInterface(),
  };
  const python = spawnSync(PYTHON, ['-c', PYTHON_SIDE], { input: JSON.stringify(message) + '\n', encoding: 'utf8', timeout: 120_000 });
  if (python.status !== 0) {
    console.error(`shareWithPython: the Python side failed (exit ${python.status}):\n${python.stderr}`);
    return false;
  }
  const { rowSums } = JSON.parse(python.stdout.trim().split('\n').pop()!) as { rowSums: number[] };
  stream.waitEvent(event);
  const back = matrix.copyTo(new Float32Array(ROWS * COLS), { stream });
  await stream.synchronize();
  const expectedSums = Array.from({ length: ROWS }, (_, r) => (COLS * (COLS - 1)) / 2 + r * COLS);
  console.log(`row sums computed by CuPy: ${rowSums.join(', ')}`);
  const sumsOk = rowSums.every((s, r) => s === expectedSums[r]);
  const doubled = back.every((v, i) => v === 2 * host[i]);
  console.log(`sums ${sumsOk ? 'match' : 'DIFFER'}; matrix ${doubled ? 'doubled in place by CuPy' : 'NOT as CuPy left it'}`);
  return sumsOk && doubled;
});
