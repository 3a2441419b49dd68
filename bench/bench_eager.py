"""The eager path's costs, each against a peer measured in the same run.

(a) Hit path: a loop of `x + y` on 1-element tensors, npu (cached kernel: key, allocate, launch on
    the stream) vs torch on the CPU; microseconds per op and their ratio (aim: <= 2x).
(b) Miss latency: the first call of 50 distinct op keys (10 ops x 5 shapes), cold (empty disk
    cache: plan + compile worker + link + load) and warm (disk cache filled, memory cache
    cleared: plan + verify + dlopen); median and p95 per key, and the cold/warm ratio.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

import torch

import torch_npu
from torch_npu import _C
from torch_npu.eager.workers import pool

CALLS = 20000
OPS = [torch.add, torch.mul, torch.sub, torch.maximum, torch.minimum,
       lambda a, b: torch.exp(a), lambda a, b: torch.tanh(a), lambda a, b: torch.relu(a),
       lambda a, b: torch.sigmoid(a), lambda a, b: a * 0.5 + b]
SHAPES = [(3, 17), (5, 29), (8, 41), (2, 3, 11), (64,)]


def loop_us(x: torch.Tensor, y: torch.Tensor, sync) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(CALLS):
            x + y
        sync()
        best = min(best, (time.perf_counter() - start) / CALLS * 1e6)
    return best


def hit_path() -> None:
    x, y = torch.randn(1), torch.randn(1)
    xn, yn = x.npu(), y.npu()
    (xn + yn).cpu()  # compile once
    torch.npu.reset_eager_stats()
    npu_us = loop_us(xn, yn, torch.npu.synchronize)
    cpu_us = loop_us(x, y, lambda: None)
    stats = torch.npu.eager_stats()["aten::add.Tensor"]
    assert stats["misses"] == 0 and stats["fallback"] == 0, stats
    print(f"(a) x + y, 1 element: npu {npu_us:.2f} us/op, torch CPU {cpu_us:.2f} us/op, "
          f"ratio {npu_us / cpu_us:.2f}x (aim <= 2x)")


def first_calls_ms() -> list[float]:
    times = []
    for op in OPS:
        for shape in SHAPES:
            a, b = torch.randn(shape).npu(), torch.randn(shape).npu()
            start = time.perf_counter()
            op(a, b)
            torch.npu.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    return times


def p95(values: list[float]) -> float:
    return sorted(values)[int(round(0.95 * (len(values) - 1)))]


def miss_latency() -> None:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TORCH_NPU_KERNEL_CACHE"] = cache
        pool().start()
        # Workers import torch and the compiler once; the first compile pays that, not the 50 below.
        torch.neg(torch.randn(1).npu()).cpu()
        _C._eager_clear_memory_cache()
        cold = first_calls_ms()
        _C._eager_clear_memory_cache()
        warm = first_calls_ms()
        fallback = sum(r["fallback"] for r in torch.npu.eager_stats().values())
    print(f"(b) miss latency over {len(cold)} keys: cold median {statistics.median(cold):.1f} ms, "
          f"p95 {p95(cold):.1f} ms; warm disk cache median {statistics.median(warm):.2f} ms, "
          f"p95 {p95(warm):.2f} ms; cold/warm median ratio {statistics.median(cold) / statistics.median(warm):.0f}x"
          f" ({fallback} fallback calls)")


if __name__ == "__main__":
    hit_path()
    miss_latency()
