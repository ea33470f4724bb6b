// NVRTC (nvrtc.h). The header is not on the development machine: when it is found (CUDA_HOME, or
// NVRTC_HEADER naming the file), the generator parses it and writes tools/codegen/nvrtc-decls.h, the
// declarations it bound with their doc lines and #line marks; elsewhere it parses that file instead,
// so the bindings regenerate the same without the toolkit's header.
import type { ApiConfig, ParamSpec } from './apis';

const strings = (count: string): ParamSpec => ({ k: 'inArray', count, nullable: true });

export const nvrtcApi: ApiConfig = {
  id: 'nvrtc',
  title: 'NVRTC API',
  headers: ['nvrtc.h'],
  bindHeaders: ['nvrtc.h'],
  versionedSymbols: false,
  status: { type: 'nvrtcResult', enumTs: 'nvrtcResult', success: 'NVRTC_SUCCESS' },
  reducedHeader: 'tools/codegen/nvrtc-decls.h',
  spec: {
    paramSpecs: {
      nvrtcCreateProgram: { headers: strings('numHeaders'), includeNames: strings('numHeaders') },
      nvrtcCompileProgram: { options: strings('numOptions') },
      nvrtcDestroyProgram: { prog: { k: 'inRef' } },
      // As long as nvrtcGetNumSupportedArchs says: allocated inside and returned, as cuda-python does.
      nvrtcGetSupportedArchs: { supportedArchs: { k: 'queriedArray', query: 'nvrtcGetNumSupportedArchs', args: [] } },
    },
    extents: {},
    // The buffers these fill must be as large as the matching size call says.
    queried: Object.fromEntries(
      [
        ['nvrtcGetPTX', 'ptx'],
        ['nvrtcGetCUBIN', 'cubin'],
        ['nvrtcGetLTOIR', 'LTOIR'],
        ['nvrtcGetOptiXIR', 'optixir'],
        ['nvrtcGetProgramLog', 'log'],
      ].map(([fn, p]) => {
        const query = fn === 'nvrtcGetProgramLog' ? 'nvrtcGetProgramLogSize' : `${fn}Size`;
        return [fn, { [p]: { query, args: ['prog'] } }];
      }),
    ),
    notWritten: { nvrtcSetFlowCallback: { payload: 'handed back to the callback, never dereferenced by NVRTC' } },
    integerHandles: new Set(),
    attrTables: {},
    docs: {},
  },
  skipped: [['`nvrtcGetTypeName`', 'a C++ inline template in the header (needs RTTI of a C++ type), not exported by libnvrtc']],
};
