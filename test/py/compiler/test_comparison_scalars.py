"""Comparisons of constant-valued tensors with numbers import with torch's answer
(frontend/comparison_scalars.py): torch-mlir's folders got a float tensor against an integer
number wrong (full_like(x, -2.5) < 0 folded to false) and crashed on an integer tensor against a float."""

from __future__ import annotations

import operator

import pytest
import torch

from npu_mlir.frontend.torch_import import import_fx_graph

_CASES = [(torch.float32, -2.5, operator.lt, 0), (torch.float32, 2.5, operator.gt, 0),
          (torch.float64, 3.0, operator.eq, 3), (torch.float16, -3.0, operator.le, -3),
          (torch.bfloat16, 0.0, operator.ne, 0), (torch.int32, 3, operator.lt, 2.5),
          (torch.int64, -3, operator.ge, -2.5), (torch.int64, 0, operator.eq, 0.0)]


@pytest.mark.parametrize("dtype,fill,compare,number", _CASES)
def test_folded_comparison_takes_the_branch_torch_takes(dtype, fill, compare, number):
    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.where(compare(torch.full_like(x, fill), number), x, x + 1)

    example = torch.ones(3, dtype=dtype)
    text = str(import_fx_graph(fn, [example]).module)
    assert "select" not in text, "the comparison of a constant was not folded"
    returns_x = "return %arg0" in text
    assert returns_x == bool(compare(torch.full_like(example, fill), number)[0])
