// The APIs the generator writes, each from its headers into its own folder.
import type { ParamSpec } from './runtime-spec';
import type { ExtentTables } from './extents';

/**
 * What the headers cannot say about an API (see runtime-spec.ts for what each table means, and
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
  /** Whether `#define name name_vN` renames (the driver's versioned symbols) are followed. */
  versionedSymbols: boolean;
  status: { type: string; enumTs: string; success: string };
  /** The generated koffi declarations file. */
  ffi: string;
  /** The hand-written module that opens the library, and its accessor. */
  lib: { module: string; fn: string };
  libLabel: string;
  spec: ApiSpec;
  /**
   * For a header that the development machine lacks: the file the generator writes from it (its
   * declarations, doc lines and #line marks), and parses instead when the header is absent.
   */
  reducedHeader?: string;
  /** Report rows: what was not bound and why. */
  skipped: [string, string][];
}
