// The IPC handles' bytes as another process reads them (README, "Sharing GPU memory"): raw 64-byte
// CUDA handles from another library (fromBytes), and this package's tagged format, field by field.
// No CUDA call is made.
import { core } from '../../../src';

const raw = Uint8Array.from({ length: 64 }, (_, i) => i * 3);

test("IpcMemoryHandle.fromBytes keeps a peer's 64 bytes, size and offset; toBuffer() is 'CBIM', version, size, offset, bytes", () => {
  const h = core.IpcMemoryHandle.fromBytes(raw, 4096, 512);
  expect([Array.from(h.bytes), h.size, h.offset]).toEqual([Array.from(raw), 4096, 512]);
  const b = h.toBuffer();
  expect(b.length).toBe(88);
  expect([b.toString('latin1', 0, 4), b.readUInt32LE(4), Number(b.readBigUInt64LE(8)), Number(b.readBigUInt64LE(16))]).toEqual([
    'CBIM',
    1,
    4096,
    512,
  ]);
  expect(Array.from(b.subarray(24))).toEqual(Array.from(raw));
  const back = core.IpcMemoryHandle.from(h.toBase64());
  expect([Array.from(back.bytes), back.size, back.offset]).toEqual([Array.from(raw), 4096, 512]);
});

test("IpcEventHandle.fromBytes keeps a peer's 64 bytes; toBuffer() is 'CBIE', version, bytes", () => {
  const h = core.IpcEventHandle.fromBytes(raw);
  const b = h.toBuffer();
  expect([b.length, b.toString('latin1', 0, 4), b.readUInt32LE(4)]).toEqual([72, 'CBIE', 1]);
  expect(Array.from(b.subarray(8))).toEqual(Array.from(raw));
  expect(Array.from(core.IpcEventHandle.from(b).bytes)).toEqual(Array.from(raw));
});

test('fromBytes refuses what is not 64 bytes, and sizes and offsets that are not byte counts', () => {
  expect(() => core.IpcMemoryHandle.fromBytes(new Uint8Array(63), 16)).toThrow(
    "IpcMemoryHandle.fromBytes: parameter 'bytes' must be the 64 bytes of a cudaIpcMemHandle_t, got 63 bytes",
  );
  expect(() => core.IpcMemoryHandle.fromBytes('ab' as unknown as Uint8Array, 16)).toThrow(
    /^IpcMemoryHandle.fromBytes: parameter 'bytes' must be the 64 bytes of a cudaIpcMemHandle_t, got the string "ab"$/,
  );
  expect(() => core.IpcMemoryHandle.fromBytes(raw, -1)).toThrow(
    "IpcMemoryHandle.fromBytes: parameter 'size' must be a non-negative integer, got -1",
  );
  expect(() => core.IpcMemoryHandle.fromBytes(raw, 16, 0.5)).toThrow(
    "IpcMemoryHandle.fromBytes: parameter 'offset' must be a non-negative integer, got 0.5",
  );
  expect(() => core.IpcEventHandle.fromBytes(new Uint8Array(65))).toThrow(
    "IpcEventHandle.fromBytes: parameter 'bytes' must be the 64 bytes of a cudaIpcEventHandle_t, got 65 bytes",
  );
});
