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
