// NCCL (nccl.h, NCCL 2.28). The header is not on the development machine: with NCCL_HEADER naming
// the file (the GPU machine's copy is in ../shared/headers/), the generator parses it and writes
// tools/codegen/nccl-decls.h, the declarations, structs and #defines it bound with #line marks;
// elsewhere it parses that file instead, so the bindings regenerate the same without NCCL.
//
// nccl.h includes cuda_runtime.h: only what nccl.h itself declares is bound here; cudaStream_t is
// the runtime's handle type, re-exported.
import type { ApiConfig, ParamSpec } from './apis';

const config: ParamSpec = { k: 'inStruct', nullable: true };

/** Bytes of one element of each ncclDataType_t, for the extents below (an unknown type checks nothing). */
const typeSize = 'ncclTypeSize(datatype)';

/**
 * Host memory each pointer that NCCL reads or writes must hold (device memory is NCCL's to check).
 * Where the extent grows with the communicator's size (allGather's recvbuff, reduceScatter's
 * sendbuff, allToAll, gather and scatter at the root), the generator knows only the one-rank
 * extent, a lower bound; core's Communicator checks the full extent with the communicator's size.
 * Outputs the generator allocates itself (handles, ncclUniqueId, status slots) need no entry.
 */
const perRank = `count * ${typeSize}`;
const extents: Record<string, Record<string, string>> = {
  ncclAllReduce: { sendbuff: perRank, recvbuff: perRank },
  ncclBroadcast: { sendbuff: perRank, recvbuff: perRank },
  ncclBcast: { buff: perRank },
  ncclReduce: { sendbuff: perRank, recvbuff: perRank },
  ncclAllGather: { sendbuff: `sendcount * ${typeSize}`, recvbuff: `sendcount * ${typeSize}` },
  ncclReduceScatter: { sendbuff: `recvcount * ${typeSize}`, recvbuff: `recvcount * ${typeSize}` },
  ncclAlltoAll: { sendbuff: perRank, recvbuff: perRank },
  ncclGather: { sendbuff: perRank, recvbuff: perRank },
  ncclScatter: { sendbuff: perRank, recvbuff: perRank },
  ncclSend: { sendbuff: perRank },
  ncclRecv: { recvbuff: perRank },
  ncclRedOpCreatePreMulSum: { scalar: typeSize },
  ncclCommRegister: { buff: 'size' },
  ncclCommWindowRegister: { buff: 'size' },
};

/**
 * The raw pointers of nccl.h that have no extent above because NCCL neither reads nor writes memory
 * through them: an address to free, and a registration handle. Every other pointer NCCL writes
 * through is an output the generator allocates itself (its extent is its C type's), a struct class
 * (ncclGroupSimulateEnd's simInfo: sizeof(ncclSimInfo_t)), or has an extent above.
 */
export const notDereferenced: Record<string, string[]> = { ncclMemFree: ['ptr'], ncclCommDeregister: ['handle'] };

export const ncclApi: ApiConfig = {
  id: 'nccl',
  title: 'NCCL API',
  headers: ['nccl.h'],
  bindHeaders: ['nccl.h'],
  versionedSymbols: false,
  // A non-blocking communicator's calls return ncclInProgress with their outputs written (the
  // communicator of ncclCommInitRankConfig and ncclCommSplit): those outputs are returned too.
  status: { type: 'ncclResult_t', enumTs: 'ncclResult_t', success: 'ncclSuccess', withOutputs: ['ncclInProgress'] },
  reducedHeader: 'tools/codegen/nccl-decls.h',
  own: {
    skipFunctions: /^(pnccl\w+|ncclResetDebugInit)$/,
    foreignHandles: { cudaStream_t: '../runtime/handles.gen' },
    // What the reduced header needs from cuda_runtime.h and limits.h.
    preamble: ['#include <limits.h>', 'typedef struct CUstream_st *cudaStream_t;'],
    // #define bodies the generator cannot evaluate, with their values (checked against g++).
    macroValues: { NCCL_CONFIG_UNDEF_INT: '-2147483648', NCCL_UNDEF_FLOAT: '-1' },
    facadePrelude: [
      '/** Bytes of one element of a ncclDataType_t (0 for an unknown one: nothing to check). */',
      'const ncclTypeSize = (t: number): number => [1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1][t] ?? 0;',
    ],
  },
  spec: {
    // Pointers to non-const that NCCL writes no host memory through.
    notWritten: {
      ncclMemFree: { ptr: 'a device allocation of ncclMemAlloc, freed' },
      ncclCommDeregister: { handle: 'a registration handle of ncclCommRegister, released' },
    },
    paramSpecs: {
      ncclCommInitRankConfig: { config },
      ncclCommSplit: { config },
      ncclCommShrink: { excludeRanksList: { k: 'inArray', count: 'excludeRanksCount', nullable: true }, config },
      ncclCommInitRankScalable: { commIds: { k: 'inArray', count: 'nId', nullable: false }, config },
      // One communicator per device of devlist, written into an array of ndev handles.
      ncclCommInitAll: {
        comm: { k: 'outArray', count: 'ndev', countMode: 'in' },
        devlist: { k: 'inArray', count: 'ndev', nullable: true },
      },
      // NCCL reads size/magic/version and writes estimatedTime into the caller's struct.
      ncclGroupSimulateEnd: { simInfo: { k: 'inStruct', nullable: false } },
      // The scalar NCCL reads (host or device memory, by residence).
      ncclRedOpCreatePreMulSum: { scalar: { k: 'pointer' } },
    },
    extents,
    integerHandles: new Set(),
    attrTables: {},
    // nccl.h documents its functions in plain comments, which the generator does not read: the
    // first sentence of each, from NCCL 2.28's header.
    docs: {
      ncclMemAlloc: 'Allocates device memory suited to every NCCL optimization (e.g. user buffer registration); the size may be rounded up',
      ncclMemFree: 'Frees memory allocated by ncclMemAlloc',
      ncclGetVersion: 'Returns the NCCL_VERSION_CODE of the loaded NCCL library',
      ncclGetUniqueId: 'Generates an id to pass to ncclCommInitRank: called once, and the id distributed to every rank',
      ncclCommInitRankConfig: 'Creates a new communicator (multi thread/process version) with a configuration set by users',
      ncclCommInitRank: 'Creates a new communicator (multi thread/process version); rank in [0, nranks) on the current CUDA device',
      ncclCommInitAll: 'Creates a clique of ndev communicators in one process, one per device of devlist (NULL: the first ndev devices)',
      ncclCommFinalize: 'Flushes all issued communications; the communicator is ncclInProgress until globally quiescent',
      ncclCommDestroy: 'Frees the local resources of a communicator',
      ncclCommAbort: 'Frees the resources of a communicator and aborts any operation that may still run on the device',
      ncclCommRevoke: 'Stops all in-flight operations of a communicator; revokeFlags must be NCCL_REVOKE_DEFAULT',
      ncclCommSplit: 'Creates communicators from an existing one: ranks with the same color end up together, ordered by key',
      ncclCommShrink: 'Creates a communicator without the ranks of excludeRanksList',
      ncclCommInitRankScalable: 'Creates a new communicator from nId unique ids (up to one per rank) to speed up initialization',
      ncclGetErrorString: 'Returns a string for each result code',
      ncclGetLastError: 'Returns a human-readable message of the last error that occurred (comm may be NULL)',
      ncclCommGetAsyncError:
        'Checks whether the communicator has encountered an asynchronous error (ncclInProgress while a non-blocking call runs)',
      ncclCommCount: 'Gets the number of ranks in the communicator',
      ncclCommCuDevice: 'Returns the CUDA device number associated with the communicator',
      ncclCommUserRank: 'Returns the user-ordered rank associated with the communicator',
      ncclCommRegister: 'Registers a CUDA buffer for zero-copy operation',
      ncclCommDeregister: 'Deregisters a CUDA buffer',
      ncclCommWindowRegister: 'Registers a memory window',
      ncclCommWindowDeregister: 'Deregisters a memory window',
      ncclRedOpCreatePreMulSum:
        'Creates a reduction operator that multiplies inputs by a scalar before summing them, for comm and datatype',
      ncclRedOpDestroy: 'Destroys a reduction operator created by ncclRedOpCreatePreMulSum with the same communicator',
      ncclReduce: 'Reduces count elements of sendbuff on every rank with op into recvbuff on root (in place when sendbuff == recvbuff)',
      ncclBcast: '(Deprecated) Copies count elements from root to every rank, in place',
      ncclBroadcast: 'Copies count elements of sendbuff on root into recvbuff on every rank',
      ncclAllReduce: 'Reduces count elements of sendbuff on every rank with op, leaving the result in recvbuff on every rank',
      ncclReduceScatter: 'Reduces sendbuff (nranks * recvcount elements) with op and leaves block i of the result in recvbuff on rank i',
      ncclAllGather: 'Gathers sendcount elements from every rank into recvbuff (nranks * sendcount elements), ordered by rank',
      ncclAlltoAll: 'Sends block j of count elements of sendbuff to rank j, which receives it as block i of recvbuff',
      ncclGather: 'Gathers count elements from every rank into recvbuff (nranks * count elements) on root',
      ncclScatter: 'Sends block i of count elements of sendbuff on root to rank i',
      ncclSend: 'Sends count elements of sendbuff to rank peer (a matching ncclRecv must be posted)',
      ncclRecv: 'Receives count elements from rank peer into recvbuff (a matching ncclSend must be posted)',
      ncclGroupStart: 'Starts a group: the NCCL calls until ncclGroupEnd are launched together',
      ncclGroupEnd: 'Ends a group and launches its operations',
      ncclGroupSimulateEnd: 'Simulates a ncclGroupEnd and writes its estimated time into simInfo',
    },
  },
  skipped: [
    [
      '`pnccl*` (38 functions)',
      "the profiling aliases of the same functions (NCCL's PMPI-style interposition symbols); the `nccl*` names are bound",
    ],
    ['`ncclResetDebugInit`', 'deprecated in nccl.h: "not supported as part of the NCCL API and will be removed"'],
    [
      '`NCCL_CONFIG_INITIALIZER`, `NCCL_SIM_INFO_INITIALIZER`',
      'brace initialisers: `ncclConfig_t` and `ncclSimInfo_t` in src/nccl/initializers.ts start from the same values',
    ],
    ['`NCCL_VERSION(X,Y,Z)`', 'a function-like macro: `NCCL_VERSION` in src/nccl/initializers.ts computes the same'],
    ['`NCCL_COMM_NULL`, `NCCL_CONFIG_UNDEF_PTR`', 'NULL: pass `null`'],
  ],
};
