"""NaN goes through max/min-like ops on npu as on CPU.

torch-mlir lowers maximum / minimum (and hardtanh) to an ordered compare and a select, which
dropped a NaN first operand, and moved argmax / argmin / max.dim / min.dim's index on an ordered
compare, which never took a NaN's index (passes/propagate_nan.py)."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

_VALUES = [-3.5, -1.0, 0.0, 0.5, 2.0, float("nan"), float("inf"), -float("inf"), 7.25, 1.0]
_CASES = {
    "maximum": lambda x: torch.maximum(x, torch.zeros_like(x)),
    "minimum": lambda x: torch.minimum(x, torch.zeros_like(x)),
    "maximum_nan_second": lambda x: torch.maximum(torch.zeros_like(x), x),
    "hardtanh": lambda x: torch.nn.functional.hardtanh(x),
    "clamp": lambda x: torch.clamp(x, -1.0, 1.0),
    "argmax": lambda x: torch.argmax(x),
    "argmin": lambda x: torch.argmin(x),
    "argmax_dim": lambda x: torch.argmax(x.view(2, 5), 1),
    "max_dim": lambda x: torch.max(x.view(2, 5), 1),
    "min_dim": lambda x: torch.min(x.view(2, 5), 1),
    "amax": lambda x: x.view(2, 5).amax(1),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_nan_propagates_as_on_cpu(name, dtype, eager_stats):
    x = torch.tensor(_VALUES, dtype=dtype)
    expected = _CASES[name](x)
    actual = _CASES[name](x.npu())
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    for want, got in zip(expected, actual):
        torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=0, atol=0)
    assert_no_fallback()


def test_a_where_of_a_compare_keeps_its_own_semantics(eager_stats):
    """torch.where(a > b, a, b) is not maximum: a NaN `a` gives `b` (two ops, not rewritten)."""
    a = torch.tensor([float("nan"), 1.0, 3.0])
    b = torch.tensor([2.0, 2.0, float("nan")])
    expected = torch.where(a > b, a, b)
    torch.testing.assert_close(torch.where(a.npu() > b.npu(), a.npu(), b.npu()).cpu(), expected, equal_nan=True)
    assert_no_fallback()
