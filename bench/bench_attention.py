"""npu_fusion_attention (one compiled kernel each way) vs torch CPU scaled_dot_product_attention.

Same process, same shapes (BNSD, float32): the forward alone, then forward + backward. A warm-up
call compiles the kernels; the median of timed calls is reported, each ending in a synchronize
(npu) so queued work is counted. `--shape B N S D` picks another size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable

import torch
import torch.nn.functional as F

import torch_npu

WARMUP, TIMED = 2, 10


def median_ms(fn: Callable[[], None], sync: Callable[[], None]) -> float:
    for _ in range(WARMUP):
        fn()
    sync()
    times = []
    for _ in range(TIMED):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, default=[1, 8, 256, 64], metavar=("B", "N", "S", "D"))
    b, n, s, d = parser.parse_args().shape
    scale = d ** -0.5
    q, k, v, dy = (torch.randn(b, n, s, d) for _ in range(4))
    qn, kn, vn, dyn = (t.npu() for t in (q, k, v, dy))

    def cpu_forward() -> None:
        F.scaled_dot_product_attention(q, k, v, scale=scale)

    def npu_forward() -> None:
        torch_npu.npu_fusion_attention(qn, kn, vn, n, "BNSD", scale=scale)

    leaves_cpu = [t.clone().requires_grad_() for t in (q, k, v)]
    leaves_npu = [t.clone().requires_grad_() for t in (qn, kn, vn)]

    def cpu_train() -> None:
        F.scaled_dot_product_attention(*leaves_cpu, scale=scale).backward(dy)

    def npu_train() -> None:
        torch_npu.npu_fusion_attention(*leaves_npu, n, "BNSD", scale=scale)[0].backward(dyn)

    no_sync = lambda: None  # noqa: E731
    for name, cpu_fn, npu_fn in (("forward", cpu_forward, npu_forward),
                                 ("forward+backward", cpu_train, npu_train)):
        cpu = median_ms(cpu_fn, no_sync)
        npu = median_ms(npu_fn, torch.npu.synchronize)
        print(f"attention {name:17s} B={b} N={n} S={s} D={d} f32  npu eager {npu:8.2f} ms   "
              f"torch CPU sdpa {cpu:8.2f} ms   ratio {npu / cpu:5.2f}x")
    stats = torch.npu.eager_stats()
    fallback = sum(row["fallback"] for row in stats.values())
    print(f"compiled npu::_npu_fusion_attention_* calls: "
          f"{sum(row['compiled'] for op, row in stats.items() if 'fusion_attention' in op)}, fallback calls: {fallback}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
