"""Optimizer step time on the NPU for 200 parameter tensors / 16.4M elements (float32), same run:
torch_npu.optim.NpuFusedAdamW vs torch.optim.AdamW foreach / fused / for-loop on npu, and torch's
fused AdamW on the CPU as the peer; plus the launches each step costs (compiled kernels, device copies from Python) and the device memory each holds at its peak.

Memory: one configuration at a time (params + grads + 2 states = 262 MB, plus the step's temporaries;
NpuFusedAdamW peaks at about twice that), so the process stays under 1 GiB of host memory.
Steps are timed one by one and the median is reported: the host is shared, single steps get preempted.
Each also reports the process CPU time per step (the simulated device's threads are this process's)
and how long its threads waited for a core (run-queue time, /proc/self/task/*/schedstat): on a loaded
host, wall time is mostly that wait, CPU time is the work a step costs. A step that keeps the two core
threads busy gets its process's fair share of the cores and waits most; the for-loop's 1600 short
launches sleep between kernels, and the scheduler runs a thread that slept as soon as it wakes.
The configurations run in ROUNDS rounds, one after another within each round, and each reports its
median over the rounds: the host's load drifts over a run, and a configuration measured only once
would take the load of its moment.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections import Counter
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import torch_npu

N_TENSORS = 200
# alternating 384x256 and 256x256: 16.4M elements
SHAPES = [(384, 256) if i % 2 == 0 else (256, 256) for i in range(N_TENSORS)]
WARMUP, STEPS, ROUNDS = 2, 5, 3


class _CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def _params(device: str) -> list[torch.nn.Parameter]:
    gen = torch.Generator().manual_seed(0)
    params = []
    for shape in SHAPES:
        p = torch.nn.Parameter(torch.randn(shape, generator=gen).to(device))
        p.grad = torch.randn(shape, generator=gen).mul_(1e-2).to(device)
        params.append(p)
    return params


def _run_queue_ns() -> int:
    """Nanoseconds this process's threads have spent runnable but waiting for a core."""
    total = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended, or a kernel without schedstats
    return total


def _sync(device: str) -> None:
    if device == "npu":
        torch.npu.synchronize()


def measure(device: str, make: Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer],
            count_launches: bool) -> tuple[float, float, float, str]:
    """Median wall and CPU ms per step, mean thread-ms per step waiting for a core (summed over the
    process's threads); with `count_launches`, what one more step launches (npu)."""
    if device == "npu":
        torch.npu.reset_peak_memory_stats()
    params = _params(device)
    opt = make(params)
    for _ in range(WARMUP):
        opt.step()
    _sync(device)
    times, cpu_times = [], []
    waited = _run_queue_ns()
    for _ in range(STEPS):
        start, cpu_start = time.perf_counter(), time.process_time()
        opt.step()
        _sync(device)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    wait_ms = (_run_queue_ns() - waited) / STEPS / 1e6
    ms, cpu_ms = statistics.median(times) * 1e3, statistics.median(cpu_times) * 1e3
    launches = ""
    if device == "npu" and count_launches:
        torch.npu.reset_eager_stats()
        with _CountOps() as counted:
            opt.step()
        _sync(device)
        compiled = sum(row["compiled"] for row in torch.npu.eager_stats().values())
        fallback = sum(row["fallback"] for row in torch.npu.eager_stats().values())
        copies = counted.ops["aten.copy_"] + counted.ops["aten._copy_from"]
        # copies a C++ kernel makes (fused=True writes its results back) are not seen from Python
        launches = f"{compiled:5d} compiled kernels + {copies:4d} device copies per step"
        launches += f", peak {torch.npu.max_memory_reserved() / 2**20:.0f} MiB"
        launches += f" ({fallback} CPU fallback calls)" if fallback else ""
    del opt, params
    gc.collect()
    if device == "npu":
        torch.npu.empty_cache()  # one configuration's blocks at a time (host memory is shared)
    return ms, cpu_ms, wait_ms, launches


def main() -> None:
    numel = sum(torch.Size(s).numel() for s in SHAPES)
    print(f"AdamW step, {N_TENSORS} float32 tensors, {numel / 1e6:.1f}M elements, "
          f"{torch.get_num_threads()} CPU threads, median of {ROUNDS} rounds")
    kw = dict(lr=1e-3, weight_decay=1e-2)
    configs = {
        "torch_npu NpuFusedAdamW": ("npu", lambda p: torch_npu.optim.NpuFusedAdamW(p, **kw)),
        "torch.optim AdamW foreach (npu)": ("npu", lambda p: torch.optim.AdamW(p, foreach=True, **kw)),
        "torch.optim AdamW for-loop (npu)": ("npu", lambda p: torch.optim.AdamW(p, foreach=False, **kw)),
        "torch.optim AdamW fused=True (npu)": ("npu", lambda p: torch.optim.AdamW(p, fused=True, **kw)),
        # last: freed CPU tensors stay in the process heap, the npu configurations would add to them
        "torch CPU AdamW fused": ("cpu", lambda p: torch.optim.AdamW(p, fused=True, **kw)),
    }
    times: dict[str, list[float]] = {name: [] for name in configs}
    cpu_times: dict[str, list[float]] = {name: [] for name in configs}
    waits: dict[str, list[float]] = {name: [] for name in configs}
    launches: dict[str, str] = {}
    for round_ in range(ROUNDS):
        for name, (device, make) in configs.items():
            wall, cpu, wait, counted = measure(device, make, count_launches=round_ == 0)
            times[name].append(wall)
            cpu_times[name].append(cpu)
            waits[name].append(wait)
            launches.setdefault(name, counted)
    ms = {name: statistics.median(t) for name, t in times.items()}
    cpu_ms = {name: statistics.median(t) for name, t in cpu_times.items()}
    for name in configs:
        print(f"{name:34s} {ms[name]:9.1f} ms/step ({cpu_ms[name]:6.1f} ms CPU, "
              f"{statistics.median(waits[name]):6.1f} thread-ms waiting for a core)   {launches[name]}", flush=True)
    fused = ms["torch_npu NpuFusedAdamW"]
    print(f"NpuFusedAdamW vs CPU fused: {ms['torch CPU AdamW fused'] / fused:.2f}x; "
          f"vs npu foreach: {ms['torch.optim AdamW foreach (npu)'] / fused:.2f}x; "
          f"vs npu for-loop: {ms['torch.optim AdamW for-loop (npu)'] / fused:.2f}x; "
          f"torch fused=True vs npu for-loop: "
          f"{ms['torch.optim AdamW for-loop (npu)'] / ms['torch.optim AdamW fused=True (npu)']:.2f}x")
    loop_cpu = cpu_ms["torch.optim AdamW for-loop (npu)"]
    print(f"CPU time vs npu for-loop: NpuFusedAdamW {loop_cpu / cpu_ms['torch_npu NpuFusedAdamW']:.2f}x, "
          f"fused=True {loop_cpu / cpu_ms['torch.optim AdamW fused=True (npu)']:.2f}x, "
          f"foreach {loop_cpu / cpu_ms['torch.optim AdamW foreach (npu)']:.2f}x")


if __name__ == "__main__":
    main()
