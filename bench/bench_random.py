"""Random draws on npu (compiled Philox4x32-10 kernels) vs torch CPU's generator, same process.

Each row is the median time of one call, synchronized (npu draws run on the stream's worker and the
AI-core pool; torch CPU uses its intra-op threads). Ratio = npu / CPU: below 1 the npu path is faster.

    .venv/bin/python bench/bench_random.py [--numel 16777216] [--reps 7]
"""
import argparse
import time
from typing import Callable

import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401


def median_ms(fn: Callable[[], object], sync: Callable[[], None], reps: int) -> float:
    fn()  # compiles (npu) or warms up (CPU) outside the timing
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numel", type=int, default=1 << 24)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    n = args.numel
    x_npu, x_cpu = torch.ones(n, device="npu"), torch.ones(n)
    cases = {
        "torch.rand": (lambda: torch.rand(n, device="npu"), lambda: torch.rand(n)),
        "torch.randn": (lambda: torch.randn(n, device="npu"), lambda: torch.randn(n)),
        "bernoulli_(0.3)": (lambda: x_npu.bernoulli_(0.3), lambda: x_cpu.bernoulli_(0.3)),
        "F.dropout(p=0.1)": (lambda: F.dropout(x_npu, 0.1), lambda: F.dropout(x_cpu, 0.1)),
        "randint(0, 1000)": (lambda: torch.randint(0, 1000, (n,), device="npu"), lambda: torch.randint(0, 1000, (n,))),
    }
    print(f"{n} elements, float32; torch CPU threads: {torch.get_num_threads()}")
    print(f"{'op':<18} {'npu ms':>9} {'cpu ms':>9} {'npu/cpu':>8}")
    for name, (on_npu, on_cpu) in cases.items():
        npu_ms = median_ms(on_npu, torch.npu.synchronize, args.reps)
        cpu_ms = median_ms(on_cpu, lambda: None, args.reps)
        print(f"{name:<18} {npu_ms:9.1f} {cpu_ms:9.1f} {npu_ms / cpu_ms:8.2f}", flush=True)
    fallbacks = {k: v["fallback"] for k, v in torch_npu.npu.eager_stats().items() if v["fallback"]}
    print(f"calls on the CPU fallback: {fallbacks or 'none'}")


if __name__ == "__main__":
    main()
