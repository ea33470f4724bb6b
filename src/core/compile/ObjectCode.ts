// One compiled artifact (cuda.core's ObjectCode): a cubin, PTX, LTO-IR, a fatbin, a host object or
// a library, with its bytes. Programs make them, the Linker takes and makes them, nvFatbin bundles
// them, and the loadable ones load as a Module.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as nvfatbin from '../../nvfatbin';
import { Device } from '../device/Device';
import { Module, type ModuleOptions } from '../launch/Module';
import { checkOptions, type OptionKeys } from '../base/options';
import { CudaBindingsError, statusMessage, statusText } from '../../ffi/errors';
import { describe, checkPtxText } from '../../ffi/checks';

/** What an ObjectCode holds. */
export type CodeKind = 'cubin' | 'ptx' | 'ltoir' | 'fatbin' | 'object' | 'library';
/** Every kind, in the order the messages list them. */
export const CODE_KINDS: readonly CodeKind[] = ['cubin', 'ptx', 'ltoir', 'fatbin', 'object', 'library'];

/** File name endings and the kind they stand for. */
const EXTENSIONS: Record<string, CodeKind> = {
  '.cubin': 'cubin',
  '.ptx': 'ptx',
  '.ltoir': 'ltoir',
  '.fatbin': 'fatbin',
  '.fatbinary': 'fatbin',
  '.o': 'object',
  '.obj': 'object',
  '.a': 'library',
  '.lib': 'library',
};

const ELF = [0x7f, 0x45, 0x4c, 0x46];
const FATBIN = [0x50, 0xed, 0x55, 0xba];
const LTOIR = [0xed, 0x43, 0x4e, 0x7f];
const AR = [0x21, 0x3c, 0x61, 0x72, 0x63, 0x68, 0x3e, 0x0a]; // "!<arch>\n"

/** What {@link ObjectCode.fromBytes} and {@link ObjectCode.fromFile} may be told about the code. */
export interface ObjectCodeOptions {
  /** The name in link logs (default: the file name, or the kind). */
  name?: string;
  /** The architecture it was built for, where known ('sm_90', 'compute_90'): used by `ObjectCode.fatbin`. */
  arch?: string;
  /** Names to look kernels up by → their symbols, for `load()` (a Program's name expressions). */
  names?: Readonly<Record<string, string>>;
}

const OBJECT_CODE_OPTIONS: OptionKeys<ObjectCodeOptions> = { name: true, arch: true, names: true };

/** How {@link ObjectCode.fatbin} bundles code. */
export interface FatbinOptions {
  /** nvFatbin options: '-compress=true', '-host=linux', … */
  options?: readonly string[];
}

/**
 * Device code as bytes with its kind (cubin, PTX, LTO-IR, fatbin, object, library): the input and
 * output of a {@link Linker}, what a {@link Program} compiled, or bundled into a fatbin by
 * {@link ObjectCode.fatbin} (nvFatbin). `load()` makes a {@link Module} of it.
 *
 * Only bytes (nothing to close). A kind that cannot be told from the bytes throws RangeError;
 * loading code the driver rejects throws {@link CudaError}.
 *
 * @example
 * ```ts
 * const lib = ObjectCode.fromFile('lib.ltoir');
 * const main = Program.compile(src, { target: 'ltoir' }).objectCode;
 * using module = new Linker(main, lib, { lto: true }).link('cubin').load();
 * ```
 */
export class ObjectCode {
  /** The name in link logs. */
  readonly name: string;
  /** The architecture it was built for, where known. */
  readonly arch: string | undefined;
  /** The linker's or compiler's information log, for code that came out of one; empty otherwise. */
  infoLog = '';
  private sourcePath: string | null = null;

  /** The file it was read from ({@link ObjectCode.fromFile}, as an absolute path), or null for code made in memory. */
  get path(): string | null {
    return this.sourcePath;
  }
  private readonly names: Readonly<Record<string, string>>;

  private constructor(
    /** What the bytes are. */
    readonly kind: CodeKind,
    /** The bytes (PTX without a trailing NUL). */
    readonly code: Uint8Array,
    options: ObjectCodeOptions,
  ) {
    this.name = options.name ?? kind;
    this.arch = options.arch;
    this.names = options.names ?? {};
  }

  /** Wraps bytes; `kind` may be left out for a cubin, a fatbin, LTO-IR, an archive or PTX text, which are recognised. */
  static fromBytes(code: Uint8Array | string, kind?: CodeKind, options: ObjectCodeOptions = {}): ObjectCode {
    checkOptions('ObjectCode.fromBytes', options, OBJECT_CODE_OPTIONS);
    const bytes = typeof code === 'string' ? new TextEncoder().encode(code) : code;
    if (!(bytes instanceof Uint8Array))
      throw new TypeError(`ObjectCode.fromBytes: parameter 'code' must be a Uint8Array or PTX text, got ${describe(code)}`);
    if (bytes.length === 0) throw new RangeError("ObjectCode.fromBytes: parameter 'code' is empty");
    if (kind !== undefined && !CODE_KINDS.includes(kind))
      throw new RangeError(`ObjectCode.fromBytes: parameter 'kind' must be one of ${CODE_KINDS.join(', ')}, got ${describe(kind)}`);
    const k = kind ?? sniff(bytes);
    if (!k)
      throw new TypeError(
        "ObjectCode.fromBytes: cannot tell what 'code' holds (not a cubin, fatbin, LTO-IR, archive or PTX); pass its kind: 'ltoir', 'object', …",
      );
    if (k === 'ptx') checkPtxText(bytes, 'ObjectCode.fromBytes', 'code');
    return new ObjectCode(k, k === 'ptx' ? stripNul(bytes) : bytes, options);
  }

  /** Reads a file; the kind comes from its ending (.cubin, .ptx, .ltoir, .fatbin, .o, .a) unless given; the ObjectCode keeps its `path`. */
  static fromFile(file: string, kind?: CodeKind, options: ObjectCodeOptions = {}): ObjectCode {
    checkOptions('ObjectCode.fromFile', options, OBJECT_CODE_OPTIONS);
    if (typeof file !== 'string') throw new TypeError(`ObjectCode.fromFile: parameter 'file' must be a path, got ${describe(file)}`);
    if (!fs.existsSync(file)) throw new Error(`ObjectCode.fromFile: no file ${file}`);
    const k = kind ?? EXTENSIONS[path.extname(file).toLowerCase()];
    const bytes = new Uint8Array(fs.readFileSync(file));
    if (!k && !sniff(bytes))
      throw new TypeError(`ObjectCode.fromFile: cannot tell the kind of ${file} from its name or bytes; pass it: 'ltoir', 'object', …`);
    const code = ObjectCode.fromBytes(bytes, k, { name: path.basename(file), ...options });
    code.sourcePath = path.resolve(file);
    return code;
  }

  /**
   * Bundles cubins, PTX and LTO-IR (each with its `arch`) into one fatbin with nvFatbin, as
   * `nvcc -fatbin` does; the driver loads the entry that fits the device.
   */
  static fatbin(objects: readonly ObjectCode[], options: FatbinOptions = {}): ObjectCode {
    if (!Array.isArray(objects) || objects.length === 0)
      throw new TypeError("ObjectCode.fatbin: parameter 'objects' must be a non-empty array of ObjectCode");
    checkOptions('ObjectCode.fatbin', options, { options: true });
    const opts = [...(options.options ?? [])];
    if (opts.some((o) => typeof o !== 'string'))
      throw new TypeError(`ObjectCode.fatbin: option 'options' must be an array of strings, got ${JSON.stringify(options.options)}`);
    objects.forEach((o, i) => {
      if (!(o instanceof ObjectCode)) throw new TypeError(`ObjectCode.fatbin: objects[${i}] must be an ObjectCode, got ${describe(o)}`);
      if (o.kind !== 'cubin' && o.kind !== 'ptx' && o.kind !== 'ltoir')
        throw new RangeError(`ObjectCode.fatbin: objects[${i}] ('${o.name}') is ${o.kind}; a fatbin holds cubins, PTX and LTO-IR`);
      if (!o.arch) throw new RangeError(`ObjectCode.fatbin: objects[${i}] ('${o.name}') has no arch; make it with { arch: 'sm_90' }`);
      // The bytes may have changed since fromBytes checked them.
      if (o.kind === 'ptx') checkPtxText(o.code, `ObjectCode.fatbin: objects[${i}] ('${o.name}')`, undefined);
    });
    const [err, handle] = nvfatbin.nvFatbinCreate(opts, opts.length);
    fatbinCheck(err, 'nvFatbinCreate');
    try {
      objects.forEach((o, i) => {
        const arch = archDigits(o.arch!, 'ObjectCode.fatbin', `objects[${i}].arch`);
        const id = `${o.name}#${i}`;
        const r =
          o.kind === 'cubin'
            ? nvfatbin.nvFatbinAddCubin(handle, o.code, o.code.length, arch, id)
            : o.kind === 'ptx'
              ? nvfatbin.nvFatbinAddPTX(handle, withNul(o.code), o.code.length, arch, id, '')
              : nvfatbin.nvFatbinAddLTOIR(handle, o.code, o.code.length, arch, id, '');
        fatbinCheck(
          r[0],
          `nvFatbinAdd${o.kind === 'cubin' ? 'Cubin' : o.kind === 'ptx' ? 'PTX' : 'LTOIR'}(objects[${i}] '${o.name}', arch ${arch})`,
        );
      });
      const [getErr, bytes] = nvfatbin.nvFatbinGet(handle, null);
      fatbinCheck(getErr, 'nvFatbinGet');
      return new ObjectCode('fatbin', new Uint8Array(bytes!), { name: 'fatbin' });
    } finally {
      nvfatbin.nvFatbinDestroy(handle);
    }
  }

  /** Loads a cubin, PTX or fatbin as a Module (LTO-IR, objects and libraries must be linked first). */
  load(options: ModuleOptions = {}): Module {
    checkOptions('ObjectCode.load', options, { names: true });
    if (this.kind !== 'cubin' && this.kind !== 'ptx' && this.kind !== 'fatbin') {
      throw new RangeError(
        `ObjectCode.load: '${this.name}' is ${this.kind}, which does not load; link it first: new Linker(code, { arch }).link('cubin')`,
      );
    }
    return Module.load(this.code, { names: { ...this.names, ...(options.names ?? {}) } });
  }

  /** The PTX text of a 'ptx' ObjectCode. */
  get text(): string {
    if (this.kind !== 'ptx') throw new RangeError(`ObjectCode.text: '${this.name}' is ${this.kind}, not PTX text`);
    return new TextDecoder().decode(this.code);
  }
}

/** What bytes hold, where their first bytes say it. */
function sniff(b: Uint8Array): CodeKind | undefined {
  const starts = (m: number[]) => m.every((x, i) => b[i] === x);
  if (starts(ELF)) return 'cubin';
  if (starts(FATBIN)) return 'fatbin';
  if (starts(AR)) return 'library';
  if (starts(LTOIR)) return 'ltoir';
  const head = new TextDecoder().decode(b.subarray(0, 4096));
  if (/^\s*(\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*\.version\s+\d/.test(head)) return 'ptx';
  return undefined;
}

/** PTX with a NUL after its `length` bytes, for readers that stop at one (as C strings do). */
export function withNul(b: Uint8Array): Uint8Array {
  const z = new Uint8Array(b.length + 1);
  z.set(b);
  return z;
}

function stripNul(b: Uint8Array): Uint8Array {
  let n = b.length;
  while (n > 0 && b[n - 1] === 0) n--;
  return n === b.length ? b : b.subarray(0, n);
}

function fatbinCheck(err: nvfatbin.nvFatbinResult, fn: string): void {
  if (err !== nvfatbin.nvFatbinResult.NVFATBIN_SUCCESS) {
    const name = nvfatbin.nvFatbinResult[err] ?? `nvFatbinResult ${err}`;
    const text = statusText(() => nvfatbin.nvFatbinGetErrorString(err)[1], '') || 'nvFatbin failed';
    throw new CudaBindingsError(statusMessage(name, text, fn), { code: err, codeName: name, fn, library: 'libnvfatbin' });
  }
}

/** '90' (or '90a') from a Device, 'sm_90', 'compute_90', 'lto_90' or '90'. */
export function archDigits(arch: Device | string | undefined, fn: string, what = "option 'arch'"): string {
  if (arch === undefined || arch instanceof Device) {
    let d: Device;
    try {
      d = arch ?? Device.current();
    } catch (e) {
      throw new Error(`${fn}: no ${what} and no device to take it from (${(e as Error).message}); pass 'sm_90' or a Device`);
    }
    return d.computeCapability.join('');
  }
  const m = typeof arch === 'string' ? /^(?:sm_|compute_|lto_)?(\d{2,3}[af]?)$/.exec(arch) : null;
  if (!m) throw new RangeError(`${fn}: ${what} must be a Device or an architecture such as 'sm_90' or '90', got ${describe(arch)}`);
  return m[1];
}
