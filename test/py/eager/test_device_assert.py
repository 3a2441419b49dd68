"""A kernel whose device-side assertion fails raises at the next synchronization; the process and
the device stay usable (it aborted the process: torch-mlir's gather bounds check lowered to abort)."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401


def test_gather_out_of_range_raises_at_sync_and_the_device_stays_usable(eager_stats):
    x = torch.randn(4, 3)
    bad = torch.tensor([[9, 0, 0]])
    result = torch.gather(x.npu(), 0, bad.npu())  # queued: the launch returns before the kernel runs
    with pytest.raises(RuntimeError, match=r"(?s)device-side assertion failed.*ERR\d{5}"):
        torch.npu.synchronize()
    good = torch.tensor([[3, 0, 1], [0, 2, 3]])
    torch.testing.assert_close(torch.gather(x.npu(), 0, good.npu()).cpu(), torch.gather(x, 0, good))
    stats = eager_stats()["aten::gather.out"]
    assert stats["fallback"] == 0 and stats["compiled"] >= 1
    del result


# Index checks of the scatter-free rewrites (bounds.py): an index out of range matched no position,
# so these read zeros or dropped the write where the CPU raises. Each case: (op, a bad index, a good
# one); the op takes the npu or CPU index and returns the result.
_X = torch.randn(4, 3)
_CHECKED = {
    "index_select": (lambda x, i: torch.index_select(x, 0, i), [1, 7], [3, 0]),
    "index_select_negative": (lambda x, i: torch.index_select(x, 0, i), [1, -1], [2, 1]),
    "embedding": (lambda x, i: torch.nn.functional.embedding(i, x), [0, 9], [3, 3]),
    "take": (lambda x, i: torch.take(x, i), [0, 12], [11, -12]),
    "index_add_": (lambda x, i: x.clone().index_add_(0, i, torch.ones(2, 3, device=x.device)), [0, 4], [3, 3]),
    "index_copy_": (lambda x, i: x.clone().index_copy_(0, i, torch.ones(2, 3, device=x.device)), [0, 6], [2, 0]),
    "index_reduce_": (lambda x, i: x.clone().index_reduce_(0, i, torch.ones(2, 3, device=x.device), "amax"),
                      [-1, 0], [1, 1]),
    "put_": (lambda x, i: x.clone().put_(i, torch.ones(2, device=x.device)), [0, 12], [-1, 5]),
    "index_fill_": (lambda x, i: x.clone().index_fill_(0, i, 2.0), [-5, 1], [1, -2]),
    "scatter_": (lambda x, i: x.clone().scatter_(0, i.view(1, 2), 1.0), [0, 5], [3, 1]),
    "scatter_add_": (lambda x, i: x.clone().scatter_add_(0, i.view(1, 2), torch.ones(1, 2, device=x.device)),
                     [0, 4], [3, 3]),
    "nll_loss": (lambda x, i: torch.nn.functional.nll_loss(x[:2], i), [0, 3], [2, -100]),
    "one_hot": (lambda x, i: torch.nn.functional.one_hot(i, 3), [0, 3], [2, 0]),
}


@pytest.mark.parametrize("name", sorted(_CHECKED))
def test_an_index_out_of_range_raises_where_the_cpu_raises(name, eager_stats):
    op, bad, good = _CHECKED[name]
    with pytest.raises((IndexError, RuntimeError)):
        op(_X, torch.tensor(bad))
    result = op(_X.npu(), torch.tensor(bad).npu())
    with pytest.raises(RuntimeError, match=r"(?s)device-side assertion failed.*ERR\d{5}"):
        torch.npu.synchronize()
    del result
    expected = op(_X, torch.tensor(good))
    torch.testing.assert_close(op(_X.npu(), torch.tensor(good).npu()).cpu(), expected)
    fallen = {op: row["fallback_reason"] for op, row in eager_stats().items() if row["fallback"]}
    assert not fallen, f"calls fell back to the CPU: {fallen}"
