"""The optimizer tests' fixture: counters from a clean slate, and a check that nothing fell back to the CPU."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401


@pytest.fixture
def no_fallback():
    """Reset the eager counters; after the test, fail if any call ran on the CPU fallback."""
    torch.npu.reset_eager_stats()
    yield torch.npu.eager_stats
    fallen = {op: row["fallback"] for op, row in torch.npu.eager_stats().items() if row["fallback"]}
    assert not fallen, f"calls fell back to the CPU: {fallen}"
