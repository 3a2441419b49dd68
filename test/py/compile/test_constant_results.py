"""A result the pipeline folds to a constant (a returned `full`/`zeros`, the indices of a 0-d cummax) is
written by its launch list (targets/launch_list.py), compiled graph or eager op: every case first leaves
non-zero bytes in the blocks the caching allocator will hand out, which an unwritten result would keep."""

import pytest
import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats


def _dirty_allocator() -> None:
    """Free blocks of every small size class full of NaN bytes (0x7fc00000 per word)."""
    junk = [torch.full((n,), float("nan"), device="npu") for n in (1, 2, 16, 128, 1024, 2048) for _ in range(4)]
    del junk


def test_graph_returning_constants_writes_them():
    torch._dynamo.reset()
    reset_compile_stats()

    def f(x: torch.Tensor):
        return x * 2, torch.zeros(8, 32, device=x.device), torch.full((4, 4), 3.0, device=x.device)

    compiled = torch.compile(f, backend="npu-mlir")
    x = torch.randn(8, 32).npu()
    for _ in range(2):
        _dirty_allocator()
        doubled, zeros, threes = compiled(x)
        torch.testing.assert_close(doubled.cpu(), x.cpu() * 2)
        torch.testing.assert_close(zeros.cpu(), torch.zeros(8, 32))
        torch.testing.assert_close(threes.cpu(), torch.full((4, 4), 3.0))
    stats = torch.npu.compile_stats()
    assert stats["graphs_compiled"] == 1 and stats["split_nodes"] == {}, stats
    torch._dynamo.reset()


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin, torch.nanmedian])
def test_eager_zero_dim_indices_are_written(op):
    # On a 0-d input the indices fold to the constant 0: no kernel computes them.
    x = torch.tensor(3.5)
    _dirty_allocator()
    values, indices = op(x.npu(), 0)
    assert values.item() == 3.5 and indices.item() == 0
    out = (torch.zeros((), device="npu"), torch.full((), 99, dtype=torch.int64, device="npu"))
    op(x.npu(), 0, out=out)
    assert out[0].item() == 3.5 and out[1].item() == 0
