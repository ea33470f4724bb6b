// JIT options for cuModuleLoadDataEx, cuLinkCreate and cuLibraryLoadData, with the logs they fill.
import koffi from 'koffi';
import { CUjit_option } from './enums.gen';
import { untransferable } from '../ffi/marshal';

/** Option values by option; the log buffers are added for you. */
export type JitOptionValues = Partial<Record<CUjit_option, number | bigint>>;

/**
 * Options and their values packed as the driver wants them (`CUjit_option *options`,
 * `void **optionValues`), with an info and an error log buffer. After the call, `infoLog` and
 * `errorLog` hold what the JIT wrote and `value(option)` what it wrote back (wall time, sizes).
 */
export class JitOptions {
  /** The options, to pass as `options`. */
  readonly options: CUjit_option[];
  /** The values, one 8-byte slot each, to pass as `optionValues`. */
  readonly values: BigUint64Array;
  private readonly info: Uint8Array;
  private readonly error: Uint8Array;

  constructor(values: JitOptionValues = {}, logSize = 16384) {
    // Untransferable: `values` holds their addresses, and the JIT writes the logs there.
    this.info = new Uint8Array(untransferable(new ArrayBuffer(logSize)));
    this.error = new Uint8Array(untransferable(new ArrayBuffer(logSize)));
    const all: [CUjit_option, bigint][] = Object.entries(values).map(([k, v]) => [Number(k) as CUjit_option, BigInt(v as number | bigint)]);
    all.push(
      [CUjit_option.CU_JIT_INFO_LOG_BUFFER, koffi.address(this.info) as bigint],
      [CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, BigInt(logSize)],
      [CUjit_option.CU_JIT_ERROR_LOG_BUFFER, koffi.address(this.error) as bigint],
      [CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, BigInt(logSize)],
    );
    this.options = all.map(([k]) => k);
    this.values = BigUint64Array.from(all.map(([, v]) => v));
  }

  /** Number of options, to pass as `numOptions`. */
  get count(): number {
    return this.options.length;
  }

  /** The JIT's information log. */
  get infoLog(): string {
    return text(this.info, this.value(CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES));
  }

  /** The JIT's error log. */
  get errorLog(): string {
    return text(this.error, this.value(CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES));
  }

  /** Milliseconds the JIT took (CU_JIT_WALL_TIME, which the driver writes back as a float); NaN if not asked for. */
  get wallTime(): number {
    const i = this.options.indexOf(CUjit_option.CU_JIT_WALL_TIME);
    return i < 0 ? NaN : new Float32Array(this.values.buffer, this.values.byteOffset + i * 8, 1)[0];
  }

  /** The integer value slot of an option after the call (the driver writes some back, e.g. log sizes). */
  value(option: CUjit_option): number {
    const i = this.options.indexOf(option);
    return i < 0 ? NaN : Number(this.values[i] & 0xffffffffn);
  }
}

function text(b: Uint8Array, n: number): string {
  const end = b.indexOf(0);
  return Buffer.from(b.buffer, b.byteOffset, Math.min(end < 0 ? b.length : end, Number.isNaN(n) ? b.length : n))
    .toString('utf8')
    .trimEnd();
}
