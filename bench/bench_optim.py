"""Optimizer step time on the NPU for 200 parameter tensors / 16.4M elements (float32), same run:
torch_npu.optim.NpuFusedAdamW vs torch.optim.AdamW foreach / fused / for-loop on npu, and torch's
fused AdamW on the CPU as the peer; plus the launches each step costs (compiled kernels, device copies from Python) and the device memory each holds at its peak.

Memory: one configuration at a time (params + grads + 2 states = 262 MB, plus the step's temporaries;
NpuFusedAdamW peaks at about twice that), so the process stays under 1 GiB of host memory.
Steps are timed one by one and the median is reported: the host is shared, single steps get preempted.
"""

from __future__ import annotations

import gc
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
WARMUP, STEPS = 2, 7


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


def _sync(device: str) -> None:
    if device == "npu":
        torch.npu.synchronize()


def measure(name: str, device: str, make: Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer]) -> float:
    if device == "npu":
        torch.npu.reset_peak_memory_stats()
    params = _params(device)
    opt = make(params)
    for _ in range(WARMUP):
        opt.step()
    _sync(device)
    times = []
    for _ in range(STEPS):
        start = time.perf_counter()
        opt.step()
        _sync(device)
        times.append(time.perf_counter() - start)
    ms = statistics.median(times) * 1e3
    launches = ""
    if device == "npu":
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
    print(f"{name:34s} {ms:9.1f} ms/step   {launches}", flush=True)
    del opt, params
    gc.collect()
    if device == "npu":
        torch.npu.empty_cache()  # one configuration's blocks at a time (host memory is shared)
    return ms


def main() -> None:
    numel = sum(torch.Size(s).numel() for s in SHAPES)
    print(f"AdamW step, {N_TENSORS} float32 tensors, {numel / 1e6:.1f}M elements, "
          f"{torch.get_num_threads()} CPU threads")
    kw = dict(lr=1e-3, weight_decay=1e-2)
    fused = measure("torch_npu NpuFusedAdamW", "npu", lambda p: torch_npu.optim.NpuFusedAdamW(p, **kw))
    foreach = measure("torch.optim AdamW foreach (npu)", "npu", lambda p: torch.optim.AdamW(p, foreach=True, **kw))
    loop = measure("torch.optim AdamW for-loop (npu)", "npu", lambda p: torch.optim.AdamW(p, foreach=False, **kw))
    try:
        measure("torch.optim AdamW fused=True (npu)", "npu", lambda p: torch.optim.AdamW(p, fused=True, **kw))
    except RuntimeError as err:
        print(f"{'torch.optim AdamW fused=True (npu)':34s} not available: {str(err).splitlines()[0]}")
    # last: freed CPU tensors stay in the process heap, the npu configurations would add to them
    cpu = measure("torch CPU AdamW fused", "cpu", lambda p: torch.optim.AdamW(p, fused=True, **kw))
    print(f"NpuFusedAdamW vs CPU fused: {cpu / fused:.2f}x; vs npu foreach: {foreach / fused:.2f}x; "
          f"vs npu for-loop: {loop / fused:.2f}x")


if __name__ == "__main__":
    main()
