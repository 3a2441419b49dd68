"""Transcendentals at the edges of their argument ranges match torch's CPU kernels.

sin / cos beyond the polynomial's Cody-Waite reduction (|x| >= 8192, passes/approximate_math.py) take
libm in f64: at 1e9 the reduction's quadrant count overflowed and sin returned 13.3. log read a
subnormal's exponent bits as 2^-127 (log(1e-40) was -88.0, CPU -92.1). lgamma's
reflection near zero from below used x - floor(x), which rounds -1e-30 to 1.0 (17.4 for 69.08)."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

_TRIG = [0.5, -0.0, 8191.9, 8192.5, 25000.0, 1e5, 123456.7, 1e9, -3e9, 1e10, -1e20, 3.4e38,
         float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("fn", [torch.sin, torch.cos], ids=["sin", "cos"])
def test_trig_of_large_arguments_matches_cpu(fn, dtype, eager_stats):
    x = torch.tensor(_TRIG).clamp(torch.finfo(dtype).min, torch.finfo(dtype).max).to(dtype)
    # Large and small lanes in one vector, and a vector with none: both sides of the branch.
    x = torch.cat([x, torch.linspace(-10, 10, 33, dtype=dtype)])
    actual = fn(x.npu()).cpu()
    torch.testing.assert_close(actual, fn(x), equal_nan=True)
    assert actual.abs().nan_to_num(0).max() <= 1
    assert_no_fallback()


def test_lgamma_near_zero_and_negative_integers_matches_cpu(eager_stats):
    x = torch.tensor([-1e-30, 1e-30, -1e-10, 1e-10, -1e-5, -0.5, -1.0 + 1e-6, -2.5, -3.0, -7.25, 0.0,
                      3.0, 1e30, -1e6 - 0.5])
    torch.testing.assert_close(torch.lgamma(x.npu()).cpu(), torch.lgamma(x), equal_nan=True)
    assert_no_fallback()


def test_log_of_subnormals_matches_cpu(eager_stats):
    x = torch.tensor([1e-40, 1e-45, 3e-39, 1.1754942e-38, 1.1754944e-38, -1e-42, 0.0, -0.0, 0.5, 1e30])
    for fn in (torch.log, torch.log2, torch.log10):
        torch.testing.assert_close(fn(x.npu()).cpu(), fn(x), equal_nan=True)
    assert_no_fallback()


@pytest.mark.parametrize("exponent", [0.5, -0.5, -1.0, 2.0, 3.0])
def test_pow_special_values_match_cpu(exponent, eager_stats):
    # CPU takes sqrt / rsqrt / reciprocal for these exponents (decompositions/powers.py): signed zeros
    # and -inf differ from powf's.
    x = torch.tensor([float("-inf"), -0.0, 0.0, 4.0, -4.0, float("inf"), float("nan"), 1e-30, 2.5])
    actual, expected = torch.pow(x.npu(), exponent).cpu(), torch.pow(x, exponent)
    torch.testing.assert_close(actual, expected, equal_nan=True)
    numbers = ~expected.isnan()
    assert torch.equal(actual.signbit()[numbers], expected.signbit()[numbers])
    assert_no_fallback()


_HALF_MATH = {"abs": torch.abs, "floor": torch.floor, "round": torch.round, "sqrt": lambda x: x.abs().sqrt(),
              "rsqrt": lambda x: (x.abs() + 0.1).rsqrt(), "log1p": lambda x: x.abs().log1p()}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(_HALF_MATH))
def test_half_precision_math_on_odd_vector_lengths_matches_cpu(name, dtype, eager_stats):
    # 17 elements split over two blocks leave a 17-lane vector: LLVM aborted the compile on math ops
    # of such half-precision vectors (fabs of vector<17xbf16>) and the call fell back to the CPU.
    x = (torch.randn(17) * 4).to(dtype)
    fn = _HALF_MATH[name]
    torch.testing.assert_close(fn(x.npu()).cpu(), fn(x))
    assert_no_fallback()


_HALF_MOVES = {"clamp": lambda x: x.clamp(-0.5, 0.5), "cummax": lambda x: x.cummax(-1).values,
               "sort": lambda x: x.sort(-1).values, "logsumexp": lambda x: x.logsumexp(0)}


@pytest.mark.parametrize("name", sorted(_HALF_MOVES))
def test_bf16_on_an_odd_last_dim_matches_cpu(name, eager_stats):
    # A 9-wide last dim makes vector<2x1x9xbf16> constants (LLVM arrays of vectors) and selects on
    # vector<9xbf16>, which aborted LLVM until sim-bf16-storage retyped aggregates too.
    x = torch.randn(64, 1, 9).to(torch.bfloat16)
    fn = _HALF_MOVES[name]
    torch.testing.assert_close(fn(x.npu()).cpu(), fn(x))
    assert_no_fallback()
