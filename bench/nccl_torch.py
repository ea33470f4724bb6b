# The PyTorch side of bench/nccl-busbw.ts: torch.distributed's all_reduce (NCCL backend), one process
# per GPU, the same sizes and the same method (u8 check, then f32 timed: 5 warm-up calls, `iters`
# calls agreed by an all-reduce (max) of rank 0's estimate, one synchronize, median of three loops).
#   python bench/nccl_torch.py MIN MAX NRANKS  ->  a JSON line of versions, then one per size (rank 0)
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(r, n, lo, hi, port):
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    torch.cuda.set_device(r)
    dev = torch.device("cuda", r)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=r, world_size=n, device_id=dev)
    send = torch.empty(hi, dtype=torch.uint8, device=dev)
    recv = torch.empty(hi, dtype=torch.uint8, device=dev)
    bus = 2 * (n - 1) / n
    wrong_total = 0
    b = lo
    while b <= hi:
        s = send[:b]
        d = recv[:b]
        s.fill_(r + 1)
        d.copy_(s)
        dist.all_reduce(d)  # in place, u8 sum
        torch.cuda.synchronize()
        want = n * (n + 1) // 2
        bad = int((d != want).sum().item())
        wrong_total += bad
        f = s.view(torch.float32)
        for _ in range(5):
            dist.all_reduce(f)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(5):
            dist.all_reduce(f)
        torch.cuda.synchronize()
        est = (time.perf_counter() - t0) * 1e3 / 5
        agree = torch.tensor([min(2000, max(20, round(100 / max(est, 1e-6))))], dtype=torch.int32, device=dev)
        dist.all_reduce(agree, op=dist.ReduceOp.MAX)
        iters = int(agree.item())

        def timed(t):
            loops = []
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(iters):
                    dist.all_reduce(t)
                torch.cuda.synchronize()
                loops.append((time.perf_counter() - t0) * 1e6 / iters)
            return sorted(loops)[1]

        us = timed(f)
        # Out of place has no torch.distributed call of its own: a copy then in place is not the
        # same work, so the row repeats the in-place time there.
        algbw = b / (us * 1e3)
        if r == 0:
            print(json.dumps({"bytes": b, "iters": iters, "inPlaceUs": us, "inPlaceAlgbw": algbw, "inPlaceBusbw": algbw * bus,
                              "outOfPlaceUs": us, "outOfPlaceBusbw": algbw * bus, "wrong": bad}), flush=True)
        b *= 2
    dist.barrier()
    dist.destroy_process_group()
    if wrong_total:
        sys.exit(1)


def main():
    lo, hi, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    v = torch.cuda.nccl.version()
    print(json.dumps({"torch": torch.__version__, "nccl": ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)}), flush=True)
    mp.spawn(rank_main, args=(n, lo, hi, port), nprocs=n, join=True)


if __name__ == "__main__":
    main()
