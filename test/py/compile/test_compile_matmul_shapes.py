"""Matmuls next to reshapes stay on the cube in compiled graphs.

Fusion folds the views around a matmul into it (a 4-d or 5-d contraction); ascend-raise-linalg
collapses its dim groups back into one ascend.matmul / batch_matmul (raise_linalg_contraction.py).
Each case matches CPU and its graph runs a matmul_epilogue kernel and no reduction kernel (the
broadcast multiply + sum the contraction used to become)."""

import pytest
import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats

TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.fixture
def kinds():
    torch._dynamo.reset()
    reset_compile_stats()
    yield lambda: torch.npu.compile_stats()["kernel_kinds"]
    torch._dynamo.reset()


def _compiled(fn, *args):
    out = torch.compile(fn, backend="npu-mlir", dynamic=False)(*[a.npu() for a in args])
    torch.testing.assert_close(out.cpu(), fn(*args), **TOL)


def test_linear_on_3d_input_with_bias_epilogue(kinds):
    torch.manual_seed(0)
    lin = torch.nn.Linear(32, 48)
    x = torch.randn(2, 8, 32)
    with torch.no_grad():
        out = torch.compile(lin.npu(), backend="npu-mlir", dynamic=False)(x.npu())
        torch.testing.assert_close(out.cpu(), lin.cpu()(x), **TOL)
    # The bias add is the matmul kernel's epilogue: one launch for the whole linear.
    assert kinds() == {"matmul_epilogue": 1}


def test_linear_on_3d_input_trains_as_cpu(kinds):
    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 24)
    x = torch.randn(3, 5, 16, requires_grad=True)
    ref = torch.nn.functional.gelu(lin(x)).sum()
    ref.backward()
    grads = [x.grad.clone()] + [p.grad.clone() for p in lin.parameters()]
    lin.zero_grad(set_to_none=True)
    lin = lin.npu()
    xn = x.detach().npu().requires_grad_()
    step = torch.compile(lambda x: torch.nn.functional.gelu(lin(x)).sum(), backend="npu-mlir", dynamic=False)
    out = step(xn)
    out.backward()
    torch.testing.assert_close(out.cpu(), ref, **TOL)
    for t, g in zip([xn] + list(lin.parameters()), grads):
        torch.testing.assert_close(t.grad.cpu(), g, **TOL)
    # Forward x @ W^T; backward dX = dY @ W and dW = dY^T @ X over both batch dims. The two
    # reductions are the loss's sum and the bias gradient's.
    assert kinds()["matmul_epilogue"] == 3 and kinds()["reduction"] == 2


def test_bmm_on_4d_operands(kinds):
    torch.manual_seed(0)
    _compiled(torch.matmul, torch.randn(2, 4, 8, 16), torch.randn(2, 4, 16, 8))
    assert kinds() == {"matmul_epilogue": 1}


def test_attention_scores_and_weighted_values(kinds):
    torch.manual_seed(0)

    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) * 0.25, dim=-1) @ v

    q, k, v = (torch.randn(2, 4, 16, 8) for _ in range(3))
    _compiled(attention, q, k, v)
    # q @ k^T reads k transposed in place: no transpose kernel; the softmax is its own reduction.
    assert kinds().get("matmul_epilogue") == 2
    assert "single" not in kinds()
