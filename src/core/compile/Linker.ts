// Links device code (cuda.core's Linker): cubins, PTX, LTO-IR, fatbins, host objects and libraries
// into one cubin (or PTX, after link-time optimisation). nvJitLink does the work; where it is
// missing (or `backend: 'driver'` asks), the driver's cuLink* does, which cannot take LTO-IR.
import { createHash } from 'node:crypto';
import * as nvjitlink from '../../nvjitlink';
import * as cuda from '../../driver';
import { borrowed } from '../../ffi/memory';
import { cString } from '../../ffi/marshal';
import { Device } from '../device/Device';
import { LinkError, driverError } from '../base/errors';
import { statusText } from '../../ffi/errors';
import { ObjectCode, archDigits, withNul, type CodeKind } from './ObjectCode';
import { cacheDir, readCache, writeCache } from './Program';
import { checkOptions, type OptionKeys } from '../base/options';
import { describe, checkPtxText } from '../../ffi/checks';

/** How a {@link Linker} links (all optional). */
export interface LinkerOptions {
  /** The GPU to link for: a Device, 'sm_90' or '90' (default: the current device). */
  arch?: Device | string;
  /** Link-time optimisation (nvJitLink `-lto`): needed for LTO-IR inputs and for `link('ptx')`. */
  lto?: boolean;
  /** The most registers a thread may use (`-maxrregcount`, CU_JIT_MAX_REGISTERS). */
  maxRegisters?: number;
  /** Optimisation level 0–3 (`-O`, CU_JIT_OPTIMIZATION_LEVEL). */
  optimization?: number;
  /** Debug information (`-g`, CU_JIT_GENERATE_DEBUG_INFO). */
  debug?: boolean;
  /** Line information (`-lineinfo`, CU_JIT_GENERATE_LINE_INFO). */
  lineInfo?: boolean;
  /** Flush denormals to zero (`-ftz`; nvJitLink only, with LTO). */
  ftz?: boolean;
  /** IEEE-rounded division (`-prec-div`; nvJitLink only, with LTO). */
  precDiv?: boolean;
  /** IEEE-rounded square root (`-prec-sqrt`; nvJitLink only, with LTO). */
  precSqrt?: boolean;
  /** Fused multiply-add (`-fma`; nvJitLink only, with LTO). */
  fma?: boolean;
  /** Kernels to keep, the others may go (`-kernels-used`; nvJitLink only). */
  kernelsUsed?: readonly string[];
  /** Variables to keep (`-variables-used`; nvJitLink only). */
  variablesUsed?: readonly string[];
  /** Report the time each step took, in the info log (`-time`, CU_JIT_WALL_TIME). */
  time?: boolean;
  /** Verbose info log (`-verbose`, CU_JIT_LOG_VERBOSE). */
  verbose?: boolean;
  /** Options for ptxas (`-Xptxas=…`; nvJitLink only). */
  ptxasOptions?: readonly string[];
  /** Threads for split compilation (`-split-compile=N`; 0: every processor, 1: none, the default; nvJitLink only). */
  splitCompile?: number;
  /** Threads for the more aggressive split compilation of LTO (`-split-compile-extended=N`; 0: every processor; nvJitLink only, with `lto`). */
  splitCompileExtended?: number;
  /** Lets LTO drop variables that device code does not reference (`-optimize-unused-variables`; nvJitLink only). */
  optimizeUnusedVariables?: boolean;
  /** Leaves nvJitLink's cache of intermediate steps alone (`-no-cache`; nvJitLink only). */
  noCache?: boolean;
  /**
   * Keeps the last link's handle (`linker.handle`) until the next link or close(), for the raw
   * facades; by default it is destroyed as soon as the output is read, and the linker holds nothing.
   */
  keepHandle?: boolean;
  /** 'nvjitlink', 'driver' (cuLink*), or 'auto' (the default: nvJitLink when it loads, else the driver). */
  backend?: 'auto' | 'nvjitlink' | 'driver';
  /**
   * The disk cache of linked outputs, as Program.compile's: true (the default) for
   * CUDA_BINDINGS_CACHE_DIR or ~/.cache/cuda-bindings/kernels, a directory, or false for none.
   */
  cache?: boolean | string;
}

/** What a link would pass to its backend ({@link Linker.backendOptions}). */
export interface LinkerBackendOptions {
  /** The linker that would run. */
  backend: 'nvJitLink' | 'cuLink';
  /** nvJitLink's flags, or cuLink's JIT options as `NAME=value`, in order. */
  options: string[];
}

const BOOLEANS = [
  'lto',
  'debug',
  'lineInfo',
  'ftz',
  'precDiv',
  'precSqrt',
  'fma',
  'time',
  'verbose',
  'optimizeUnusedVariables',
  'noCache',
  'keepHandle',
] as const;
const KNOWN = new Set<string>([
  ...BOOLEANS,
  'arch',
  'maxRegisters',
  'optimization',
  'kernelsUsed',
  'variablesUsed',
  'ptxasOptions',
  'splitCompile',
  'splitCompileExtended',
  'backend',
  'cache',
]);
/** Options only nvJitLink takes. */
const NVJITLINK_ONLY = [
  'ftz',
  'precDiv',
  'precSqrt',
  'fma',
  'kernelsUsed',
  'variablesUsed',
  'ptxasOptions',
  'splitCompile',
  'splitCompileExtended',
  'optimizeUnusedVariables',
  'noCache',
] as const;
/** The format of cached link outputs: bump it when what is stored changes. */
const CACHE_FORMAT = 1;

const NVJITLINK_INPUT: Record<CodeKind, nvjitlink.nvJitLinkInputType> = {
  cubin: nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_CUBIN,
  ptx: nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_PTX,
  ltoir: nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_LTOIR,
  fatbin: nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_FATBIN,
  object: nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_OBJECT,
  library: nvjitlink.nvJitLinkInputType.NVJITLINK_INPUT_LIBRARY,
};
const DRIVER_INPUT: Partial<Record<CodeKind, cuda.CUjitInputType>> = {
  cubin: cuda.CUjitInputType.CU_JIT_INPUT_CUBIN,
  ptx: cuda.CUjitInputType.CU_JIT_INPUT_PTX,
  fatbin: cuda.CUjitInputType.CU_JIT_INPUT_FATBINARY,
  object: cuda.CUjitInputType.CU_JIT_INPUT_OBJECT,
  library: cuda.CUjitInputType.CU_JIT_INPUT_LIBRARY,
};

/**
 * Links device code (cubins, PTX, LTO-IR, fatbins, objects, libraries) into one cubin or PTX, with
 * nvJitLink (needed for LTO) or else the driver's cuLink. `link()` returns an {@link ObjectCode} to
 * load; the logs of the last link stay on the linker.
 *
 * Holds nothing to close, unless made with `keepHandle` (then `handle`, nvJitLink's or the
 * driver's link state, lives until the next link or close()). A failed link throws {@link LinkError} with the linker's logs; bad inputs
 * throw TypeError naming the argument.
 *
 * @example
 * ```ts
 * const linker = new Linker(Program.compile(a, { target: 'ltoir' }).objectCode,
 *   Program.compile(b, { target: 'ltoir' }).objectCode, { lto: true });
 * using module = linker.link('cubin').load();
 * ```
 */
export class Linker {
  /** The inputs, in link order. */
  readonly objects: readonly ObjectCode[];
  /** The options it was made with. */
  readonly options: Readonly<LinkerOptions>;
  /** The last link's information log. */
  infoLog = '';
  /** The last link's error log. */
  errorLog = '';
  /** Which linker ran last: 'nvJitLink' or 'cuLink'. */
  backend: 'nvJitLink' | 'cuLink' | undefined;
  private last: { destroy: () => void; handle: nvjitlink.nvJitLinkHandle | cuda.CUlinkState } | null = null;
  private closed = false;

  /** `new Linker(a, b, c, { arch: 'sm_90', lto: true })`: the objects to link, then the options. */
  constructor(...args: (ObjectCode | LinkerOptions)[]) {
    const last = args[args.length - 1];
    const hasOptions = args.length > 0 && !(last instanceof ObjectCode);
    const objects = hasOptions ? args.slice(0, -1) : args;
    const options = (hasOptions ? last : {}) as LinkerOptions;
    if (options === null || typeof options !== 'object' || Array.isArray(options))
      throw new TypeError(`new Linker: the last argument must be an ObjectCode or the options object, got ${describe(options)}`);
    objects.forEach((o, i) => {
      if (!(o instanceof ObjectCode)) throw new TypeError(`new Linker: argument ${i} must be an ObjectCode, got ${describe(o)}`);
    });
    if (objects.length === 0) throw new TypeError('new Linker: nothing to link; pass one ObjectCode or more');
    checkLinkerOptions(options);
    this.objects = objects as ObjectCode[];
    this.options = { ...options };
  }

  /**
   * With `keepHandle`: the handle of the last link (an nvJitLinkHandle, or the driver's CUlinkState
   * for cuLink), for the `cuda-bindings/nvjitlink` or driver facade; owned by the linker, valid until
   * the next link or close(). Null without `keepHandle`, before the first link, after a link the disk
   * cache served, and after close().
   */
  get handle(): nvjitlink.nvJitLinkHandle | cuda.CUlinkState | null {
    return this.last?.handle ?? null;
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Destroys the last link's handle; a closed linker links no more (safe to call twice). */
  close(): void {
    this.closed = true;
    this.dropHandle();
  }

  /** Calls close(): `using linker = new Linker(…)`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * The options this linker passes to its backend for `target`, readable before linking (for logs and
   * cache keys): nvJitLink's flags (`-arch=sm_90 -lto …`), or for the driver's cuLink its JIT options
   * as `NAME=value`. Picks the backend as link() does.
   */
  backendOptions(target: 'cubin' | 'ptx' = 'cubin'): LinkerBackendOptions {
    this.checkTarget(target, 'Linker.backendOptions');
    const backend = pickBackend(this.options, this.objects, target);
    const arch = archDigits(this.options.arch, 'Linker.backendOptions');
    if (backend.kind === 'nvJitLink') return { backend: backend.kind, options: nvJitLinkOptions(this.options, arch, target) };
    const jit = driverOptions(this.options, arch);
    return {
      backend: backend.kind,
      options: Object.entries(jit).map(([k, v]) => `${cuda.CUjit_option[Number(k)] ?? k}=${String(v)}`),
    };
  }

  /** Links LTO-IR (and the other inputs) into PTX: link('ptx'), which needs nvJitLink and `lto`. */
  linkPtx(): ObjectCode {
    return this.link('ptx');
  }

  private checkTarget(target: unknown, fn: string): void {
    if (this.closed) throw new Error(`${fn}: the Linker was closed`);
    if (target !== 'cubin' && target !== 'ptx')
      throw new RangeError(`${fn}: parameter 'target' must be 'cubin' or 'ptx', got ${describe(target)}`);
    if (target === 'ptx' && !this.options.lto)
      throw new RangeError(`${fn}: target 'ptx' needs { lto: true } (nvJitLink writes PTX only after link-time optimisation)`);
  }

  private dropHandle(): void {
    const last = this.last;
    this.last = null;
    last?.destroy();
  }

  /** Links the inputs into a cubin (the default) or PTX (nvJitLink with `lto`); throws a LinkError with the logs on failure. */
  link(target: 'cubin' | 'ptx' = 'cubin'): ObjectCode {
    this.checkTarget(target, 'Linker.link');
    this.dropHandle();
    const o = this.options;
    // For both backends alike (the driver reads PTX up to a NUL, nvJitLink by its length): the bytes
    // of an ObjectCode may have changed since fromBytes checked them.
    this.objects.forEach((obj, i) => {
      if (obj.kind === 'ptx') checkPtxText(obj.code, `Linker.link: objects[${i}] ('${obj.name}')`, undefined);
    });
    const backend = pickBackend(o, this.objects, target);
    const arch = archDigits(o.arch, 'Linker.link');
    const flags = backend.kind === 'nvJitLink' ? nvJitLinkOptions(o, arch, target) : [];
    // A handle is kept only from a link that runs: keepHandle skips the cache.
    const dir = o.keepHandle ? null : cacheDir(o.cache);
    let key = '';
    if (dir) {
      const h = createHash('sha256').update(
        JSON.stringify([CACHE_FORMAT, 'link', backend.kind, backend.version, target, arch, flags, driverKey(o)]),
      );
      for (const obj of this.objects) h.update(`${obj.kind}:${obj.code.length}:`).update(obj.code);
      key = h.digest('hex');
      const hit = readCache(dir, key, target);
      if (hit) {
        this.backend = backend.kind;
        this.infoLog = hit.log;
        this.errorLog = '';
        return linked(target, hit.code, arch, hit.log);
      }
    }
    this.backend = backend.kind;
    const out = backend.kind === 'nvJitLink' ? this.withNvJitLink(flags) : this.withDriver(arch);
    const code = target === 'cubin' ? out.cubin : out.ptx!;
    if (dir) writeCache(dir, key, target, { code, log: this.infoLog, names: {} });
    return linked(target, code, arch, this.infoLog);
  }

  private withNvJitLink(flags: string[]): { cubin: Uint8Array; ptx?: Uint8Array } {
    const [err, handle] = nvjitlink.nvJitLinkCreate(flags.length, flags);
    if (err !== nvjitlink.nvJitLinkResult.NVJITLINK_SUCCESS) {
      this.infoLog = '';
      this.errorLog = '';
      throw new LinkError(
        err,
        nvjitlink.nvJitLinkResult[err] ?? `nvJitLinkResult ${err}`,
        'nvJitLink',
        '',
        '',
        `nvJitLinkCreate(${flags.join(' ')})`,
      );
    }
    let kept: true | null = true;
    try {
      const fail = (e: nvjitlink.nvJitLinkResult, fn: string): never => {
        this.readNvJitLinkLogs(handle);
        throw new LinkError(e, nvjitlink.nvJitLinkResult[e] ?? `nvJitLinkResult ${e}`, 'nvJitLink', this.errorLog, this.infoLog, fn);
      };
      this.objects.forEach((obj, i) => {
        // PTX is passed by its length, with a NUL after it for readers that stop at one.
        const data = obj.kind === 'ptx' ? withNul(obj.code) : obj.code;
        const [e] = nvjitlink.nvJitLinkAddData(handle, NVJITLINK_INPUT[obj.kind], data, obj.code.length, obj.name);
        if (e !== 0) fail(e, `nvJitLinkAddData(objects[${i}] '${obj.name}', ${obj.kind})`);
      });
      const [e] = nvjitlink.nvJitLinkComplete(handle);
      if (e !== 0) fail(e, 'nvJitLinkComplete');
      this.readNvJitLinkLogs(handle);
      if (flags.includes('-ptx')) {
        const [pe, ptx] = nvjitlink.nvJitLinkGetLinkedPtx(handle, null);
        if (pe !== 0) fail(pe, 'nvJitLinkGetLinkedPtx');
        return { cubin: new Uint8Array(0), ptx: ptx! };
      }
      const [ce, cubin] = nvjitlink.nvJitLinkGetLinkedCubin(handle, null);
      if (ce !== 0) fail(ce, 'nvJitLinkGetLinkedCubin');
      return { cubin: cubin! };
    } catch (e) {
      kept = null;
      nvjitlink.nvJitLinkDestroy(handle);
      throw e;
    } finally {
      if (kept) this.keep(handle, () => void nvjitlink.nvJitLinkDestroy(handle));
    }
  }

  /** With keepHandle, keeps a link's handle (see `handle`) until the next link or close() (the garbage collector destroys a forgotten one); else destroys it. */
  private keep(handle: nvjitlink.nvJitLinkHandle | cuda.CUlinkState, destroy: () => void): void {
    if (!this.options.keepHandle) return destroy();
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      destroy();
    };
    const token = {};
    this.last = {
      handle,
      destroy: () => {
        handleOwners.unregister(token);
        once();
      },
    };
    handleOwners.register(this, once, token);
  }

  private readNvJitLinkLogs(handle: nvjitlink.nvJitLinkHandle | null): void {
    this.infoLog = cText(nvjitlink.nvJitLinkGetInfoLog(handle, null)[1]);
    this.errorLog = cText(nvjitlink.nvJitLinkGetErrorLog(handle, null)[1]);
  }

  private withDriver(arch: string): { cubin: Uint8Array; ptx?: Uint8Array } {
    ensureContext();
    const jit = new cuda.JitOptions(driverOptions(this.options, arch));
    const [err, state] = cuda.cuLinkCreate(jit.count, jit.options, jit.values);
    const fail = (e: cuda.CUresult, fn: string): never => {
      this.infoLog = jit.infoLog;
      this.errorLog = jit.errorLog;
      const name = statusText(() => cuda.cuGetErrorName(e)[1], cuda.CUresult[e] ?? `CUresult ${e}`);
      throw new LinkError(e, name, 'cuLink', this.errorLog, this.infoLog, fn);
    };
    if (err !== cuda.CUresult.CUDA_SUCCESS) fail(err, 'cuLinkCreate');
    try {
      this.objects.forEach((obj, i) => {
        // The driver reads PTX up to its NUL.
        const data = obj.kind === 'ptx' ? withNul(obj.code) : obj.code;
        const [e] = cuda.cuLinkAddData(state, DRIVER_INPUT[obj.kind]!, data, data.length, obj.name, 0, null, null);
        if (e !== 0) fail(e, `cuLinkAddData(objects[${i}] '${obj.name}', ${obj.kind})`);
      });
      const [e, ptr, size] = cuda.cuLinkComplete(state);
      if (e !== 0) fail(e, 'cuLinkComplete');
      this.infoLog = jit.infoLog;
      this.errorLog = jit.errorLog;
      // The cubin belongs to the link state: copied out, as the state may be destroyed before it is used.
      const cubin = borrowed(ptr!, size!);
      if (!cubin) throw new Error('Linker.link: cuLinkComplete returned no cubin');
      this.keep(state!, () => void cuda.cuLinkDestroy(state));
      return { cubin };
    } catch (e) {
      cuda.cuLinkDestroy(state);
      throw e;
    }
  }
}

/** The nvJitLink options for LinkerOptions: `-arch=sm_90 -lto -O3 …`. */
export function nvJitLinkOptions(o: LinkerOptions, arch: string, target: 'cubin' | 'ptx'): string[] {
  const f = [`-arch=sm_${arch}`];
  if (o.lto) f.push('-lto');
  if (target === 'ptx') f.push('-ptx');
  if (o.maxRegisters !== undefined) f.push(`-maxrregcount=${o.maxRegisters}`);
  if (o.optimization !== undefined) f.push(`-O${o.optimization}`);
  if (o.debug) f.push('-g');
  if (o.lineInfo) f.push('-lineinfo');
  if (o.ftz !== undefined) f.push(`-ftz=${o.ftz}`);
  if (o.precDiv !== undefined) f.push(`-prec-div=${o.precDiv}`);
  if (o.precSqrt !== undefined) f.push(`-prec-sqrt=${o.precSqrt}`);
  if (o.fma !== undefined) f.push(`-fma=${o.fma}`);
  for (const k of o.kernelsUsed ?? []) f.push(`-kernels-used=${k}`);
  for (const v of o.variablesUsed ?? []) f.push(`-variables-used=${v}`);
  if (o.time) f.push('-time');
  if (o.verbose) f.push('-verbose');
  for (const p of o.ptxasOptions ?? []) f.push(`-Xptxas=${p}`);
  if (o.splitCompile !== undefined) f.push(`-split-compile=${o.splitCompile}`);
  if (o.splitCompileExtended !== undefined) f.push(`-split-compile-extended=${o.splitCompileExtended}`);
  if (o.optimizeUnusedVariables) f.push('-optimize-unused-variables');
  if (o.noCache) f.push('-no-cache');
  return f;
}

/** The driver's JIT options for LinkerOptions (the logs are added by JitOptions). */
export function driverOptions(o: LinkerOptions, arch: string): cuda.JitOptionValues {
  const v: cuda.JitOptionValues = {};
  // CUjit_target is 10 * major + minor, for the plain architectures the driver can target.
  if (/^\d+$/.test(arch)) v[cuda.CUjit_option.CU_JIT_TARGET] = Number(arch);
  if (o.maxRegisters !== undefined) v[cuda.CUjit_option.CU_JIT_MAX_REGISTERS] = o.maxRegisters;
  if (o.optimization !== undefined) v[cuda.CUjit_option.CU_JIT_OPTIMIZATION_LEVEL] = o.optimization;
  if (o.debug) v[cuda.CUjit_option.CU_JIT_GENERATE_DEBUG_INFO] = 1;
  if (o.lineInfo) v[cuda.CUjit_option.CU_JIT_GENERATE_LINE_INFO] = 1;
  if (o.verbose) v[cuda.CUjit_option.CU_JIT_LOG_VERBOSE] = 1;
  if (o.time) v[cuda.CUjit_option.CU_JIT_WALL_TIME] = 0;
  return v;
}

function driverKey(o: LinkerOptions): string {
  return JSON.stringify(Object.entries(driverOptions(o, '')).map(([k, v]) => [k, String(v)]));
}

/** Throws unless `o` holds only LinkerOptions, each of its type and range. */
function checkLinkerOptions(o: LinkerOptions): void {
  checkOptions('new Linker', o, Object.fromEntries([...KNOWN].map((k) => [k, true])) as OptionKeys<LinkerOptions>);
  for (const k of BOOLEANS)
    if (o[k] !== undefined && typeof o[k] !== 'boolean')
      throw new TypeError(`new Linker: option '${k}' must be a boolean, got ${String(o[k])}`);
  if (o.maxRegisters !== undefined && !(Number.isInteger(o.maxRegisters) && o.maxRegisters > 0 && o.maxRegisters <= 255))
    throw new RangeError(`new Linker: option 'maxRegisters' must be an integer from 1 to 255, got ${describe(o.maxRegisters)}`);
  if (o.optimization !== undefined && !(Number.isInteger(o.optimization) && o.optimization >= 0 && o.optimization <= 3))
    throw new RangeError(`new Linker: option 'optimization' must be 0, 1, 2 or 3, got ${describe(o.optimization)}`);
  for (const k of ['kernelsUsed', 'variablesUsed', 'ptxasOptions'] as const) {
    const v = o[k];
    if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')))
      throw new TypeError(`new Linker: option '${k}' must be an array of non-empty strings, got ${JSON.stringify(v)}`);
  }
  for (const k of ['splitCompile', 'splitCompileExtended'] as const) {
    const v = o[k];
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0))
      throw new RangeError(`new Linker: option '${k}' must be a thread count (0: every processor, 1: no split), got ${describe(v)}`);
  }
  if (o.splitCompileExtended !== undefined && !o.lto)
    throw new RangeError("new Linker: option 'splitCompileExtended' is for link-time optimisation; pass { lto: true } with it");
  if (o.backend !== undefined && !['auto', 'nvjitlink', 'driver'].includes(o.backend))
    throw new RangeError(`new Linker: option 'backend' must be 'auto', 'nvjitlink' or 'driver', got ${describe(o.backend)}`);
  if (o.cache !== undefined && typeof o.cache !== 'boolean' && typeof o.cache !== 'string')
    throw new TypeError(`new Linker: option 'cache' must be a boolean or a directory, got ${describe(o.cache)}`);
  if (o.arch !== undefined) archDigits(o.arch, 'new Linker');
}

/** Destroys the kept handle of a Linker that was garbage-collected unclosed. */
const handleOwners = new FinalizationRegistry<() => void>((destroy) => {
  try {
    destroy();
  } catch {
    // Never throw out of a finalizer.
  }
});

let nvJitLinkState: { version: string } | Error | undefined;

/** nvJitLink's version, or why it cannot be used (it is loaded once). */
export function nvJitLinkStatus(): { version: string } | Error {
  if (!nvJitLinkState) {
    try {
      const [err, major, minor] = nvjitlink.nvJitLinkVersion();
      nvJitLinkState =
        err === 0 ? { version: `${major}.${minor}` } : new Error(`nvJitLinkVersion returned ${nvjitlink.nvJitLinkResult[err] ?? err}`);
    } catch (e) {
      nvJitLinkState = e as Error;
    }
  }
  return nvJitLinkState;
}

function pickBackend(
  o: LinkerOptions,
  objects: readonly ObjectCode[],
  target: 'cubin' | 'ptx',
): { kind: 'nvJitLink' | 'cuLink'; version: string } {
  const want = o.backend ?? 'auto';
  if (want !== 'driver') {
    const s = nvJitLinkStatus();
    if (!(s instanceof Error)) return { kind: 'nvJitLink', version: s.version };
    if (want === 'nvjitlink') throw new Error(`Linker.link: nvJitLink is not available: ${s.message}`);
  }
  const why =
    want === 'driver'
      ? "with { backend: 'driver' }"
      : `nvJitLink is not available (${(nvJitLinkStatus() as Error).message.split('\n')[0]}), so the driver's cuLink* links`;
  const lto = objects.findIndex((x) => x.kind === 'ltoir');
  if (lto >= 0)
    throw new RangeError(
      `Linker.link: objects[${lto}] ('${objects[lto].name}') is LTO-IR, which only nvJitLink links; ${why}, which takes cubin, PTX, fatbin, object and library inputs`,
    );
  if (o.lto) throw new RangeError(`Linker.link: option 'lto' needs nvJitLink; ${why}`);
  if (target === 'ptx') throw new RangeError(`Linker.link: target 'ptx' needs nvJitLink; ${why}`);
  for (const k of NVJITLINK_ONLY) if (o[k] !== undefined) throw new RangeError(`Linker.link: option '${k}' needs nvJitLink; ${why}`);
  let version = '';
  const [err, v] = cuda.cuDriverGetVersion();
  if (err === 0) version = String(v);
  return { kind: 'cuLink', version };
}

/** cuLink* works in the current context: the current device's primary one when there is none. */
function ensureContext(): void {
  const [err, ctx] = cuda.cuCtxGetCurrent();
  // Not initialised yet: the runtime initialises the driver when it makes the primary context current.
  if (err !== cuda.CUresult.CUDA_SUCCESS && err !== cuda.CUresult.CUDA_ERROR_NOT_INITIALIZED) throw driverError(err, 'cuCtxGetCurrent');
  if (err !== cuda.CUresult.CUDA_SUCCESS || ctx === null || ctx === 0n) void Device.current().primaryContext;
}

function linked(target: 'cubin' | 'ptx', code: Uint8Array, arch: string, log: string): ObjectCode {
  const out = ObjectCode.fromBytes(code, target, { name: `linked.${target}`, arch: `${target === 'cubin' ? 'sm' : 'compute'}_${arch}` });
  out.infoLog = log;
  return out;
}

/** A C string's bytes (a log) as text, without its NUL. */
function cText(b: Uint8Array | null): string {
  return b ? cString(b).trimEnd() : '';
}
