"""torch.autocast("npu"): the dtype each op computes in (torch_npu's policy = CUDA's), the amp API names."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_npu

LOW = "low"  # the autocast dtype
FP32 = torch.float32


def _x(*shape):
    return torch.randn(*shape, device="npu")


def _low(*shape):
    # Inputs already in the autocast dtype (mixing float16 into a bfloat16 region is an error, as on CUDA).
    return _x(*shape).to(torch.get_autocast_dtype("npu"))


# (name, fn of float32 npu tensors, expected result dtype)
POLICY = [
    ("mm", lambda: torch.mm(_x(4, 8), _x(8, 3)), LOW),
    ("matmul", lambda: _x(2, 4, 8) @ _x(8, 3), LOW),
    ("bmm", lambda: torch.bmm(_x(2, 4, 8), _x(2, 8, 3)), LOW),
    ("addmm", lambda: torch.addmm(_x(3), _x(4, 8), _x(8, 3)), LOW),
    ("baddbmm", lambda: torch.baddbmm(_x(2, 4, 3), _x(2, 4, 8), _x(2, 8, 3)), LOW),
    ("linear", lambda: F.linear(_x(4, 8), _x(3, 8), _x(3)), LOW),
    ("conv2d", lambda: F.conv2d(_x(1, 2, 6, 6), _x(4, 2, 3, 3)), LOW),
    ("sdpa", lambda: F.scaled_dot_product_attention(_x(1, 2, 4, 8), _x(1, 2, 4, 8), _x(1, 2, 4, 8)), LOW),
    ("npu_fusion_attention", lambda: torch_npu.npu_fusion_attention(
        _x(1, 2, 4, 8), _x(1, 2, 4, 8), _x(1, 2, 4, 8), 2, "BNSD", scale=0.35)[0], LOW),
    ("layer_norm", lambda: F.layer_norm(_x(4, 8).half(), (8,)), FP32),
    ("softmax", lambda: torch.softmax(_x(4, 8).half(), 1), FP32),
    ("log_softmax", lambda: torch.log_softmax(_x(4, 8).half(), 1), FP32),
    ("exp", lambda: torch.exp(_x(4, 8).half()), FP32),
    ("log", lambda: torch.log(_x(4, 8).abs().half()), FP32),
    ("pow", lambda: torch.pow(_x(4, 8).half(), 2), FP32),
    ("sum", lambda: torch.sum(_x(4, 8).half()), FP32),
    ("norm", lambda: torch.norm(_x(4, 8).half()), FP32),
    ("vector_norm", lambda: torch.linalg.vector_norm(_x(4, 8).half()), FP32),
    ("mse_loss", lambda: F.mse_loss(_x(4, 8).half(), _x(4, 8).half()), FP32),
    ("nll_loss", lambda: F.nll_loss(torch.log_softmax(_x(4, 3), 1).half(), torch.tensor([0, 1, 2, 1], device="npu")),
     FP32),
    ("addcmul", lambda: torch.addcmul(_x(4), _low(4), _x(4)), FP32),
    ("atan2", lambda: torch.atan2(_low(4), _x(4)), FP32),
    ("relu", lambda: torch.relu(_low(4)), LOW),  # not listed: runs in its input's dtype
    ("add", lambda: _x(4) + _x(4), FP32),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name,fn,expected", POLICY, ids=[p[0] for p in POLICY])
def test_autocast_op_dtype(name, fn, expected, dtype):
    torch.manual_seed(0)
    with torch.autocast("npu", dtype=dtype):
        out = fn()
    assert out.dtype == (dtype if expected == LOW else expected), name


def test_lower_precision_matmul_matches_cpu():
    a, b = torch.randn(16, 32), torch.randn(32, 8)
    with torch.autocast("npu", dtype=torch.bfloat16):
        out = a.npu() @ b.npu()
    expected = (a.bfloat16().float() @ b.bfloat16().float())
    torch.testing.assert_close(out.float().cpu(), expected, atol=0.1, rtol=0.02)


def test_binary_cross_entropy_is_banned():
    p, t = torch.rand(4, device="npu"), torch.rand(4, device="npu")
    with torch.autocast("npu"), pytest.raises(RuntimeError, match="unsafe to autocast.*\n?(.|\n)*ERR01007"):
        F.binary_cross_entropy(p, t)
    F.binary_cross_entropy(p, t)  # allowed outside autocast


def test_npu_amp_autocast_defaults_to_float16_and_takes_bfloat16():
    a = _x(4, 4)
    with torch.npu.amp.autocast():
        assert (a @ a).dtype == torch.float16
        assert torch.npu.is_autocast_enabled() and torch.npu.get_autocast_dtype() == torch.float16
    with torch.npu.amp.autocast(dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16
    with torch.npu.amp.autocast(enabled=False):
        assert (a @ a).dtype == torch.float32
    assert not torch.npu.is_autocast_enabled()


def test_autocast_getters_setters():
    assert torch.npu.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.npu.is_bf16_supported()
    before = torch.npu.get_autocast_dtype()
    try:
        torch.npu.set_autocast_dtype(torch.bfloat16)
        torch.npu.set_autocast_enabled(True)
        assert torch.npu.is_autocast_enabled() and torch.is_autocast_enabled("npu")
        assert (_x(4, 4) @ _x(4, 4)).dtype == torch.bfloat16
    finally:
        torch.npu.set_autocast_enabled(False)
        torch.npu.set_autocast_dtype(before)
    with pytest.raises(ValueError, match="ERR00002"):
        torch.npu.set_autocast_dtype(torch.float64)


def test_custom_fwd_bwd_forward_to_torch_amp_with_npu():
    with pytest.warns(FutureWarning, match="torch.amp.custom_fwd"):
        fwd = torch.npu.amp.custom_fwd(cast_inputs=torch.float32)
    with pytest.warns(FutureWarning, match="torch.amp.custom_bwd"):
        bwd_decorator = torch.npu.amp.custom_bwd
        seen = {}

        class Square(torch.autograd.Function):
            @staticmethod
            @fwd
            def forward(ctx, x):
                seen["forward"] = (x.dtype, torch.is_autocast_enabled("npu"))
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @bwd_decorator
            def backward(ctx, grad):
                seen["backward"] = torch.is_autocast_enabled("npu")
                (x,) = ctx.saved_tensors
                return 2 * x * grad

    x = _x(4).half().requires_grad_()
    with torch.npu.amp.autocast():
        y = Square.apply(x)
    y.sum().backward()
    # cast_inputs: the forward runs in float32 with autocast off; the backward runs as the forward did.
    assert seen == {"forward": (torch.float32, False), "backward": False}
    torch.testing.assert_close(x.grad.cpu(), (2 * x.detach().float()).half().cpu())
