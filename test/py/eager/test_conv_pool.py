"""Convolutions and pools on npu vs CPU: values and input/weight/bias gradients, no fallback.

Every case runs the forward and its backward op through compiled kernels (eager/conv_gemm.py,
eager/pooling.py): strides, paddings, dilations, groups, 1-3 spatial dims, transposed
convolutions, ceil_mode, count_include_pad, divisor_override, adaptive pools. Half precision is
compared with the CPU computing in float32 and rounding once (what the kernels do), within a few
units in the last place of the largest value.
"""

from __future__ import annotations

from typing import Callable

import pytest
import torch
from torch.nn import functional as F

from conftest import assert_no_fallback

# Error bound relative to the largest reference value.
REL_TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _close(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype) -> None:
    assert got.dtype == dtype and got.shape == want.shape
    scale = max(want.abs().max().item(), 1.0)
    torch.testing.assert_close(got.cpu().float(), want.float(), atol=REL_TOL[dtype] * scale, rtol=0)


def _check(fn: Callable, shapes: list[tuple], dtype: torch.dtype, grad_of: tuple[int, ...] | None = None) -> None:
    """fn on npu vs CPU: output and the gradients of the inputs listed in grad_of (default: all)."""
    torch.manual_seed(0)
    inputs = [torch.randn(shape).to(dtype).float() for shape in shapes]  # representable in dtype
    grad_of = tuple(range(len(inputs))) if grad_of is None else grad_of
    cpu = [t.requires_grad_(i in grad_of) for i, t in enumerate(inputs)]
    npu = [t.detach().to(dtype).npu().requires_grad_(i in grad_of) for i, t in enumerate(inputs)]
    want = fn(*cpu)
    got = fn(*npu)
    want = want.to(dtype)
    _close(got, want, dtype)
    grad = torch.randn(want.shape)
    want_grads = torch.autograd.grad(want, [cpu[i] for i in grad_of], grad.to(dtype).float())
    got_grads = torch.autograd.grad(got, [npu[i] for i in grad_of], grad.to(dtype).npu())
    for g, w in zip(got_grads, want_grads):
        _close(g, w.to(dtype), dtype)
    assert_no_fallback()


CONVOLUTIONS = {
    "2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [(2, 4, 9, 8), (6, 4, 3, 3), (6,)]),
    "2d_stride2_groups2": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
                           [(2, 4, 9, 7), (6, 2, 3, 3), (6,)]),
    "2d_depthwise_dilated": (lambda x, w, b: F.conv2d(x, w, b, padding=2, dilation=2, groups=4),
                             [(2, 4, 8, 8), (8, 1, 3, 3), (8,)]),
    "2d_depthwise_one_image": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=6),
                               [(1, 6, 7, 7), (6, 1, 3, 3), (6,)]),
    # One channel per group: no GEMM, a sum of per-channel scaled windows (conv_gemm._depthwise_conv).
    "2d_depthwise_stride2": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=5),
                             [(2, 5, 9, 8), (5, 1, 3, 3), (5,)]),
    "transposed_2d_depthwise": (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                                                   groups=3), [(2, 3, 5, 4), (3, 1, 3, 3), (3,)]),
    "2d_asymmetric": (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(0, 1), dilation=(1, 2)),
                      [(2, 3, 9, 8), (5, 3, 3, 2), (5,)]),
    "2d_pointwise_stride2": (lambda x, w: F.conv2d(x, w, stride=2), [(2, 4, 7, 7), (6, 4, 1, 1)]),
    "2d_same": (lambda x, w: F.conv2d(x, w, padding="same"), [(2, 3, 7, 6), (4, 3, 4, 3)]),
    # Images smaller than the kernel: offsets whose windows read only padding leave the GEMMs
    # (conv_gemm._live_kernel), one live offset of 9 at 1x1, asymmetric ranges with stride and dilation.
    "2d_one_pixel": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [(3, 4, 1, 1), (6, 4, 3, 3), (6,)]),
    "2d_small_image_stride2_dilated": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=2, dilation=(2, 1)),
                                       [(2, 3, 2, 3), (4, 3, 3, 5)]),
    "1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
           [(2, 4, 11), (6, 2, 3), (6,)]),
    "3d": (lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1), [(1, 3, 5, 6, 4), (4, 3, 2, 2, 2), (4,)]),
    "transposed_2d": (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
                      [(2, 4, 5, 4), (4, 3, 3, 3), (6,)]),
}


@pytest.mark.parametrize("case", list(CONVOLUTIONS))
def test_convolution(case: str, eager_stats) -> None:
    fn, shapes = CONVOLUTIONS[case]
    _check(fn, shapes, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["2d", "2d_stride2_groups2", "2d_depthwise_stride2"])
def test_convolution_half(case: str, dtype: torch.dtype, eager_stats) -> None:
    fn, shapes = CONVOLUTIONS[case]
    _check(fn, shapes, dtype)


def test_first_layer_weight_gradient_only(eager_stats) -> None:
    # A 7x7 stride-2 stem whose input needs no gradient: output_mask leaves grad_input out.
    _check(lambda x, w: F.conv2d(x, w, stride=2, padding=3), [(2, 3, 16, 16), (8, 3, 7, 7)], torch.float32,
           grad_of=(1,))


POOLS = {
    "max2d": (lambda x: F.max_pool2d(x, 3, 2, 1), (2, 3, 9, 8)),
    "max2d_dilated_ceil": (lambda x: F.max_pool2d(x, 2, 1, 0, dilation=2, ceil_mode=True), (2, 3, 7, 8)),
    "max2d_unbatched": (lambda x: F.max_pool2d(x, 2), (3, 8, 6)),
    "max1d": (lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 11)),
    "max3d_ceil": (lambda x: F.max_pool3d(x, 2, (1, 2, 2), 1, ceil_mode=True), (1, 2, 5, 6, 7)),
    "avg2d_exclude_pad_ceil": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                               (2, 3, 9, 8)),
    "avg2d_divisor": (lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=5), (2, 3, 8, 8)),
    "avg1d": (lambda x: F.avg_pool1d(x, 3, 2, 1), (2, 3, 11)),
    "avg3d": (lambda x: F.avg_pool3d(x, 2, 2), (1, 2, 6, 5, 4)),
    "adaptive_avg2d": (lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (2, 3, 9, 7)),
    "adaptive_avg2d_global": (lambda x: F.adaptive_avg_pool2d(x, 1), (2, 3, 5, 5)),
    "adaptive_avg3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), (1, 2, 5, 7, 4)),
    "adaptive_max2d": (lambda x: F.adaptive_max_pool2d(x, (4, 3)), (2, 3, 9, 7)),
    "adaptive_max3d": (lambda x: F.adaptive_max_pool3d(x, (2, 3, 2)), (1, 2, 5, 7, 4)),
}


@pytest.mark.parametrize("case", list(POOLS))
def test_pool(case: str, eager_stats) -> None:
    fn, shape = POOLS[case]
    _check(fn, [shape], torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["max2d", "avg2d_exclude_pad_ceil", "adaptive_avg2d"])
def test_pool_half(case: str, dtype: torch.dtype, eager_stats) -> None:
    fn, shape = POOLS[case]
    _check(fn, [shape], dtype)


def test_convolution_overrideable_runs_compiled(eager_stats) -> None:
    # What ATen calls for a backend it does not know; it reaches the compiled convolution.
    x, w = torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3)
    got = torch.ops.aten.convolution_overrideable(x.npu(), w.npu(), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    _close(got, F.conv2d(x, w, padding=1), torch.float32)
    assert eager_stats()["aten::convolution"]["compiled"] == 1
    assert_no_fallback()


def test_convolution_backward_output_mask(eager_stats) -> None:
    # As on CPU: gradients output_mask leaves out are None, not zeros.
    torch.manual_seed(0)
    dy, x, w = torch.randn(2, 6, 4, 4), torch.randn(2, 4, 8, 8), torch.randn(6, 4, 3, 3)
    args = ([6], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False])
    want = torch.ops.aten.convolution_backward(dy, x, w, *args)
    got = torch.ops.aten.convolution_backward(dy.npu(), x.npu(), w.npu(), *args)
    assert want[0] is None and want[2] is None
    assert got[0] is None and got[2] is None
    _close(got[1], want[1], torch.float32)
    assert_no_fallback()


def test_weight_slice_kernel_runs_on_several_blocks() -> None:
    # A strided slice of an argument (a conv weight at one kernel offset) is opaque to the tiling
    # pass (block_dim 1); the sim target copies it in row slices over several blocks.
    import tempfile
    from pathlib import Path

    from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

    text = """module {
      func.func @main(%w: tensor<256x256x3x3xf32>) -> tensor<256x256x1x1xf32> {
        %0 = tensor.extract_slice %w[0, 0, 1, 2] [256, 256, 1, 1] [1, 1, 1, 1] : tensor<256x256x3x3xf32> to tensor<256x256x1x1xf32>
        return %0 : tensor<256x256x1x1xf32>
      }
    }"""
    with tempfile.TemporaryDirectory() as cache:
        kernel = compile_linalg(text, SimTiling(1), name="weight_slice", cache_dir=Path(cache))
        w = torch.randn(256, 256, 3, 3)
        got = run_on_host(kernel, [w], threads=2)[0]
    assert kernel.block_dim > 1
    assert torch.equal(got, w[:, :, 1:2, 2:3])
