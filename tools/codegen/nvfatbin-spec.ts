// nvFatbin (nvFatbin.h): builds fat binaries from cubins, PTX and LTO-IR. The header is not on the
// development machine: with it (NVFATBIN_HEADER, or under CUDA_HOME) the generator parses it and
// writes tools/codegen/nvfatbin-decls.h; elsewhere it parses that file.
import type { ApiConfig } from './apis';

export const nvfatbinApi: ApiConfig = {
  id: 'nvfatbin',
  title: 'nvFatbin API',
  headers: ['nvFatbin.h'],
  bindHeaders: ['nvFatbin.h'],
  versionedSymbols: false,
  status: { type: 'nvFatbinResult', enumTs: 'nvFatbinResult', success: 'NVFATBIN_SUCCESS' },
  reducedHeader: 'tools/codegen/nvfatbin-decls.h',
  spec: {
    paramSpecs: {
      nvFatbinCreate: { options: { k: 'inArray', count: 'optionsCount', nullable: true } },
      nvFatbinDestroy: { handle_indirect: { k: 'inRef' } },
      // PTX is text, but `size` bytes of it are read: host memory, like the binary inputs.
      nvFatbinAddPTX: { code: { k: 'pointer' } },
      // The one pointer C writes through: as many bytes as nvFatbinSize reports.
      nvFatbinGet: { buffer: { k: 'sizedOut', sizeFn: 'nvFatbinSize', args: ['handle'] } },
    },
    // Host memory C reads: each input is `size` bytes.
    extents: {
      nvFatbinAddPTX: { code: 'size' },
      nvFatbinAddCubin: { code: 'size' },
      nvFatbinAddLTOIR: { code: 'size' },
      nvFatbinAddIndex: { code: 'size' },
      nvFatbinAddReloc: { code: 'size' },
    },
    integerHandles: new Set(),
    attrTables: {},
    docs: {},
  },
  skipped: [],
};
