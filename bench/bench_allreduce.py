"""all_reduce bus bandwidth on 2 and 4 ranks: lccl and hccl on npu tensors vs gloo on CPU tensors, same run.

The world group is "cpu:gloo,npu:lccl" and a second group over the same ranks is "hccl":
lccl reduces through shared device memory (each rank reads its peers' tensors directly),
hccl orders each call after the npu stream and runs Gloo on CPU views of device memory,
gloo runs on ordinary CPU tensors. Bus bandwidth = bytes * 2(n-1)/n / time.

    .venv/bin/python bench/bench_allreduce.py [--max-mib 256] [--max-mib-4 64] [--seconds 0.3]
"""
import argparse
import multiprocessing as mp
import os
import socket
import time
from datetime import timedelta

import torch


def time_all_reduce(t: torch.Tensor, seconds: float, group=None) -> float:
    """Return the median seconds per all_reduce of ``t`` in ``group`` (every rank runs the same count)."""
    import torch.distributed as dist

    for _ in range(2):
        dist.all_reduce(t, group=group)
    # Agree on an iteration count so every rank issues the same number of collectives.
    start = time.perf_counter()
    dist.all_reduce(t, group=group)
    probe = torch.tensor([time.perf_counter() - start])
    dist.all_reduce(probe, op=dist.ReduceOp.MAX)
    iters = max(3, min(200, int(seconds / max(probe.item(), 1e-6))))
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        dist.all_reduce(t, group=group)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def rank_main(rank: int, world: int, port: int, sizes: list[int], seconds: float, out: mp.Queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    import torch.distributed as dist

    import torch_npu  # noqa: F401

    dist.init_process_group("cpu:gloo,npu:lccl", timeout=timedelta(seconds=120))
    hccl_group = dist.new_group(backend="hccl")
    rows = []
    for nbytes in sizes:
        n = nbytes // 4
        on_npu = torch.ones(n, device="npu")
        lccl = time_all_reduce(on_npu, seconds)
        hccl = time_all_reduce(on_npu, seconds, hccl_group)
        del on_npu  # one message's buffers at a time (4 ranks x 256 MiB would not fit the budget)
        torch.npu.empty_cache()
        gloo = time_all_reduce(torch.ones(n), seconds)
        rows.append((nbytes, lccl, hccl, gloo))
    dist.destroy_process_group()
    if rank == 0:
        out.put(rows)


def human(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def run_world(world: int, sizes: list[int], seconds: float) -> list[tuple]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, world, port, sizes, seconds, out)) for r in range(world)]
    for p in procs:
        p.start()
    rows = out.get(timeout=1800)
    for p in procs:
        p.join()
    return rows


def sizes_up_to(max_mib: int) -> list[int]:
    sizes = [1 << 10]
    while sizes[-1] * 4 <= max_mib << 20:
        sizes.append(sizes[-1] * 4)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mib", type=int, default=256, help="largest message on 2 ranks (default 256 MiB)")
    parser.add_argument("--max-mib-4", type=int, default=64, help="largest message on 4 ranks (default 64 MiB)")
    parser.add_argument("--seconds", type=float, default=0.3, help="time per size and backend (default 0.3)")
    args = parser.parse_args()
    for world, max_mib in ((2, args.max_mib), (4, args.max_mib_4)):
        rows = run_world(world, sizes_up_to(max_mib), args.seconds)
        factor = 2 * (world - 1) / world
        print(f"all_reduce float32, {world} ranks, bus bandwidth GB/s (median time)")
        print(f"{'size':>8} {'lccl npu':>9} {'hccl npu':>9} {'gloo cpu':>9} {'lccl/hccl':>10} {'lccl us':>9} "
              f"{'hccl us':>9} {'gloo us':>9}")
        for nbytes, lccl, hccl, gloo in rows:
            bw = [nbytes * factor / t / 1e9 for t in (lccl, hccl, gloo)]
            print(f"{human(nbytes):>8} {bw[0]:>9.3f} {bw[1]:>9.3f} {bw[2]:>9.3f} {bw[0] / bw[1]:>10.2f} "
                  f"{lccl * 1e6:>9.0f} {hccl * 1e6:>9.0f} {gloo * 1e6:>9.0f}")


if __name__ == "__main__":
    main()
