// C strings read from memory (char[N] fields, logs): UTF-8 up to the first NUL, or the whole field
// when it has none, decoded by Node's native decoder (src/ffi/marshal.ts cString/cStringAt).
import { cString, cStringAt } from '../../../src/ffi/marshal';
import { cudaDeviceProp } from '../../../src/runtime/structs.gen';

const bytes = (s: string, size: number) => {
  const b = new Uint8Array(size);
  b.set(Buffer.from(s, 'utf8'));
  return b;
};

test.each([
  ['ASCII up to the NUL', bytes('NVIDIA H100 80GB HBM3', 32), 'NVIDIA H100 80GB HBM3'],
  ['UTF-8 of several bytes a character', bytes('Gerät µ 设备', 32), 'Gerät µ 设备'],
  ['an empty string', new Uint8Array(8), ''],
  ['no NUL: every byte', Uint8Array.from(Buffer.from('abcdefgh')), 'abcdefgh'],
  ['a byte that is not UTF-8 becomes U+FFFD, as Buffer decodes it', Uint8Array.from([0x61, 0xff, 0x62, 0]), 'a\ufffdb'],
])('cString: %s', (_name, b, want) => {
  expect(cString(b)).toBe(want);
  expect(cString(b)).toBe(Buffer.from(b).toString('utf8').split('\0')[0]);
});

test('cStringAt stops at the field: a full char[n] does not run into the next bytes', () => {
  const b = Uint8Array.from(Buffer.from('xxabcdef\0'));
  expect(cStringAt(b, 2, 4)).toBe('abcd');
  expect(cStringAt(b, 2, 100)).toBe('abcdef');
  expect(cStringAt(b, 8, 4)).toBe('');
});

test('a char[256] struct field reads back what was set, in a struct that sits at an offset', () => {
  const p = new cudaDeviceProp();
  p.name = 'NVIDIA H100 80GB HBM3';
  expect(p.name).toBe('NVIDIA H100 80GB HBM3');
  p.name = 'é'.repeat(128); // 256 bytes: no NUL left
  expect(p.name).toBe('é'.repeat(128));
  const inner = cudaDeviceProp.view(new Uint8Array(p.getBytes().buffer, p.getBytes().byteOffset, p.getBytes().length));
  expect(inner.name).toBe('é'.repeat(128));
});
