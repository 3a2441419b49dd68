"""The disk cache keys an eager entry by TORCH_NPU_EAGER_BLOCK_DIM: a process with another setting plans
its own kernels instead of being served the ones built for the first setting."""

from __future__ import annotations

import json

import torch

import torch_npu._C as _C
from torch_npu.eager import disk_cache, miss


def _entries(root) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in root.rglob("entry-*.json")}


def _add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    _C._eager_clear_memory_cache()  # the memory cache lives in one process, with one setting: start cold
    return (x.npu() + y.npu()).cpu()


def test_entries_are_keyed_by_block_dim(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path))
    x, y = torch.randn(37, 101), torch.randn(101)
    try:
        torch.testing.assert_close(_add(x, y), x + y)
        first = _entries(tmp_path)
        assert all(bytes.fromhex(m["key"]).endswith(b"|block_dim=%d|[]" % miss.BLOCK_DIM) for m in first.values())

        monkeypatch.setattr(miss, "BLOCK_DIM", miss.BLOCK_DIM + 1)
        torch.testing.assert_close(_add(x, y), x + y)
        second = _entries(tmp_path)
        added = [m for name, m in second.items() if name not in first]
        assert len(added) == 1 and "dispatch" in added[0], "the other block_dim was served the first one's entry"
        assert bytes.fromhex(added[0]["key"]).endswith(b"|block_dim=%d|[]" % miss.BLOCK_DIM)

        monkeypatch.undo()
        monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path))
        torch.testing.assert_close(_add(x, y), x + y)
        assert _entries(tmp_path).keys() == second.keys(), "the first setting's entry was not served again"
    finally:
        _C._eager_clear_memory_cache()
