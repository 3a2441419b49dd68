"""The typed records between compile worker, disk cache and dispatcher (npu_mlir.tools.compile_protocol):
a disk entry another protocol version wrote, or one missing a field, is compiled again, never misread."""

from __future__ import annotations

import json

import pytest
import torch

import torch_npu._C as _C
from npu_mlir.tools.compile_protocol import (PROTOCOL_VERSION, KernelRecord, KernelSources, Launch, Rejected,
                                             StaleRecord, from_json, to_json)
from torch_npu.eager import disk_cache, workers


def test_records_round_trip_through_json():
    record = KernelRecord(launches=(Launch("k.so", "npu_sim_k", 4, (("in", 0), ("param", 0), ("out", 0))),),
                          temps=(64,), outputs=(((3, 5), "f32"),), sources=(KernelSources("k", "npu_sim_k", "m", None,
                                                                                          None, "no AscendC"),))
    assert from_json(json.loads(json.dumps(to_json(record)))) == record
    assert from_json(json.loads(json.dumps(to_json(Rejected("no"))))) == Rejected("no")
    with pytest.raises(StaleRecord):
        from_json(dict(to_json(record), protocol=PROTOCOL_VERSION - 1))
    with pytest.raises(StaleRecord):
        from_json({k: v for k, v in to_json(record).items() if k != "temps"})


@pytest.fixture
def compiles(tmp_path, monkeypatch):
    """Compile requests sent to the workers, with an empty private disk cache."""
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path))
    sent = []
    compile_ = workers.CompilePool.compile
    monkeypatch.setattr(workers.CompilePool, "compile", lambda pool, request: sent.append(request) or compile_(pool, request))
    _C._eager_clear_memory_cache()
    yield sent
    _C._eager_clear_memory_cache()


def _entry(tmp_path):
    [entry] = [p for p in tmp_path.rglob("entry-*.json") if "kernel" in json.loads(p.read_text())]
    return entry


@pytest.mark.parametrize("damage", ["older_protocol", "no_protocol", "missing_field"])
def test_a_stale_disk_entry_is_compiled_again(tmp_path, compiles, damage):
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    torch.testing.assert_close((x.npu() * x.npu()).cpu(), x * x)
    assert len(compiles) == 1
    _C._eager_clear_memory_cache()
    torch.testing.assert_close((x.npu() * x.npu()).cpu(), x * x)
    assert len(compiles) == 1, "a current entry was compiled again"

    entry = _entry(tmp_path)
    meta = json.loads(entry.read_text())
    if damage == "older_protocol":
        meta["kernel"]["protocol"] = PROTOCOL_VERSION - 1
    elif damage == "no_protocol":
        del meta["kernel"]["protocol"]
    else:
        del meta["kernel"]["outputs"]
    entry.write_text(json.dumps(meta))
    _C._eager_clear_memory_cache()
    torch.testing.assert_close((x.npu() * x.npu()).cpu(), x * x)
    assert len(compiles) == 2, "the stale entry was read"
    assert json.loads(_entry(tmp_path).read_text())["kernel"]["protocol"] == PROTOCOL_VERSION
