"""Long float32 sums are as precise on npu as on the CPU.

The sim summed each output element into one float32 accumulator, element after element, where the
CPU sums in a cascade: `x.sum()` of 4097 x 257 had a relative error of 1.6e-5, `F.mse_loss` of a
million elements 5.7e-4, a 3000-row column sum 2.3e-6 (the CPU: under 2e-7). The sim keeps such
accumulators in float64 now (targets/sim/wide_accumulators.py). Inputs have a non-zero mean, as
losses and activations do: a running sum of them drifts, one of centred noise barely does.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

CASES = {
    "full_sum_odd_extents": ((4097, 257), lambda x: x.sum()),
    "mean_of_a_long_vector": ((1000003,), lambda x: x.mean()),
    "column_sums": ((3000, 300), lambda x: x.sum(0)),
    "long_row_sums": ((4, 300007), lambda x: x.sum(1)),
    "mse_loss": ((4097, 257), lambda x: F.mse_loss(x, x.flip(0) * 0.5)),
    "variance": ((4097, 257), lambda x: x.var()),
}


@pytest.mark.parametrize("name", list(CASES))
def test_long_sum_matches_cpu(name, eager_stats):
    shape, fn = CASES[name]
    torch.manual_seed(0)
    x = torch.randn(shape) + 0.5
    torch.testing.assert_close(fn(x.npu()).cpu(), fn(x))
    assert_no_fallback()


def test_half_input_sum_matches_cpu(eager_stats):
    # A bfloat16 sum accumulates in float32 on both sides: that accumulator is the long one.
    torch.manual_seed(0)
    x = (torch.randn(4097, 257) + 0.5).bfloat16()
    torch.testing.assert_close(x.npu().sum(dtype=torch.float32).cpu(), x.sum(dtype=torch.float32))
    assert_no_fallback()
