"""A forward miss autograd records compiles its backward's kernels ahead (eager/speculation.py)."""

from __future__ import annotations

import time

import pytest
import torch

from torch_npu import _C
from torch_npu.eager import speculation

pytestmark = pytest.mark.timeout(600)


def test_backward_kernels_are_compiled_while_the_forward_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(speculation.os, "getloadavg", lambda: (0.0, 0.0, 0.0))  # an idle host, whatever this one's load
    _C._eager_clear_memory_cache()
    x = torch.randn(7, 19, requires_grad=True)
    w = torch.randn(19, 5, requires_grad=True)
    xn, wn = (t.detach().npu().requires_grad_() for t in (x, w))
    before = dict(speculation.counts)
    # mm's backward is two mm calls with transposed operands, relu's a threshold_backward: all three
    # are speculated. The mm calls are served; threshold_backward is not, as the speculation traces
    # each op with a contiguous incoming gradient and sum's backward hands relu an expanded one.
    loss = torch.relu(xn @ wn).sum()
    deadline = time.monotonic() + 300
    while speculation.counts["compiled"] - before["compiled"] < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # the three are compiled while nothing else runs (a model's forward would)
    loss.backward()
    torch.relu(x @ w).sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), x.grad)
    torch.testing.assert_close(wn.grad.cpu(), w.grad)
    assert speculation.counts["taken"] - before["taken"] == 2, speculation.counts
    _C._eager_clear_memory_cache()


def test_backward_calls_follow_autograd():
    t = lambda *shape: ("T", "Float", list(shape), list(torch.empty(shape).stride()), 2)
    calls = speculation.backward_calls("aten::addmm", [t(8), t(4, 16), t(16, 8), 1, 1], [0, 1, 2])
    assert [name for name, _ in calls] == ["aten::mm", "aten::mm", "aten::sum.dim_IntList"]
    assert calls[0][1][1] == ("T", "Float", [8, 16], [1, 8], 2)  # mat2.t(): a transposed view, as on npu
