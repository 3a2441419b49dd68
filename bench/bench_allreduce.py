"""all_reduce bus bandwidth on 2 ranks: hccl on npu tensors vs gloo on CPU tensors, same run.

Both go through one process group created as "cpu:gloo,npu:hccl", so the only difference
is the backend path: hccl orders each call after the npu stream and runs Gloo on CPU views
of device memory; gloo runs on ordinary CPU tensors. Bus bandwidth = bytes * 2(n-1)/n / time.

    .venv/bin/python bench/bench_allreduce.py [--max-mib 64] [--seconds 0.3]
"""
import argparse
import multiprocessing as mp
import os
import socket
import time
from datetime import timedelta

import torch


def time_all_reduce(t: torch.Tensor, seconds: float) -> float:
    """Return the median seconds per all_reduce of ``t`` (every rank runs the same count)."""
    import torch.distributed as dist

    for _ in range(2):
        dist.all_reduce(t)
    # Agree on an iteration count so both ranks issue the same number of collectives.
    start = time.perf_counter()
    dist.all_reduce(t)
    probe = torch.tensor([time.perf_counter() - start])
    dist.all_reduce(probe, op=dist.ReduceOp.MAX)
    iters = max(3, min(200, int(seconds / max(probe.item(), 1e-6))))
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def rank_main(rank: int, world: int, port: int, sizes: list[int], seconds: float, out: mp.Queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    import torch.distributed as dist

    import torch_npu  # noqa: F401

    dist.init_process_group("cpu:gloo,npu:hccl", timeout=timedelta(seconds=120))
    rows = []
    for nbytes in sizes:
        n = nbytes // 4
        hccl = time_all_reduce(torch.ones(n, device="npu"), seconds)
        gloo = time_all_reduce(torch.ones(n), seconds)
        rows.append((nbytes, hccl, gloo))
    dist.destroy_process_group()
    if rank == 0:
        out.put(rows)


def human(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mib", type=int, default=64, help="largest message (default 64 MiB)")
    parser.add_argument("--seconds", type=float, default=0.3, help="time per size and backend (default 0.3)")
    args = parser.parse_args()
    sizes = [1 << 10]
    while sizes[-1] * 4 <= args.max_mib << 20:
        sizes.append(sizes[-1] * 4)
    world = 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, world, port, sizes, args.seconds, out)) for r in range(world)]
    for p in procs:
        p.start()
    rows = out.get(timeout=900)
    for p in procs:
        p.join()
    factor = 2 * (world - 1) / world
    print(f"all_reduce float32, {world} ranks, bus bandwidth GB/s (median time)")
    print(f"{'size':>8} {'hccl npu':>10} {'gloo cpu':>10} {'hccl/gloo':>10} {'hccl us':>9} {'gloo us':>9}")
    for nbytes, hccl, gloo in rows:
        bw_h, bw_g = nbytes * factor / hccl / 1e9, nbytes * factor / gloo / 1e9
        print(f"{human(nbytes):>8} {bw_h:>10.3f} {bw_g:>10.3f} {bw_h / bw_g:>10.2f} {hccl * 1e6:>9.0f} {gloo * 1e6:>9.0f}")


if __name__ == "__main__":
    main()
