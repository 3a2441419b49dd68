"""Results keep the memory layout CPU gives them (TensorIterator's output strides).

An elementwise op of channels_last or permuted inputs returns a result in the inputs' layout on
CPU; code that checks `is_contiguous(memory_format=torch.channels_last)`, or works in place or
through views on the result, must see the same on npu. The kernel writes the result in that memory
order and the dispatcher allocates it with those strides (decompositions/output_layout.py)."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

# Input layouts: each makes a tensor of its shape from a contiguous one.
_LAYOUTS = {
    "permuted": ((4, 5, 6), lambda t: t.permute(2, 0, 1).contiguous().permute(1, 2, 0)),
    "channels_last": ((2, 3, 4, 5), lambda t: t.contiguous(memory_format=torch.channels_last)),
    "channels_last_3d": ((2, 3, 2, 3, 4), lambda t: t.contiguous(memory_format=torch.channels_last_3d)),
    "expanded": ((3, 1, 5), lambda t: t.expand(3, 4, 5)),
    "sliced": ((4, 6, 8), lambda t: t[:, 1:5, ::2]),
}
# Unary, binary (tensor and number), ternary and keepdim reductions: one op of each kind the scan
# covered (exp, sigmoid, maximum behaved as neg and add), to keep the test's time.
_OPS = {
    "neg": lambda x: -x,
    "add": lambda x: x + x * 0.5,
    "mul_scalar": lambda x: x * 3.0,
    "where": lambda x: torch.where(x > 0, x, -x),
    "addcmul": lambda x: torch.addcmul(x, x, x, value=0.25),
    "sum_keepdim": lambda x: x.sum(1, keepdim=True),
    "amax_keepdim": lambda x: x.amax(-1, keepdim=True),
}
_FORMATS = (torch.contiguous_format, torch.channels_last, torch.channels_last_3d)


def _check_like_cpu(got: torch.Tensor, want: torch.Tensor) -> None:
    torch.testing.assert_close(got.cpu(), want)
    assert got.stride() == want.stride(), f"strides {got.stride()} on npu, {want.stride()} on CPU"
    for fmt in _FORMATS:
        if want.dim() == {torch.channels_last: 4, torch.channels_last_3d: 5}.get(fmt, want.dim()):
            assert got.is_contiguous(memory_format=fmt) == want.is_contiguous(memory_format=fmt)


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("op", sorted(_OPS))
def test_result_strides_match_cpu(op, layout, eager_stats):
    shape, make = _LAYOUTS[layout]
    base = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    x = make(base)
    _check_like_cpu(_OPS[op](make(base.npu())), _OPS[op](x))
    assert_no_fallback()


def test_mixed_layouts_follow_the_first_dense_input(eager_stats):
    a = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    b = torch.randn(2, 3, 4, 5)
    for x, y in ((a, b), (b, a), (a, b[0, 0, 0])):
        _check_like_cpu(x.npu() * y.npu(), x * y)
    assert_no_fallback()


def test_in_place_and_views_of_a_laid_out_result(eager_stats):
    """An in-place op writes self in self's layout; a view of the result sees the CPU's elements."""
    x = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    got, want = x.npu(), x.clone()
    got.mul_(2.0).add_(1.0)
    want.mul_(2.0).add_(1.0)
    _check_like_cpu(got, want)
    y_npu, y_cpu = torch.exp(got), torch.exp(want)
    # A view through the result's storage: the flat memory order is CPU's.
    flat = lambda t: t.as_strided((t.numel(),), (1,))  # noqa: E731
    torch.testing.assert_close(flat(y_npu).cpu(), flat(y_cpu))
    assert_no_fallback()


# out= forms: a tensor the call resizes takes the result's layout (the CPU restrides it), one of the
# right shape keeps its own strides.
_OUT_OPS = {
    "add": lambda x, out: torch.add(x, x * 0.5, out=out),
    "where": lambda x, out: torch.where(x > 0, x, -x, out=out),
    "sum_keepdim": lambda x, out: torch.sum(x, 1, keepdim=True, out=out),
}


@pytest.mark.parametrize("out_shape", [(0,), (3,), None], ids=["empty", "wrong_size", "right_size"])
@pytest.mark.parametrize("layout", ["permuted", "channels_last"])
@pytest.mark.parametrize("op", sorted(_OUT_OPS))
def test_out_strides_match_cpu(op, layout, out_shape, eager_stats):
    shape, make = _LAYOUTS[layout]
    x = make(torch.randn(shape, generator=torch.Generator().manual_seed(0)))
    want = _OUT_OPS[op](x, torch.empty(out_shape or _OUT_OPS[op](x, None).shape))
    got = _OUT_OPS[op](x.npu(), torch.empty(out_shape or want.shape, device="npu"))
    _check_like_cpu(got, want)
    assert_no_fallback()
