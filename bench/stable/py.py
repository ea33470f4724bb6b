# The Python side of the stable benchmark (bench/stable/run.ts): cuda-python (cuda.bindings) or CuPy
# as a long-lived process that times one operation per request, like bench/stable/c.cu.
#   python3 py.py cuda-python|cupy <kernels.cubin>   then "<op> <loop|batch> <n>" -> ns per call or "-"
import sys, time
import numpy as np

impl, cubin = sys.argv[1], sys.argv[2]
B = 128


def loop(f, n):
    t = time.perf_counter_ns()
    for _ in range(n):
        f()
    return (time.perf_counter_ns() - t) / n


def setup_cuda_python():
    from cuda.bindings import runtime as rt, driver as drv

    def ok(r, what):
        err = r[0] if isinstance(r, tuple) else r
        if int(err) != 0:
            raise RuntimeError(f"{what}: {err}")
        return r[1] if isinstance(r, tuple) and len(r) == 2 else r

    ok(rt.cudaSetDevice(0), "cudaSetDevice"); rt.cudaFree(0)
    s = ok(rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking), "cudaStreamCreateWithFlags")
    ev = ok(rt.cudaEventCreateWithFlags(rt.cudaEventDisableTiming), "cudaEventCreateWithFlags")
    rt.cudaEventRecord(ev, s); rt.cudaStreamSynchronize(s)
    lib = ok(rt.cudaLibraryLoadFromFile(cubin.encode(), None, None, 0, None, None, 0), "cudaLibraryLoadFromFile")
    k0 = ok(rt.cudaLibraryGetKernel(lib, b"empty"), "cudaLibraryGetKernel")
    k8 = ok(rt.cudaLibraryGetKernel(lib, b"empty8"), "cudaLibraryGetKernel")
    ok(drv.cuInit(0), "cuInit")
    mod = ok(drv.cuModuleLoad(cubin.encode()), "cuModuleLoad")
    f0 = ok(drv.cuModuleGetFunction(mod, b"empty"), "cuModuleGetFunction")
    f8 = ok(drv.cuModuleGetFunction(mod, b"empty8"), "cuModuleGetFunction")
    cs = drv.CUstream(int(s))
    d = ok(rt.cudaMalloc(1 << 20), "cudaMalloc")
    hv = np.ones(1, dtype=np.int32)
    pinned = ok(rt.cudaMallocHost(4096), "cudaMallocHost")
    g = rt.dim3(); g.x = g.y = g.z = 1
    # The 8 arguments packed once, as the C anchor's void *args[8]: an address cuda-python passes on.
    vals = [np.array([int(d)], np.uint64), np.array([int(d)], np.uint64), np.array([1], np.int32), np.array([2], np.uint32),
            np.array([3], np.float32), np.array([4], np.float32), np.array([5], np.int64), np.array([6], np.float64)]
    ptrs = np.array([v.ctypes.data for v in vals], dtype=np.uint64)
    args8 = ptrs.ctypes.data
    # cudaLaunchKernel's func: the cudaKernel_t as cuda-python takes it (the object, else its address).
    def launchable(k, args):
        last = None
        for cand in (k, int(k)):
            try:
                if int(rt.cudaLaunchKernel(cand, g, g, args, 0, s)[0]) == 0:
                    return cand
                last = "status"
            except Exception as e:  # noqa: BLE001 - the next form is tried
                last = repr(e)
        print(f"# cuda-python cudaLaunchKernel refused the library kernel: {last}", file=sys.stderr)
        return None
    l0, l8 = launchable(k0, 0), launchable(k8, args8)
    rt.cudaStreamSynchronize(s)
    ok(rt.cudaStreamBeginCapture(s, rt.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture")
    drv.cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, cs, 0, 0)
    graph = ok(rt.cudaStreamEndCapture(s), "cudaStreamEndCapture")
    exe = ok(rt.cudaGraphInstantiate(graph, 0), "cudaGraphInstantiate")
    H2D, D2H = rt.cudaMemcpyKind.cudaMemcpyHostToDevice, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost

    def props5():
        p = rt.cudaGetDeviceProperties(0)[1]
        return len(p.name) + p.totalGlobalMem + p.multiProcessorCount + p.major + p.minor

    def mf():
        rt.cudaFree(rt.cudaMalloc(1 << 20)[1])

    def mfa():
        rt.cudaFreeAsync(rt.cudaMallocAsync(1 << 20, s)[1], s)

    def ls():
        drv.cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, cs, 0, 0); rt.cudaStreamSynchronize(s)

    ops = {
        "cudaGetDevice": lambda: rt.cudaGetDevice(),
        "cudaPeekAtLastError": lambda: rt.cudaPeekAtLastError(),
        "cudaStreamQuery": lambda: rt.cudaStreamQuery(s),
        "cudaEventQuery": lambda: rt.cudaEventQuery(ev),
        "cudaEventRecord": lambda: rt.cudaEventRecord(ev, s),
        "cudaGetDeviceProperties": lambda: rt.cudaGetDeviceProperties(0),
        "cudaGetDeviceProperties+5fields": props5,
        "cudaMalloc+cudaFree_1MiB": mf,
        "cudaMallocAsync+cudaFreeAsync_1MiB": mfa,
        "cudaMemcpy_H2D_4B": lambda: rt.cudaMemcpy(d, hv, 4, H2D),
        "cudaMemcpy_D2H_4B": lambda: rt.cudaMemcpy(hv, d, 4, D2H),
        "cudaMemcpyAsync_H2D_4B_pinned": lambda: rt.cudaMemcpyAsync(d, pinned, 4, H2D, s),
        "cuLaunchKernel_empty": lambda: drv.cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, cs, 0, 0),
        "cuLaunchKernel_8args": lambda: drv.cuLaunchKernel(f8, 1, 1, 1, 1, 1, 1, 0, cs, args8, 0),
        "cudaGraphLaunch_1kernel": lambda: rt.cudaGraphLaunch(exe, s),
        "launch+sync_empty": ls,
    }
    if l0 is not None:
        ops["cudaLaunchKernel_empty"] = lambda: rt.cudaLaunchKernel(l0, g, g, 0, 0, s)
    if l8 is not None:
        ops["cudaLaunchKernel_8args"] = lambda: rt.cudaLaunchKernel(l8, g, g, args8, 0, s)
    # Each operation once, checked: a failing call must not be timed as a fast one.
    for name in [n for n in ["cudaLaunchKernel_empty", "cudaLaunchKernel_8args"] if n in ops] + ["cudaGraphLaunch_1kernel", "cudaMemcpyAsync_H2D_4B_pinned", "cudaEventRecord"]:
        ok(ops[name](), name)
    ok(drv.cuLaunchKernel(f8, 1, 1, 1, 1, 1, 1, 0, cs, args8, 0), "cuLaunchKernel")
    ok(rt.cudaStreamSynchronize(s), "cudaStreamSynchronize")
    return ops, lambda: rt.cudaStreamSynchronize(s)


def setup_cupy():
    import cupy as cp
    r = cp.cuda.runtime
    cp.cuda.Device(0).use()
    s = cp.cuda.Stream(non_blocking=True)
    ev = cp.cuda.Event(disable_timing=True); ev.record(s); s.synchronize()
    d = r.malloc(1 << 20)
    hv = np.ones(1, dtype=np.int32)
    pinned = cp.cuda.alloc_pinned_memory(4096)
    mod = cp.RawModule(path=cubin)
    k0, k8 = mod.get_function("empty"), mod.get_function("empty8")
    dp = cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(d, 1 << 20, None), 0)
    a8 = (dp, dp, np.int32(1), np.uint32(2), np.float32(3), np.float32(4), np.int64(5), np.float64(6))
    s.use()
    s.begin_capture()
    k0((1,), (1,), ())
    graph = s.end_capture()
    graph.upload(s)

    def props5():
        p = r.getDeviceProperties(0)
        return len(p["name"]) + p["totalGlobalMem"] + p["multiProcessorCount"] + p["major"] + p["minor"]

    def mf():
        r.free(r.malloc(1 << 20))

    def mfa():
        r.freeAsync(r.mallocAsync(1 << 20, s.ptr), s.ptr)

    def ls():
        k0((1,), (1,), ()); s.synchronize()

    ops = {
        "cudaGetDevice": lambda: r.getDevice(),
        "cudaStreamQuery": lambda: r.streamQuery(s.ptr),
        "cudaEventQuery": lambda: r.eventQuery(ev.ptr),
        "cudaEventRecord": lambda: r.eventRecord(ev.ptr, s.ptr),
        "cudaGetDeviceProperties": lambda: r.getDeviceProperties(0),
        "cudaGetDeviceProperties+5fields": props5,
        "cudaMalloc+cudaFree_1MiB": mf,
        "cudaMallocAsync+cudaFreeAsync_1MiB": mfa,
        "cudaMemcpy_H2D_4B": lambda: r.memcpy(d, hv.ctypes.data, 4, 1),
        "cudaMemcpy_D2H_4B": lambda: r.memcpy(hv.ctypes.data, d, 4, 2),
        "cudaMemcpyAsync_H2D_4B_pinned": lambda: r.memcpyAsync(d, pinned.ptr, 4, 1, s.ptr),
        "cuLaunchKernel_empty": lambda: k0((1,), (1,), ()),
        "cuLaunchKernel_8args": lambda: k8((1,), (1,), a8),
        "cudaGraphLaunch_1kernel": lambda: graph.launch(s),
        "launch+sync_empty": ls,
    }
    # No row for CuPy's own pool object (MemoryAsyncPool.malloc's MemoryPointer, core's pool row's
    # like): its constructor sets the pool's release threshold to UINT64_MAX and it takes the
    # threshold as its limit (with the threshold at 0, as every other row here runs, malloc raises
    # OutOfMemoryError), so it cannot share this process's pool with the raw rows. Runs 15 and 16
    # (bench/README.md) timed it with the raised threshold.
    for name in ["cuLaunchKernel_8args", "cudaGraphLaunch_1kernel"]:
        ops[name]()
    s.synchronize()
    return ops, s.synchronize


ops, sync = setup_cuda_python() if impl == "cuda-python" else setup_cupy()


def batch(f, n):
    total = 0
    batches = (n + B - 1) // B
    for _ in range(batches):
        t = time.perf_counter_ns()
        for _ in range(B):
            f()
        total += time.perf_counter_ns() - t
        sync()
    return total / (batches * B)


print("ready", flush=True)
for line in sys.stdin:
    name, kind, n = line.split()
    f = ops.get(name)
    if f is None:
        print("-", flush=True)
        continue
    v = batch(f, int(n)) if kind == "batch" else loop(f, int(n))
    sync()
    print(f"{v:.2f}", flush=True)
