"""index_add in a compiled graph: decompositions/masked.py compares each index with every row number
(a torch.arange that torch-mlir fuses into the sum over the source rows as linalg.index) and adds the
matching rows. ascend-raise-linalg makes the row numbers a constant, so that sum is a vector
reduction kernel split over cores rather than an opaque one-block loop nest; the result matches CPU."""

import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats


def test_index_add_reduction_is_raised():
    torch._dynamo.reset()
    reset_compile_stats()
    torch.manual_seed(0)
    table, index, rows = torch.randn(50, 16), torch.randint(0, 50, (14,)), torch.randn(14, 16)

    def add_rows(t, i, r):
        return torch.index_add(t, 0, i, r) * 2

    out = torch.compile(add_rows, backend="npu-mlir", dynamic=False)(table.npu(), index.npu(), rows.npu())
    torch.testing.assert_close(out.cpu(), add_rows(table, index, rows))
    kinds = torch.npu.compile_stats()["kernel_kinds"]
    assert kinds.get("reduction", 0) >= 1, kinds
    torch._dynamo.reset()
