// Graphs on a GPU: stream capture, instantiate, launch, update; explicit kernel (typed arguments in
// its params struct), memcpy, memset, host (a JS function) and child-graph nodes; nodes and edges
// with count queries; an IF conditional node.
import koffi from 'koffi';
import { cudart, nvrtc } from '../../src';
import { describeGpu, rtOk } from './helpers';

const ok = rtOk;
const H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice;
const D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost;

function addKernel(): cudart.cudaKernel_t {
  const src =
    'extern "C" __global__ void add(int *p, int v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }';
  const [, prog] = nvrtc.nvrtcCreateProgram(src, 'add.cu', 0, null, null);
  const [, p] = cudart.cudaGetDeviceProperties(0);
  const opts = [`--gpu-architecture=sm_${p!.major}${p!.minor}`];
  expect(nvrtc.nvrtcCompileProgram(prog!, 1, opts)).toEqual([0]);
  const [, size] = nvrtc.nvrtcGetCUBINSize(prog!);
  const cubin = Buffer.alloc(size!);
  nvrtc.nvrtcGetCUBIN(prog!, cubin);
  nvrtc.nvrtcDestroyProgram(prog!);
  const [lib] = ok(cudart.cudaLibraryLoadData(cubin, null, null, 0, null, null, 0), 'cudaLibraryLoadData');
  return ok(cudart.cudaLibraryGetKernel(lib, 'add'), 'cudaLibraryGetKernel')[0];
}

describeGpu('graphs on a GPU', () => {
  const N = 1 << 16;
  const grid = { x: N / 256, y: 1, z: 1 };
  const block = { x: 256, y: 1, z: 1 };
  let kernel: cudart.cudaKernel_t;
  let s: cudart.cudaStream_t;
  let d: bigint;
  const host = new Int32Array(N);
  const read = () => {
    ok(cudart.cudaMemcpy(host, d, N * 4, D2H) as [cudart.cudaError_t], 'cudaMemcpy');
    return host;
  };
  beforeAll(() => {
    ok(cudart.cudaSetDevice(0) as [cudart.cudaError_t], 'cudaSetDevice');
    kernel = addKernel();
    [s] = ok(cudart.cudaStreamCreate(), 'cudaStreamCreate');
    [d] = ok(cudart.cudaMalloc(N * 4), 'cudaMalloc');
  });
  afterAll(() => {
    cudart.cudaFree(d);
    cudart.cudaStreamDestroy(s);
  });

  test('stream capture, instantiate, launch three times, then update the exec with a new graph', () => {
    cudart.cudaMemset(d, 0, N * 4);
    const capture = (v: number) => {
      ok(
        cudart.cudaStreamBeginCapture(s, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal) as [cudart.cudaError_t],
        'BeginCapture',
      );
      cudart.cudaLaunchKernel(kernel, grid, block, [cudart.ptr(d), cudart.i32(v), cudart.i32(N)], 0, s);
      cudart.cudaLaunchKernel(kernel, grid, block, [cudart.ptr(d), cudart.i32(v), cudart.i32(N)], 0, s);
      return ok(cudart.cudaStreamEndCapture(s), 'EndCapture')[0];
    };
    const g = capture(1);
    const [, nodes, numNodes] = cudart.cudaGraphGetNodes(g, 0);
    expect([nodes, numNodes]).toEqual([[], 2]);
    const [exec] = ok(cudart.cudaGraphInstantiate(g, 0n), 'cudaGraphInstantiate');
    for (let i = 0; i < 3; i++) ok(cudart.cudaGraphLaunch(exec, s) as [cudart.cudaError_t], 'cudaGraphLaunch');
    ok(cudart.cudaStreamSynchronize(s) as [cudart.cudaError_t], 'sync');
    expect(read().every((x) => x === 6)).toBe(true);
    const g2 = capture(10);
    const [info] = ok(cudart.cudaGraphExecUpdate(exec, g2), 'cudaGraphExecUpdate');
    expect(info.result).toBe(cudart.cudaGraphExecUpdateResult.cudaGraphExecUpdateSuccess);
    ok(cudart.cudaGraphLaunch(exec, s) as [cudart.cudaError_t], 'cudaGraphLaunch');
    ok(cudart.cudaStreamSynchronize(s) as [cudart.cudaError_t], 'sync');
    expect(read().every((x) => x === 26)).toBe(true);
    cudart.cudaGraphExecDestroy(exec);
    cudart.cudaGraphDestroy(g);
    cudart.cudaGraphDestroy(g2);
  });

  test('an explicit graph: memset, memcpy, kernel and host nodes, a child graph; nodes and edges queried', async () => {
    const [g] = ok(cudart.cudaGraphCreate(0), 'cudaGraphCreate');
    const src = Int32Array.from({ length: N }, (_, i) => i);
    const [memset] = ok(
      cudart.cudaGraphAddMemsetNode(g, null, 0, { dst: d, value: 0, elementSize: 4, width: N, height: 1, pitch: 0 }),
      'AddMemsetNode',
    );
    const [copyIn] = ok(cudart.cudaGraphAddMemcpyNode1D(g, [memset], 1, d, src, N * 4, H2D), 'AddMemcpyNode1D');
    const params = new cudart.cudaKernelNodeParams({
      func: kernel,
      gridDim: grid,
      blockDim: block,
      sharedMemBytes: 0,
      kernelParams: [cudart.ptr(d), cudart.i32(5), cudart.i32(N)],
    });
    const [kern] = ok(cudart.cudaGraphAddKernelNode(g, [copyIn], 1, params), 'AddKernelNode');
    // A child graph with one more kernel node.
    const [child] = ok(cudart.cudaGraphCreate(0), 'cudaGraphCreate');
    ok(
      cudart.cudaGraphAddKernelNode(
        child,
        null,
        0,
        new cudart.cudaKernelNodeParams({
          func: kernel,
          gridDim: grid,
          blockDim: block,
          kernelParams: new cudart.KernelArgs([cudart.ptr(d), cudart.i32(100), cudart.i32(N)]),
        }),
      ),
      'child kernel',
    );
    const [childNode] = ok(cudart.cudaGraphAddChildGraphNode(g, [kern], 1, child), 'AddChildGraphNode');
    const seen: bigint[] = [];
    const [hostNode] = ok(
      cudart.cudaGraphAddHostNode(g, [childNode], 1, { fn: (u: bigint) => seen.push(u), userData: 0x77n }),
      'AddHostNode',
    );
    void hostNode;
    const [, , numNodes] = cudart.cudaGraphGetNodes(g, 0);
    expect(numNodes).toBe(5);
    const [, from, to, , numEdges] = cudart.cudaGraphGetEdges(g, 0);
    expect([from, to, numEdges]).toEqual([[], [], 4]);
    const [, from2, to2] = cudart.cudaGraphGetEdges(g, 4);
    expect(from2![0]).toBe(memset);
    expect(to2![0]).toBe(copyIn);
    const [exec] = ok(cudart.cudaGraphInstantiate(g, 0n), 'cudaGraphInstantiate');
    ok(cudart.cudaGraphLaunch(exec, s) as [cudart.cudaError_t], 'cudaGraphLaunch');
    ok(cudart.cudaGraphLaunch(exec, s) as [cudart.cudaError_t], 'cudaGraphLaunch');
    // The host node runs on the JS thread: wait without blocking it.
    expect(await cudart.async.cudaStreamSynchronize(s)).toEqual([0]);
    expect(seen).toEqual([0x77n, 0x77n]);
    const out = read();
    expect(out.every((x, i) => x === i + 105)).toBe(true);
    cudart.cudaGraphExecDestroy(exec);
    cudart.cudaGraphDestroy(g);
    cudart.cudaGraphDestroy(child);
  });

  test('an IF conditional node runs its body when the handle defaults to 1 and skips it at 0', () => {
    for (const [value, want] of [
      [1, 3],
      [0, 0],
    ]) {
      cudart.cudaMemset(d, 0, N * 4);
      const [g] = ok(cudart.cudaGraphCreate(0), 'cudaGraphCreate');
      const [handle] = ok(
        cudart.cudaGraphConditionalHandleCreate(g, value, cudart.cudaGraphConditionalHandleFlags.cudaGraphCondAssignDefault),
        'ConditionalHandleCreate',
      );
      const params = new cudart.cudaGraphNodeParams({ type: cudart.cudaGraphNodeType.cudaGraphNodeTypeConditional });
      params.conditional = { handle, type: cudart.cudaGraphConditionalNodeType.cudaGraphCondTypeIf, size: 1 };
      ok(cudart.cudaGraphAddNode(g, null, null, 0, params), 'cudaGraphAddNode');
      const body = koffi.decode(params.conditional.phGraph_out, 'uint64_t') as bigint;
      expect(body).not.toBe(0n);
      ok(
        cudart.cudaGraphAddKernelNode(
          cudart.cudaGraph_t(body),
          null,
          0,
          new cudart.cudaKernelNodeParams({
            func: kernel,
            gridDim: grid,
            blockDim: block,
            kernelParams: [cudart.ptr(d), cudart.i32(3), cudart.i32(N)],
          }),
        ),
        'body kernel',
      );
      const [exec] = ok(cudart.cudaGraphInstantiate(g, 0n), 'cudaGraphInstantiate');
      ok(cudart.cudaGraphLaunch(exec, s) as [cudart.cudaError_t], 'cudaGraphLaunch');
      ok(cudart.cudaStreamSynchronize(s) as [cudart.cudaError_t], 'sync');
      expect([value, read()[N - 1]]).toEqual([value, want]);
      cudart.cudaGraphExecDestroy(exec);
      cudart.cudaGraphDestroy(g);
    }
  });
});
