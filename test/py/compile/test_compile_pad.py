"""F.pad in compiled graphs: constant (cropping too), reflect and replicate pads, forward and backward
vs CPU with nothing split out (the backward of a constant pad is a pad by negative amounts, which
split every training graph before dynamo/pads.py)."""

import pytest
import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401


def _three_modes(x):
    y = F.pad(x * 2, (1, 2, 2, 1), value=0.5)
    y = F.pad(torch.tanh(y), (2, 1, 1, 2), mode="reflect")
    return F.pad(y, (1, 1, 2, 0), mode="replicate") * 3


@pytest.mark.parametrize("fn, shape", [
    (_three_modes, (2, 3, 5, 6)),
    (lambda x: F.pad(torch.exp(x), (-1, 2, 1, -2)) + 1, (2, 6, 7)),
], ids=["constant-reflect-replicate", "cropping"])
def test_pad_forward_backward(compile_stats, fn, shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    x_npu, x_ref = x.npu().requires_grad_(), x.clone().requires_grad_()
    out, ref = torch.compile(fn, backend="npu-mlir")(x_npu), fn(x_ref)
    grad = torch.randn(ref.shape)
    out.backward(grad.npu())
    ref.backward(grad)
    torch.testing.assert_close(out.detach().cpu(), ref.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x_npu.grad.cpu(), x_ref.grad, rtol=1e-5, atol=1e-5)
    stats = compile_stats()
    assert stats["split_nodes"] == {} and stats["backward_graphs"] == 1, stats
