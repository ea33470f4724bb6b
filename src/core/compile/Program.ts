// CUDA C++ compiled at run time: with NVRTC, or with nvcc when NVRTC is missing (as PyCUDA's
// SourceModule does), and cached on disk by everything that decides the output (as CuPy does).
import { createHash } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as nvrtc from '../../nvrtc';
import * as nvvm from '../../nvvm';
import { cString } from '../../ffi/marshal';
import { checkWaitOptions, guarded, type WaitOptions } from '../../ffi/waits';
import { compileProgram as nvrtcCompileAsync } from '../../nvrtc/async.gen';
import { compileProgram as nvvmCompileAsync } from '../../nvvm/async.gen';
import { CompileError, NvrtcError, NvvmError, firstError } from '../base/errors';
import { Device } from '../device/Device';
import { Module } from '../launch/Module';
import { ObjectCode } from './ObjectCode';
import { checkOptions, type OptionKeys } from '../base/options';
import { describe, isOwnName } from '../../ffi/checks';

/** How {@link Program.compile} compiles: all optional. */
export interface ProgramOptions {
  /** The source's file name in messages and `#line`s (default 'program.cu'). */
  name?: string;
  /** Compiler options, as NVRTC and nvcc both take them: '-std=c++17', '-DN=4', '--use_fast_math', … */
  options?: readonly string[];
  /** Headers the source may `#include`, by name → their text. */
  headers?: Readonly<Record<string, string>>;
  /** C++ names of kernels (template instances such as 'scale<float>') to look up after loading; NVRTC only. */
  nameExpressions?: readonly string[];
  /** The GPU to compile for: a Device, 'sm_90', 'compute_90' or '90' (default: the current device). */
  arch?: Device | string;
  /**
   * 'cubin' (machine code for `arch`, the default for CUDA C++), 'ptx' (portable, JIT-compiled when
   * loaded; the default for NVVM IR) or 'ltoir' (for a Linker with `lto`: NVRTC `-dlto`, nvcc
   * `-dlto -ltoir`, NVVM `-gen-lto`).
   */
  target?: 'cubin' | 'ptx' | 'ltoir';
  /** 'c++' (CUDA C++, the default) or 'nvvm' (NVVM IR, text or bitcode, compiled by libNVVM). */
  language?: 'c++' | 'nvvm';
  /** NVVM IR only: link libdevice (the math library, `__nv_sinf`, …): true for the toolkit's, or its path. */
  libdevice?: boolean | string;
  /** 'nvrtc', 'nvcc', or 'auto' (the default: NVRTC when it loads, else nvcc). */
  compiler?: 'auto' | 'nvrtc' | 'nvcc';
  /**
   * The disk cache: true (the default) for CUDA_BINDINGS_CACHE_DIR or ~/.cache/cuda-bindings/kernels,
   * a directory, or false for none. CUDA_BINDINGS_CACHE=0 turns it off too.
   */
  cache?: boolean | string;
  /**
   * NVRTC precompiled headers, automatically (`--pch`): the headers a compile parses are saved to a
   * PCH file (in `pchDir`, or the working directory) and later compiles with the same headers load it
   * instead of parsing them again. NVRTC only. A compile that creates a PCH skips the disk cache.
   */
  pch?: boolean;
  /** Creates a precompiled header at this path from the headers this compile includes (`--create-pch`); NVRTC only. */
  createPch?: string;
  /** Uses the precompiled header at this path (`--use-pch`), made by an earlier `createPch` with the same headers and options; NVRTC only. */
  usePch?: string;
  /** The directory automatic PCH files (`pch: true`) go to and are looked for in (`--pch-dir`). */
  pchDir?: string;
  /** Says in the log why a PCH could not be created or used (`--pch-verbose`). */
  pchVerbose?: boolean;
  /** Says in the log whether a PCH was created or used (`--pch-messages`, on by default in NVRTC). */
  pchMessages?: boolean;
  /** Instantiates templates in the PCH (`--instantiate-templates-in-pch`, on by default in NVRTC). */
  instantiateTemplatesInPch?: boolean;
  /** Debug information: `-G` for CUDA C++, `-g` for NVVM IR (which then needs `optimization: 0`). */
  debug?: boolean;
  /** Line information (`-lineinfo`); CUDA C++ only: NVVM takes it from the IR's debug metadata. */
  lineInfo?: boolean;
  /** NVVM IR only: libNVVM's optimisation level, 0 or 3 (`-opt=`; 3 is its default). */
  optimization?: 0 | 3;
  /** Flush single-precision denormals to zero (`--ftz=`, NVVM `-ftz=`). */
  ftz?: boolean;
  /** IEEE-rounded single-precision square root (`--prec-sqrt=`, NVVM `-prec-sqrt=`). */
  precSqrt?: boolean;
  /** IEEE-rounded single-precision division (`--prec-div=`, NVVM `-prec-div=`). */
  precDiv?: boolean;
  /** Contract multiplies and adds into FMAs (`--fmad=`, NVVM `-fma=`). */
  fma?: boolean;
  /**
   * Keeps the compiler's program (NVRTC's nvrtcProgram, libNVVM's nvvmProgram) as `program.handle`,
   * owned by the Program until close(); Program.compile only (not nvcc), and never from the disk cache.
   */
  keepHandle?: boolean;
}

/** The typed compiler options, taken by Program.compile and Program.fromHandle alike. */
const TYPED_OPTIONS = { debug: true, lineInfo: true, optimization: true, ftz: true, precSqrt: true, precDiv: true, fma: true } as const;

/** The keys of ProgramOptions, for checkOptions. */
export const PROGRAM_OPTIONS: OptionKeys<ProgramOptions> = {
  name: true,
  options: true,
  headers: true,
  nameExpressions: true,
  arch: true,
  target: true,
  language: true,
  libdevice: true,
  compiler: true,
  cache: true,
  pch: true,
  createPch: true,
  usePch: true,
  pchDir: true,
  pchVerbose: true,
  pchMessages: true,
  instantiateTemplatesInPch: true,
  ...TYPED_OPTIONS,
  keepHandle: true,
};

/** The options of `Program.compileAsync`: a compile's, and when to give up waiting for it. */
export interface CompileAsyncOptions extends ProgramOptions, WaitOptions {}

/** Every key of ProgramOptions (compileAsync rejects others). */
const PROGRAM_KEYS = Object.keys(PROGRAM_OPTIONS);

/** @internal What a compile (or a link) left: the code, the log, the lowered names. */
export interface Compiled {
  code: Uint8Array;
  log: string;
  names: Record<string, string>;
  /** Whether NVRTC created the precompiled header asked for (absent when none was asked for). */
  pchCreated?: boolean;
  /** With keepHandle: the compiler's program, left for the Program to own. */
  handle?: CompilerHandle;
}

/** A compiler's program handle and how to destroy it. */
interface CompilerHandle {
  handle: nvrtc.nvrtcProgram | nvvm.nvvmProgram;
  destroy(): void;
}

/** Destroys the handle a Program kept, when the Program is garbage-collected unclosed. */
const keptHandles = new FinalizationRegistry<() => void>((destroy) => {
  try {
    destroy();
  } catch {
    // Never throw out of a finalizer.
  }
});

/** What a compile would pass to its compiler ({@link Program.backendOptions}). */
export interface ProgramBackendOptions {
  /** The compiler that would run. */
  compiler: 'nvrtc' | 'nvcc' | 'nvvm';
  /** Its options, in order. */
  options: string[];
}

/** How {@link Program.fromHandle} compiles (or reads) a program made with the raw facade. */
export interface ProgramFromHandleOptions extends Pick<
  ProgramOptions,
  | 'name'
  | 'options'
  | 'nameExpressions'
  | 'arch'
  | 'target'
  | 'debug'
  | 'lineInfo'
  | 'optimization'
  | 'ftz'
  | 'precSqrt'
  | 'precDiv'
  | 'fma'
> {
  /** What the handle is: 'c++' (an nvrtcProgram) or 'nvvm' (an nvvmProgram). */
  language: 'c++' | 'nvvm';
  /** The program was compiled already: its code and log are read, not compiled again (default false). */
  compiled?: boolean;
  /** The Program owns the handle and destroys it at close() (default false: the caller destroys it, after the Program is done with it). */
  owned?: boolean;
}

const FROM_HANDLE_OPTIONS: OptionKeys<ProgramFromHandleOptions> = {
  name: true,
  options: true,
  nameExpressions: true,
  arch: true,
  target: true,
  ...TYPED_OPTIONS,
  language: true,
  compiled: true,
  owned: true,
};

/** What a compiler is and how it reports itself (part of the cache key). */
interface Compiler {
  kind: 'nvrtc' | 'nvcc' | 'nvvm';
  version: string;
  compile(
    source: string,
    o: Required<Pick<ProgramOptions, 'name' | 'options' | 'headers' | 'nameExpressions' | 'target'>> & { keepHandle?: boolean },
    arch: string,
  ): Compiled;
  /** The same compile off the JS thread; giving up (w) rejects naming `fn`. */
  compileAsync(source: string, o: Parameters<Compiler['compile']>[1], arch: string, w: WaitOptions, fn: string): Promise<Compiled>;
}

/** A compile checked and looked up in the cache, ready to run one way or the other. */
interface Plan {
  cached: Compiled | null;
  run(): Compiled;
  runAsync(w: WaitOptions): Promise<Compiled>;
  /** Stores a fresh result in the cache and makes the Program. */
  finish(out: Compiled, fromCache: boolean): Program;
}

/** The format of the cache's files: bump it when what is stored changes. */
const CACHE_FORMAT = 1;

/**
 * CUDA C++ (or NVVM IR) compiled at run time, by NVRTC or else nvcc, and cached on disk by
 * everything that decides the output (source, options, headers, architecture, compiler version).
 * Made by {@link Program.compile}; `load()` turns it into a {@link Module} whose kernels launch.
 *
 * A Program holds only bytes (nothing to close). A failed compile throws {@link CompileError}
 * (an {@link NvrtcError} or {@link NvvmError}) carrying the compiler's log; bad options throw
 * TypeError or RangeError naming the option.
 *
 * @example
 * ```ts
 * const program = Program.compile(`
 *   template <typename T> __global__ void fill(T *x, T v, int n) {
 *     int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }`,
 *   { options: ['-std=c++17'], nameExpressions: ['fill<float>'] });
 * if (program.log) console.warn(program.log);
 * using module = program.load();
 * module.kernel('fill<float>').launch({ grid: 4, block: 256 }, buf, f32(1), i32(1024));
 * ```
 */
export class Program {
  private constructor(
    /** The compiled code: a cubin, LTO-IR, or PTX text ending in a NUL. */
    readonly code: Uint8Array,
    /** What the code is: 'cubin' (machine code), 'ptx' (JIT-compiled at load) or 'ltoir' (for a Linker with `lto`). */
    readonly target: 'cubin' | 'ptx' | 'ltoir',
    /** The architecture it was compiled for ('sm_90' / 'compute_90'). */
    readonly arch: string,
    /** The compiler's log (warnings); empty when it had nothing to say. */
    readonly log: string,
    /** Which compiler made it, and its version ('nvrtc 13.0', 'nvcc 13.0.88'). */
    readonly compiler: string,
    /** Whether it came from the disk cache rather than a compiler run. */
    readonly fromCache: boolean,
    private readonly names: Readonly<Record<string, string>>,
  ) {}

  /**
   * Compiles CUDA C++ `source` (or, with `language: 'nvvm'`, NVVM IR as text or bitcode), or takes
   * it from the disk cache; throws a CompileError with the log on failure. Runs on the JS thread
   * and blocks it for the compile (hundreds of ms for nvcc); a cache hit only reads a file.
   */
  static compile(source: string | Uint8Array, options: ProgramOptions = {}): Program {
    const plan = planCompile(source, options, 'Program.compile');
    return plan.cached ? plan.finish(plan.cached, true) : plan.finish(plan.run(), false);
  }

  /**
   * Program.compile off the JS thread: NVRTC's and libNVVM's compile on the thread pool, nvcc as a
   * child process; the disk cache as in the sync form. `options.signal`/`timeout` reject with an
   * AbortError/TimeoutError (nvcc is killed; an NVRTC or NVVM compile runs to its end, unused).
   */
  static async compileAsync(source: string | Uint8Array, options: CompileAsyncOptions = {}): Promise<Program> {
    const fn = 'Program.compileAsync';
    const w = checkWaitOptions(options, fn, PROGRAM_KEYS);
    if (options.keepHandle !== undefined)
      throw new RangeError(`${fn}: option 'keepHandle' is for Program.compile (a handle is kept from a compile on this thread)`);
    const { signal: _s, timeout: _t, ...compileOptions } = options;
    const plan = planCompile(source, compileOptions, fn);
    return plan.cached ? plan.finish(plan.cached, true) : plan.finish(await plan.runAsync(w), false);
  }

  /** The symbol a name expression became (the kernel's C name for an extern "C" kernel). */
  loweredName(expression: string): string {
    return isOwnName(this.names, expression) ? this.names[expression] : expression;
  }

  /** The compiled code as an ObjectCode (kind 'cubin', 'ptx' or 'ltoir'), to link or bundle. */
  get objectCode(): ObjectCode {
    return ObjectCode.fromBytes(this.code, this.target, { name: this.name, arch: this.arch, names: this.names });
  }

  /** The source's name (in link logs). */
  get name(): string {
    return this.sourceName;
  }

  /**
   * Loads the code as a Module (cudaLibraryLoadData; usable on every device); its kernels can be looked
   * up by name expression. Close the Module when done. Throws RangeError for LTO-IR (link it first),
   * CudaError when the driver rejects the code (e.g. `cudaErrorInvalidPtx`, a cubin for another architecture).
   */
  load(): Module {
    if (this.target === 'ltoir')
      throw new RangeError(
        "Program.load: LTO-IR does not load; link it first: new Linker(program.objectCode, { lto: true }).link('cubin').load()",
      );
    return Module.load(this.code, { names: this.names });
  }

  /**
   * Loads the code as a Module off the JS thread (a PTX load JIT-compiles, on the thread pool);
   * `options.signal`/`timeout` reject early, but the load runs to its end.
   */
  async loadAsync(options?: WaitOptions): Promise<Module> {
    const o = checkWaitOptions(options, 'Program.loadAsync');
    if (this.target === 'ltoir')
      throw new RangeError(
        "Program.loadAsync: LTO-IR does not load; link it first: new Linker(program.objectCode, { lto: true }).link('cubin').load()",
      );
    return Module.loadAsync(this.code, { names: this.names, ...o });
  }

  /** @internal */
  static make(
    code: Uint8Array,
    target: 'cubin' | 'ptx' | 'ltoir',
    arch: string,
    log: string,
    compiler: string,
    fromCache: boolean,
    names: Readonly<Record<string, string>>,
    name: string,
  ): Program {
    const p = new Program(code, target, arch, log, compiler, fromCache, names);
    p.sourceName = name;
    return p;
  }

  private sourceName = 'program';
  /** @internal See pchCreated. */
  pchResult: boolean | null = null;
  /** @internal See backendOptions. */
  flagsUsed: readonly string[] = [];
  private kept: CompilerHandle | null = null;
  private closed = false;

  /** @internal Takes a compiler's program: owned (destroyed by close()), or only shown as `handle`. */
  adopt(h: CompilerHandle, owned: boolean): void {
    if (!owned) {
      this.kept = { handle: h.handle, destroy: () => undefined };
      return;
    }
    const token = {};
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      h.destroy();
    };
    keptHandles.register(this, once, token);
    this.kept = {
      handle: h.handle,
      destroy: () => {
        keptHandles.unregister(token);
        once();
      },
    };
  }

  /**
   * The compiler's program (an nvrtcProgram, or an nvvmProgram for NVVM IR) for the raw facades:
   * kept by Program.compile with `keepHandle`, or the one {@link Program.fromHandle} was given. Null
   * otherwise (the compiler's program is destroyed once its output is read) and after close().
   */
  get handle(): nvrtc.nvrtcProgram | nvvm.nvvmProgram | null {
    return this.kept?.handle ?? null;
  }

  /** The options the compiler was given (`--gpu-architecture=sm_90 …`, nvcc's, or libNVVM's `-arch=compute_90 …`); empty for a program read from a compiled handle. */
  get backendOptions(): readonly string[] {
    return this.flagsUsed;
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Destroys the compiler's program when the Program owns it (keepHandle, or fromHandle with `owned`); the code stays readable. Safe to call twice. */
  close(): void {
    this.closed = true;
    const k = this.kept;
    this.kept = null;
    k?.destroy();
  }

  /** Calls close(): `using program = Program.compile(src, { keepHandle: true })`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * The options a compile with `options` would pass to its compiler, and which compiler that is,
   * without compiling (for logs and cache keys): NVRTC's or nvcc's flags for CUDA C++, libNVVM's for
   * NVVM IR. Checks the options as Program.compile does.
   */
  static backendOptions(options: ProgramOptions = {}): ProgramBackendOptions {
    const fn = 'Program.backendOptions';
    checkOptions(fn, options, PROGRAM_OPTIONS);
    if ((options.language ?? 'c++') === 'nvvm') return { compiler: 'nvvm', options: prepareNvvm(options, fn).opts };
    if (options.language !== undefined && options.language !== 'c++')
      throw new RangeError(`${fn}: option 'language' must be 'c++' or 'nvvm', got ${describe(options.language)}`);
    const { compiler, flags } = prepareCpp(options, fn);
    return { compiler: compiler.kind, options: flags };
  }

  /**
   * A Program from an NVRTC or libNVVM program made with the raw facade (`nvrtcCreateProgram`,
   * `nvvmCreateProgram` and its modules): compiles it with `options` (or, with `compiled`, reads what
   * an earlier compile made) and takes its code, log and lowered names. Not owned unless `owned`: the
   * caller destroys the handle, after the Program is done with it; with `owned`, close() destroys it
   * (and a failed compile does). Never cached on disk.
   */
  static fromHandle(handle: nvrtc.nvrtcProgram | nvvm.nvvmProgram, options: ProgramFromHandleOptions): Program {
    const fn = 'Program.fromHandle';
    if (options === null || typeof options !== 'object')
      throw new TypeError(`${fn}: parameter 'options' must be an object with 'language' ('c++' or 'nvvm'), got ${describe(options)}`);
    checkOptions(fn, options, FROM_HANDLE_OPTIONS);
    if (handle === null || handle === undefined || handle === 0n)
      throw new TypeError(`${fn}: parameter 'handle' must be an nvrtcProgram or nvvmProgram, got ${describe(handle)}`);
    for (const k of ['compiled', 'owned'] as const)
      if (options[k] !== undefined && typeof options[k] !== 'boolean')
        throw new TypeError(`${fn}: option '${k}' must be true or false, got ${describe(options[k])}`);
    if (options.language === 'c++') return nvrtcFromHandle(handle as nvrtc.nvrtcProgram, options, fn);
    if (options.language === 'nvvm') return nvvmFromHandle(handle as nvvm.nvvmProgram, options, fn);
    throw new RangeError(
      `${fn}: option 'language' must be 'c++' (an nvrtcProgram) or 'nvvm' (an nvvmProgram), got ${describe(options.language)}`,
    );
  }

  /** Whether NVRTC created the precompiled header this compile asked for (`pch` or `createPch`); null when none was asked for. */
  get pchCreated(): boolean | null {
    return this.pchResult;
  }
}

/** The NVRTC flags of the PCH options, the options given, and whether the compile creates a PCH. */
function pchOptions(options: ProgramOptions, fn: string): { flags: string[]; keys: string[]; creates: boolean } {
  const flags: string[] = [];
  const keys: string[] = [];
  const flag = (key: keyof ProgramOptions, make: (v: boolean) => string | null) => {
    const v = options[key];
    if (v === undefined) return;
    if (typeof v !== 'boolean') throw new TypeError(`${fn}: option '${key}' must be true or false, got ${describe(v)}`);
    keys.push(key);
    const f = make(v);
    if (f) flags.push(f);
  };
  const path = (key: keyof ProgramOptions, name: string) => {
    const v = options[key];
    if (v === undefined) return;
    if (typeof v !== 'string' || v === '' || v.includes('\0'))
      throw new TypeError(`${fn}: option '${key}' must be a file path, got ${describe(v)}`);
    keys.push(key);
    flags.push(`--${name}=${v}`);
  };
  flag('pch', (v) => (v ? '--pch' : null));
  path('createPch', 'create-pch');
  path('usePch', 'use-pch');
  path('pchDir', 'pch-dir');
  flag('pchVerbose', (v) => `--pch-verbose=${v}`);
  flag('pchMessages', (v) => `--pch-messages=${v}`);
  flag('instantiateTemplatesInPch', (v) => `--instantiate-templates-in-pch=${v}`);
  if (options.createPch !== undefined && options.usePch !== undefined)
    throw new RangeError(`${fn}: options 'createPch' and 'usePch' exclude each other: a compile makes a PCH or uses one`);
  if (options.pch && (options.createPch !== undefined || options.usePch !== undefined))
    throw new RangeError(`${fn}: option 'pch' (automatic) excludes 'createPch' and 'usePch'`);
  return { flags, keys, creates: options.pch === true || options.createPch !== undefined };
}

/** Whether the compile asked NVRTC to create a PCH (automatically or at a path). */
function createsPch(opts: readonly string[]): boolean {
  return opts.some((o) => o === '--pch' || o.startsWith('--create-pch='));
}

/**
 * After a compile that was to create a PCH: when NVRTC ran out of PCH heap, grows the heap to what it
 * says it needs (nvrtcSetPCHHeapSize) and returns true, so that the caller compiles again, as
 * cuda.core does. False otherwise (including an NVRTC without the PCH calls).
 */
function growPchHeap(prog: nvrtc.nvrtcProgram): boolean {
  try {
    const [status] = nvrtc.nvrtcGetPCHCreateStatus(prog);
    if (status !== nvrtc.nvrtcResult.NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) return false;
    const [err, need] = nvrtc.nvrtcGetPCHHeapSizeRequired(prog);
    if (err !== nvrtc.nvrtcResult.NVRTC_SUCCESS || !need) return false;
    return nvrtc.nvrtcSetPCHHeapSize(need)[0] === nvrtc.nvrtcResult.NVRTC_SUCCESS;
  } catch {
    return false;
  }
}

/** Whether NVRTC created the PCH the compile asked for (nvrtcGetPCHCreateStatus). */
function pchCreated(prog: nvrtc.nvrtcProgram): boolean {
  try {
    return nvrtc.nvrtcGetPCHCreateStatus(prog)[0] === nvrtc.nvrtcResult.NVRTC_SUCCESS;
  } catch {
    return false;
  }
}

/** The typed compile options as the compiler's flags (CUDA C++: NVRTC's and nvcc's spelling; NVVM IR: libNVVM's), each checked. */
function typedFlags(options: ProgramOptions, language: 'c++' | 'nvvm', fn: string): string[] {
  const flags: string[] = [];
  const bool = (key: 'debug' | 'lineInfo' | 'ftz' | 'precSqrt' | 'precDiv' | 'fma'): boolean | undefined => {
    const v = options[key];
    if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`${fn}: option '${key}' must be true or false, got ${describe(v)}`);
    return v;
  };
  const nvvmIr = language === 'nvvm';
  if (bool('debug')) flags.push(nvvmIr ? '-g' : '-G');
  if (bool('lineInfo')) {
    if (nvvmIr)
      throw new RangeError(`${fn}: option 'lineInfo' is not taken by libNVVM (line information comes from the IR's debug metadata)`);
    flags.push('-lineinfo');
  }
  if (options.optimization !== undefined) {
    if (!nvvmIr)
      throw new RangeError(
        `${fn}: option 'optimization' is libNVVM's -opt, for NVVM IR ({ language: 'nvvm' }); for CUDA C++ pass compiler options`,
      );
    if (options.optimization !== 0 && options.optimization !== 3)
      throw new RangeError(`${fn}: option 'optimization' must be 0 or 3 (libNVVM's -opt levels), got ${describe(options.optimization)}`);
    flags.push(`-opt=${options.optimization}`);
  }
  const pairs = [
    ['ftz', '--ftz', '-ftz'],
    ['precSqrt', '--prec-sqrt', '-prec-sqrt'],
    ['precDiv', '--prec-div', '-prec-div'],
    ['fma', '--fmad', '-fma'],
  ] as const;
  for (const [key, cxx, ir] of pairs) {
    const v = bool(key);
    if (v !== undefined) flags.push(nvvmIr ? `${ir}=${v ? 1 : 0}` : `${cxx}=${v}`);
  }
  return flags;
}

/** Throws unless `keepHandle` is a boolean or absent; returns it. */
function keepHandleOption(options: ProgramOptions, fn: string): boolean {
  const v = options.keepHandle;
  if (v !== undefined && typeof v !== 'boolean')
    throw new TypeError(`${fn}: option 'keepHandle' must be true or false, got ${describe(v)}`);
  return v === true;
}

/** A CUDA C++ compile's checked options, architecture and compiler, and the flags the compiler gets. */
function prepareCpp(options: ProgramOptions, fn: string) {
  if (options.libdevice !== undefined)
    throw new RangeError(`${fn}: option 'libdevice' is for NVVM IR ({ language: 'nvvm' }); CUDA C++ links libdevice itself`);
  const target = options.target ?? 'cubin';
  if (target !== 'cubin' && target !== 'ptx' && target !== 'ltoir')
    throw new RangeError(`${fn}: option 'target' must be 'cubin', 'ptx' or 'ltoir', got ${describe(target)}`);
  const pch = pchOptions(options, fn);
  const keepHandle = keepHandleOption(options, fn);
  const o = {
    name: options.name ?? 'program.cu',
    options: [...typedFlags(options, 'c++', fn), ...stringList(options.options, 'options', fn), ...pch.flags],
    headers: headerMap(options.headers, fn),
    nameExpressions: stringList(options.nameExpressions, 'nameExpressions', fn),
    target,
    keepHandle,
  };
  const arch = archName(options.arch, target, fn);
  const compiler = pickCompiler(options.compiler ?? 'auto', o.nameExpressions.length > 0, fn);
  if (pch.flags.length && compiler.kind !== 'nvrtc')
    throw new Error(`${fn}: precompiled headers (${pch.keys.join(', ')}) need NVRTC; this compile would use ${compiler.kind}`);
  if (keepHandle && compiler.kind !== 'nvrtc')
    throw new Error(`${fn}: option 'keepHandle' keeps NVRTC's program; this compile would use ${compiler.kind}, which has none`);
  const flags = compiler.kind === 'nvrtc' ? nvrtcFlags(o, arch) : nvccFlags(o, arch);
  return { o, arch, compiler, pch, target, flags };
}

/** Checks a compile's source and options (messages name `fn`), and looks it up in the cache. */
function planCompile(source: string | Uint8Array, options: ProgramOptions, fn: string): Plan {
  checkOptions(fn, options, PROGRAM_OPTIONS);
  const language = options.language ?? 'c++';
  if (language !== 'c++' && language !== 'nvvm')
    throw new RangeError(`${fn}: option 'language' must be 'c++' or 'nvvm', got ${describe(language)}`);
  if (language === 'nvvm') return planNvvm(source, options, fn);
  if (typeof source !== 'string' || source.trim() === '')
    throw new TypeError(
      `${fn}: parameter 'source' must be CUDA C++ text, got ${typeof source === 'string' ? 'an empty string' : String(source)}`,
    );
  const { o, arch, compiler, pch, target, flags } = prepareCpp(options, fn);
  // A compile that creates a PCH runs for that file, and one that keeps its handle runs for it: a cached result would not do.
  const dir = pch.creates || o.keepHandle ? null : cacheDir(options.cache, fn);
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        CACHE_FORMAT,
        compiler.kind,
        compiler.version,
        arch,
        source,
        o.name,
        o.options,
        Object.entries(o.headers).sort(),
        o.nameExpressions,
        target,
      ]),
    )
    .digest('hex');
  return {
    cached: dir ? readCache(dir, key, target) : null,
    run: () => compiler.compile(source, o, arch),
    runAsync: (w) => compiler.compileAsync(source, o, arch, w, fn),
    finish: (out, fromCache) => {
      if (dir && !fromCache) writeCache(dir, key, target, out);
      const p = Program.make(out.code, target, arch, out.log, `${compiler.kind} ${compiler.version}`, fromCache, out.names, o.name);
      p.pchResult = out.pchCreated ?? null;
      p.flagsUsed = flags;
      if (out.handle) p.adopt(out.handle, true);
      return p;
    },
  };
}

/** Program.fromHandle for an nvrtcProgram: compiled here unless `compiled`, then read. */
function nvrtcFromHandle(prog: nvrtc.nvrtcProgram, options: ProgramFromHandleOptions, fn: string): Program {
  const rtc = (nvrtcCompiler ??= loadNvrtc());
  if (rtc instanceof Error) throw new Error(`${fn}: NVRTC is not available: ${rtc.message}`);
  const target = options.target ?? 'cubin';
  if (target !== 'cubin' && target !== 'ptx' && target !== 'ltoir')
    throw new RangeError(`${fn}: option 'target' must be 'cubin', 'ptx' or 'ltoir', got ${describe(target)}`);
  const o = {
    name: options.name ?? 'program.cu',
    options: [...typedFlags(options, 'c++', fn), ...stringList(options.options, 'options', fn)],
    headers: {},
    nameExpressions: stringList(options.nameExpressions, 'nameExpressions', fn),
    target,
  };
  const arch = archName(options.arch, target, fn);
  const flags = options.compiled ? [] : nvrtcFlags(o, arch);
  const destroy = () => void nvrtc.nvrtcDestroyProgram(prog);
  let out: Compiled;
  try {
    let status = nvrtc.nvrtcResult.NVRTC_SUCCESS;
    if (!options.compiled) {
      for (const e of o.nameExpressions) nvrtcCheck(nvrtc.nvrtcAddNameExpression(prog, e), `nvrtcAddNameExpression(${e})`);
      status = nvrtc.nvrtcCompileProgram(prog, flags.length, flags)[0];
    }
    out = finishNvrtc(prog, status, o);
  } catch (e) {
    if (options.owned) destroy();
    throw e;
  }
  const p = Program.make(out.code, target, arch, out.log, `nvrtc ${rtc.version}`, false, out.names, o.name);
  p.flagsUsed = flags;
  p.adopt({ handle: prog, destroy }, options.owned === true);
  return p;
}

/** Program.fromHandle for an nvvmProgram (its modules added by the caller): compiled here unless `compiled`, then read. */
function nvvmFromHandle(prog: nvvm.nvvmProgram, options: ProgramFromHandleOptions, fn: string): Program {
  if (options.nameExpressions !== undefined) throw new RangeError(`${fn}: option 'nameExpressions' is for CUDA C++, not NVVM IR`);
  const { target, name, arch, opts } = prepareNvvm({ ...options, language: 'nvvm' }, fn);
  const version = nvvmVersion(fn);
  const destroy = () => void nvvm.nvvmDestroyProgram(prog);
  let out: Compiled;
  try {
    out = finishNvvm(prog, options.compiled ? nvvm.nvvmResult.NVVM_SUCCESS : nvvm.nvvmCompileProgram(prog, opts.length, opts)[0]);
  } catch (e) {
    if (options.owned) destroy();
    throw e;
  }
  const p = Program.make(out.code, target, arch, out.log, `nvvm ${version}`, false, {}, name);
  p.flagsUsed = options.compiled ? [] : opts;
  p.adopt({ handle: prog, destroy }, options.owned === true);
  return p;
}

function stringList(v: readonly string[] | undefined, what: string, fn = 'Program.compile'): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new TypeError(`${fn}: option '${what}' must be an array of strings, got ${JSON.stringify(v)}`);
  return [...v];
}

function headerMap(h: Readonly<Record<string, string>> | undefined, fn: string): Record<string, string> {
  if (h === undefined) return {};
  if (typeof h !== 'object' || h === null || Object.values(h).some((x) => typeof x !== 'string'))
    throw new TypeError(`${fn}: option 'headers' must map include names to header text`);
  return { ...h };
}

/** 'sm_90' or 'compute_90' for the target, from a Device, '90', 'sm_90', 'sm_90a', 'compute_90'. */
function archName(arch: Device | string | undefined, target: 'cubin' | 'ptx' | 'ltoir', fn: string): string {
  let digits: string;
  if (arch === undefined || arch instanceof Device) {
    let d: Device;
    try {
      d = arch ?? Device.current();
    } catch (e) {
      throw new Error(
        `${fn}: no 'arch' option and no device to take it from (${(e as Error).message}); pass { arch: 'sm_90' } or a Device`,
      );
    }
    digits = d.computeCapability.join('');
  } else {
    const m = typeof arch === 'string' ? /^(?:sm_|compute_)?(\d{2,3}[af]?)$/.exec(arch) : null;
    if (!m) throw new RangeError(`${fn}: option 'arch' must be a Device or an architecture such as 'sm_90' or '90', got ${describe(arch)}`);
    digits = m[1];
  }
  return `${target === 'cubin' ? 'sm' : 'compute'}_${digits}`;
}

let nvrtcCompiler: Compiler | Error | undefined;
let nvccCompiler: Compiler | Error | undefined;

function pickCompiler(which: 'auto' | 'nvrtc' | 'nvcc', needNames: boolean, fn: string): Compiler {
  if (which !== 'auto' && which !== 'nvrtc' && which !== 'nvcc')
    throw new RangeError(`${fn}: option 'compiler' must be 'auto', 'nvrtc' or 'nvcc', got ${describe(which)}`);
  const rtc = which === 'nvcc' ? null : (nvrtcCompiler ??= loadNvrtc());
  if (rtc && !(rtc instanceof Error)) return rtc;
  if (which === 'nvrtc') throw new Error(`${fn}: NVRTC is not available: ${(rtc as Error).message}`);
  const why = rtc ? `NVRTC is not available (${(rtc as Error).message.split('\n')[0]})` : "compiler: 'nvcc'";
  if (needNames)
    throw new Error(
      `${fn}: name expressions need NVRTC, and ${why}; with nvcc, declare the kernels extern "C" and look them up by their C names`,
    );
  const cc = (nvccCompiler ??= findNvcc());
  if (cc instanceof Error) throw new Error(`${fn}: no compiler: ${why}, and ${cc.message}`);
  return cc;
}

function loadNvrtc(): Compiler | Error {
  let version: string;
  try {
    const [, major, minor] = nvrtc.nvrtcVersion();
    version = `${major}.${minor}`;
  } catch (e) {
    return e as Error;
  }
  return {
    kind: 'nvrtc',
    version,
    compile: (source, o, arch) => {
      // A PCH that ran out of heap: the heap grown, compiled once more.
      for (let attempt = 0; ; attempt++) {
        const { prog, opts } = startNvrtc(source, o, arch);
        let kept = false;
        try {
          const status = nvrtc.nvrtcCompileProgram(prog, opts.length, opts)[0];
          if (attempt === 0 && status === nvrtc.nvrtcResult.NVRTC_SUCCESS && createsPch(opts) && growPchHeap(prog)) continue;
          const out = finishNvrtc(prog, status, o, createsPch(opts));
          if (o.keepHandle) out.handle = { handle: prog, destroy: () => void nvrtc.nvrtcDestroyProgram(prog) };
          kept = o.keepHandle === true;
          return out;
        } finally {
          if (!kept) nvrtc.nvrtcDestroyProgram(prog);
        }
      }
    },
    compileAsync: async function compileAsync(source, o, arch, w, fn, attempt = 0): Promise<Compiled> {
      const { prog, opts } = startNvrtc(source, o, arch);
      // Given up, the program is destroyed once the pool's compile returned, not before.
      let gaveUp = false;
      let returned = false;
      let status: number;
      try {
        status = await nvrtcCompileAsync(fn, prog, opts.length, opts, w, () => {
          returned = true;
          if (gaveUp) nvrtc.nvrtcDestroyProgram(prog);
        });
      } catch (e) {
        gaveUp = true;
        if (returned) nvrtc.nvrtcDestroyProgram(prog);
        throw e;
      }
      let again = false;
      try {
        again = attempt === 0 && status === nvrtc.nvrtcResult.NVRTC_SUCCESS && createsPch(opts) && growPchHeap(prog);
        if (!again) return finishNvrtc(prog, status as nvrtc.nvrtcResult, o, createsPch(opts));
      } finally {
        nvrtc.nvrtcDestroyProgram(prog);
      }
      return compileAsync(source, o, arch, w, fn, 1);
    },
  };
}

function nvrtcCheck(r: readonly [nvrtc.nvrtcResult, ...unknown[]], fn: string, log = ''): void {
  if (r[0] !== nvrtc.nvrtcResult.NVRTC_SUCCESS)
    throw new NvrtcError(r[0], nvrtc.nvrtcResult[r[0]] ?? `nvrtcResult ${r[0]}`, log || `${fn} failed`);
}

/** An NVRTC program made from the source, with its name expressions, and the options to compile it with. */
function startNvrtc(source: string, o: Parameters<Compiler['compile']>[1], arch: string): { prog: nvrtc.nvrtcProgram; opts: string[] } {
  const includeNames = Object.keys(o.headers);
  const [err, prog] = nvrtc.nvrtcCreateProgram(
    source,
    o.name,
    includeNames.length,
    includeNames.map((n) => o.headers[n]),
    includeNames,
  );
  nvrtcCheck([err], 'nvrtcCreateProgram');
  try {
    for (const e of o.nameExpressions) nvrtcCheck(nvrtc.nvrtcAddNameExpression(prog, e), `nvrtcAddNameExpression(${e})`);
  } catch (e) {
    nvrtc.nvrtcDestroyProgram(prog);
    throw e;
  }
  return { prog: prog!, opts: nvrtcFlags(o, arch) };
}

/** NVRTC's options for a compile: the architecture, LTO's, then the others. */
function nvrtcFlags(o: { target: string; options: readonly string[] }, arch: string): string[] {
  // LTO-IR: relocatable device code, so that one unit may call another's device functions.
  return [`--gpu-architecture=${arch}`, ...(o.target === 'ltoir' ? ['-dlto', '--relocatable-device-code=true'] : []), ...o.options];
}

/** nvcc's options for a compile (without the include folder, output and source it is given too). */
function nvccFlags(o: { target: string; options: readonly string[] }, arch: string): string[] {
  const mode =
    o.target === 'cubin'
      ? ['-cubin', `-arch=${arch}`]
      : o.target === 'ptx'
        ? ['-ptx', `-arch=${arch}`]
        : ['-dlto', '-ltoir', '-rdc=true', `-arch=${arch.replace(/^compute_/, 'lto_')}`];
  return [...mode, ...o.options];
}

/** The log, code and lowered names of a compiled NVRTC program (the caller destroys it). */
function finishNvrtc(prog: nvrtc.nvrtcProgram, compiled: nvrtc.nvrtcResult, o: Parameters<Compiler['compile']>[1], pch = false): Compiled {
  {
    const [, logSize] = nvrtc.nvrtcGetProgramLogSize(prog);
    const logBytes = new Uint8Array(Math.max(1, logSize ?? 1));
    nvrtc.nvrtcGetProgramLog(prog, logBytes);
    const log = Buffer.from(logBytes)
      .toString('utf8')
      .replace(/\0[\s\S]*$/, '')
      .trim();
    nvrtcCheck([compiled], 'nvrtcCompileProgram', log);
    const cubin = o.target === 'cubin';
    let code: Uint8Array;
    if (o.target === 'ltoir') {
      const [sizeErr, size] = nvrtc.nvrtcGetLTOIRSize(prog);
      nvrtcCheck([sizeErr], 'nvrtcGetLTOIRSize');
      code = new Uint8Array(size!);
      nvrtcCheck(nvrtc.nvrtcGetLTOIR(prog, code), 'nvrtcGetLTOIR');
    } else {
      const [sizeErr, size] = cubin ? nvrtc.nvrtcGetCUBINSize(prog) : nvrtc.nvrtcGetPTXSize(prog);
      nvrtcCheck([sizeErr], cubin ? 'nvrtcGetCUBINSize' : 'nvrtcGetPTXSize');
      code = new Uint8Array(size!);
      nvrtcCheck(cubin ? nvrtc.nvrtcGetCUBIN(prog, code) : nvrtc.nvrtcGetPTX(prog, code), cubin ? 'nvrtcGetCUBIN' : 'nvrtcGetPTX');
    }
    const names: Record<string, string> = {};
    for (const e of o.nameExpressions) {
      const [nameErr, lowered] = nvrtc.nvrtcGetLoweredName(prog, e);
      nvrtcCheck([nameErr], `nvrtcGetLoweredName(${e})`);
      names[e] = lowered!;
    }
    return pch ? { code, log, names, pchCreated: pchCreated(prog) } : { code, log, names };
  }
}

function findNvcc(): Compiler | Error {
  const candidates = [
    process.env.CUDA_BINDINGS_NVCC,
    ...['CUDA_HOME', 'CUDA_PATH'].map((v) => process.env[v] && path.join(process.env[v]!, 'bin', 'nvcc')),
    ...(process.env.PATH ?? '')
      .split(path.delimiter)
      .filter(Boolean)
      .map((d) => path.join(d, 'nvcc')),
    '/usr/local/cuda/bin/nvcc',
  ].filter((c): c is string => !!c);
  const nvcc = candidates.find((c) => fs.existsSync(c));
  if (!nvcc)
    return new Error(`nvcc was not found (looked in CUDA_BINDINGS_NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, PATH, /usr/local/cuda/bin)`);
  let version: string;
  try {
    const out = execFileSync(nvcc, ['--version'], { encoding: 'utf8' });
    version = /release [\d.]+, V([\d.]+)/.exec(out)?.[1] ?? out.trim().split('\n').pop()!;
  } catch (e) {
    return new Error(`${nvcc} --version failed: ${(e as Error).message}`);
  }
  return {
    kind: 'nvcc',
    version,
    compile: (source, o, arch) => compileWithNvcc(nvcc, source, o, arch),
    compileAsync: (source, o, arch, w, fn) => compileWithNvccAsync(nvcc, source, o, arch, w, fn),
  };
}

/** A temporary directory with the source and headers, and nvcc's arguments to compile it there. */
function nvccJob(
  source: string,
  o: Parameters<Compiler['compile']>[1],
  arch: string,
  fn: string,
): { dir: string; out: string; args: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-bindings-nvcc-'));
  try {
    for (const [name, text] of Object.entries(o.headers)) {
      const file = path.resolve(dir, name);
      if (!file.startsWith(dir + path.sep)) throw new RangeError(`${fn}: header name '${name}' leaves the include directory`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    }
    const src = path.join(
      dir,
      path
        .basename(o.name)
        .replace(/[^\w.-]/g, '_')
        .replace(/(\.cu)?$/, '.cu'),
    );
    fs.writeFileSync(src, source);
    const out = path.join(dir, `out.${o.target}`);
    return { dir, out, args: [...nvccFlags(o, arch), '-I', dir, '-o', out, src] };
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** The CompileError of a failed nvcc run. */
function nvccError(status: number | null | undefined, stdout: string | undefined, stderr: string | undefined): CompileError {
  const text = `${stdout ?? ''}${stderr ?? ''}`.trim();
  return new CompileError(`nvcc exited with status ${status}: ${firstError(text) ?? text.split('\n')[0]}`, 'nvcc', text);
}

/** What nvcc wrote to `out` (PTX with a NUL added), and its log. */
function nvccResult(out: string, target: string, log: string): Compiled {
  let code = new Uint8Array(fs.readFileSync(out));
  if (target === 'ptx') {
    const z = new Uint8Array(code.length + 1);
    z.set(code);
    code = z;
  }
  return { code, log: log.trim(), names: {} };
}

function compileWithNvcc(nvcc: string, source: string, o: Parameters<Compiler['compile']>[1], arch: string): Compiled {
  const job = nvccJob(source, o, arch, 'Program.compile');
  try {
    let log: string;
    try {
      log = execFileSync(nvcc, job.args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const x = e as { stdout?: string; stderr?: string; status?: number };
      throw nvccError(x.status, x.stdout, x.stderr);
    }
    return nvccResult(job.out, o.target, log);
  } finally {
    fs.rmSync(job.dir, { recursive: true, force: true });
  }
}

/** nvcc as a child process (no pool thread); giving up kills it. */
function compileWithNvccAsync(
  nvcc: string,
  source: string,
  o: Parameters<Compiler['compile']>[1],
  arch: string,
  w: WaitOptions,
  fn: string,
): Promise<Compiled> {
  const job = nvccJob(source, o, arch, fn);
  return guarded<Compiled>(fn, w, (resolve, reject) => {
    const child = execFile(nvcc, job.args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      try {
        if (err) reject(nvccError(typeof err.code === 'number' ? err.code : null, stdout, stderr));
        else resolve(nvccResult(job.out, o.target, stdout));
      } catch (e) {
        reject(e);
      } finally {
        fs.rmSync(job.dir, { recursive: true, force: true });
      }
    });
    return () => child.kill();
  });
}

/** @internal The cache directory an option names, or null for none. */
export function cacheDir(option: boolean | string | undefined, fn = 'Program.compile'): string | null {
  if (option === false || (option === undefined && process.env.CUDA_BINDINGS_CACHE === '0')) return null;
  if (typeof option === 'string') return option;
  if (option !== undefined && option !== true)
    throw new TypeError(`${fn}: option 'cache' must be a boolean or a directory, got ${describe(option)}`);
  return (
    process.env.CUDA_BINDINGS_CACHE_DIR ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'cuda-bindings', 'kernels')
  );
}

/** @internal */
export function readCache(dir: string, key: string, target: string): Compiled | null {
  try {
    const meta = JSON.parse(fs.readFileSync(path.join(dir, `${key}.json`), 'utf8')) as Omit<Compiled, 'code'>;
    return { ...meta, code: new Uint8Array(fs.readFileSync(path.join(dir, `${key}.${target}`))) };
  } catch {
    return null;
  }
}

/** @internal Writes the entry (code first, then its metadata, each renamed into place); a cache that cannot be written is skipped. */
export function writeCache(dir: string, key: string, target: string, c: Compiled): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `.${process.pid}.${Math.random().toString(36).slice(2)}`;
    const put = (file: string, data: string | Uint8Array) => {
      fs.writeFileSync(path.join(dir, file + tmp), data);
      fs.renameSync(path.join(dir, file + tmp), path.join(dir, file));
    };
    put(`${key}.${target}`, c.code);
    put(`${key}.json`, JSON.stringify({ log: c.log, names: c.names }));
  } catch {
    // A read-only home or a full disk costs a recompile next time, nothing more.
  }
}

// ---------------------------------------------------------------------------------------------
// NVVM IR, compiled by libNVVM

let nvvmState: { version: string } | Error | undefined;

/** libNVVM's options (besides -arch and -gen-lto, which come from `arch` and `target`), as libnvvm's nvvmCompileProgram lists them. */
const NVVM_TAKES = /^(?:-g|-opt=[03]|-ftz=[01]|-prec-sqrt=[01]|-prec-div=[01]|-fma=[01]|-jump-table-density=(?:\d|[1-9]\d|10[01]))$/;
/** Options of ProgramOptions that only NVRTC (CUDA C++) takes. */
const NVRTC_ONLY = ['pch', 'createPch', 'usePch', 'pchDir', 'pchVerbose', 'pchMessages', 'instantiateTemplatesInPch'] as const;

/** Throws a RangeError naming the option unless libNVVM takes each of `opts` (as cuda.core refuses what NVVM cannot take). */
function checkNvvmOptions(opts: readonly string[], fn: string): void {
  for (const o of opts) {
    if (/^-arch=/.test(o)) throw new RangeError(`${fn}: option 'options' holds '${o}'; give the architecture as the 'arch' option`);
    if (o === '-gen-lto') throw new RangeError(`${fn}: option 'options' holds '-gen-lto'; ask for LTO-IR with { target: 'ltoir' }`);
    if (!NVVM_TAKES.test(o))
      throw new RangeError(
        `${fn}: libNVVM does not take '${o}' (in option 'options'); it takes -g, -opt=0|3, -ftz=0|1, -prec-sqrt=0|1, -prec-div=0|1, -fma=0|1 and -jump-table-density=0..101`,
      );
  }
}

/** An NVVM IR compile's checked options: its target, name, architecture, libdevice and libNVVM's options. */
function prepareNvvm(options: ProgramOptions, fn: string) {
  const target = options.target ?? 'ptx';
  if (target !== 'ptx' && target !== 'ltoir')
    throw new RangeError(`${fn}: NVVM IR compiles to 'ptx' or 'ltoir', not ${String(target)}; link the PTX for a cubin`);
  if (options.headers !== undefined || options.nameExpressions !== undefined)
    throw new RangeError(`${fn}: options 'headers' and 'nameExpressions' are for CUDA C++, not NVVM IR`);
  if (options.compiler !== undefined && options.compiler !== 'auto')
    throw new RangeError(`${fn}: NVVM IR is compiled by libNVVM; option 'compiler' must be left out, got ${describe(options.compiler)}`);
  for (const k of NVRTC_ONLY)
    if (options[k] !== undefined) throw new RangeError(`${fn}: option '${k}' is for NVRTC (CUDA C++), not NVVM IR`);
  const userOptions = stringList(options.options, 'options', fn);
  checkNvvmOptions(userOptions, fn);
  const typed = typedFlags(options, 'nvvm', fn);
  const arch = archName(options.arch, 'ptx', fn);
  const keepHandle = keepHandleOption(options, fn);
  const lib = options.libdevice ? libdevicePath(options.libdevice, fn) : null;
  const opts = [`-arch=${arch}`, ...(target === 'ltoir' ? ['-gen-lto'] : []), ...typed, ...userOptions];
  return { target, name: options.name ?? 'program.ll', arch, lib, opts, keepHandle };
}

/** libNVVM's version, or why it cannot be used (asked once); throws naming `fn` when it cannot. */
function nvvmVersion(fn: string): string {
  const state = (nvvmState ??= (() => {
    try {
      const [err, major, minor] = nvvm.nvvmVersion();
      return err === 0 ? { version: `${major}.${minor}` } : new Error(`nvvmVersion returned ${nvvm.nvvmResult[err] ?? err}`);
    } catch (e) {
      return e as Error;
    }
  })());
  if (state instanceof Error) throw new Error(`${fn}: libNVVM is not available: ${state.message}`);
  return state.version;
}

function planNvvm(source: string | Uint8Array, options: ProgramOptions, fn: string): Plan {
  const bytes = typeof source === 'string' ? new TextEncoder().encode(source) : source;
  if (!(bytes instanceof Uint8Array) || bytes.length === 0 || (typeof source === 'string' && source.trim() === '')) {
    throw new TypeError(
      `${fn}: parameter 'source' must be NVVM IR (text or a Uint8Array of bitcode), got ${typeof source === 'string' ? 'an empty string' : describe(source)}`,
    );
  }
  const { target, name, arch, lib, opts, keepHandle } = prepareNvvm(options, fn);
  const state = { version: nvvmVersion(fn) };
  const dir = keepHandle ? null : cacheDir(options.cache, fn);
  const key = createHash('sha256')
    .update(JSON.stringify([CACHE_FORMAT, 'nvvm', state.version, arch, name, opts, lib ? [lib, fs.statSync(lib).size] : null, target]))
    .update(bytes)
    .digest('hex');
  return {
    cached: dir ? readCache(dir, key, target) : null,
    run: () => {
      const prog = startNvvm(bytes, name, lib);
      let kept = false;
      try {
        const out = finishNvvm(prog, nvvm.nvvmCompileProgram(prog, opts.length, opts)[0]);
        if (keepHandle) out.handle = { handle: prog, destroy: () => void nvvm.nvvmDestroyProgram(prog) };
        kept = keepHandle;
        return out;
      } finally {
        if (!kept) nvvm.nvvmDestroyProgram(prog);
      }
    },
    runAsync: async (w) => {
      const prog = startNvvm(bytes, name, lib);
      // Given up, the program is destroyed once the pool's compile returned, not before.
      let gaveUp = false;
      let returned = false;
      let status: number;
      try {
        status = await nvvmCompileAsync(fn, prog, opts.length, opts, w, () => {
          returned = true;
          if (gaveUp) nvvm.nvvmDestroyProgram(prog);
        });
      } catch (e) {
        gaveUp = true;
        if (returned) nvvm.nvvmDestroyProgram(prog);
        throw e;
      }
      try {
        return finishNvvm(prog, status as nvvm.nvvmResult);
      } finally {
        nvvm.nvvmDestroyProgram(prog);
      }
    },
    finish: (out, fromCache) => {
      if (dir && !fromCache) writeCache(dir, key, target, out);
      const p = Program.make(out.code, target, arch, out.log, `nvvm ${state.version}`, fromCache, {}, name);
      p.flagsUsed = opts;
      if (out.handle) p.adopt(out.handle, true);
      return p;
    },
  };
}

/** Throws the NvvmError of a failed NVVM call, with the program's log. */
function nvvmFail(prog: nvvm.nvvmProgram, e: nvvm.nvvmResult, fn: string): never {
  throw new NvvmError(e, nvvm.nvvmResult[e] ?? `nvvmResult ${e}`, fn, nvvmText(nvvm.nvvmGetProgramLog(prog, null)[1]));
}

/** An NVVM program holding the IR (and libdevice, added lazily), ready to compile. */
function startNvvm(ir: Uint8Array, name: string, libdevice: string | null): nvvm.nvvmProgram {
  const [err, prog] = nvvm.nvvmCreateProgram();
  if (err !== 0) throw new NvvmError(err, nvvm.nvvmResult[err] ?? `nvvmResult ${err}`, 'nvvmCreateProgram', '');
  try {
    const [ae] = nvvm.nvvmAddModuleToProgram(prog, ir, ir.length, name);
    if (ae !== 0) nvvmFail(prog!, ae, `nvvmAddModuleToProgram(${name})`);
    if (libdevice) {
      const lib = fs.readFileSync(libdevice);
      // Lazily: only the functions the program calls are linked in.
      const [le] = nvvm.nvvmLazyAddModuleToProgram(prog, lib, lib.length, path.basename(libdevice));
      if (le !== 0) nvvmFail(prog!, le, `nvvmLazyAddModuleToProgram(${libdevice})`);
    }
    return prog!;
  } catch (e) {
    nvvm.nvvmDestroyProgram(prog);
    throw e;
  }
}

/** The log and code of a compiled NVVM program (the caller destroys it). */
function finishNvvm(prog: nvvm.nvvmProgram, compiled: nvvm.nvvmResult): Compiled {
  if (compiled !== 0) nvvmFail(prog, compiled, 'nvvmCompileProgram');
  const log = nvvmText(nvvm.nvvmGetProgramLog(prog, null)[1]);
  const [re, result] = nvvm.nvvmGetCompiledResult(prog, null);
  if (re !== 0) nvvmFail(prog, re, 'nvvmGetCompiledResult');
  return { code: new Uint8Array(result!), log, names: {} };
}

/** NVVM's text output (a log, PTX) without its NUL. */
function nvvmText(b: Uint8Array | null): string {
  return b ? cString(b).trim() : '';
}

/** libdevice: the path given, or the toolkit's (beside the loaded libnvvm, under CUDA_HOME, or in /usr/local/cuda). */
export function libdevicePath(option: true | string, fn = 'Program.compile'): string {
  if (typeof option === 'string') {
    if (!fs.existsSync(option)) throw new Error(`${fn}: option 'libdevice' names ${option}, which does not exist`);
    return option;
  }
  if (option !== true) throw new TypeError(`${fn}: option 'libdevice' must be true or a path, got ${describe(option)}`);
  const tried: string[] = [];
  let lib = '';
  try {
    lib = nvvm.libraryInfo().path;
  } catch {
    /* looked for under the toolkit folders below */
  }
  const roots = [
    lib && path.join(path.dirname(lib), '..'),
    lib && path.join(path.dirname(lib), '..', 'nvvm'),
    process.env.CUDA_HOME && path.join(process.env.CUDA_HOME, 'nvvm'),
    process.env.CUDA_PATH && path.join(process.env.CUDA_PATH, 'nvvm'),
    '/usr/local/cuda/nvvm',
  ];
  for (const r of roots) {
    if (!r) continue;
    const f = path.join(r, 'libdevice', 'libdevice.10.bc');
    tried.push(f);
    if (fs.existsSync(f)) return path.resolve(f);
  }
  throw new Error(
    `${fn}: libdevice.10.bc not found (tried ${[...new Set(tried)].join(', ')}); pass its path as { libdevice: '/path/libdevice.10.bc' }`,
  );
}
