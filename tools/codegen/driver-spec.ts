// What cuda.h cannot say about the driver API (see tools/codegen/README.md for what each table means).
import type { ApiConfig, ParamSpec } from './apis';
import type { ExtentBytes } from './extents';

const inArr = (count: string, nullable = true): ParamSpec => ({ k: 'inArray', count, nullable });
const outArr = (count: string, countMode: 'inout' | 'in' = 'inout'): ParamSpec => ({ k: 'outArray', count, countMode });
const dep = { dependencies: inArr('numDependencies') };
const jit = { options: inArr('numOptions'), optionValues: inArr('numOptions') };
const lib = {
  jitOptions: inArr('numJitOptions'),
  jitOptionsValues: inArr('numJitOptions'),
  libraryOptions: inArr('numLibraryOptions'),
  libraryOptionValues: inArr('numLibraryOptions'),
};
const batch = { dptrs: inArr('count', false), sizes: inArr('count', false) };
const prefetch = { ...batch, prefetchLocs: inArr('numPrefetchLocs', false), prefetchLocIdxs: inArr('numPrefetchLocs', false) };

const paramSpecs: Record<string, Record<string, ParamSpec>> = {
  cuDeviceGetName: { name: { k: 'outString', len: 'len' } },
  cuDeviceGetPCIBusId: { pciBusId: { k: 'outString', len: 'len' } },
  cuDeviceGetLuid: { luid: { k: 'outBytes', size: 8 } },
  cuDeviceGetHostAtomicCapabilities: { capabilities: outArr('count', 'in'), operations: inArr('count', false) },
  cuDeviceGetP2PAtomicCapabilities: { capabilities: outArr('count', 'in'), operations: inArr('count', false) },
  cuCtxCreate: { ctxCreateParams: { k: 'inStruct' } },
  // The checkpoint calls' args are inputs (a lock's timeout, a restore's GPU pairs), optional (NULL).
  cuCheckpointProcessLock: { args: { k: 'inStruct' } },
  cuCheckpointProcessCheckpoint: { args: { k: 'inStruct' } },
  cuCheckpointProcessRestore: { args: { k: 'inStruct' } },
  cuCheckpointProcessUnlock: { args: { k: 'inStruct' } },
  cuModuleLoadDataEx: jit,
  cuModuleEnumerateFunctions: { functions: outArr('numFunctions', 'in') },
  cuLinkCreate: jit,
  cuLinkAddData: jit,
  cuLinkAddFile: jit,
  cuLibraryLoadData: lib,
  cuLibraryLoadFromFile: lib,
  cuLibraryEnumerateKernels: { kernels: outArr('numKernels', 'in') },
  cuMemcpyBatchAsync: {
    dsts: inArr('count', false),
    srcs: inArr('count', false),
    sizes: inArr('count', false),
    attrs: inArr('numAttrs', false),
    attrsIdxs: inArr('numAttrs', false),
  },
  cuMemcpy3DBatchAsync: { opList: inArr('numOps', false) },
  cuMemBatchDecompressAsync: { paramsArray: inArr('count', false) },
  cuMemMapArrayAsync: { mapInfoList: inArr('count', false) },
  cuMemSetAccess: { desc: inArr('count', false) },
  cuMemPoolSetAccess: { map: inArr('count', false) },
  cuMemPoolGetAccess: { location: { k: 'inStruct' } },
  cuMemGetDefaultMemPool: { location: { k: 'inStruct' } },
  cuMemGetMemPool: { location: { k: 'inStruct' } },
  cuMemSetMemPool: { location: { k: 'inStruct' } },
  cuMemPoolImportPointer: { shareData: { k: 'inStruct' } },
  cuMemPoolSetAttribute: { value: { k: 'attr', attr: 'attr', table: 'memPoolAttr', dir: 'in' } },
  cuMemPoolGetAttribute: { value: { k: 'attr', attr: 'attr', table: 'memPoolAttr', dir: 'out' } },
  cuDeviceSetGraphMemAttribute: { value: { k: 'attr', attr: 'attr', table: 'graphMemAttr', dir: 'in' } },
  cuDeviceGetGraphMemAttribute: { value: { k: 'attr', attr: 'attr', table: 'graphMemAttr', dir: 'out' } },
  cuPointerGetAttribute: { data: { k: 'attr', attr: 'attribute', table: 'pointerAttr', dir: 'out' } },
  cuPointerGetAttributes: { attributes: inArr('numAttributes', false), data: inArr('numAttributes', false) },
  cuMemPrefetchBatchAsync: prefetch,
  cuMemDiscardBatchAsync: batch,
  cuMemDiscardAndPrefetchBatchAsync: prefetch,
  cuMemRangeGetAttribute: { data: { k: 'rangeAttr', size: 'dataSize', attr: 'attribute' } },
  cuMemRangeGetAttributes: {
    data: inArr('numAttributes', false),
    dataSizes: inArr('numAttributes', false),
    attributes: inArr('numAttributes', false),
  },
  cuStreamBeginCaptureToGraph: { dependencies: inArr('numDependencies'), dependencyData: inArr('numDependencies') },
  cuStreamGetCaptureInfo: {
    dependencies_out: { k: 'borrowedArray', count: 'numDependencies_out' },
    edgeData_out: { k: 'borrowedArray', count: 'numDependencies_out' },
  },
  cuStreamUpdateCaptureDependencies: { dependencies: inArr('numDependencies'), dependencyData: inArr('numDependencies') },
  cuThreadExchangeStreamCaptureMode: { mode: { k: 'inout' } },
  cuSignalExternalSemaphoresAsync: { extSemArray: inArr('numExtSems', false), paramsArray: inArr('numExtSems', false) },
  cuWaitExternalSemaphoresAsync: { extSemArray: inArr('numExtSems', false), paramsArray: inArr('numExtSems', false) },
  cuStreamBatchMemOp: { paramArray: inArr('count', false) },
  cuLaunchHostFunc: { fn: { k: 'hostFn', kind: 'hostFn', stream: 'hStream' } },
  cuStreamAddCallback: { callback: { k: 'hostFn', kind: 'streamCallback', stream: 'hStream' } },
  cuLaunchKernel: { kernelParams: { k: 'kernelArgs' }, extra: { k: 'pointer' } },
  cuLaunchCooperativeKernel: { kernelParams: { k: 'kernelArgs' } },
  cuLaunchKernelEx: { kernelParams: { k: 'kernelArgs' }, extra: { k: 'pointer' } },
  cuLaunchCooperativeKernelMultiDevice: { launchParamsList: inArr('numDevices', false) },
  cuGraphAddKernelNode: dep,
  cuGraphAddMemcpyNode: dep,
  cuGraphAddMemsetNode: dep,
  cuGraphAddHostNode: dep,
  cuGraphAddChildGraphNode: dep,
  cuGraphAddEmptyNode: dep,
  cuGraphAddEventRecordNode: dep,
  cuGraphAddEventWaitNode: dep,
  cuGraphAddExternalSemaphoresSignalNode: dep,
  cuGraphAddExternalSemaphoresWaitNode: dep,
  cuGraphAddBatchMemOpNode: dep,
  cuGraphAddMemAllocNode: { ...dep, nodeParams: { k: 'inStruct' } },
  cuGraphAddMemFreeNode: dep,
  cuGraphAddNode: { ...dep, dependencyData: inArr('numDependencies'), nodeParams: { k: 'inStruct' } },
  cuGraphNodeSetParams: { nodeParams: { k: 'inStruct' } },
  cuGraphExecNodeSetParams: { nodeParams: { k: 'inStruct' } },
  cuGraphInstantiateWithParams: { instantiateParams: { k: 'inStruct' } },
  cuGraphGetNodes: { nodes: outArr('numNodes') },
  cuGraphGetRootNodes: { rootNodes: outArr('numRootNodes') },
  cuGraphGetEdges: { from: outArr('numEdges'), to: outArr('numEdges'), edgeData: outArr('numEdges') },
  cuGraphNodeGetDependencies: { dependencies: outArr('numDependencies'), edgeData: outArr('numDependencies') },
  cuGraphNodeGetDependentNodes: { dependentNodes: outArr('numDependentNodes'), edgeData: outArr('numDependentNodes') },
  cuGraphAddDependencies: {
    from: inArr('numDependencies', false),
    to: inArr('numDependencies', false),
    edgeData: inArr('numDependencies'),
  },
  cuGraphRemoveDependencies: {
    from: inArr('numDependencies', false),
    to: inArr('numDependencies', false),
    edgeData: inArr('numDependencies'),
  },
  cuGraphicsMapResources: { resources: inArr('count', false) },
  cuGraphicsUnmapResources: { resources: inArr('count', false) },
  cuLogsDumpToFile: { iterator: { k: 'inout' } },
  cuLogsDumpToMemory: { iterator: { k: 'inout' }, buffer: { k: 'pointer' }, size: { k: 'inout' } },
  cuDevResourceGenerateDesc: { resources: inArr('nbResources', false) },
  cuDevSmResourceSplitByCount: { result: { k: 'pointer' }, nbGroups: { k: 'inout' }, input: { k: 'inStruct' } },
  cuGLGetDevices: { pCudaDevices: outArr('cudaDeviceCount', 'in') },
  cuCoredumpGetAttribute: { value: { k: 'pointer' }, size: { k: 'inout' } },
  cuCoredumpGetAttributeGlobal: { value: { k: 'pointer' }, size: { k: 'inout' } },
  cuCoredumpSetAttribute: { value: { k: 'pointer' }, size: { k: 'inout' } },
  cuCoredumpSetAttributeGlobal: { value: { k: 'pointer' }, size: { k: 'inout' } },
  cuEGLStreamConsumerDisconnect: { conn: { k: 'inout' } },
  cuEGLStreamConsumerAcquireFrame: { conn: { k: 'inout' }, pCudaResource: { k: 'inout' }, pStream: { k: 'inout' } },
  cuEGLStreamConsumerReleaseFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
  cuEGLStreamProducerDisconnect: { conn: { k: 'inout' } },
  cuEGLStreamProducerPresentFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
  cuEGLStreamProducerReturnFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
};

const extents: Record<string, Record<string, ExtentBytes>> = {
  cuMemcpyHtoD: { srcHost: 'ByteCount' },
  cuMemcpyHtoDAsync: { srcHost: 'ByteCount' },
  cuMemcpyDtoH: { dstHost: 'ByteCount' },
  cuMemcpyDtoHAsync: { dstHost: 'ByteCount' },
  cuMemcpyHtoA: { srcHost: 'ByteCount' },
  cuMemcpyHtoAAsync: { srcHost: 'ByteCount' },
  cuMemcpyAtoH: { dstHost: 'ByteCount' },
  cuMemcpyAtoHAsync: { dstHost: 'ByteCount' },
  cuMemHostRegister: { p: 'bytesize' },
  cuLinkAddData: { data: 'size' },
  cuLogsDumpToMemory: { buffer: 'size' },
  cuParamSetv: { ptr: 'numbytes' },
  cuCoredumpGetAttribute: { value: 'size' },
  cuCoredumpGetAttributeGlobal: { value: 'size' },
  cuCoredumpSetAttribute: { value: 'size' },
  cuCoredumpSetAttributeGlobal: { value: 'size' },
  cuDevSmResourceSplitByCount: { result: 'nbGroups * sizeof(CUdevResource)' },
  cuMemExportToShareableHandle: { shareableHandle: { bytes: 'shareableHandleBytes(handleType)', what: 'the handle type' } },
  cuMemPoolExportToShareableHandle: { handle_out: { bytes: 'shareableHandleBytes(handleType)', what: 'the handle type' } },
  // CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, the only type: an int file descriptor.
  cuMemGetHandleForAddressRange: { handle: { bytes: '4', what: 'a dma-buf file descriptor (int)' } },
};

/**
 * Arrays of pointers C reads or writes through one by one: the bytes element i spans, over the
 * call's arguments (extents.ts). Host memory in such an array is checked element by element.
 */
const jitLog = { optionValues: 'jitLogBytes(options, optionValues, i)' };
const libJitLog = { jitOptionsValues: 'jitLogBytes(jitOptions, jitOptionsValues, i)' };
const elementExtents: Record<string, Record<string, string>> = {
  cuModuleLoadDataEx: jitLog,
  cuLinkCreate: jitLog,
  cuLinkAddData: jitLog,
  cuLinkAddFile: jitLog,
  cuLibraryLoadData: libJitLog,
  cuLibraryLoadFromFile: libJitLog,
  cuMemRangeGetAttributes: { data: 'nth(dataSizes, i)' },
  cuPointerGetAttributes: { data: 'pointerAttrBytes(nth(attributes, i))' },
};

/** Host memory behind a struct's pointer fields (extents.ts): CU_MEMORYTYPE_HOST (1) sides of a copy. */
const host3D = (side: 'src' | 'dst', z: string, h: string, depth: string) =>
  `s.${side}MemoryType === 1 ? hostBytes3D(s.${side}XInBytes, s.${side}Y, ${z}, s.${side}Pitch, ${h}, s.WidthInBytes, s.Height, ${depth}) : 0`;
const fieldExtents: Record<string, Record<string, string>> = {
  CUDA_MEMCPY2D_st: { srcHost: host3D('src', '0', '0', '1'), dstHost: host3D('dst', '0', '0', '1') },
  CUDA_MEMCPY3D_st: {
    srcHost: host3D('src', 's.srcZ', 's.srcHeight', 's.Depth'),
    dstHost: host3D('dst', 's.dstZ', 's.dstHeight', 's.Depth'),
  },
  CUDA_MEMCPY3D_PEER_st: {
    srcHost: host3D('src', 's.srcZ', 's.srcHeight', 's.Depth'),
    dstHost: host3D('dst', 's.dstZ', 's.dstHeight', 's.Depth'),
  },
};

/** Pointers to non-const data that C does not write host memory through, and why (extents.ts). */
const deviceAddress = 'a device address: CUDA does not write host memory through it';
const lookedUp = 'a host address CUDA looks up: not written';
const userData = 'user data: handed back to the callback, never dereferenced by CUDA';
const egl = 'an EGL handle, opaque to CUDA and to the binding';
const notWritten: Record<string, Record<string, string>> = {
  cuMemFreeHost: { p: 'host memory CUDA allocated, freed: not written' },
  cuMemHostUnregister: { p: 'registered host memory, unregistered: not written' },
  cuMemHostGetDevicePointer: { p: lookedUp },
  cuMemHostGetFlags: { p: lookedUp },
  cuMemRetainAllocationHandle: { addr: lookedUp },
  cuDeviceRegisterAsyncNotification: { userData },
  cuStreamAddCallback: { userData },
  cuLaunchHostFunc: { userData },
  cuLogsRegisterCallback: { userData },
  cuUserObjectCreate: { ptr: 'handed to the destroy callback, never dereferenced by CUDA' },
  cuMemImportFromShareableHandle: {
    osHandle: 'read, not written: a POSIX fd passed as its value, or the address of a Win32 or fabric handle',
  },
  cuMemPoolImportFromShareableHandle: {
    handle: 'read, not written: a POSIX fd passed as its value, or the address of a Win32 or fabric handle',
  },
  cuLaunchKernel: { extra: 'read, not written: CU_LAUNCH_PARAM_* pairs ending in CU_LAUNCH_PARAM_END (cuda.launchParamBuffer builds it)' },
  cuLaunchKernelEx: {
    extra: 'read, not written: CU_LAUNCH_PARAM_* pairs ending in CU_LAUNCH_PARAM_END (cuda.launchParamBuffer builds it)',
  },
  cuTensorMapEncodeTiled: { globalAddress: deviceAddress },
  cuTensorMapEncodeIm2col: { globalAddress: deviceAddress },
  cuTensorMapEncodeIm2colWide: { globalAddress: deviceAddress },
  cuTensorMapReplaceAddress: { globalAddress: deviceAddress },
  cuDeviceGetNvSciSyncAttributes: {
    nvSciSyncAttrList: 'an NvSciSyncAttrList handle (NvSciSync owns and fills the list); not host memory of the caller',
  },
  cuGraphicsEGLRegisterImage: { image: egl },
  cuEGLStreamConsumerConnect: { stream: egl },
  cuEGLStreamConsumerConnectWithFlags: { stream: egl },
  cuEGLStreamProducerConnect: { stream: egl },
  cuEventCreateFromEGLSync: { eglSync: egl },
  cuLibraryLoadData: { libraryOptionValues: 'read, not written: library option values' },
  cuLibraryLoadFromFile: { libraryOptionValues: 'read, not written: library option values' },
};

/** A peer copy needs both contexts unless that side is an array. */
const peerContexts = (fn: string) =>
  `if (a_pCopy === null || X.peerContextMissing(a_pCopy, S.CUDA_MEMCPY3D_PEER_st)) M.rangeError('${fn}', 'pCopy', 'must be a CUDA_MEMCPY3D_PEER with srcContext and dstContext set (or an array on that side)');`;

export const driverApi: ApiConfig = {
  id: 'driver',
  title: 'CUDA driver API',
  headers: ['cuda.h', 'cudaProfiler.h', 'GL/gl.h', 'cudaGL.h', 'EGL/egl.h', 'EGL/eglext.h', 'cudaEGL.h', 'vdpau/vdpau.h', 'cudaVDPAU.h'],
  bindHeaders: ['cuda.h', 'cudaProfiler.h', 'cudaGL.h', 'cudaEGL.h', 'cudaVDPAU.h'],
  perThreadDefine: 'CUDA_API_PER_THREAD_DEFAULT_STREAM',
  versionedSymbols: true,
  status: { type: 'CUresult', enumTs: 'CUresult', success: 'CUDA_SUCCESS' },
  ffiConstants: [
    'CU_STREAM_LEGACY',
    'CU_STREAM_PER_THREAD',
    'CU_STREAM_CAPTURE_STATUS_ACTIVE',
    'CU_LAUNCH_PARAM_BUFFER_POINTER',
    'CU_LAUNCH_PARAM_BUFFER_SIZE',
    'CU_LAUNCH_PARAM_END',
  ],
  spec: {
    paramSpecs,
    extents,
    elementExtents,
    notWritten,
    fieldExtents,
    integerHandles: new Set(['CUtexObject', 'CUsurfObject', 'CUgraphConditionalHandle', 'CUtexObject_v1', 'CUsurfObject_v1']),
    attrTables: {
      memPoolAttr: {
        enumName: 'CUmemPool_attribute',
        defaultType: 'int',
        types: {
          CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: 'u64',
          CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: 'u64',
          CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: 'u64',
          CU_MEMPOOL_ATTR_USED_MEM_CURRENT: 'u64',
          CU_MEMPOOL_ATTR_USED_MEM_HIGH: 'u64',
        },
      },
      graphMemAttr: { enumName: 'CUgraphMem_attribute', defaultType: 'u64', types: {} },
      pointerAttr: {
        enumName: 'CUpointer_attribute',
        defaultType: 'int',
        types: {
          CU_POINTER_ATTRIBUTE_CONTEXT: 'u64',
          CU_POINTER_ATTRIBUTE_DEVICE_POINTER: 'u64',
          CU_POINTER_ATTRIBUTE_HOST_POINTER: 'u64',
          CU_POINTER_ATTRIBUTE_BUFFER_ID: 'u64',
          CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: 'u64',
          CU_POINTER_ATTRIBUTE_RANGE_SIZE: 'u64',
          CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: 'u64',
          CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: 'u64',
          CU_POINTER_ATTRIBUTE_MAPPING_SIZE: 'u64',
          CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: 'u64',
          CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: 'u64',
          CU_POINTER_ATTRIBUTE_P2P_TOKENS: 'u64',
        },
      },
    },
    docs: {},
    // Arguments libcuda 580 crashes on instead of returning an error (found by tools/find-crashers.sh).
    checks: {
      cuVDPAUCtxCreate: [
        `if (a_vdpGetProcAddress === null || a_vdpGetProcAddress === 0n) M.rangeError('cuVDPAUCtxCreate', 'vdpGetProcAddress', 'must be VDPAU\\'s VdpGetProcAddress, not NULL');`,
      ],
      cuVDPAUGetDevice: [
        `if (a_vdpGetProcAddress === null || a_vdpGetProcAddress === 0n) M.rangeError('cuVDPAUGetDevice', 'vdpGetProcAddress', 'must be VDPAU\\'s VdpGetProcAddress, not NULL');`,
      ],
      cuStreamSynchronize: [`HC.guardBlockingWait('cuStreamSynchronize', a_hStream);`],
      cuEventSynchronize: [`HC.guardBlockingWait('cuEventSynchronize');`],
      cuCtxSynchronize: [`HC.guardBlockingWait('cuCtxSynchronize');`],
      cuDevResourceGenerateDesc: [
        `if (a_nbResources < 1) M.rangeError('cuDevResourceGenerateDesc', 'nbResources', 'must be at least 1: a descriptor of no resources is not one');`,
      ],
      cuMemcpy3DPeer: [peerContexts('cuMemcpy3DPeer')],
      cuMemcpy3DPeerAsync: [peerContexts('cuMemcpy3DPeerAsync')],
    },
  },
  skipped: [
    ['(none skipped)', 'every function the headers declare is bound'],
    [
      '`cuEventCreateFromEGLSync`',
      'bound, but libcuda 580 on x86-64 does not export it (Tegra only): calling it throws, naming the symbol',
    ],
  ],
};
