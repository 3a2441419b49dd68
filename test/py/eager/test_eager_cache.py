"""Kernel cache behaviour: hits and misses, scalar parameters, in-place / out=, strides, streams."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_no_fallback


def _row(stats, op):
    return stats().get(op, {"hits": 0, "misses": 0, "compiled": 0, "fallback": 0})


def test_second_call_hits(eager_stats):
    x, y = torch.randn(5, 7).npu(), torch.randn(5, 7).npu()
    torch.sub(x, y)
    before = _row(eager_stats, "aten::sub.Tensor")
    torch.sub(x, y)
    after = _row(eager_stats, "aten::sub.Tensor")
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]


def test_new_scalar_value_is_a_hit(eager_stats):
    x = torch.randn(9, 4)
    xn = x.npu()
    (xn * 0.5).cpu()
    misses = _row(eager_stats, "aten::mul.Tensor")["misses"]
    for lr in (0.1, 0.01, -3.0, 7):
        torch.testing.assert_close((xn * lr).cpu(), x * lr)
    assert _row(eager_stats, "aten::mul.Tensor")["misses"] <= misses + 1  # the int 7 is a new key kind
    for alpha in (0.5, 2.0, -1.25):
        torch.testing.assert_close(torch.add(xn, xn, alpha=alpha).cpu(), torch.add(x, x, alpha=alpha))
    row = _row(eager_stats, "aten::add.Tensor")
    assert row["misses"] <= 1 and row["hits"] >= 2
    assert_no_fallback()


def test_new_shape_is_a_miss(eager_stats):
    torch.exp(torch.randn(3, 3).npu())
    misses = _row(eager_stats, "aten::exp")["misses"]
    torch.exp(torch.randn(3, 4).npu())
    assert _row(eager_stats, "aten::exp")["misses"] == misses + 1


def test_in_place_writes_into_self(eager_stats):
    x, y = torch.randn(4, 6), torch.randn(4, 6)
    xn, yn = x.npu(), y.npu()
    ptr = xn.data_ptr()
    xn.add_(yn, alpha=2.0).mul_(yn).sub_(yn).div_(yn.abs() + 1).relu_()
    expected = x.add(y, alpha=2.0).mul(y).sub(y).div(y.abs() + 1).relu()
    assert xn.data_ptr() == ptr
    torch.testing.assert_close(xn.cpu(), expected)
    xn.mul_(0.5)
    torch.testing.assert_close(xn.cpu(), expected * 0.5)
    assert_no_fallback()


def test_in_place_through_a_view_and_with_broadcast(eager_stats):
    x, row = torch.randn(4, 6), torch.randn(6)
    xn = x.npu()
    xn[1:3].add_(row.npu())  # a strided destination: written through a temporary
    x[1:3].add_(row)
    torch.testing.assert_close(xn.cpu(), x)
    assert_no_fallback()


def test_out_resizes_and_casts(eager_stats):
    a, b = torch.randn(3, 5), torch.randn(3, 5)
    out = torch.empty(0).npu()
    torch.add(a.npu(), b.npu(), out=out)
    torch.testing.assert_close(out.cpu(), a + b)
    out64 = torch.empty(3, 5, dtype=torch.float64).npu()
    torch.mul(a.npu(), b.npu(), out=out64)
    torch.testing.assert_close(out64.cpu(), (a * b).double())
    mm_out = torch.empty(3, 3).npu()
    torch.mm(a.npu(), b.t().npu(), out=mm_out)
    torch.testing.assert_close(mm_out.cpu(), a @ b.t(), atol=1e-5, rtol=1e-5)
    torch.sub(a.npu(), b.npu(), out=out)
    torch.div(a.npu(), b.npu(), out=out)
    torch.testing.assert_close(out.cpu(), a / b)
    assert_no_fallback()


def test_non_contiguous_inputs(eager_stats):
    a, b = torch.randn(6, 8), torch.randn(8, 6)
    an, bn = a.npu(), b.npu()
    torch.testing.assert_close((an + bn.t()).cpu(), a + b.t())
    torch.testing.assert_close((an[:, ::2] * 2.0).cpu(), a[:, ::2] * 2.0)
    torch.testing.assert_close(torch.mm(an.t(), bn.t()).cpu(), a.t() @ b.t(), atol=1e-5, rtol=1e-5)
    col = torch.randn(6, 1)
    torch.testing.assert_close((col.npu().expand(6, 8) - an).cpu(), col.expand(6, 8) - a)
    torch.testing.assert_close(an.t().sum(dim=1).cpu(), a.t().sum(dim=1), atol=1e-5, rtol=1e-5)
    assert_no_fallback()


def test_stream_ordering_without_synchronising(eager_stats):
    x = torch.randn(64, 64)
    xn = x.npu()
    acc_cpu, acc = x.clone(), xn.clone()
    for i in range(20):  # each op reads the previous result; nothing waits until .cpu()
        acc = torch.tanh(acc * 0.9 + xn)
        acc_cpu = torch.tanh(acc_cpu * 0.9 + x)
    side = torch.npu.Stream()
    # Before entering the context: inside it, current_stream() is `side` itself.
    side.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(side):
        doubled = acc + acc
    torch.npu.current_stream().wait_stream(side)
    torch.testing.assert_close(doubled.cpu(), acc_cpu + acc_cpu, atol=1e-5, rtol=1e-5)
    assert_no_fallback()


def test_in_place_on_int_with_float_is_an_error():
    x = torch.arange(6).npu()
    try:
        x.mul_(torch.randn(6).npu())
    except RuntimeError as err:
        assert "can't be cast" in str(err)
    else:
        raise AssertionError("an int tensor cannot take a float result in place")


def test_empty_tensors_launch_nothing(eager_stats):
    a, b = torch.randn(0, 3), torch.randn(0, 3)
    got = torch.add(a.npu(), b.npu(), alpha=2.0)
    assert got.shape == (0, 3) and got.device.type == "npu"
    assert torch.exp(a.npu()).shape == (0, 3)
    assert_no_fallback()
    # A result with elements from no inputs (sum over nothing = 0) is left to the CPU fallback.
    assert torch.sum(a.npu()).item() == 0.0
    assert eager_stats()["aten::sum"]["fallback"] == 1


def test_tensors_on_two_devices_are_refused():
    if torch.npu.device_count() < 2:
        pytest.skip("needs two simulated devices (NPU_SIM_DEVICE_COUNT)")
    a, b = torch.randn(3).to("npu:0"), torch.randn(3).to("npu:1")
    try:
        a + b
    except RuntimeError as err:
        assert "same device" in str(err) and "ERR01001" in str(err)
    else:
        raise AssertionError("a kernel must not read another device's tensor")
    with torch.npu.device(1):
        c = torch.randn(3)
        got = c.to("npu:1") * 2.0
        assert got.device == torch.device("npu:1")
        torch.testing.assert_close(got.cpu(), c * 2.0)


def test_views_are_counted_and_alias_their_base(eager_stats):
    x = torch.randn(4, 6)
    xn = x.npu()
    view = xn.t().unsqueeze(0)[0, 1:3].permute(1, 0)
    assert view.data_ptr() != 0 and view.untyped_storage().data_ptr() == xn.untyped_storage().data_ptr()
    torch.testing.assert_close(view.cpu(), x.t().unsqueeze(0)[0, 1:3].permute(1, 0))
    view.mul_(2.0)  # writes through the view reach the base
    expected = x.clone()
    expected.t().unsqueeze(0)[0, 1:3].permute(1, 0).mul_(2.0)
    torch.testing.assert_close(xn.cpu(), expected)
    stats = eager_stats()
    for op in ("aten::t", "aten::unsqueeze", "aten::permute", "aten::slice.Tensor"):
        assert stats[op]["view"] >= 1, (op, stats.get(op))
    assert_no_fallback()


def test_a_refused_call_says_why(eager_stats):
    # The simulated device has no uint8 kernels: the planner refuses, the call still runs (on the CPU).
    x = torch.tensor([200, 100, 7], dtype=torch.uint8)
    with pytest.warns(UserWarning, match="compiler rejected this call .*Byte"):
        result = x.npu() + x.npu()
    torch.testing.assert_close(result.cpu(), x + x)
    row = eager_stats()["aten::add.Tensor"]
    assert row["fallback"] == 1 and "Byte" in row["fallback_reason"]


@pytest.mark.parametrize("call", [
    lambda a, b: a * b,
    lambda a, b: b + a,
    lambda a, b: a.add_(b),
    lambda a, b: torch.mm(a, b.t()),
    lambda a, b: torch.where(a > 0, a, b),
    lambda a, b: torch.cat([a, b]),
], ids=["mul", "cpu_first", "in_place", "mm", "where", "cat"])
def test_a_cpu_tensor_with_elements_is_a_device_mismatch(call):
    # As torch.cuda: the fallback computed these on the host and returned an npu result.
    a, b = torch.randn(3, 4).npu(), torch.randn(3, 4)
    before = a.cpu()
    with pytest.raises(RuntimeError, match=r"(?s)same device.*npu:0 and cpu.*ERR01001"):
        call(a, b)
    torch.testing.assert_close(a.cpu(), before)


def test_cpu_values_and_cpu_indices_are_taken(eager_stats):
    # A 0-d CPU tensor is a value, and indices may come from the CPU: as torch.cuda does, they are
    # copied to the device and the kernel runs (before, such a call ran on the CPU fallback).
    x = torch.randn(5, 3)
    index, mask = torch.tensor([4, 0, 2]), torch.tensor([True, False, True, True, False])
    torch.testing.assert_close((x.npu() * torch.tensor(2.0)).cpu(), x * 2.0)
    torch.testing.assert_close(x.npu()[index].cpu(), x[index])
    torch.testing.assert_close(x.npu()[mask].cpu(), x[mask])
    got = x.npu()
    got[index] = torch.zeros(3, 3).npu()
    expected = x.clone()
    expected[index] = 0.0
    torch.testing.assert_close(got.cpu(), expected)
    assert_no_fallback()
