// libNVVM (nvvm.h): compiles NVVM IR (LLVM IR for CUDA, as text or bitcode) to PTX. The toolkit puts
// nvvm.h under include/ (or nvvm/include/); the generator also writes tools/codegen/nvvm-decls.h
// from it and parses that file where the header is absent, so a machine without the NVVM component
// regenerates the same bindings.
import type { ApiConfig, ParamSpec } from './apis';

const strings = (count: string): ParamSpec => ({ k: 'inArray', count, nullable: true });
const sized = (sizeFn: string): ParamSpec => ({ k: 'sizedOut', sizeFn, args: ['prog'] });

export const nvvmApi: ApiConfig = {
  id: 'nvvm',
  title: 'libNVVM API',
  headers: ['nvvm.h'],
  bindHeaders: ['nvvm.h'],
  versionedSymbols: false,
  status: { type: 'nvvmResult', enumTs: 'nvvmResult', success: 'NVVM_SUCCESS' },
  reducedHeader: 'tools/codegen/nvvm-decls.h',
  spec: {
    paramSpecs: {
      nvvmDestroyProgram: { prog: { k: 'inRef' } },
      // IR is text or bitcode (binary): `size` bytes of host memory, not a C string.
      nvvmAddModuleToProgram: { buffer: { k: 'pointer' } },
      nvvmLazyAddModuleToProgram: { buffer: { k: 'pointer' } },
      nvvmCompileProgram: { options: strings('numOptions') },
      nvvmVerifyProgram: { options: strings('numOptions') },
      // Every pointer C writes through, with its extent: the size call that says how many bytes.
      nvvmGetCompiledResult: { buffer: sized('nvvmGetCompiledResultSize') },
      nvvmGetProgramLog: { buffer: sized('nvvmGetProgramLogSize') },
    },
    extents: { nvvmAddModuleToProgram: { buffer: 'size' }, nvvmLazyAddModuleToProgram: { buffer: 'size' } },
    integerHandles: new Set(),
    attrTables: {},
    docs: {},
  },
  skipped: [],
};
