"""npu_rms_norm / npu_swiglu / npu_rotary_mul (one fused kernel each) vs the same math unfused.

Peers, measured in this process on the same inputs (float32, LLM-layer shapes): the plain-torch
composition on CPU eager, and on npu eager (one compiled kernel per aten op). Forward, then
forward + backward; the median of timed calls, each ending in a synchronize. A last table gives the
per-call cost on tiny tensors (dispatch overhead) against the same composition on CPU.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Callable

import torch
import torch.nn.functional as F

import torch_npu

WARMUP, TIMED = 2, 10


def median_ms(fn: Callable[[], object], sync: Callable[[], None], timed: int = TIMED) -> float:
    for _ in range(WARMUP):
        fn()
    sync()
    times = []
    for _ in range(timed):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def rms_norm(x: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * gamma


def swiglu(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, -1)
    return F.silu(a) * b


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, -1)
    return x * cos + torch.cat((-x2, x1), -1) * sin


def cases(scale: int) -> list[tuple[str, Callable, Callable, list[torch.Tensor]]]:
    """(name, fused npu op, unfused reference, CPU inputs); `scale` multiplies the token count."""
    tokens = 64 * scale
    return [
        ("npu_rms_norm", lambda x, g: torch_npu.npu_rms_norm(x, g)[0], rms_norm,
         [torch.randn(tokens, 1024), torch.randn(1024)]),
        ("npu_swiglu", torch_npu.npu_swiglu, swiglu, [torch.randn(tokens, 2048)]),
        ("npu_rotary_mul", torch_npu.npu_rotary_mul, rotary,
         [torch.randn(1, tokens, 8, 64), torch.randn(1, tokens, 1, 64), torch.randn(1, tokens, 1, 64)]),
    ]


def step(op: Callable, inputs: list[torch.Tensor], backward: bool) -> Callable[[], object]:
    leaves = [t.detach().requires_grad_(backward) for t in inputs]

    def run() -> object:
        out = op(*leaves)
        if backward:
            out.sum().backward()
        return out

    return run


def main() -> int:
    sync_npu, sync_cpu = torch.npu.synchronize, (lambda: None)
    print(f"{'op':16} {'pass':8} {'fused npu ms':>13} {'unfused npu ms':>15} {'cpu eager ms':>13} {'cpu/fused':>10}")
    for backward in (False, True):
        for name, fused, reference, inputs in cases(scale=8):
            npu_inputs = [t.npu() for t in inputs]
            fused_ms = median_ms(step(fused, npu_inputs, backward), sync_npu)
            unfused_ms = median_ms(step(reference, npu_inputs, backward), sync_npu)
            cpu_ms = median_ms(step(reference, inputs, backward), sync_cpu)
            label = "fwd+bwd" if backward else "fwd"
            print(f"{name:16} {label:8} {fused_ms:13.3f} {unfused_ms:15.3f} {cpu_ms:13.3f} {cpu_ms / fused_ms:9.2f}x")
    print(f"\n{'op (tiny input)':16} {'npu us/call':>12} {'cpu eager us/call':>18}")
    for name, fused, reference, inputs in cases(scale=1):
        small = [t[..., :2, :] if t.dim() == 4 else t[:2] if t.dim() == 2 else t for t in inputs]
        npu_small = [t.npu() for t in small]
        npu_us = median_ms(lambda: [fused(*npu_small) for _ in range(200)], sync_npu) * 1e3 / 200
        cpu_us = median_ms(lambda: [reference(*small) for _ in range(200)], sync_cpu) * 1e3 / 200
        print(f"{name:16} {npu_us:12.1f} {cpu_us:18.1f}")
    stats = torch.npu.eager_stats()
    fallen = {op: row["fallback"] for op, row in stats.items() if row["fallback"]}
    print(f"\nfallback calls: {fallen or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
