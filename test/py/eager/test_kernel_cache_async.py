"""Misses that do not block the host (csrc/eager/CompileMiss.h): a call whose kernel is being built is
queued on its stream behind a stand-in launch, and the host goes on to the next op. Order, results,
errors and the CPU fallback of a failed build must be what a synchronous miss gives."""

from __future__ import annotations

import threading

import pytest
import torch

import torch_npu  # noqa: F401
from torch_npu import _C
from torch_npu.eager import workers


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """An empty disk cache and memory cache, misses queued: every call of the test misses."""
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv("TORCH_NPU_ASYNC_MISSES", "1")
    torch.npu.synchronize()
    _C._eager_clear_memory_cache()
    torch.npu.reset_eager_stats()
    yield
    torch.npu.synchronize()
    _C._eager_clear_memory_cache()


def _patch_compile(monkeypatch, wrap):
    original = workers.CompilePool.compile
    monkeypatch.setattr(workers.CompilePool, "compile", lambda self, request: wrap(lambda: original(self, request),
                                                                                   request))


def test_the_host_does_not_wait_for_a_build_and_order_holds(cold, monkeypatch):
    # Every build waits until the host has queued the whole chain: a miss that blocked the host would
    # leave the gate closed until its timeout.
    gate = threading.Event()
    timed_out = []

    def held(build, request):
        if not gate.wait(120):
            timed_out.append(request.spec["target"])
        return build()

    _patch_compile(monkeypatch, held)
    a, b = torch.randn(6, 5), torch.randn(6, 5)
    an, bn = a.npu(), b.npu()
    x = an + bn
    y = x * bn
    x.sub_(y)  # in place, after y read x: y must keep the old x
    z = y * bn  # a second call of a key whose build is still waiting
    gate.set()
    ex = a + b
    ey = ex * b
    ex = ex - ey
    torch.testing.assert_close(x.cpu(), ex)
    torch.testing.assert_close(y.cpu(), ey)
    torch.testing.assert_close(z.cpu(), ey * b)
    assert not timed_out, f"the host waited for the build of {timed_out}"
    stats = torch.npu.eager_stats()
    assert not {op: row for op, row in stats.items() if row["fallback"]}
    # The next calls hit the built kernels.
    torch.testing.assert_close((an + bn).cpu(), a + b)
    assert stats["aten::add.Tensor"]["misses"] == 1 and torch.npu.eager_stats()["aten::add.Tensor"]["hits"] >= 1


def test_a_failed_build_runs_the_queued_calls_on_the_cpu_in_order(cold, monkeypatch):
    def refuse_mul(build, request):
        if request.spec["target"].startswith("aten::mul"):
            raise workers.CompileRejected("refused by the test")
        return build()

    _patch_compile(monkeypatch, refuse_mul)
    a, b = torch.randn(4, 7), torch.randn(4, 7)
    an, bn = a.npu(), b.npu()
    x = an + 1
    y = x * bn  # refused: the CPU kernel runs it on the stream, after x
    w = bn.clone()
    w.mul_(x)  # refused, in place
    z = y + w  # compiled, reads both CPU results
    out = torch.empty(4, 7).npu()
    torch.mul(z, 2.0, out=out)  # refused, out=
    ex = a + 1
    torch.testing.assert_close(y.cpu(), ex * b)
    torch.testing.assert_close(w.cpu(), b * ex)
    torch.testing.assert_close(z.cpu(), ex * b + b * ex)
    torch.testing.assert_close(out.cpu(), (ex * b + b * ex) * 2)
    stats = torch.npu.eager_stats()
    assert stats["aten::mul.Tensor"]["fallback"] >= 1 and stats["aten::mul_.Tensor"]["fallback"] >= 1
    assert stats["aten::add.Tensor"]["fallback"] == 0
    # The refusal is remembered: the next call goes to the CPU fallback without a build.
    torch.testing.assert_close((x * bn).cpu(), ex * b)


def test_a_worker_crash_falls_back_with_its_warning(cold, monkeypatch):
    def crash(build, request):
        if request.spec["target"].startswith("aten::exp"):
            raise workers.WorkerCrashed("killed by the test")
        return build()

    _patch_compile(monkeypatch, crash)
    a = torch.randn(3, 9)
    an = a.npu()
    y = torch.exp(an) + an
    torch.testing.assert_close(y.cpu(), torch.exp(a) + a)
    assert torch.npu.eager_stats()["aten::exp"]["fallback"] >= 1


def test_a_kernel_error_of_a_first_call_raises_at_sync_with_its_code(cold):
    x = torch.randn(4, 3)
    result = torch.gather(x.npu(), 0, torch.tensor([[9, 0, 0]]).npu())
    with pytest.raises(RuntimeError, match=r"(?s)device-side assertion failed.*ERR\d{5}"):
        torch.npu.synchronize()
    good = torch.tensor([[3, 0, 1], [0, 2, 3]])
    torch.testing.assert_close(torch.gather(x.npu(), 0, good.npu()).cpu(), torch.gather(x, 0, good))
    del result



def test_a_failed_build_of_an_op_writing_its_arguments_writes_them(cold, monkeypatch):
    # Training batch norm writes its running statistics: the CPU kernel writes them through the
    # aliases of the queued call, then the next op reads them in stream order.
    def refuse_batch_norm(build, request):
        if "batch_norm" in request.spec["target"]:
            raise workers.CompileRejected("refused by the test")
        return build()

    _patch_compile(monkeypatch, refuse_batch_norm)
    x = torch.randn(6, 4, 5)
    mean, var = torch.zeros(4), torch.ones(4)
    xn, mn, vn = x.npu(), mean.clone().npu(), var.clone().npu()
    y = torch.nn.functional.batch_norm(xn, mn, vn, training=True, momentum=0.3)
    shifted = mn + vn  # queued after the fallback: reads the written statistics
    expected = torch.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.3)
    torch.testing.assert_close(y.cpu(), expected)
    torch.testing.assert_close(mn.cpu(), mean)
    torch.testing.assert_close(vn.cpu(), var)
    torch.testing.assert_close(shifted.cpu(), mean + var)
    assert any(row["fallback"] for op, row in torch.npu.eager_stats().items() if "batch_norm" in op)
