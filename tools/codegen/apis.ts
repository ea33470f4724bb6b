// The APIs the generator writes, each from its headers into its own folder.
import type { MacroModel, Model } from './model';
import type { PrimName } from './ctype';
import type { ExtentTables } from './extents';
import type { VersionCheck } from '../../src/ffi/versions';

/** How a parameter is treated where the default (inferred from its C type) is wrong. */
export type ParamSpec =
  | { k: 'inArray'; count: string; nullable?: boolean }
  | { k: 'outArray'; count: string; countMode: 'inout' | 'in' }
  | { k: 'borrowedArray'; count: string }
  | { k: 'inout' }
  | { k: 'inRef' }
  | { k: 'inStruct'; nullable?: boolean }
  | { k: 'outAddr' }
  | { k: 'outString'; len: string; size?: number }
  | { k: 'inoutArray'; count: string }
  | { k: 'outBytes'; size: number }
  | { k: 'attr'; attr: string; table: string; dir: 'in' | 'out' }
  | { k: 'rangeAttr'; size: string; attr: string }
  | { k: 'pointer' }
  /**
   * Memory C writes as many bytes into as `sizeFn(...args)` reports (nvJitLinkGetLinkedCubin and
   * nvJitLinkGetLinkedCubinSize): host memory passed is checked against that size; null makes the
   * call size and allocate a Buffer itself and return it.
   */
  | { k: 'sizedOut'; sizeFn: string; args: string[] }
  | { k: 'kernelArgs' }
  | { k: 'hostFn'; kind: 'hostFn' | 'streamCallback'; stream: string }
  /** An output array as long as another call reports, allocated inside and returned (extents.ts). */
  | { k: 'queriedArray'; query: string; args: string[] };

/**
 * What the headers cannot say about an API (see tools/codegen/README.md for what each table means, and
 * extents.ts for the extent tables: how far C may write through each pointer).
 */
export interface ApiSpec extends ExtentTables {
  paramSpecs: Record<string, Record<string, ParamSpec>>;
  integerHandles: ReadonlySet<string>;
  attrTables: Record<string, { enumName: string; defaultType: 'int' | 'u64'; types: Record<string, 'int' | 'u64'> }>;
  docs: Record<string, string>;
  /**
   * Checks run before the call, for arguments the C function would crash on rather than reject
   * (each found by tools/find-crashers.sh on a GPU). JS statements over the checked arguments
   * (`a_<param>`), the marshal helpers (M) and the struct helpers (X, S).
   */
  checks?: Record<string, string[]>;
  /** The value of a #define the generic rules cannot read (NVML's `NVML_STRUCT_VERSION(...)`). */
  macroValue?: (m: MacroModel, model: Model) => { expr: string; value: string } | undefined;
  /** Fields a new struct starts with (NVML's `version`): class name -> field -> value. */
  structDefaults?: (model: Model) => Map<string, Record<string, number>>;
  /** Whether a char array field reads as a string (the default: only fields named `name`). */
  textField?: (field: string, elem: PrimName) => boolean;
  /**
   * Whether a non-const struct pointer is in/out: the caller may pass the struct (with the fields
   * C reads, such as NVML's selectors) and gets it back; without one a new struct is passed.
   */
  structPointersInOut?: boolean;
  /** A status with which in/out counts still come back (NVML_ERROR_INSUFFICIENT_SIZE: the size needed). */
  countStatus?: number;
}

export interface ApiConfig {
  /** folder under src/ and the name of its structs file: 'runtime', 'driver', 'nvrtc' */
  id: string;
  title: string;
  /** Headers parsed, in order (stand-ins for foreign headers first where a header needs them). */
  headers: string[];
  /** Headers whose functions are bound. */
  bindHeaders: string[];
  /** -D that selects the per-thread default stream variants. */
  perThreadDefine?: string;
  /** Whether a `static inline f(...) { return g(...); }` binds f to g's symbol (nvJitLink's `__nvJitLinkCreate_13_0`). */
  inlineWrappers?: boolean;
  /** Whether `#define name name_vN` renames (the driver's versioned symbols) are followed. */
  versionedSymbols: boolean;
  status: {
    type: string;
    enumTs: string;
    success: string;
    /** Statuses besides success whose outputs are valid (NCCL's ncclInProgress of a non-blocking communicator). */
    withOutputs?: string[];
  };
  spec: ApiSpec;
  /**
   * For a header that the development machine lacks: the file the generator writes from it (its
   * declarations, doc lines and #line marks), and parses instead when the header is absent.
   */
  reducedHeader?: string;
  /**
   * For a header that includes other APIs' headers (nccl.h includes cuda_runtime.h): bind only
   * what the API's own headers declare.
   */
  own?: {
    /** Functions of the own headers not bound (listed in `skipped` with the reason). */
    skipFunctions?: RegExp;
    /** Handle types of another API used in signatures: brand -> the module that exports it. */
    foreignHandles?: Record<string, string>;
    /** Lines the reduced header starts with, standing in for the foreign headers it needs. */
    preamble?: string[];
    /** Values of #define constants whose bodies the generator cannot evaluate (`INT_MIN`). */
    macroValues?: Record<string, string>;
    /** Lines written at the top of the facade (helpers of the extent expressions). */
    facadePrelude?: string[];
  };
  /** C lines the reduced header starts with: function-like macros its #defines use. */
  reducedPrelude?: string[];
  /** Which `#define name target` renames are followed (all, where absent). */
  renameFilter?: (name: string, target: string) => boolean;
  /** Whether a function bound under a `#define` name is also exported under its symbol (nvmlInit_v2). */
  symbolAliases?: boolean;
  /**
   * Enumerators and #define constants that hand-written ffi and struct code needs (the special
   * streams, launch-parameter markers): written to src/ffi/constants.gen.ts, which the ffi and
   * structs layers may import, as plain numbers and bigints.
   */
  ffiConstants?: string[];
  /** Report rows: what was not bound and why. */
  skipped: [string, string][];
}

/** A name re-exported by a namespace's index from a hand-written module (`type X` for a type). */
export interface Reexport {
  /** The module, relative to src/<id>/: '../ffi/kernel-args'. */
  from: string;
  names: string[];
}

/**
 * One library of the package: everything that lists libraries (the loader, the namespace's index, the
 * package root, the subpaths that package.json and typedoc.json must have) comes from these records
 * (tools/codegen/libraries.ts). In text that the loader writes (`linuxNames`, `windowsNames`, `hint`),
 * `${CUDA_MAJOR}` stands for the CUDA major version of the headers (src/ffi/versions.ts).
 */
export interface LibraryRecord {
  /** What the generator binds: the headers and the spec. `api.id` is the folder src/<id>/ and the subpath cuda-bindings/<id>. */
  api: ApiConfig;
  /**
   * The library's short name: its functions are `lib<name>` in src/ffi/<name>-lib.gen.ts (the loader),
   * its koffi declarations src/ffi/<name>.gen.ts: 'cudart', 'cuda', 'nvrtc'.
   */
  name: string;
  /** Its namespace on `cuda-bindings` (`cudart` for the runtime); `api.id` where absent. */
  namespace?: string;
  /** Whether `require('cuda-bindings')` loads the namespace at once (the runtime's); the others load on first use. */
  eager?: boolean;
  /** What messages call the file: 'libcudart'. */
  label: string;
  /** The variable that names the file to load: CUDA_BINDINGS_CUDART. */
  envVar: string;
  /** File names on Linux (soname first) and Windows. */
  linuxNames: string[];
  windowsNames: string[];
  /** Folders of a toolkit besides lib64, lib and bin where the library sits (libNVVM's nvvm/lib64). */
  toolkitDirs?: string[];
  /**
   * The folders of site-packages where NVIDIA's Python wheels put it, as on Linux ('nvidia/cu13/lib',
   * 'nvidia/cuda_runtime/lib'); a conda prefix and the toolkit's folders are searched with them.
   * Absent for the driver's libraries (libcuda, NVML), which only the driver installs.
   */
  wheelDirs?: string[];
  /** What to do when nothing loads: 'Install the NVIDIA driver (libcuda ships with it)'. */
  hint: string;
  /** How the opened library is recognised and its version checked (src/ffi/versions.ts). */
  check: VersionCheck;
  /** `int fn(int *version)` that gives the version once the library's own init ran (NVML's); libraryInfo() reads it. */
  versionAfterInit?: string;
  /** A line for the loader's opening comment: why its declarations must wait for the first call, where that is not plain. */
  loaderNote?: string;
  /** The facade's call that gives a status's text (`cudaGetErrorString`), which its checkCudaErrors puts in the error; absent where the library has none. */
  statusText?: string;
  /** The namespace's index, src/<id>/index.ts. */
  index: {
    /** Its module doc's lines (before `@module cuda-bindings/<id>`). */
    doc: string[];
    /** The doc line of its `libraryInfo()`. */
    libraryInfo: string;
    /** Whether src/<id>/helpers.ts (hand-written, what the headers have as macros or inline functions) is re-exported. */
    helpers?: boolean;
    /**
     * `async`, the namespace's promise forms: with `compile`, the generator writes src/<id>/async.gen.ts,
     * that function on the thread pool; without, the hand-written src/<id>/async.ts.
     */
    async?: { doc: string; compile?: string };
    /** Further names from hand-written modules, in order. */
    reexports?: Reexport[];
  };
}
