"""Strided graph inputs (a transposed matrix, a slice of columns) are read in place by the graph's
kernels: one kernel, no copy of the input, results as CPU."""

import pytest
import torch

import torch_npu  # noqa: F401


@pytest.mark.parametrize("fn, shapes, view, kind", [
    (lambda x: torch.relu(x * 2 + 1), [(24, 40)], lambda x: x.t(), "elementwise"),
    (lambda x, w: x @ w, [(24, 40), (24, 16)], lambda x: x.t(), "matmul_epilogue"),
    (lambda x: torch.tanh(x) * 3, [(40, 64)], lambda x: x[:, 8:40], "elementwise"),
], ids=["transposed", "matmul-transposed", "column-slice"])
def test_strided_inputs_are_read_in_place(compile_stats, fn, shapes, view, kind):
    torch.manual_seed(0)
    bases = [torch.randn(shape) for shape in shapes]
    args = [view(bases[0])] + bases[1:]
    npu = [view(bases[0].npu())] + [b.npu() for b in bases[1:]]
    assert not npu[0].is_contiguous()
    torch.testing.assert_close(torch.compile(fn, backend="npu-mlir")(*npu).cpu(), fn(*args), rtol=1e-4, atol=1e-4)
    stats = compile_stats()
    assert stats["inputs_copied"] == 0 and stats["kernels"] == 1 and stats["kernel_kinds"] == {kind: 1}, stats
