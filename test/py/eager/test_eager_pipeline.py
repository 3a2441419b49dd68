"""The eager miss through the ascend pipeline: launch lists, multi-kernel calls, opaque kernels, kernel dumps."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

import torch_npu._C as _C
from npu_mlir.frontend import kernel_build
from torch_npu.eager import disk_cache
from torch_npu.eager.plan import plan_call

from conftest import assert_no_fallback


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_ENV, str(tmp_path))
    _C._eager_clear_memory_cache()
    yield tmp_path
    _C._eager_clear_memory_cache()


def _records(cache) -> list[dict]:
    # An entry without a kernel is the disk cache's marker of a call with baked arguments.
    entries = (json.loads(p.read_text()) for p in cache.rglob("entry-*.json"))
    return [e["kernel"] for e in entries if "kernel" in e]


def test_scalar_parameters_run_through_the_pipeline(fresh_cache, eager_stats):
    # add's alpha and mul's number are kernel parameters (0-d f64/i64): read in the tiled kernel.
    x, y = torch.randn(32, 64), torch.randn(32, 64)
    xn, yn = x.npu(), y.npu()
    for alpha in (1, 3):
        torch.testing.assert_close(torch.add(xn, yn, alpha=alpha).cpu(), torch.add(x, y, alpha=alpha))
    for s in (0.5, -2.0):
        torch.testing.assert_close((xn * s).cpu(), x * s)
    stats = eager_stats()
    assert stats["aten::add.Tensor"]["pipeline"] == 2 and stats["aten::mul.Tensor"]["pipeline"] == 2, stats
    assert_no_fallback()
    [add, mul] = sorted(_records(fresh_cache), key=lambda r: r["launches"][0]["symbol"])
    for record in (add, mul):
        assert record["path"] == "pipeline"
        [source] = record["sources"]
        assert "tiling" in source["tiled_mlir"] and "__aicore__" in source["ascendc"] and "_launch(" in source["acl"]
    assert add["launches"][0]["refs"][-1] == ["param", 0]  # the scalar slot comes last (sim ABI)


def test_multi_kernel_launch_list(fresh_cache, eager_stats):
    # layer norm backward: several tiled kernels, one eager call; every result matches the CPU.
    x = torch.randn(8, 64, requires_grad=True)
    w, b = torch.randn(64, requires_grad=True), torch.randn(64, requires_grad=True)
    xn, wn, bn = (t.detach().npu().requires_grad_() for t in (x, w, b))
    F.layer_norm(x, (64,), w, b).sum().backward()
    F.layer_norm(xn, (64,), wn, bn).sum().backward()
    for cpu, npu in ((x, xn), (w, wn), (b, bn)):
        torch.testing.assert_close(npu.grad.cpu(), cpu.grad, rtol=1e-4, atol=1e-4)
    assert_no_fallback()
    records = [r for r in _records(fresh_cache) if r["path"] == "pipeline"]
    assert any(len(r["launches"]) > 1 for r in records), [len(r["launches"]) for r in records]
    assert eager_stats()["aten::native_layer_norm_backward"]["pipeline"] == 1


def test_host_compute_runs_in_opaque_kernels(fresh_cache, eager_stats):
    # Value+index reductions (argmax), gathers and concat: raise-linalg leaves them as
    # upstream ops, ascend-fuse outlines them into opaque kernels, so they run through the pipeline.
    x = torch.randn(16, 32)
    xn = x.npu()
    assert torch.equal(torch.argmax(xn, 1).cpu(), torch.argmax(x, 1))
    index = torch.randint(0, 32, (16, 5))
    torch.testing.assert_close(torch.gather(xn, 1, index.npu()).cpu(), torch.gather(x, 1, index))
    y = torch.randn(3, 32)
    torch.testing.assert_close(torch.cat([xn, y.npu()]).cpu(), torch.cat([x, y]))
    assert_no_fallback()
    stats = eager_stats()
    for op in ("aten::argmax", "aten::gather.out", "aten::cat"):
        assert stats[op]["compiled"] == stats[op]["pipeline"] >= 1, (op, stats[op])
    records = _records(fresh_cache)
    assert all(r["path"] == "pipeline" for r in records), [r.get("reason") for r in records]
    assert sum('fusion = "opaque"' in s["tiled_mlir"] for r in records for s in r["sources"]) >= 3


def test_dump_kernels_writes_tiled_mlir_ascendc_and_acl(tmp_path, monkeypatch):
    # The worker writes the dump; the build runs here in-process to read the env it is given.
    dump = tmp_path / "dump"
    monkeypatch.setenv(kernel_build.DUMP_ENV, str(dump))
    plan = plan_call("aten::sigmoid", [("T", "Float", [24, 40], [40, 1], 2)], 2)
    record = kernel_build.build(dict(plan.request, cache_dir=str(tmp_path)))
    assert record["path"] == "pipeline"
    symbol = record["launches"][0]["symbol"]
    assert "ascend.kernel" in (dump / f"{symbol}.mlir").read_text()
    assert f'extern "C" __global__ __aicore__ void' in (dump / f"{symbol}.ascendc.cpp").read_text()
    assert "aclrtLaunchKernel" in (dump / f"{symbol}.acl.cpp").read_text()


def test_in_place_pointwise_record_never_reads_an_input_after_writing_a_result(fresh_cache):
    # The dispatcher writes add_'s result straight into self: a launch list that read self again
    # after writing it would be wrong, so launch_list refuses such an order for pointwise ops.
    from npu_mlir.targets.launch_list import Launch, LaunchListError, _check_in_place

    def launch(*refs):
        return Launch("k", "", "k", 1, tuple(refs), "", None, None)

    _check_in_place([launch(("in", 0), ("tmp", 0)), launch(("tmp", 0), ("in", 0), ("out", 0))], 1)
    with pytest.raises(LaunchListError, match="in-place"):
        _check_in_place([launch(("in", 0), ("out", 0)), launch(("in", 0), ("out", 0), ("tmp", 0))], 1)
    x, y = torch.randn(32, 64), torch.randn(32, 64)
    xn = x.npu()
    xn.add_(y.npu(), alpha=2)
    torch.testing.assert_close(xn.cpu(), x + 2 * y)


def test_former_linalg_path_calls_run_through_the_pipeline(fresh_cache, eager_stats):
    # The calls the pipeline used to refuse (each then built straight from linalg): max_pool2d
    # with indices (a region read inside its opaque group), amax of a 0-d tensor (the ACL host
    # code's 0-d input), index_add with a strided source (a view of a strided input keeps strides),
    # a row too long for UB (split across UB tiles).
    x = torch.randn(1, 2, 7, 9)
    got = torch.ops.aten.max_pool2d_with_indices(x.npu(), [3, 3], [2, 2], [1, 1])
    for g, w in zip(got, torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])):
        torch.testing.assert_close(g.cpu(), w)
    s = torch.tensor(1.5)
    torch.testing.assert_close(torch.amax(s.npu()).cpu(), torch.amax(s))
    base, index, source = torch.randn(4, 3), torch.tensor([2, 0]), torch.randn(3, 2).t()
    torch.testing.assert_close(torch.index_add(base.npu(), 0, index.npu(), source.npu()).cpu(),
                               torch.index_add(base, 0, index, source))
    wide = torch.randn(3, 70000)
    torch.testing.assert_close(wide.npu().sum(1).cpu(), wide.sum(1), rtol=1e-4, atol=1e-3)
    assert_no_fallback()
    stats = eager_stats()
    for op in ("aten::max_pool2d_with_indices", "aten::amax", "aten::index_add", "aten::sum.dim_IntList"):
        row = next(r for name, r in stats.items() if name.startswith(op))
        assert row["compiled"] == row["pipeline"] >= 1, (op, row)
    records = _records(fresh_cache)
    assert all(r["path"] == "pipeline" for r in records), [r.get("reason") for r in records]
