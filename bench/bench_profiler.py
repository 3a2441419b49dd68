"""What profiling costs on the eager hit path, each against a peer measured in the same run.

A loop of `x + y` on 1-element npu tensors (cached kernel: key, allocate, launch), in
microseconds per op:
  off          no profiler: the runtime's only cost is one relaxed atomic load per task
  cpu          torch.profiler with ProfilerActivity.CPU only (torch's own per-op recording)
  cpu+npu      ProfilerActivity.CPU and NPU: adds the runtime records and the Kineto plug-in
and, for scale, torch on the CPU. The plug-in's own cost is cpu+npu minus cpu. Each
figure is the best of several interleaved rounds (the machine is shared).
"""

from __future__ import annotations

import time
import warnings

import torch
from torch.profiler import ProfilerActivity, profile

import torch_npu  # noqa: F401

CALLS = 20000
ROUNDS = 5


def loop_us(x: torch.Tensor, y: torch.Tensor, sync) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        x + y
    sync()
    return (time.perf_counter() - start) / CALLS * 1e6


def profiled_us(x: torch.Tensor, y: torch.Tensor, activities: list[ProfilerActivity]) -> float:
    with profile(activities=activities):
        return loop_us(x, y, torch.npu.synchronize)


def main() -> None:
    warnings.filterwarnings("ignore")
    x, y = torch.randn(1), torch.randn(1)
    xn, yn = x.npu(), y.npu()
    (xn + yn).cpu()  # compile once
    profiled_us(xn, yn, [ProfilerActivity.CPU, ProfilerActivity.NPU])  # Kineto's one-time init
    best = {"off": float("inf"), "cpu": float("inf"), "cpu+npu": float("inf"), "torch CPU": float("inf")}
    for _ in range(ROUNDS):
        best["off"] = min(best["off"], loop_us(xn, yn, torch.npu.synchronize))
        best["cpu"] = min(best["cpu"], profiled_us(xn, yn, [ProfilerActivity.CPU]))
        best["cpu+npu"] = min(best["cpu+npu"], profiled_us(xn, yn, [ProfilerActivity.CPU, ProfilerActivity.NPU]))
        best["torch CPU"] = min(best["torch CPU"], loop_us(x, y, lambda: None))
    assert torch_npu._C._profiler_pending_records() == 0 and not torch_npu._C._profiler_runtime_enabled()
    print("x + y, 1 element, us/op: " + ", ".join(f"{k} {v:.2f}" for k, v in best.items()))
    print(f"profiler off vs torch CPU: {best['off'] / best['torch CPU']:.2f}x; "
          f"CPU-only profiling: {best['cpu'] / best['off']:.2f}x of off; "
          f"CPU+NPU profiling: {best['cpu+npu'] / best['off']:.2f}x of off "
          f"(plug-in and records: +{best['cpu+npu'] - best['cpu']:.2f} us/op)")


if __name__ == "__main__":
    main()
