"""float16 / bfloat16 sums accumulate in float32 on npu as on CPU (frontend/decompositions/
half_reductions.py): the accumulator was rounded to the input dtype after every add (a bf16 sum
of 1000 ones was 972; an f16 mean over 70001 elements was 0)."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

_CASES = {
    "sum_dim": lambda t: t.sum(1),
    "sum": lambda t: t.sum(),
    "sum_to_float": lambda t: t.sum(1, dtype=torch.float32),
    "mean_dim": lambda t: t.mean(1),
    "mean": lambda t: t.mean(),
    "nansum": lambda t: t.nansum(1),
    "nanmean": lambda t: t.nanmean(1),
    "logsumexp": lambda t: t.logsumexp(1),
    "vector_norm": lambda t: torch.linalg.vector_norm(t, dim=1),
    "ones": lambda t: torch.ones_like(t).sum(1),
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_half_sums_accumulate_in_float(name, dtype, eager_stats):
    x = torch.randn(2, 70001, generator=torch.Generator().manual_seed(0)).to(dtype)
    expected = _CASES[name](x)
    actual = _CASES[name](x.npu()).cpu()
    assert actual.dtype == expected.dtype
    # torch rounds once; so does the rewrite, but its float32 sum adds in another order.
    torch.testing.assert_close(actual, expected, rtol=8e-3, atol=1e-3)
    assert_no_fallback()
