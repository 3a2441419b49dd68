"""Fixtures shared by the torch.compile tests."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats


@pytest.fixture
def compile_stats():
    """torch.npu.compile_stats, counting from zero, with Dynamo's caches cleared before and after."""
    torch._dynamo.reset()
    reset_compile_stats()
    yield torch.npu.compile_stats
    torch._dynamo.reset()
