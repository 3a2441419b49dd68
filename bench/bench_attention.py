"""Attention on npu vs torch CPU scaled_dot_product_attention, measured in the same process.

Rows (BNSD, float32, no mask): torch_npu.npu_fusion_attention and F.scaled_dot_product_attention on
npu tensors, forward alone and forward + backward, at B1 N8 S256 D64 and B1 N8 S2048 D64, each
against CPU SDPA on the same values. Each row also prints the npu run's peak device memory
(torch.npu.max_memory_allocated, reset before the row) next to the bytes one float32 S x S score
matrix per head would take, which a flash kernel never holds. The pse rows add a [1, N, 1, S] position
bias (ALiBi-like, broadcast over the queries) with its gradient, against CPU SDPA with the same
additive float mask. The dropout row (keep_prob 0.9) runs against CPU SDPA's dropout_p 0.1, the
band row (pre/next_tockens 256 narrowing an all-False atten_mask) against CPU SDPA with that band as
a bool mask; the SDPA dropout row (dropout_p 0.1 on npu, the flash kernels' Philox mask) against
the same CPU row. A warm-up call compiles the kernels;
the median of timed calls is reported, each ending in a synchronize (npu) so queued work is counted.
`--shape B N S D` runs one other size.
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

SHAPES = ((1, 8, 256, 64), (1, 8, 2048, 64))
# (warm-up, timed) calls per row; the long sequence gets fewer so the bench stays short.
ITERATIONS = {256: (2, 10), 2048: (1, 3)}


def median_ms(fn: Callable[[], None], sync: Callable[[], None], warmup: int, timed: int) -> float:
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(timed):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def rows(b: int, n: int, s: int, d: int) -> None:
    warmup, timed = ITERATIONS.get(s, (1, 3))
    scale = d ** -0.5
    gen = torch.Generator().manual_seed(0)
    q, k, v, dy = (torch.randn(b, n, s, d, generator=gen) for _ in range(4))
    dyn = dy.npu()
    cpu_leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    npu_leaves = [t.npu().requires_grad_() for t in (q, k, v)]
    npu_inputs = [t.detach() for t in npu_leaves]
    pse = torch.randn(1, n, 1, s, generator=gen)
    cpu_bias = (pse * scale).requires_grad_()
    npu_pse = pse.npu().requires_grad_()

    def cpu_forward() -> None:
        F.scaled_dot_product_attention(q, k, v, scale=scale)

    def cpu_train() -> None:
        F.scaled_dot_product_attention(*cpu_leaves, scale=scale).backward(dy)

    def fusion_forward() -> None:
        torch_npu.npu_fusion_attention(*npu_inputs, n, "BNSD", scale=scale)

    def fusion_train() -> None:
        torch_npu.npu_fusion_attention(*npu_leaves, n, "BNSD", scale=scale)[0].backward(dyn)

    def cpu_bias_train() -> None:
        F.scaled_dot_product_attention(*cpu_leaves, attn_mask=cpu_bias, scale=scale).backward(dy)

    def fusion_pse_train() -> None:
        torch_npu.npu_fusion_attention(*npu_leaves, n, "BNSD", pse=npu_pse, scale=scale)[0].backward(dyn)

    # Dropout (keep 0.9) against CPU SDPA's dropout_p = 0.1; a sliding-window band (pre/next_tockens
    # BAND with an all-False mask) against CPU SDPA with the same band as a bool mask.
    keep_prob, band = 0.9, 256
    no_mask = torch.zeros(s, s, dtype=torch.bool).npu()
    offsets = torch.arange(s).unsqueeze(1) - torch.arange(s).unsqueeze(0)
    cpu_band = offsets.abs() <= band  # True = attend (SDPA's convention)

    def cpu_dropout_train() -> None:
        F.scaled_dot_product_attention(*cpu_leaves, dropout_p=1 - keep_prob, scale=scale).backward(dy)

    def fusion_dropout_train() -> None:
        torch_npu.npu_fusion_attention(*npu_leaves, n, "BNSD", scale=scale, keep_prob=keep_prob)[0].backward(dyn)

    def cpu_band_train() -> None:
        F.scaled_dot_product_attention(*cpu_leaves, attn_mask=cpu_band, scale=scale).backward(dy)

    def fusion_band_train() -> None:
        torch_npu.npu_fusion_attention(*npu_leaves, n, "BNSD", atten_mask=no_mask, scale=scale, pre_tockens=band,
                                       next_tockens=band)[0].backward(dyn)

    def sdpa_forward() -> None:
        F.scaled_dot_product_attention(*npu_inputs, scale=scale)

    def sdpa_train() -> None:
        F.scaled_dot_product_attention(*npu_leaves, scale=scale).backward(dyn)

    def sdpa_dropout_train() -> None:
        F.scaled_dot_product_attention(*npu_leaves, dropout_p=1 - keep_prob, scale=scale).backward(dyn)

    no_sync = lambda: None  # noqa: E731
    score_mib = b * n * s * s * 4 / 2**20
    for name, cpu_fn, npu_fn in (("npu_fusion_attention fwd", cpu_forward, fusion_forward),
                                 ("npu_fusion_attention fwd+bwd", cpu_train, fusion_train),
                                 ("npu_fusion_attention pse fwd+bwd", cpu_bias_train, fusion_pse_train),
                                 ("npu_fusion_attention dropout fwd+bwd", cpu_dropout_train, fusion_dropout_train),
                                 ("npu_fusion_attention band fwd+bwd", cpu_band_train, fusion_band_train),
                                 ("F.sdpa on npu fwd", cpu_forward, sdpa_forward),
                                 ("F.sdpa on npu fwd+bwd", cpu_train, sdpa_train),
                                 ("F.sdpa on npu dropout fwd+bwd", cpu_dropout_train, sdpa_dropout_train)):
        cpu = median_ms(cpu_fn, no_sync, warmup, timed)
        for t in npu_leaves + [npu_pse]:
            t.grad = None
        torch.npu.synchronize()
        torch.npu.reset_peak_memory_stats()
        base = torch.npu.memory_allocated()
        npu = median_ms(npu_fn, torch.npu.synchronize, warmup, timed)
        peak_mib = (torch.npu.max_memory_allocated() - base) / 2**20
        print(f"{name:37s} B={b} N={n} S={s:<4d} D={d} f32  npu {npu:9.2f} ms  torch CPU sdpa {cpu:8.2f} ms  "
              f"ratio {npu / cpu:6.2f}x  npu peak {peak_mib:7.1f} MiB (S x S x heads f32: {score_mib:.0f} MiB)",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=4, metavar=("B", "N", "S", "D"))
    shape = parser.parse_args().shape
    for b, n, s, d in [tuple(shape)] if shape else SHAPES:
        rows(b, n, s, d)
    stats = torch.npu.eager_stats()
    attention = {op: row for op, row in stats.items() if "attention" in op}
    print("compiled calls: " + ", ".join(f"{op} {row['compiled']}" for op, row in attention.items()))
    print(f"fallback calls (all ops): {sum(row['fallback'] for row in stats.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
