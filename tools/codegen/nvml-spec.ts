// NVML (nvml.h), the library behind nvidia-smi. The header is not on the development machine: with
// NVML_HEADER naming it (or nvml.h in the toolkit's include folder) the generator parses it and writes
// tools/codegen/nvml-decls.h, its enums, structs, typedefs, functions and #defines with their doc
// lines and #line marks; elsewhere it parses that file, so the bindings regenerate the same.
//
// What the C types cannot say, below: which pointers are arrays and which count goes with them,
// which `char *` is a string of how many bytes, which structs C reads as well as writes. Every
// pointer C writes through has a known extent: a length or count argument (`outString`,
// `outArray`, `inoutArray`, `extents`), or the size of the struct or scalar it points to.
import type { ApiConfig, ParamSpec } from './apis';
import type { MacroModel, Model } from './model';

const outArr = (count: string, countMode: 'inout' | 'in' = 'inout'): ParamSpec => ({ k: 'outArray', count, countMode });
const str = (len: string): ParamSpec => ({ k: 'outString', len });

/** `char *buf, unsigned int length`: strings of the length passed. */
const strings: [fn: string, buf: string, len: string][] = [
  ['nvmlSystemGetDriverVersion', 'version', 'length'],
  ['nvmlSystemGetNVMLVersion', 'version', 'length'],
  ['nvmlSystemGetProcessName', 'name', 'length'],
  ['nvmlDeviceGetName', 'name', 'length'],
  ['nvmlDeviceGetSerial', 'serial', 'length'],
  ['nvmlDeviceGetUUID', 'uuid', 'length'],
  ['nvmlDeviceGetBoardPartNumber', 'partNumber', 'length'],
  ['nvmlDeviceGetInforomVersion', 'version', 'length'],
  ['nvmlDeviceGetInforomImageVersion', 'version', 'length'],
  ['nvmlDeviceGetVbiosVersion', 'version', 'length'],
  ['nvmlVgpuTypeGetLicense', 'vgpuTypeLicenseString', 'size'],
  ['nvmlVgpuInstanceGetVmID', 'vmId', 'size'],
  ['nvmlVgpuInstanceGetUUID', 'uuid', 'size'],
  ['nvmlVgpuInstanceGetVmDriverVersion', 'version', 'length'],
  ['nvmlVgpuInstanceGetMdevUUID', 'mdevUuid', 'size'],
];

/** `char *buf, unsigned int *size`: the size goes in and comes back; the buffer holds at least `size` bytes. */
const sizedBuffers: [fn: string, buf: string, size: string][] = [
  ['nvmlVgpuTypeGetClass', 'vgpuTypeClass', 'size'],
  ['nvmlVgpuTypeGetName', 'vgpuTypeName', 'size'],
  ['nvmlVgpuInstanceGetGpuPciId', 'vgpuPciId', 'length'],
  ['nvmlDeviceGetPgpuMetadataString', 'pgpuMetadata', 'bufferSize'],
];

/** `unsigned int *count` with arrays of that many elements: a capacity goes in, the count comes back. */
const arrays: [fn: string, arrays: string[], count: string][] = [
  ['nvmlSystemGetHicVersion', ['hwbcEntries'], 'hwbcCount'],
  ['nvmlSystemGetTopologyGpuSet', ['deviceArray'], 'count'],
  ['nvmlUnitGetDevices', ['devices'], 'deviceCount'],
  ['nvmlDeviceGetTopologyNearestGpus', ['deviceArray'], 'count'],
  ['nvmlDeviceGetSupportedMemoryClocks', ['clocksMHz'], 'count'],
  ['nvmlDeviceGetSupportedGraphicsClocks', ['clocksMHz'], 'count'],
  ['nvmlDeviceGetEncoderSessions', ['sessionInfos'], 'sessionCount'],
  ['nvmlDeviceGetFBCSessions', ['sessionInfo'], 'sessionCount'],
  ['nvmlDeviceGetComputeRunningProcesses', ['infos'], 'infoCount'],
  ['nvmlDeviceGetGraphicsRunningProcesses', ['infos'], 'infoCount'],
  ['nvmlDeviceGetMPSComputeRunningProcesses', ['infos'], 'infoCount'],
  ['nvmlDeviceGetSamples', ['samples'], 'sampleCount'],
  ['nvmlDeviceGetAccountingPids', ['pids'], 'count'],
  ['nvmlDeviceGetRetiredPages', ['addresses'], 'pageCount'],
  ['nvmlDeviceGetRetiredPages_v2', ['addresses', 'timestamps'], 'pageCount'],
  ['nvmlDeviceGetProcessUtilization', ['utilization'], 'processSamplesCount'],
  ['nvmlDeviceGetSupportedVgpus', ['vgpuTypeIds'], 'vgpuCount'],
  ['nvmlDeviceGetCreatableVgpus', ['vgpuTypeIds'], 'vgpuCount'],
  ['nvmlDeviceGetActiveVgpus', ['vgpuInstances'], 'vgpuCount'],
  ['nvmlVgpuInstanceGetEncoderSessions', ['sessionInfo'], 'sessionCount'],
  ['nvmlVgpuInstanceGetFBCSessions', ['sessionInfo'], 'sessionCount'],
  ['nvmlDeviceGetVgpuUtilization', ['utilizationSamples'], 'vgpuInstanceSamplesCount'],
  ['nvmlDeviceGetVgpuProcessUtilization', ['utilizationSamples'], 'vgpuProcessSamplesCount'],
  ['nvmlVgpuInstanceGetAccountingPids', ['pids'], 'count'],
  ['nvmlDeviceGetGpuInstancePossiblePlacements', ['placements'], 'count'],
  ['nvmlDeviceGetGpuInstances', ['gpuInstances'], 'count'],
  ['nvmlGpuInstanceGetComputeInstancePossiblePlacements', ['placements'], 'count'],
  ['nvmlGpuInstanceGetComputeInstances', ['computeInstances'], 'count'],
];

const paramSpecs: Record<string, Record<string, ParamSpec>> = {
  // NVML_GSP_FIRMWARE_VERSION_BUF_SIZE (0x40) bytes, as the header documents.
  nvmlDeviceGetGspFirmwareVersion: { version: { k: 'outString', len: '', size: 0x40 } },
  // Bitmasks of `size` unsigned longs.
  nvmlDeviceGetMemoryAffinity: { nodeSet: outArr('nodeSetSize', 'in') },
  nvmlDeviceGetCpuAffinityWithinScope: { cpuSet: outArr('cpuSetSize', 'in') },
  nvmlDeviceGetCpuAffinity: { cpuSet: outArr('cpuSetSize', 'in') },
  // `size` is in bytes: the caller passes an Int32Array (NVML_MAX_GPU_PERF_PSTATES entries) and its byteLength.
  nvmlDeviceGetSupportedPerformanceStates: { pstates: { k: 'pointer' } },
  // Each value's fieldId (and scopeId) goes in, its value comes back.
  nvmlDeviceGetFieldValues: { values: { k: 'inoutArray', count: 'valuesCount' } },
  nvmlDeviceClearFieldValues: { values: { k: 'inoutArray', count: 'valuesCount' } },
  // The value to set, passed by reference.
  nvmlDeviceSetTemperatureThreshold: { temp: { k: 'inout' } },
  // The struct's bytes, of which C fills `bufferSize`: in and out.
  nvmlVgpuInstanceGetMetadata: { bufferSize: { k: 'inout' } },
  nvmlDeviceGetVgpuMetadata: { bufferSize: { k: 'inout' } },
};
for (const [fn, buf, len] of strings) paramSpecs[fn] = { ...paramSpecs[fn], [buf]: str(len) };
for (const [fn, buf, size] of sizedBuffers) paramSpecs[fn] = { ...paramSpecs[fn], [buf]: { k: 'pointer' }, [size]: { k: 'inout' } };
for (const [fn, arrs, count] of arrays) for (const a of arrs) paramSpecs[fn] = { ...paramSpecs[fn], [a]: outArr(count) };

const extents: Record<string, Record<string, string>> = {
  ...Object.fromEntries(sizedBuffers.map(([fn, buf, size]) => [fn, { [buf]: size }])),
  nvmlDeviceGetSupportedPerformanceStates: { pstates: 'size' },
};

/** Buffers whose size C takes from an argument that must not exceed the struct passed. */
const structLimit = (fn: string, struct: string, p: string, size: string) =>
  `if (a_${size} > S.${struct}.layout.size) M.rangeError('${fn}', '${size}', \`is \${a_${size}} bytes but ${p} (a ${struct}) holds \${S.${struct}.layout.size}\`);`;

/** `#define nvmlPciInfoExt_v1 NVML_STRUCT_VERSION(PciInfoExt, 1)`: sizeof(nvmlPciInfoExt_v1_t) | 1 << 24. */
function structVersion(m: MacroModel, model: Model): { struct: string; value: number } | undefined {
  const v = /^NVML_STRUCT_VERSION\(\s*(\w+)\s*,\s*(\d+)\s*\)$/.exec(m.body);
  if (!v) return undefined;
  const struct = `nvml${v[1]}_v${v[2]}_t`;
  const rec = model.records.get(struct) ?? [...model.records.values()].find((r) => r.typedefs.includes(struct) || r.name === struct);
  if (!rec) throw new Error(`codegen: ${m.name}: no struct ${struct}`);
  return { struct: rec.name, value: (rec.size | (Number(v[2]) << 24)) >>> 0 };
}

/** The literal a #define stands for, following #defines of #defines (the ThrottleReason aliases). */
function literalOf(name: string, model: Model, depth = 0): string | undefined {
  const m = model.macros.find((x) => x.name === name);
  if (!m || depth > 4) return undefined;
  const lit = /^\(*\s*(?:\(\w+\)\s*)?(-?(?:0x[0-9a-fA-F]+|\d+))[uUlL]*\s*\)*$/.exec(m.body);
  if (lit) return String(BigInt(lit[1]));
  return /^\w+$/.test(m.body) ? literalOf(m.body, model, depth + 1) : undefined;
}

export const nvmlApi: ApiConfig = {
  id: 'nvml',
  title: 'NVML API',
  headers: ['nvml.h'],
  bindHeaders: ['nvml.h'],
  versionedSymbols: true,
  symbolAliases: true,
  // `#define nvmlInit nvmlInit_v2` is followed; `#define nvmlGetBlacklistDeviceCount nvmlGetExcludedDeviceCount`
  // (an old name of a current function) is not.
  renameFilter: (name, target) => target.startsWith(`${name}_v`),
  status: { type: 'nvmlReturn_t', enumTs: 'nvmlReturn_t', success: 'NVML_SUCCESS' },
  reducedHeader: 'tools/codegen/nvml-decls.h',
  reducedPrelude: ['#define NVML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(nvml ## data ## _v ## ver ## _t) | (ver << 24U))'],
  spec: {
    paramSpecs,
    extents,
    integerHandles: new Set(),
    attrTables: {},
    docs: {},
    checks: {
      nvmlVgpuInstanceGetMetadata: [structLimit('nvmlVgpuInstanceGetMetadata', 'nvmlVgpuMetadata_t', 'vgpuMetadata', 'bufferSize')],
      nvmlDeviceGetVgpuMetadata: [structLimit('nvmlDeviceGetVgpuMetadata', 'nvmlVgpuPgpuMetadata_t', 'pgpuMetadata', 'bufferSize')],
      // `length` is the room for the branch string inside the struct.
      nvmlSystemGetDriverBranch: [
        `if (a_length > S.nvmlSystemDriverBranchInfo_v1_t.layout.fields.branch.size) M.rangeError('nvmlSystemGetDriverBranch', 'length', \`is \${a_length} but branchInfo.branch holds \${S.nvmlSystemDriverBranchInfo_v1_t.layout.fields.branch.size} bytes\`);`,
      ],
    },
    macroValue(m, model) {
      const sv = structVersion(m, model);
      if (sv) return { expr: `0x${sv.value.toString(16)}`, value: String(sv.value) };
      if (/^\w+$/.test(m.body) && !model.enumerators.has(m.body)) {
        const lit = literalOf(m.body, model);
        if (lit !== undefined) return { expr: lit, value: lit };
      }
      return undefined;
    },
    structDefaults(model) {
      const out = new Map<string, Record<string, number>>();
      for (const m of model.macros) {
        const sv = structVersion(m, model);
        const rec = sv && [...model.records.values()].find((r) => r.name === sv.struct);
        if (sv && rec?.fields[0]?.name === 'version') out.set(sv.struct, { version: sv.value });
      }
      return out;
    },
    // NVML's char arrays are text (names, UUIDs, bus ids, versions); unsigned char ones, and the
    // opaque tails of the vGPU metadata structs, are bytes.
    textField: (field, elem) => elem === 'char' && !/^opaque/.test(field),
    structPointersInOut: true,
    countStatus: 7, // NVML_ERROR_INSUFFICIENT_SIZE
  },
  skipped: [
    [
      'the 23 declarations under `#ifdef NVML_NO_UNVERSIONED_FUNC_DEFS` (`nvmlInit` as the `nvmlInit` symbol, `nvmlDeviceGetPciInfo_v2`, `nvmlDeviceGetComputeRunningProcesses_v2`, `nvmlDeviceGetGridLicensableFeatures_v3`, …)',
      'older ABI versions, compiled only when a program asks for them; the default names call the current symbols (`nvmlInit` → `nvmlInit_v2`), as programs built against this header do',
    ],
  ],
};
