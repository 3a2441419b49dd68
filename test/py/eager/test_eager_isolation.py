"""Compile isolation and the persistent kernel cache."""

from __future__ import annotations

import json
import os
import warnings

import pytest
import torch

import torch_npu._C as _C
from torch_npu.eager import disk_cache
from torch_npu.eager.workers import pool


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty disk cache and an empty in-memory cache, so every call below is a real compile."""
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path))
    _C._eager_clear_memory_cache()
    yield tmp_path
    _C._eager_clear_memory_cache()


def test_hung_worker_is_replaced_and_the_call_falls_back(fresh_cache, monkeypatch, eager_stats):
    x = torch.randn(7, 13, 3)
    xn = x.npu()
    crashes = pool().crashes
    monkeypatch.setenv("TORCH_NPU_COMPILE_TIMEOUT", "0.01")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.sigmoid(xn).cpu()  # the build may end after the call returns: its warning before the sync's
    assert any("compile worker crashed or hung" in str(w.message) for w in caught)
    torch.testing.assert_close(got, torch.sigmoid(x))  # the CPU fallback ran it
    assert pool().crashes == crashes + 1
    row = eager_stats()["aten::sigmoid"]
    assert row["fallback"] == 1 and row["misses"] == 1
    # Remembered: the same call is not sent to a worker again.
    torch.testing.assert_close(torch.sigmoid(xn).cpu(), torch.sigmoid(x))
    assert eager_stats()["aten::sigmoid"]["misses"] == 1
    # The replacement worker compiles the next call.
    monkeypatch.setenv("TORCH_NPU_COMPILE_TIMEOUT", "300")
    y = torch.randn(7, 13, 4)
    torch.testing.assert_close(torch.sigmoid(y.npu()).cpu(), torch.sigmoid(y))
    assert eager_stats()["aten::sigmoid"]["compiled"] == 1


def test_killed_worker_is_replaced(fresh_cache):
    workers = pool()
    workers.start()
    victim = workers._idle.get()
    workers._idle.put(victim)
    victim.process.kill()  # a real process death, as a SIGFPE in MLIR would be
    # Whichever worker serves these, the pool answers both; the dead one is replaced.
    for shape in ((3, 5), (3, 6)):
        x = torch.randn(shape)
        torch.testing.assert_close((x.npu() * 3.0).cpu(), x * 3.0)
    assert all(w.process.poll() is None for w in workers._all)


def _entries(root):
    return sorted(root.glob("*/entry-*.json"))


def test_corrupt_library_is_discarded_and_rebuilt(fresh_cache, eager_stats):
    x = torch.randn(5, 11)
    torch.testing.assert_close(torch.exp(x.npu()).cpu(), torch.exp(x))
    [entry] = _entries(fresh_cache)
    library = entry.parent / json.loads(entry.read_text())["libraries"][0][0]
    # A new inode, as another process would find it: overwriting the mapped file in place would crash this one.
    damaged = library.with_suffix(".damaged")
    damaged.write_bytes(b"\x7fELF garbage")
    os.replace(damaged, library)
    _C._eager_clear_memory_cache()
    torch.testing.assert_close(torch.exp(x.npu()).cpu(), torch.exp(x))
    [entry] = _entries(fresh_cache)
    rebuilt = entry.parent / json.loads(entry.read_text())["libraries"][0][0]  # named by the worker's compiler hash
    assert rebuilt.read_bytes()[:12] != b"\x7fELF garbage", "the damaged library was not rebuilt"
    assert eager_stats()["aten::exp"]["misses"] == 2
    assert eager_stats()["aten::exp"]["fallback"] == 0


def test_corrupt_entry_is_discarded_and_rebuilt(fresh_cache, eager_stats):
    x = torch.randn(4, 9)
    torch.testing.assert_close(torch.tanh(x.npu()).cpu(), torch.tanh(x))
    [entry] = _entries(fresh_cache)
    entry.write_text("{not json")
    _C._eager_clear_memory_cache()
    torch.testing.assert_close(torch.tanh(x.npu()).cpu(), torch.tanh(x))
    assert json.loads(entry.read_text())["key"]  # rewritten whole
    assert eager_stats()["aten::tanh"]["fallback"] == 0


def test_warm_disk_cache_skips_the_worker(fresh_cache, eager_stats):
    x = torch.randn(6, 10)
    torch.testing.assert_close(torch.neg(x.npu()).cpu(), -x)
    _C._eager_clear_memory_cache()
    torch.npu.reset_eager_stats()
    torch.testing.assert_close(torch.neg(x.npu()).cpu(), -x)
    row = eager_stats()["aten::neg"]
    assert row["misses"] == 1 and row["compile_ms"] < 1000, row  # a disk load, not a compile


def test_cache_is_keyed_by_compiler_version(fresh_cache):
    torch.relu(torch.randn(3, 3).npu()).cpu()
    [entry] = _entries(fresh_cache)
    assert entry.parent.name == disk_cache.compiler_version()
