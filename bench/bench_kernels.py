"""Simulated-device kernels vs torch CPU on the same threads: 16M f32 elementwise chain, 1024^3 matmul.

Prints kernel time of the sim target (blocks spread over a pool of N host threads, as the runtime's
AI-core pool does) against torch with torch.set_num_threads(N), the ratio torch/sim (>1 = sim
faster), and the median compile time per kernel over a set of distinct kernels (cold cache).
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

from npu_mlir.frontend import import_fx_graph
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

THREADS = min(os.cpu_count() or 1, 8)


def best_ms(fn, repeat: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def compare(name: str, fn, inputs, blocks: int) -> None:
    graph = import_fx_graph(fn, inputs)
    kernel = compile_linalg(graph.module, SimTiling(blocks), name=name)
    (out,) = run_on_host(kernel, inputs, threads=THREADS)
    torch.testing.assert_close(out, fn(*inputs), rtol=1e-4, atol=1e-4)
    sim = best_ms(lambda: run_on_host(kernel, inputs, threads=THREADS))
    ref = best_ms(lambda: fn(*inputs))
    print(f"{name:28s} sim {sim:8.2f} ms  torch {ref:8.2f} ms  torch/sim {ref / sim:5.2f}x  "
          f"(block_dim {kernel.block_dim}, {THREADS} threads, compile {kernel.compile_ms:.0f} ms)")


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the linker): robust to a busy machine."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def compile_times() -> tuple[list[float], list[float]]:
    x, w = torch.randn(256, 512), torch.randn(512, 256)
    graphs = [
        (lambda a: a + 1, [x]), (lambda a: torch.exp(a) * 2, [x]), (lambda a: torch.relu(a) - a, [x]),
        (lambda a: torch.tanh(a) + a * a, [x]), (lambda a: a.sum(-1), [x]), (lambda a: a.amax(0), [x]),
        (lambda a: torch.softmax(a, -1), [x]), (lambda a: F.gelu(a), [x]), (lambda a, b: a @ b, [x, w]),
        (lambda a: F.layer_norm(a, (512,)), [x]), (lambda a: torch.sigmoid(a) * a, [x]),
        (lambda a: a.half() * 3, [x]),
    ]
    wall, cpu = [], []
    for n, (fn, inputs) in enumerate(graphs):
        graph = import_fx_graph(fn, inputs)
        start = cpu_seconds()
        kernel = compile_linalg(graph.module, SimTiling(8), name=f"ct{n}")
        cpu.append((cpu_seconds() - start) * 1e3)
        wall.append(kernel.compile_ms)
    return wall, cpu


def main() -> None:
    os.environ["TORCH_NPU_KERNEL_CACHE"] = tempfile.mkdtemp(prefix="npu_bench_kernels_")
    torch.set_num_threads(THREADS)
    x, y = torch.randn(16 * 1024 * 1024), torch.randn(16 * 1024 * 1024)
    compare("elementwise x*y+1 relu (16M)", lambda a, b: torch.relu(a * b + 1.0), [x, y], blocks=48)
    compare("elementwise exp(x)*y (16M)", lambda a, b: torch.exp(a) * b, [x, y], blocks=48)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    compare("matmul 1024^3 f32", lambda a, b: a @ b, [a, b], blocks=24)
    wall, cpu = compile_times()
    print(f"compile time per kernel (cold, {len(wall)} kernels): median {statistics.median(wall):.1f} ms wall, "
          f"{statistics.median(cpu):.1f} ms CPU; max {max(wall):.1f} ms wall; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
