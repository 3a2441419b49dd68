"""A fresh process serves calls an earlier one compiled from the disk cache alone: no compile worker,
no plan (torch._dynamo), no MLIR; refusals are remembered on disk too."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

import torch_npu._C as _C
from torch_npu.eager import disk_cache

# Runs in the fresh process: the same calls, their results, what they cost and what they loaded.
CHILD = r"""
import json, sys, time
import torch, torch_npu
from torch_npu.eager import workers
x = torch.arange(35, dtype=torch.float32).reshape(5, 7) / 7
start = time.perf_counter()
added = (x.npu() + x.npu()).cpu()
first_ms = (time.perf_counter() - start) * 1e3
empty_sum = torch.sum(torch.ones(3, 0).npu(), dim=1).cpu()
stats = torch.npu.eager_stats()
print(json.dumps({
    "added": added.tolist(), "empty_sum": empty_sum.tolist(), "first_ms": first_ms,
    "add": stats["aten::add.Tensor"], "sum": stats["aten::sum.dim_IntList"],
    "pool_started": bool(workers._pool) and bool(workers._pool[0]._all),
    "loaded": [m for m in ("torch_mlir", "torch._dynamo", "torch_npu.eager.plan", "npu_mlir.pipeline",
                           "npu_mlir.frontend.torch_import", "npu_mlir.targets.sim.build") if m in sys.modules],
}))
"""


def test_fresh_process_serves_a_disk_hit_without_a_worker(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path))
    _C._eager_clear_memory_cache()
    x = torch.arange(35, dtype=torch.float32).reshape(5, 7) / 7
    try:
        torch.testing.assert_close((x.npu() + x.npu()).cpu(), x + x)
        # A sum over an empty dim of a non-empty result: the plan refuses it (the CPU runs it).
        torch.sum(torch.ones(3, 0).npu(), dim=1).cpu()
    finally:
        _C._eager_clear_memory_cache()
    entries = list(tmp_path.rglob("entry-*.json"))
    assert any(json.loads(p.read_text())["kernel"].get("rejected") for p in entries), "the refusal is not kept"

    done = subprocess.run([sys.executable, "-c", CHILD], env=dict(os.environ), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    child = json.loads(done.stdout.strip().splitlines()[-1])
    torch.testing.assert_close(torch.tensor(child["added"]), x + x)
    torch.testing.assert_close(torch.tensor(child["empty_sum"]), torch.zeros(3))
    assert child["add"]["misses"] == 1 and child["add"]["compiled"] == 1, child["add"]
    assert child["sum"]["fallback"] == 1, child["sum"]  # refused from the disk entry, not re-planned
    assert not child["pool_started"], "a disk hit started the compile workers"
    assert child["loaded"] == [], f"a disk hit imported {child['loaded']}"
