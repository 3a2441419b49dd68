"""Matmul and conv2d on npu (eager, compiled kernels) vs torch CPU (oneDNN), same process.

Rows: matmul f32 / f16 / bf16 at 1024^3 and five odd sizes (f16 / bf16 also against torch CPU f32
on the same values: torch's own f16 matmul is seconds slow on hosts without AVX512-FP16); conv2d
forward and forward+backward (grad input and grad weight) on ResNet-18's layer shapes at batch 8,
f32, on ResNet-18's layer2-4 at 32x32 input (images of 4x4 to 1x1), and on grouped layers
(MobileNetV2's depthwise 3x3, ResNeXt-50 32x4d's 32-group 3x3). Each row's warm-up call
compiles the kernels; then the median of timed calls (each npu call ends in a synchronize, so
queued work is counted). `ratio` is torch CPU time / npu time: > 1 means npu is faster. The sim
device runs a kernel's blocks on the host's cores, as many threads as torch uses.
`--quick` runs only the 1024^3 rows and two conv shapes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable

import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401  (registers the npu device)

MIN_TIMED, MAX_TIMED, BUDGET_S = 3, 10, 3.0

MATMUL_SHAPES = [(1024, 1024, 1024), (1000, 1000, 1000), (1023, 1023, 1023), (1023, 777, 513), (257, 511, 129),
                 (127, 4097, 255)]
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
# Convolutions at 224x224 input, batch 8: (name, C_in, C_out, H=W in, kernel, stride, padding, groups).
# Every distinct conv of ResNet-18 (each stage's first 3x3 and 1x1 downsample at stride 2); the
# stem's input is the image: its backward computes the weight gradient only, as in training.
CONV_SHAPES = [
    ("conv1 7x7/2", 3, 64, 224, 7, 2, 3, 1),
    ("layer1 3x3", 64, 64, 56, 3, 1, 1, 1),
    ("layer2 3x3/2", 64, 128, 56, 3, 2, 1, 1),
    ("layer2 1x1/2", 64, 128, 56, 1, 2, 0, 1),
    ("layer2 3x3", 128, 128, 28, 3, 1, 1, 1),
    ("layer3 3x3/2", 128, 256, 28, 3, 2, 1, 1),
    ("layer3 1x1/2", 128, 256, 28, 1, 2, 0, 1),
    ("layer3 3x3", 256, 256, 14, 3, 1, 1, 1),
    ("layer4 3x3/2", 256, 512, 14, 3, 2, 1, 1),
    ("layer4 1x1/2", 256, 512, 14, 1, 2, 0, 1),
    ("layer4 3x3", 512, 512, 7, 3, 1, 1, 1),
]
# ResNet-18 at 32x32 input (bench_models' CIFAR-sized resnet18): layer2-4 see images of 4x4 to 1x1,
# where most kernel offsets of a 3x3 read only padding.
SMALL_SHAPES = [
    ("32px layer2 3x3", 128, 128, 4, 3, 1, 1, 1),
    ("32px layer3 3x3", 256, 256, 2, 3, 1, 1, 1),
    ("32px layer4 3x3/2", 256, 512, 2, 3, 2, 1, 1),
    ("32px layer4 1x1/2", 256, 512, 2, 1, 2, 0, 1),
    ("32px layer4 3x3", 512, 512, 1, 3, 1, 1, 1),
]
# MobileNetV2's depthwise 3x3 (stride 1 and 2) and ResNeXt-50 32x4d's grouped 3x3 (layer1, layer3).
GROUPED_SHAPES = [
    ("mbv2 dw 3x3", 144, 144, 56, 3, 1, 1, 144),
    ("mbv2 dw 3x3/2", 96, 96, 112, 3, 2, 1, 96),
    ("resnext g32 3x3", 128, 128, 56, 3, 1, 1, 32),
    ("resnext g32 3x3 l3", 512, 512, 14, 3, 1, 1, 32),
]
BATCH = 8


def median_ms(fn: Callable[[], None], sync: Callable[[], None]) -> float:
    """Median of timed calls after one warm-up: at least MIN_TIMED, more while within BUDGET_S."""
    fn()
    sync()
    times: list[float] = []
    begin = time.perf_counter()
    while len(times) < MIN_TIMED or (len(times) < MAX_TIMED and time.perf_counter() - begin < BUDGET_S):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def row(name: str, cpu: float, npu: float) -> None:
    print(f"{name:44s} npu {npu:9.2f} ms   torch CPU {cpu:9.2f} ms   ratio {cpu / npu:5.2f}x", flush=True)


def bench_matmul(shapes: list[tuple[int, int, int]]) -> None:
    no_sync = lambda: None  # noqa: E731
    for m, k, n in shapes:
        for tag, dtype in DTYPES.items():
            a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
            an, bn = a.npu(), b.npu()
            torch.testing.assert_close((an @ bn).cpu().float(), (a.float() @ b.float()),
                                       rtol=2e-2 if dtype != torch.float32 else 1e-4, atol=0.5 if dtype != torch.float32 else 1e-3)
            cpu = median_ms(lambda: a @ b, no_sync)
            npu = median_ms(lambda: an @ bn, torch.npu.synchronize)
            row(f"matmul {m}x{k}x{n} {tag}", cpu, npu)
            if dtype != torch.float32:
                # torch's CPU half matmuls have no fast kernel on every host (f16 1024^3: seconds
                # without AVX512-FP16): the same values in f32 are the peer a user would pick.
                af, bf = a.float(), b.float()
                row(f"matmul {m}x{k}x{n} {tag} vs torch f32", median_ms(lambda: af @ bf, no_sync), npu)


def bench_conv(shapes: list[tuple]) -> None:
    no_sync = lambda: None  # noqa: E731
    for name, cin, cout, size, kernel, stride, padding, groups in shapes:
        x, w = torch.randn(BATCH, cin, size, size), torch.randn(cout, cin // groups, kernel, kernel) * 0.05
        xn, wn = x.npu(), w.npu()
        out_size = (size + 2 * padding - kernel) // stride + 1
        dy = torch.randn(BATCH, cout, out_size, out_size)
        dyn = dy.npu()
        args = {"stride": stride, "padding": padding, "groups": groups}
        cpu_fwd = median_ms(lambda: F.conv2d(x, w, **args), no_sync)
        npu_fwd = median_ms(lambda: F.conv2d(xn, wn, **args), torch.npu.synchronize)
        label = f"conv2d {name} {cin}->{cout} {size}x{size}" + (f" g{groups}" if groups > 1 else "")
        row(f"{label} fwd", cpu_fwd, npu_fwd)
        input_grad = cin != 3
        leaves_cpu = [x.clone().requires_grad_(input_grad), w.clone().requires_grad_()]
        leaves_npu = [xn.clone().requires_grad_(input_grad), wn.clone().requires_grad_()]

        def cpu_train() -> None:
            F.conv2d(*leaves_cpu, **args).backward(dy)

        def npu_train() -> None:
            F.conv2d(*leaves_npu, **args).backward(dyn)

        row(f"{label} fwd+bwd" + ("" if input_grad else " (dW)"), median_ms(cpu_train, no_sync),
            median_ms(npu_train, torch.npu.synchronize))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1024^3 matmuls and two conv shapes only")
    parser.add_argument("--only", choices=("matmul", "conv", "small", "grouped"), help="one part of the table")
    args = parser.parse_args()
    print(f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.only in (None, "matmul"):
        bench_matmul(MATMUL_SHAPES[:1] if args.quick else MATMUL_SHAPES)
    if args.only in (None, "conv"):
        bench_conv(CONV_SHAPES[1:3] if args.quick else CONV_SHAPES)
    if args.only in (None, "small"):
        bench_conv(SMALL_SHAPES[-1:] if args.quick else SMALL_SHAPES)
    if args.only in (None, "grouped"):
        bench_conv(GROUPED_SHAPES[::2] if args.quick else GROUPED_SHAPES)
    stats = torch.npu.eager_stats()
    fallback = {op: r["fallback"] for op, r in stats.items() if r["fallback"]}
    print(f"ops on the CPU fallback: {fallback or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
