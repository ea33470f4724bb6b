// NVTX 3 without a native build. NVTX is header-only: its functions, on first use, load the tool
// named by NVTX_INJECTION64_PATH and call the tool's `InitializeInjectionNvtx2` with a function that
// hands out export tables; through them the tool writes its own functions into the application's
// table of function pointers, and from then on each NVTX call goes straight to the tool. This
// module plays the application's side with koffi: the export tables and the function-pointer slots
// live in memory that never moves, the two table functions are registered callbacks, and the tool's
// functions are called through koffi once it has filled the slots. Nothing is loaded until a tool
// is named; the layouts below are checked against the header by test/cpu/codegen/nvtx-layout.test.ts.
import koffi from 'koffi';
import type { LibraryHandle } from 'koffi' with { 'resolution-mode': 'import' };

/** What the NVTX 3 header lays out (x86-64 and AArch64), as g++ computes it from nvtx3/nvToolsExt.h. */
export const NVTX_LAYOUT = {
  /** NVTX_VERSION, which the version export table reports. */
  version: 3,
  /** nvtxEventAttributes_v2: its size and each field's offset. */
  eventAttributes: {
    size: 48,
    fields: { version: 0, size: 2, category: 4, colorType: 8, color: 12, payloadType: 16, payload: 24, messageType: 32, message: 40 },
  },
  /** NvtxExportTableCallbacks: { size_t struct_size; GetModuleFunctionTable }. */
  callbacks: { size: 16, fields: { struct_size: 0, GetModuleFunctionTable: 8 } },
  /** NvtxExportTableVersionInfo: { size_t struct_size; uint32_t version; uint32_t reserved0; SetInjectionNvtxVersion }. */
  versionInfo: { size: 24, fields: { struct_size: 0, version: 8, reserved0: 12, SetInjectionNvtxVersion: 16 } },
  /** NVTX_ETID_CALLBACKS and NVTX_ETID_VERSIONINFO. */
  exportTables: { callbacks: 1, versionInfo: 3 },
  /** Each NvtxCallbackModule's id and its NVTX_CBID_<module>_SIZE: its table has that many slots and a null after them. */
  modules: { core: [1, 16], cuda: [2, 9], opencl: [3, 15], cudart: [4, 7], core2: [5, 16], sync: [6, 7] },
} as const;

/** The NvtxCallbackIdCore entries this module calls. */
export const CORE = {
  MarkEx: 1,
  MarkA: 2,
  RangeStartEx: 4,
  RangeStartA: 5,
  RangeEnd: 7,
  RangePushEx: 8,
  RangePushA: 9,
  RangePop: 11,
  NameCategoryA: 12,
} as const;
/** The NvtxCallbackIdCore2 entries this module calls. */
export const CORE2 = {
  DomainMarkEx: 1,
  DomainRangeStartEx: 2,
  DomainRangeEnd: 3,
  DomainRangePushEx: 4,
  DomainRangePop: 5,
  DomainNameCategoryA: 8,
  DomainRegisterStringA: 10,
  DomainCreateA: 12,
  DomainDestroy: 14,
} as const;

type Fn = (...args: unknown[]) => unknown;

/** The tool's functions, where it installed them (null where it did not: the call is then a no-op, as in the header). */
export interface NvtxTool {
  /** The injection library's path. */
  readonly path: string;
  /** The NVTX version the tool said it was written for (SetInjectionNvtxVersion), or 0. */
  readonly toolVersion: number;
  /** Core functions by name (nvtxMarkA, nvtxRangePushEx, …), or null when the tool left the slot empty. */
  readonly core: { readonly [K in keyof typeof CORE]: Fn | null };
  /** Domain functions by name (nvtxDomainCreateA, nvtxDomainRangePushEx, …), or null. */
  readonly core2: { readonly [K in keyof typeof CORE2]: Fn | null };
}

const PROTOS: Record<keyof typeof CORE | keyof typeof CORE2, string> = {
  MarkEx: 'void nvtxMarkEx(const void *attr)',
  MarkA: 'void nvtxMarkA(const char *message)',
  RangeStartEx: 'uint64_t nvtxRangeStartEx(const void *attr)',
  RangeStartA: 'uint64_t nvtxRangeStartA(const char *message)',
  RangeEnd: 'void nvtxRangeEnd(uint64_t id)',
  RangePushEx: 'int nvtxRangePushEx(const void *attr)',
  RangePushA: 'int nvtxRangePushA(const char *message)',
  RangePop: 'int nvtxRangePop(void)',
  NameCategoryA: 'void nvtxNameCategoryA(uint32_t category, const char *name)',
  DomainMarkEx: 'void nvtxDomainMarkEx(void *domain, const void *attr)',
  DomainRangeStartEx: 'uint64_t nvtxDomainRangeStartEx(void *domain, const void *attr)',
  DomainRangeEnd: 'void nvtxDomainRangeEnd(void *domain, uint64_t id)',
  DomainRangePushEx: 'int nvtxDomainRangePushEx(void *domain, const void *attr)',
  DomainRangePop: 'int nvtxDomainRangePop(void *domain)',
  DomainNameCategoryA: 'void nvtxDomainNameCategoryA(void *domain, uint32_t category, const char *name)',
  DomainRegisterStringA: 'void *nvtxDomainRegisterStringA(void *domain, const char *string)',
  DomainCreateA: 'void *nvtxDomainCreateA(const char *name)',
  DomainDestroy: 'void nvtxDomainDestroy(void *domain)',
};

/** `text` as a NUL-terminated UTF-8 string and its address (for an event's message): keep `bytes` referenced while C may read it. */
export function cString(text: string): { bytes: Buffer; address: bigint } {
  const bytes = Buffer.from(`${text}\0`, 'utf8');
  return { bytes, address: koffi.address(bytes) as bigint };
}

/** Memory that never moves and is never freed: the tool may keep pointers into it for the life of the process. */
const kept: unknown[] = [];
function fixed(words: number): BigUint64Array {
  const a = new BigUint64Array(new ArrayBuffer(words * 8));
  kept.push(a);
  return a;
}

/**
 * Loads the tool at `path` and lets it install its functions, as the header's nvtxInitOnce does.
 * Throws Error naming the path when the library cannot be loaded, lacks InitializeInjectionNvtx2,
 * or its initialisation returns 0.
 */
export function attachNvtxTool(path: string): NvtxTool {
  let lib: LibraryHandle;
  try {
    lib = koffi.load(path);
  } catch (e) {
    throw new Error(`nvtx: cannot load the tool named by NVTX_INJECTION64_PATH (${path}): ${(e as Error).message}`, { cause: e });
  }
  let init: Fn;
  try {
    init = lib.func('int InitializeInjectionNvtx2(void *getExportTable)') as Fn;
  } catch (e) {
    throw new Error(`nvtx: the tool ${path} does not export InitializeInjectionNvtx2, so it is not an NVTX injection library`, {
      cause: e,
    });
  }
  const L = NVTX_LAYOUT;
  // One slot per callback id of each module, and a table of pointers to them (null first and last).
  const tables = new Map<number, { slots: BigUint64Array; table: BigUint64Array; size: number }>();
  for (const [id, size] of Object.values(L.modules)) {
    const slots = fixed(size);
    const table = fixed(size + 1);
    const base = koffi.address(slots) as bigint;
    for (let i = 1; i < size; i++) table[i] = base + BigInt(8 * i);
    tables.set(id, { slots, table, size });
  }
  let toolVersion = 0;
  const getModuleFunctionTable = koffi.register(
    (module: number, outTable: bigint | null, outSize: bigint | null): number => {
      const t = tables.get(module);
      if (!t) return 0;
      if (outSize) koffi.encode(outSize, 'uint32_t', t.size);
      if (outTable) koffi.encode(outTable, 'uint64_t', koffi.address(t.table) as bigint);
      return 1;
    },
    koffi.pointer(koffi.proto('int NvtxGetModuleFunctionTable(int module, void *outTable, void *outSize)')),
  ) as bigint;
  const setVersion = koffi.register(
    (v: number): void => void (toolVersion = v),
    koffi.pointer(koffi.proto('void NvtxSetInjectionNvtxVersion(uint32_t version)')),
  ) as bigint;
  const callbacks = fixed(L.callbacks.size / 8);
  callbacks[0] = BigInt(L.callbacks.size);
  callbacks[1] = getModuleFunctionTable;
  const versionInfo = fixed(L.versionInfo.size / 8);
  versionInfo[0] = BigInt(L.versionInfo.size);
  versionInfo[1] = BigInt(L.version); // version in the low 32 bits, reserved0 in the high
  versionInfo[2] = setVersion;
  const getExportTable = koffi.register(
    (id: number): bigint | null =>
      id === L.exportTables.callbacks
        ? (koffi.address(callbacks) as bigint)
        : id === L.exportTables.versionInfo
          ? (koffi.address(versionInfo) as bigint)
          : null,
    koffi.pointer(koffi.proto('const void *NvtxGetExportTable(uint32_t exportTableId)')),
  ) as bigint;
  kept.push(lib, getModuleFunctionTable, setVersion, getExportTable);
  if (!init(getExportTable)) throw new Error(`nvtx: the tool ${path} refused to attach (InitializeInjectionNvtx2 returned 0)`);
  const fns = <T extends Record<string, number>>(module: number, ids: T): { [K in keyof T]: Fn | null } => {
    const slots = tables.get(module)!.slots;
    const out = {} as { [K in keyof T]: Fn | null };
    for (const [name, id] of Object.entries(ids) as [keyof T & string, number][])
      out[name] = slots[id] ? (koffi.decode(slots[id], koffi.proto(PROTOS[name as keyof typeof PROTOS])) as Fn) : null;
    return out;
  };
  return { path, toolVersion, core: fns(L.modules.core[0], CORE), core2: fns(L.modules.core2[0], CORE2) };
}
