// What the headers cannot say: which pointer parameters are arrays and which count goes with them,
// which are in/out, which `void *` takes a value typed by an attribute, and how many bytes of host
// memory a call touches. Everything else the generator infers from the C types.
import type { ApiConfig, ParamSpec } from './apis';
import type { ExtentBytes } from './extents';

const dep = (count = 'numDependencies') => ({ pDependencies: { k: 'inArray', count, nullable: true } as ParamSpec });
const inArr = (count: string, nullable = true): ParamSpec => ({ k: 'inArray', count, nullable });
const outArr = (count: string, countMode: 'inout' | 'in' = 'inout'): ParamSpec => ({ k: 'outArray', count, countMode });

export const paramSpecs: Record<string, Record<string, ParamSpec>> = {
  cudaDeviceGetPCIBusId: { pciBusId: { k: 'outString', len: 'len' } },
  cudaDeviceGetHostAtomicCapabilities: { capabilities: outArr('count', 'in'), operations: inArr('count', false) },
  cudaDeviceGetP2PAtomicCapabilities: { capabilities: outArr('count', 'in'), operations: inArr('count', false) },
  cudaSetValidDevices: { device_arr: inArr('len') },
  cudaStreamBeginCaptureToGraph: { dependencies: inArr('numDependencies'), dependencyData: inArr('numDependencies') },
  cudaThreadExchangeStreamCaptureMode: { mode: { k: 'inout' } },
  cudaStreamGetCaptureInfo: {
    dependencies_out: { k: 'borrowedArray', count: 'numDependencies_out' },
    edgeData_out: { k: 'borrowedArray', count: 'numDependencies_out' },
  },
  cudaStreamUpdateCaptureDependencies: { dependencies: inArr('numDependencies'), dependencyData: inArr('numDependencies') },
  cudaSignalExternalSemaphoresAsync: { extSemArray: inArr('numExtSems', false), paramsArray: inArr('numExtSems', false) },
  cudaWaitExternalSemaphoresAsync: { extSemArray: inArr('numExtSems', false), paramsArray: inArr('numExtSems', false) },
  cudaLaunchHostFunc: { fn: { k: 'hostFn', kind: 'hostFn', stream: 'stream' } },
  cudaStreamAddCallback: { callback: { k: 'hostFn', kind: 'streamCallback', stream: 'stream' } },
  cudaLaunchKernel: { args: { k: 'kernelArgs' } },
  cudaLaunchCooperativeKernel: { args: { k: 'kernelArgs' } },
  cudaLaunchKernelExC: { args: { k: 'kernelArgs' } },
  cudaMemcpyBatchAsync: {
    dsts: inArr('count', false),
    srcs: inArr('count', false),
    sizes: inArr('count', false),
    attrs: inArr('numAttrs', false),
    attrsIdxs: inArr('numAttrs', false),
  },
  cudaMemcpy3DBatchAsync: { opList: inArr('numOps', false) },
  cudaMemPrefetchBatchAsync: {
    dptrs: inArr('count', false),
    sizes: inArr('count', false),
    prefetchLocs: inArr('numPrefetchLocs', false),
    prefetchLocIdxs: inArr('numPrefetchLocs', false),
  },
  cudaMemDiscardBatchAsync: { dptrs: inArr('count', false), sizes: inArr('count', false) },
  cudaMemDiscardAndPrefetchBatchAsync: {
    dptrs: inArr('count', false),
    sizes: inArr('count', false),
    prefetchLocs: inArr('numPrefetchLocs', false),
    prefetchLocIdxs: inArr('numPrefetchLocs', false),
  },
  cudaMemRangeGetAttribute: { data: { k: 'rangeAttr', size: 'dataSize', attr: 'attribute' } },
  cudaMemRangeGetAttributes: {
    data: inArr('numAttributes', false),
    dataSizes: inArr('numAttributes', false),
    attributes: inArr('numAttributes', false),
  },
  cudaMemPoolSetAccess: { descList: inArr('count', false) },
  cudaMemPoolGetAccess: { location: { k: 'inStruct' } },
  cudaMemPoolSetAttribute: { value: { k: 'attr', attr: 'attr', table: 'memPoolAttr', dir: 'in' } },
  cudaMemPoolGetAttribute: { value: { k: 'attr', attr: 'attr', table: 'memPoolAttr', dir: 'out' } },
  cudaDeviceSetGraphMemAttribute: { value: { k: 'attr', attr: 'attr', table: 'graphMemAttr', dir: 'in' } },
  cudaDeviceGetGraphMemAttribute: { value: { k: 'attr', attr: 'attr', table: 'graphMemAttr', dir: 'out' } },
  cudaMemGetDefaultMemPool: { location: { k: 'inStruct' } },
  cudaMemGetMemPool: { location: { k: 'inStruct' } },
  cudaMemSetMemPool: { location: { k: 'inStruct' } },
  cudaMemPoolImportPointer: { exportData: { k: 'inStruct' } },
  cudaGraphicsMapResources: { resources: inArr('count', false) },
  cudaGraphicsUnmapResources: { resources: inArr('count', false) },
  cudaLogsDumpToFile: { iterator: { k: 'inout' } },
  cudaLogsDumpToMemory: { iterator: { k: 'inout' }, buffer: { k: 'pointer' }, size: { k: 'inout' } },
  cudaGraphAddKernelNode: dep(),
  cudaGraphAddMemcpyNode: dep(),
  cudaGraphAddMemcpyNodeToSymbol: dep(),
  cudaGraphAddMemcpyNodeFromSymbol: dep(),
  cudaGraphAddMemcpyNode1D: dep(),
  cudaGraphAddMemsetNode: dep(),
  cudaGraphAddHostNode: dep(),
  cudaGraphAddChildGraphNode: dep(),
  cudaGraphAddEmptyNode: dep(),
  cudaGraphAddEventRecordNode: dep(),
  cudaGraphAddEventWaitNode: dep(),
  cudaGraphAddExternalSemaphoresSignalNode: dep(),
  cudaGraphAddExternalSemaphoresWaitNode: dep(),
  cudaGraphAddMemAllocNode: { ...dep(), nodeParams: { k: 'inStruct' } },
  cudaGraphAddMemFreeNode: dep(),
  cudaGraphAddNode: { ...dep(), dependencyData: inArr('numDependencies'), nodeParams: { k: 'inStruct' } },
  cudaGraphNodeSetParams: { nodeParams: { k: 'inStruct' } },
  cudaGraphExecNodeSetParams: { nodeParams: { k: 'inStruct' } },
  cudaGraphInstantiateWithParams: { instantiateParams: { k: 'inStruct' } },
  cudaGraphMemFreeNodeGetParams: { dptr_out: { k: 'outAddr' } },
  cudaGraphGetNodes: { nodes: outArr('numNodes') },
  cudaGraphGetRootNodes: { pRootNodes: outArr('pNumRootNodes') },
  cudaGraphGetEdges: { from: outArr('numEdges'), to: outArr('numEdges'), edgeData: outArr('numEdges') },
  cudaGraphNodeGetDependencies: { pDependencies: outArr('pNumDependencies'), edgeData: outArr('pNumDependencies') },
  cudaGraphNodeGetDependentNodes: { pDependentNodes: outArr('pNumDependentNodes'), edgeData: outArr('pNumDependentNodes') },
  cudaGraphAddDependencies: {
    from: inArr('numDependencies', false),
    to: inArr('numDependencies', false),
    edgeData: inArr('numDependencies'),
  },
  cudaGraphRemoveDependencies: {
    from: inArr('numDependencies', false),
    to: inArr('numDependencies', false),
    edgeData: inArr('numDependencies'),
  },
  cudaLibraryLoadData: {
    jitOptions: inArr('numJitOptions'),
    jitOptionsValues: inArr('numJitOptions'),
    libraryOptions: inArr('numLibraryOptions'),
    libraryOptionValues: inArr('numLibraryOptions'),
  },
  cudaLibraryLoadFromFile: {
    jitOptions: inArr('numJitOptions'),
    jitOptionsValues: inArr('numJitOptions'),
    libraryOptions: inArr('numLibraryOptions'),
    libraryOptionValues: inArr('numLibraryOptions'),
  },
  cudaLibraryEnumerateKernels: { kernels: outArr('numKernels', 'in') },
  cudaGetExportTable: { ppExportTable: { k: 'outAddr' }, pExportTableId: { k: 'inStruct' } },
  cudaGLGetDevices: { pCudaDevices: outArr('cudaDeviceCount', 'in') },
  cudaEGLStreamConsumerDisconnect: { conn: { k: 'inout' } },
  cudaEGLStreamConsumerAcquireFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
  cudaEGLStreamConsumerReleaseFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
  cudaEGLStreamProducerDisconnect: { conn: { k: 'inout' } },
  cudaEGLStreamProducerPresentFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
  cudaEGLStreamProducerReturnFrame: { conn: { k: 'inout' }, pStream: { k: 'inout' } },
};

/**
 * Host memory a call reads or writes, as a JS expression over the call's (checked) parameters:
 * a host buffer passed there must hold at least that many bytes.
 */
const copy = { dst: 'count', src: 'count' };
const toSym = { src: 'count' };
const fromSym = { dst: 'count' };
const d2 = 'span2D(dpitch, width, height)';
const s2 = 'span2D(spitch, width, height)';
export const extents: Record<string, Record<string, ExtentBytes>> = {
  cudaMemcpy: copy,
  cudaMemcpyAsync: copy,
  cudaMemcpyPeer: copy,
  cudaMemcpyPeerAsync: copy,
  cudaMemcpy2D: { dst: d2, src: s2 },
  cudaMemcpy2DAsync: { dst: d2, src: s2 },
  cudaMemcpy2DToArray: { src: s2 },
  cudaMemcpy2DToArrayAsync: { src: s2 },
  cudaMemcpy2DFromArray: { dst: d2 },
  cudaMemcpy2DFromArrayAsync: { dst: d2 },
  cudaMemcpyToSymbol: toSym,
  cudaMemcpyToSymbolAsync: toSym,
  cudaMemcpyFromSymbol: fromSym,
  cudaMemcpyFromSymbolAsync: fromSym,
  cudaMemcpyToArray: toSym,
  cudaMemcpyToArrayAsync: toSym,
  cudaMemcpyFromArray: fromSym,
  cudaMemcpyFromArrayAsync: fromSym,
  cudaMemset: { devPtr: 'count' },
  cudaMemsetAsync: { devPtr: 'count' },
  cudaMemset2D: { devPtr: 'span2D(pitch, width, height)' },
  cudaMemset2DAsync: { devPtr: 'span2D(pitch, width, height)' },
  cudaHostRegister: { ptr: 'size' },
  cudaMemPrefetchAsync: { devPtr: 'count' },
  cudaMemAdvise: { devPtr: 'count' },
  cudaStreamAttachMemAsync: { devPtr: 'length' },
  cudaMemRangeGetAttributes: { devPtr: 'count' },
  cudaGraphAddMemcpyNode1D: copy,
  cudaGraphMemcpyNodeSetParams1D: copy,
  cudaGraphExecMemcpyNodeSetParams1D: copy,
  cudaGraphAddMemcpyNodeToSymbol: toSym,
  cudaGraphMemcpyNodeSetParamsToSymbol: toSym,
  cudaGraphExecMemcpyNodeSetParamsToSymbol: toSym,
  cudaGraphAddMemcpyNodeFromSymbol: fromSym,
  cudaGraphMemcpyNodeSetParamsFromSymbol: fromSym,
  cudaGraphExecMemcpyNodeSetParamsFromSymbol: fromSym,
  cudaLogsDumpToMemory: { buffer: 'size' },
  cudaMemPoolExportToShareableHandle: { shareableHandle: { bytes: 'shareableHandleBytes(handleType)', what: 'the handle type' } },
};

/**
 * Arrays of pointers C reads or writes through one by one: the bytes element i spans, over the
 * call's arguments (extents.ts). Host memory in such an array is checked element by element.
 */
const jitLog = 'jitLogBytes(jitOptions, jitOptionsValues, i)';
export const elementExtents: Record<string, Record<string, string>> = {
  cudaMemcpyBatchAsync: { dsts: 'nth(sizes, i)', srcs: 'nth(sizes, i)' },
  cudaMemPrefetchBatchAsync: { dptrs: 'nth(sizes, i)' },
  cudaMemDiscardBatchAsync: { dptrs: 'nth(sizes, i)' },
  cudaMemDiscardAndPrefetchBatchAsync: { dptrs: 'nth(sizes, i)' },
  cudaMemRangeGetAttributes: { data: 'nth(dataSizes, i)' },
  cudaLibraryLoadData: { jitOptionsValues: jitLog },
  cudaLibraryLoadFromFile: { jitOptionsValues: jitLog },
};

/**
 * Host memory behind a struct's pointer fields (extents.ts): the bytes a copy touches, over the
 * struct `s`. With an array on either side the extent counts array elements, whose size the struct
 * does not say: then the field is checked for being attached only.
 */
const pitched = (side: 'src' | 'dst') =>
  `s.srcArray === 0 && s.dstArray === 0 ? hostBytes3D(s.${side}Pos.x, s.${side}Pos.y, s.${side}Pos.z, s.${side}Ptr.pitch, s.${side}Ptr.ysize, s.extent.width, s.extent.height, s.extent.depth) : 0`;
export const fieldExtents: Record<string, Record<string, string>> = {
  cudaMemcpy3DParms: { 'srcPtr.ptr': pitched('src'), 'dstPtr.ptr': pitched('dst') },
  cudaMemcpy3DPeerParms: { 'srcPtr.ptr': pitched('src'), 'dstPtr.ptr': pitched('dst') },
};

/** Pointers to non-const data that C does not write host memory through, and why (extents.ts). */
const deviceAddress = 'a device address: CUDA does not write host memory through it';
const userData = 'user data: handed back to the callback, never dereferenced by CUDA';
const egl = 'an EGL handle, opaque to CUDA and to the binding';
export const notWritten: Record<string, Record<string, string>> = {
  cudaIpcGetMemHandle: { devPtr: deviceAddress },
  cudaIpcCloseMemHandle: { devPtr: deviceAddress },
  cudaFree: { devPtr: deviceAddress },
  cudaFreeAsync: { devPtr: deviceAddress },
  cudaGraphAddMemFreeNode: { dptr: deviceAddress },
  cudaMemPoolExportPointer: { ptr: deviceAddress },
  cudaFreeHost: { ptr: 'host memory CUDA allocated, freed: not written' },
  cudaHostUnregister: { ptr: 'registered host memory, unregistered: not written' },
  cudaHostGetDevicePointer: { pHost: 'a host address CUDA looks up: not written' },
  cudaHostGetFlags: { pHost: 'a host address CUDA looks up: not written' },
  cudaDeviceRegisterAsyncNotification: { userData },
  cudaStreamAddCallback: { userData },
  cudaLaunchHostFunc: { userData },
  cudaLogsRegisterCallback: { userData },
  cudaUserObjectCreate: { ptr: 'handed to the destroy callback, never dereferenced by CUDA' },
  cudaMemPoolImportFromShareableHandle: {
    shareableHandle: 'read, not written: a POSIX fd passed as its value, or the address of a Win32 or fabric handle',
  },
  cudaDeviceGetNvSciSyncAttributes: {
    nvSciSyncAttrList: 'an NvSciSyncAttrList handle (NvSciSync owns and fills the list); not host memory of the caller',
  },
  cudaGraphicsEGLRegisterImage: { image: egl },
  cudaEGLStreamConsumerConnect: { eglStream: egl },
  cudaEGLStreamConsumerConnectWithFlags: { eglStream: egl },
  cudaEGLStreamProducerConnect: { eglStream: egl },
  cudaEventCreateFromEGLSync: { eglSync: egl },
  cudaLibraryLoadData: { libraryOptionValues: 'read, not written: library option values' },
  cudaLibraryLoadFromFile: { libraryOptionValues: 'read, not written: library option values' },
};

/** `unsigned long long` typedefs that are handles rather than numbers. */
export const integerHandles = new Set(['cudaTextureObject_t', 'cudaSurfaceObject_t', 'cudaGraphConditionalHandle']);

/** The C type of the value behind `void *value` for each attribute of an attribute getter/setter. */
export const attrTables: Record<string, { enumName: string; defaultType: 'int' | 'u64'; types: Record<string, 'int' | 'u64'> }> = {
  memPoolAttr: {
    enumName: 'cudaMemPoolAttr',
    defaultType: 'int',
    types: {
      cudaMemPoolAttrReleaseThreshold: 'u64',
      cudaMemPoolAttrReservedMemCurrent: 'u64',
      cudaMemPoolAttrReservedMemHigh: 'u64',
      cudaMemPoolAttrUsedMemCurrent: 'u64',
      cudaMemPoolAttrUsedMemHigh: 'u64',
    },
  },
  graphMemAttr: { enumName: 'cudaGraphMemAttributeType', defaultType: 'u64', types: {} },
};

/** Doc lines for functions whose header comment has no brief. */
export const docs: Record<string, string> = {
  cudaStreamAttachMemAsync: 'Attach memory to a stream asynchronously',
  cudaMallocManaged: 'Allocates memory that will be automatically managed by the Unified Memory system',
  cudaGetDriverEntryPoint: 'Returns the requested driver API function pointer',
  cudaGetDriverEntryPointByVersion: 'Returns the requested driver API function pointer by CUDA version',
  cudaGetExportTable: 'Returns an internal export table of the runtime (undocumented by NVIDIA)',
};

/** Arguments libcudart 13.0 crashes on instead of returning an error (found by tools/find-crashers.sh). */
function runtimeChecks(): Record<string, string[]> {
  const notNull = (fn: string, p: string, what: string) =>
    `if (a_${p} === null || a_${p} === 0n) M.rangeError('${fn}', '${p}', 'must be ${what}, not NULL');`;
  const cfg = (fn: string, p: string) => `if (a_${p} === null) M.rangeError('${fn}', '${p}', 'must be a cudaLaunchConfig_t, not NULL');`;
  const kernelParams = (fn: string) =>
    `if (a_pNodeParams === null || X.nullField(a_pNodeParams, S.cudaKernelNodeParams, 'func')) M.rangeError('${fn}', 'pNodeParams', 'must be a cudaKernelNodeParams whose func is a kernel, not NULL');`;
  const guard = (fn: string, stream?: string) => `HC.guardBlockingWait('${fn}'${stream ? `, a_${stream}` : ''});`;
  return {
    cudaStreamSynchronize: [guard('cudaStreamSynchronize', 'stream')],
    cudaEventSynchronize: [guard('cudaEventSynchronize')],
    cudaDeviceSynchronize: [guard('cudaDeviceSynchronize')],
    cudaLaunchKernelExC: [cfg('cudaLaunchKernelExC', 'config'), notNull('cudaLaunchKernelExC', 'func', 'a kernel')],
    cudaOccupancyMaxPotentialClusterSize: [
      notNull('cudaOccupancyMaxPotentialClusterSize', 'func', 'a kernel'),
      cfg('cudaOccupancyMaxPotentialClusterSize', 'launchConfig'),
    ],
    cudaOccupancyMaxActiveClusters: [
      notNull('cudaOccupancyMaxActiveClusters', 'func', 'a kernel'),
      cfg('cudaOccupancyMaxActiveClusters', 'launchConfig'),
    ],
    cudaGraphExecKernelNodeSetParams: [kernelParams('cudaGraphExecKernelNodeSetParams')],
    cudaGraphKernelNodeSetParams: [kernelParams('cudaGraphKernelNodeSetParams')],
    cudaGraphAddKernelNode: [kernelParams('cudaGraphAddKernelNode')],
  };
}

export const runtimeApi: ApiConfig = {
  id: 'runtime',
  title: 'CUDA runtime API',
  headers: ['cuda_runtime_api.h', 'cuda_profiler_api.h', 'cuda_gl_interop.h', 'cuda_egl_interop.h', 'cuda_vdpau_interop.h'],
  bindHeaders: ['cuda_runtime_api.h', 'cuda_profiler_api.h', 'cuda_gl_interop.h', 'cuda_egl_interop.h', 'cuda_vdpau_interop.h'],
  perThreadDefine: 'CUDA_API_PER_THREAD_DEFAULT_STREAM',
  versionedSymbols: false,
  status: { type: 'cudaError_t', enumTs: 'cudaError_t', success: 'cudaSuccess' },
  ffiConstants: [
    'CUDART_VERSION',
    'cudaStreamLegacy',
    'cudaStreamPerThread',
    'cudaEventDisableTiming',
    'cudaStreamCaptureStatusActive',
    'cudaMemRangeAttributeAccessedBy',
  ],
  spec: { paramSpecs, extents, elementExtents, notWritten, fieldExtents, integerHandles, attrTables, docs, checks: runtimeChecks() },
  skipped: [
    [
      '`make_cudaExtent`, `make_cudaPitchedPtr`, `make_cudaPos`',
      'static inline in `driver_functions.h`, not exported: written by hand in `src/runtime/helpers.ts`',
    ],
    ['`cudaCreateChannelDesc<T>()`', 'C++ template in `channel_descriptor.h`; the C function `cudaCreateChannelDesc` is bound'],
    ['`__cudaRegisterFatBinary` and the other `__cuda*` exports', 'internal to nvcc-generated code, not declared by the public headers'],
  ],
};
