"""torch_npu's custom ops (torch.ops.npu.*): numbers and gradients vs plain-torch CPU references,
one compiled kernel per call (forward and backward), bad arguments rejected with an ERR code."""

from __future__ import annotations

import pytest
import torch

import torch_npu

from conftest import assert_no_fallback

# Half types round the output once; the references compute in float32 like the kernels do.
TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float16: dict(atol=2e-3, rtol=2e-3),
             torch.bfloat16: dict(atol=1.6e-2, rtol=1.6e-2)}
DTYPES = list(TOLERANCE)


def close(got: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype = torch.float32) -> None:
    assert got.device.type == "npu"
    torch.testing.assert_close(got.cpu(), expected, **TOLERANCE[dtype])


def calls(stats: dict, op: str) -> dict:
    row = stats.get(op)
    assert row is not None, f"{op} never reached the eager dispatcher: {sorted(stats)}"
    return row


def assert_one_kernel_per_call(stats: dict, op: str, n_calls: int) -> None:
    row = calls(stats, op)
    assert (row["compiled"], row["fallback"]) == (n_calls, 0), row


# ---------------------------------------------------------------- plumbing


def test_custom_ops_are_registered_in_the_npu_namespace():
    schema = str(torch.ops.npu.npu_swiglu.default._schema)
    assert schema == "npu::npu_swiglu(Tensor self, int dim=-1) -> Tensor"
    assert "npu_swiglu" in torch_npu.__all__ and torch_npu.npu_swiglu is torch_npu.ops.npu_swiglu


def test_reference_runs_on_cpu_and_meta():
    x = torch.randn(3, 8)
    a, b = x.chunk(2, -1)
    torch.testing.assert_close(torch_npu.npu_swiglu(x), torch.nn.functional.silu(a) * b)
    assert torch.ops.npu.npu_swiglu(torch.empty(5, 4, 6, device="meta"), 1).shape == (5, 2, 6)


# ---------------------------------------------------------------- npu_swiglu


def swiglu_reference(x: torch.Tensor, dim: int) -> torch.Tensor:
    a, b = x.float().chunk(2, dim)
    return (torch.nn.functional.silu(a) * b).to(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_swiglu_forward_and_backward(dtype, eager_stats):
    x = torch.randn(4, 6, 16).to(dtype)
    grad = torch.randn(4, 6, 8).to(dtype)
    xn = x.npu().requires_grad_()
    y = torch_npu.npu_swiglu(xn)
    y.backward(grad.npu())
    xc = x.float().requires_grad_()
    expected = swiglu_reference(xc, -1)
    expected.backward(grad.float())
    close(y.detach(), expected.detach().to(dtype), dtype)
    close(xn.grad, xc.grad.to(dtype), dtype)
    stats = eager_stats()
    assert_one_kernel_per_call(stats, "npu::npu_swiglu", 1)
    assert_one_kernel_per_call(stats, "npu::npu_swiglu_backward", 1)
    assert_no_fallback()


def test_swiglu_other_dim_and_hit_path(eager_stats):
    x = torch.randn(6, 10, 3)
    for _ in range(3):
        y = torch_npu.npu_swiglu(x.npu(), dim=0)
    close(y, swiglu_reference(x, 0))
    row = eager_stats()["npu::npu_swiglu"]
    assert (row["misses"], row["hits"], row["compiled"]) == (1, 2, 3), row


@pytest.mark.parametrize("make, message", [
    (lambda: torch_npu.npu_swiglu(torch.randn(4, 5).npu()), "npu_swiglu: self has size 5 along dim -1, which must "
                                                            "be even"),
    (lambda: torch_npu.npu_swiglu(torch.randn(4, 6).npu(), dim=2), "npu_swiglu: dim 2 is out of range"),
    (lambda: torch_npu.npu_swiglu(torch.ones(4, 6, dtype=torch.int32).npu()), "npu_swiglu: self has dtype Int"),
    (lambda: torch.ops.npu.npu_swiglu_backward(torch.randn(4, 2).npu(), torch.randn(4, 6).npu()),
     r"npu_swiglu_backward: grad_output has shape \[4, 2\], expected \[4, 3\]"),
])
def test_swiglu_rejects_bad_arguments(make, message):
    with pytest.raises(RuntimeError, match=message) as err:
        make()
    assert "ERR0100" in str(err.value)
