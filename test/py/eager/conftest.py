"""Shared checks for the eager path tests: every call must run a compiled kernel."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401


@pytest.fixture
def eager_stats():
    """Counters from a clean slate; the test reads them with the returned function."""
    torch.npu.reset_eager_stats()
    return torch.npu.eager_stats


def assert_no_fallback() -> None:
    stats = torch.npu.eager_stats()
    fallen = {op: row["fallback"] for op, row in stats.items() if row["fallback"]}
    assert not fallen, f"calls fell back to the CPU: {fallen}"
    assert any(row["compiled"] for row in stats.values()), "no call ran a compiled kernel"
