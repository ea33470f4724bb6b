// nvJitLink (nvJitLink.h): the link-time optimising linker. The header is not on the development
// machine: with it (NVJITLINK_HEADER naming the file, or under CUDA_HOME) the generator parses it and
// writes tools/codegen/nvjitlink-decls.h; elsewhere it parses that file. Each function is a static
// inline wrapper around a versioned export (`nvJitLinkCreate` calls `__nvJitLinkCreate_13_0`); the
// bindings call the export, as the wrapper would.
import type { ApiConfig, ParamSpec } from './apis';

const sized = (sizeFn: string): ParamSpec => ({ k: 'sizedOut', sizeFn, args: ['handle'] });

export const nvjitlinkApi: ApiConfig = {
  id: 'nvjitlink',
  title: 'nvJitLink API',
  headers: ['nvJitLink.h'],
  bindHeaders: ['nvJitLink.h'],
  inlineWrappers: true,
  versionedSymbols: false,
  status: { type: 'nvJitLinkResult', enumTs: 'nvJitLinkResult', success: 'NVJITLINK_SUCCESS' },
  reducedHeader: 'tools/codegen/nvjitlink-decls.h',
  spec: {
    paramSpecs: {
      nvJitLinkCreate: { options: { k: 'inArray', count: 'numOptions', nullable: true } },
      nvJitLinkDestroy: { handle: { k: 'inRef' } },
      // Every pointer C writes through, with its extent: the size call that says how many bytes.
      nvJitLinkGetLinkedCubin: { cubin: sized('nvJitLinkGetLinkedCubinSize') },
      nvJitLinkGetLinkedPtx: { ptx: sized('nvJitLinkGetLinkedPtxSize') },
      nvJitLinkGetErrorLog: { log: sized('nvJitLinkGetErrorLogSize') },
      nvJitLinkGetInfoLog: { log: sized('nvJitLinkGetInfoLogSize') },
    },
    // Host memory C reads: the input image is `size` bytes.
    extents: { nvJitLinkAddData: { data: 'size' } },
    integerHandles: new Set(),
    attrTables: {},
    docs: {},
  },
  skipped: [],
};
