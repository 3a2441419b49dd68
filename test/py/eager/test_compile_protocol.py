"""Compile requests are typed as the answers are (npu_mlir.tools.compile_protocol): frozen, stamped with
the protocol version, and a worker refuses one it cannot read as stale instead of building it."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
import torch

from npu_mlir.tools.compile_protocol import PROTOCOL_VERSION, CompileRequest, KernelRecord
from torch_npu.eager import disk_cache
from torch_npu.eager.plan import plan_call
from torch_npu.eager.workers import StaleRequest, WorkerCrashed, pool


def _request(tmp_path) -> CompileRequest:
    t = torch.randn(3, 5)
    desc = ("T", "Float", list(t.shape), list(t.stride()), 2)
    plan = plan_call("aten::neg", [desc], 2)
    return CompileRequest("op", plan.request, str(tmp_path))


def test_a_request_is_frozen_versioned_and_of_a_known_kind(tmp_path):
    request = _request(tmp_path)
    assert request.protocol == PROTOCOL_VERSION
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.kind = "graph"
    assert pickle.loads(pickle.dumps(request)) == request
    assert request.builder_input()["cache_dir"] == str(tmp_path) and "cache_dir" not in request.spec
    with pytest.raises(ValueError, match="kind 'batch'"):
        CompileRequest("batch", {}, str(tmp_path))


def test_a_worker_builds_a_request_and_refuses_another_version_as_stale(tmp_path):
    assert issubclass(StaleRequest, WorkerCrashed)  # the miss path's Unsupported(crashed=True): not kept on disk
    request = _request(tmp_path)
    record = pool().compile(request)
    assert isinstance(record, KernelRecord) and record.launches
    crashes = pool().crashes
    # Stale is not the compiler's refusal (which the disk cache would keep), and not the worker's fault.
    with pytest.raises(StaleRequest, match=f"protocol {PROTOCOL_VERSION + 1}"):
        pool().compile(dataclasses.replace(request, protocol=PROTOCOL_VERSION + 1))
    assert pool().crashes == crashes
    assert not list(tmp_path.glob("entry-*.json"))
    assert isinstance(pool().compile(request), KernelRecord)


def test_the_disk_cache_has_one_owner_of_its_directory_and_variable():
    from npu_mlir.targets.sim import cache

    assert disk_cache.CACHE_ENV is cache.CACHE_ENV and disk_cache.cache_root is cache.cache_root
