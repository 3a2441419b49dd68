"""Bool results and operands of large elementwise kernels match CPU.

Built from their tile-level program (targets/sim/kernel.py TILE_PROGRAM_KINDS), a kernel with an
i1 argument or result and more than one UB tile per block came back wrong: every comparison and
where over 1000 x 1000, and cummax of 1000 elements (its decomposition compares over a 1000 x 1000
square), silently. Such kernels are built from their tensor ops until the program moves i1 tiles right.
"""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

CASES = {
    "greater": lambda a, b: a > b,
    "where": lambda a, b: torch.where(a > b, a, b),
    "or_of_masks": lambda a, b: (a > 0) | (b > 0),
    "not_equal_mask": lambda a, b: ~(a == b),
}


@pytest.mark.parametrize("name", list(CASES))
def test_large_bool_kernels_match_cpu(name, eager_stats):
    torch.manual_seed(0)
    a, b = torch.randn(1000, 1000), torch.randn(1000, 1000)
    b[::7] = a[::7]
    fn = CASES[name]
    torch.testing.assert_close(fn(a.npu(), b.npu()).cpu(), fn(a, b), rtol=0, atol=0)
    assert_no_fallback()


def test_cummax_of_a_descending_run_matches_cpu(eager_stats):
    x = torch.arange(1000.0).flip(0).contiguous()
    values, indices = x.npu().cummax(-1)
    expected = x.cummax(-1)
    torch.testing.assert_close(values.cpu(), expected.values, rtol=0, atol=0)
    torch.testing.assert_close(indices.cpu(), expected.indices, rtol=0, atol=0)
    assert_no_fallback()
