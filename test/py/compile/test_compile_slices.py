"""Backwards of slices in a compiled graph match CPU: slice_scatter with a step and with one column.

Both are tensor.insert_slice in the graph's kernels, which the sim's vectorizer wrote wrongly
(targets/sim/insert_windows.py): the gradient of x[..., ::2] came back packed into the first half,
that of cat([x, x[..., :1]], -1) had the column written along a row; silently.
"""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401

GRAPHS = {
    "every_second": lambda x: x[..., ::2] * 3,
    "every_third_from_1": lambda x: x[:, 1::3].sin(),
    "cat_first_column": lambda x: torch.cat([x, x[..., :1]], -1) * 2,
    "cat_last_column_cumsum": lambda x: torch.cat([x, x[..., -1:] * 2], -1).cumsum(-1)[..., ::2],
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_slice_backward_matches_cpu(name, compile_stats):
    fn = GRAPHS[name]
    torch.manual_seed(0)
    x = torch.randn(5, 9)
    cpu = x.clone().requires_grad_()
    expected = fn(cpu)
    grad = torch.randn(expected.shape)
    expected.backward(grad)
    npu = x.npu().requires_grad_()
    out = torch.compile(fn, backend="npu-mlir")(npu)
    out.backward(grad.npu())
    torch.testing.assert_close(out.detach().cpu(), expected.detach())
    torch.testing.assert_close(npu.grad.cpu(), cpu.grad)
    assert compile_stats()["backward_graphs"] >= 1
