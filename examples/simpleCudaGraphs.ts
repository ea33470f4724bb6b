// simpleCudaGraphs: CUDA's sample of that name in spirit. The same work (copy the input to the
// device, clear the output, out += in * 2 in a kernel, copy the output back) made into a graph two
// ways, by stream capture and node by node; each graph's nodes are counted, and each is launched
// several times on new input, every element of every result checked.
//   npx tsx examples/simpleCudaGraphs.ts
// Exits with status 1, and one line on stderr saying why, when the driver or a device is missing.
import { cudart } from 'cuda-bindings';
import { blocksFor, check, deviceLine, dim, launch, loadKernel, runExample, verify, type Resources } from './lib/runtime';

const N = 1 << 20;
const BYTES = N * 4;
const THREADS = 256;
const SCALE = 2;
const LAUNCHES = 5;
const K = cudart.cudaMemcpyKind;

/** The graph that `enqueue` makes of the work it puts on `stream`. */
function capture(r: Resources, stream: cudart.cudaStream_t, enqueue: () => void): cudart.cudaGraph_t {
  check(cudart.cudaStreamBeginCapture(stream, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal), 'cudaStreamBeginCapture');
  try {
    enqueue();
  } catch (e) {
    const [, broken] = cudart.cudaStreamEndCapture(stream);
    if (broken !== null) cudart.cudaGraphDestroy(broken);
    throw e;
  }
  const [graph] = check(cudart.cudaStreamEndCapture(stream), 'cudaStreamEndCapture');
  r.defer(() => cudart.cudaGraphDestroy(graph));
  return graph;
}

/** The types of a graph's nodes, counted first and then fetched, as C does it. */
function nodeTypes(graph: cudart.cudaGraph_t): string[] {
  const [, count] = check(cudart.cudaGraphGetNodes(graph, 0), 'cudaGraphGetNodes(count)');
  const [nodes] = check(cudart.cudaGraphGetNodes(graph, count), `cudaGraphGetNodes(${count})`);
  return nodes.map((node) => {
    const [type] = check(cudart.cudaGraphNodeGetType(node), 'cudaGraphNodeGetType');
    return (cudart.cudaGraphNodeType[type] ?? String(type)).replace('cudaGraphNodeType', '');
  });
}

runExample('simpleCudaGraphs', (r) => {
  console.log(deviceLine());
  const kernel = loadKernel('samples.fatbin', 'scaleAccumulate');
  const hIn = r.pinnedFloats(N);
  const hOut = r.pinnedFloats(N);
  const dIn = r.malloc(BYTES);
  const dOut = r.malloc(BYTES);
  const stream = r.stream(cudart.cudaStreamNonBlocking);
  const blocks = blocksFor(N, THREADS);
  const args = [dOut, dIn, cudart.f32(SCALE), cudart.i32(N)];

  // 1. Stream capture: the calls are recorded, not run.
  const captured = capture(r, stream, () => {
    check(cudart.cudaMemcpyAsync(dIn, hIn.ptr, BYTES, K.cudaMemcpyHostToDevice, stream), 'cudaMemcpyAsync(H2D)');
    check(cudart.cudaMemsetAsync(dOut, 0, BYTES, stream), 'cudaMemsetAsync');
    launch(kernel, blocks, THREADS, args, stream);
    check(cudart.cudaMemcpyAsync(hOut.ptr, dOut, BYTES, K.cudaMemcpyDeviceToHost, stream), 'cudaMemcpyAsync(D2H)');
  });

  // 2. The same graph node by node: the kernel waits for the copy and the memset, the copy back for the kernel.
  const [explicit] = check(cudart.cudaGraphCreate(0), 'cudaGraphCreate');
  r.defer(() => cudart.cudaGraphDestroy(explicit));
  const [copyIn] = check(
    cudart.cudaGraphAddMemcpyNode1D(explicit, null, 0, dIn, hIn.ptr, BYTES, K.cudaMemcpyHostToDevice),
    'cudaGraphAddMemcpyNode1D(H2D)',
  );
  const memsetParams = new cudart.cudaMemsetParams({ dst: dOut, value: 0, elementSize: 4, width: N, height: 1, pitch: 0 });
  const [clear] = check(cudart.cudaGraphAddMemsetNode(explicit, null, 0, memsetParams), 'cudaGraphAddMemsetNode');
  // kernelParams takes the launch's typed arguments; the struct packs them and keeps them alive.
  const kernelParams = new cudart.cudaKernelNodeParams({
    func: kernel,
    gridDim: dim(blocks),
    blockDim: dim(THREADS),
    sharedMemBytes: 0,
    kernelParams: args,
    extra: null,
  });
  const [compute] = check(cudart.cudaGraphAddKernelNode(explicit, [copyIn, clear], 2, kernelParams), 'cudaGraphAddKernelNode');
  check(
    cudart.cudaGraphAddMemcpyNode1D(explicit, [compute], 1, hOut.ptr, dOut, BYTES, K.cudaMemcpyDeviceToHost),
    'cudaGraphAddMemcpyNode1D(D2H)',
  );

  let passed = true;
  for (const [label, graph] of [
    ['stream capture', captured],
    ['explicit nodes', explicit],
  ] as const) {
    const types = nodeTypes(graph);
    console.log(`graph by ${label}: ${types.length} nodes (${types.join(', ')})`);
    if (types.length !== 4) {
      console.error(`simpleCudaGraphs: the graph by ${label} has ${types.length} nodes, not 4`);
      passed = false;
    }
    const [exec] = check(cudart.cudaGraphInstantiate(graph, 0n), `cudaGraphInstantiate(${label})`);
    r.defer(() => cudart.cudaGraphExecDestroy(exec));
    for (let launchNo = 0; launchNo < LAUNCHES; launchNo++) {
      // New input in the same pinned buffer: the graph copies whatever is there when it runs.
      for (let i = 0; i < N; i++) hIn.data[i] = (i % 1000) + launchNo;
      hOut.data.fill(-1);
      check(cudart.cudaGraphLaunch(exec, stream), `cudaGraphLaunch(${label})`);
      check(cudart.cudaStreamSynchronize(stream), 'cudaStreamSynchronize');
      passed = verify(`graph by ${label}, launch ${launchNo + 1}`, hOut.data, (i) => hIn.data[i] * SCALE) && passed;
    }
    console.log(`  launched ${LAUNCHES} times, ${N} elements checked each time`);
  }
  return passed;
});
