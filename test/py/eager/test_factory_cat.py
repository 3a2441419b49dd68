"""Ops real models call that used to reach the CPU fallback: arange (a factory with no tensor input:
its out= form compiles as arange.start_step in out's dtype on out's device) and cat with 1-d empty
inputs (transformers' KV cache starts as torch.tensor([]); cat skips such inputs, as torch does)."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_no_fallback

ARANGES = [((0, 64), {}), ((3, 10, 3), {}), ((5, -7, -2), {"dtype": torch.int32}), ((0, 5), {"dtype": torch.float32}),
           ((0.0, 1.0, 0.1), {}), ((-3.3, 40.7, 0.7), {"dtype": torch.float16}),
           ((0.0, 1.0, 0.01), {"dtype": torch.bfloat16}), ((0, 3.5, 1.5), {"dtype": torch.int64})]


@pytest.mark.parametrize("args,kwargs", ARANGES)
def test_arange_matches_cpu(eager_stats, args, kwargs):
    got = torch.arange(*args, device="npu", **kwargs)
    expected = torch.arange(*args, **kwargs)
    assert got.device.type == "npu"
    # start + step * i rounds on the scale of the bounds, not of the value (-3.3 + 0.7 * 4 is near 0).
    atol = torch.finfo(expected.dtype).eps * max(abs(a) for a in args[:2]) if expected.is_floating_point() else 0
    rtol = {torch.float32: 1.3e-6, torch.float16: 1e-3, torch.bfloat16: 1.6e-2}.get(expected.dtype, 0)
    torch.testing.assert_close(got.cpu(), expected, atol=atol, rtol=rtol)
    assert_no_fallback()


def test_arange_out_is_resized_and_cast(eager_stats):
    out = torch.full((2,), 7.0, device="npu")
    returned = torch.arange(1, 6, out=out)
    assert returned is out
    torch.testing.assert_close(out.cpu(), torch.arange(1, 6, out=torch.full((2,), 7.0)))
    assert_no_fallback()


def test_arange_runs_on_the_device_it_names(eager_stats):
    last = torch.npu.device_count() - 1
    got = torch.arange(0, 8, device=f"npu:{last}")
    assert got.device == torch.device("npu", last)
    torch.testing.assert_close(got.cpu(), torch.arange(0, 8))


def test_arange_bad_step_raises_as_on_cpu():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 4, 0, device="npu")
    torch.testing.assert_close(torch.arange(0, 4, device="npu").cpu(), torch.arange(0, 4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_cat_onto_an_empty_cache(eager_stats, dtype):
    cache, keys = torch.tensor([], dtype=dtype), torch.randn(2, 4, 3, 8).to(dtype)
    got = torch.cat([cache.npu(), keys.npu()], dim=-2)
    torch.testing.assert_close(got.cpu(), torch.cat([cache, keys], dim=-2))
    more = torch.randn(2, 4, 1, 8).to(dtype)
    got = torch.cat([got, torch.tensor([], dtype=dtype).npu(), more.npu()], dim=-2)
    torch.testing.assert_close(got.cpu(), torch.cat([keys, more], dim=-2))
    assert_no_fallback()


def test_cat_with_empty_inputs_backward(eager_stats):
    x = torch.randn(3, 5, requires_grad=True)
    xn = x.detach().npu().requires_grad_()
    got = torch.cat([torch.tensor([], device="npu"), xn, xn * 2], dim=1)
    expected = torch.cat([torch.tensor([]), x, x * 2], dim=1)
    torch.testing.assert_close(got.detach().cpu(), expected.detach())
    got.sum().backward()
    expected.sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), x.grad)
    assert_no_fallback()


def test_cat_of_only_empty_inputs(eager_stats):
    got = torch.cat([torch.tensor([], device="npu"), torch.tensor([], device="npu")])
    assert got.shape == (0,) and got.device.type == "npu"
    assert_no_fallback()
