"""Every op in npu_native_functions.yaml: numbers vs CPU, through a compiled kernel (no fallback)."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_no_fallback

torch.manual_seed(0)
A = torch.randn(6, 33)
B = torch.randn(6, 33)
POS = torch.rand(6, 33) + 0.1
ROW = torch.randn(33)

# (name, function of CPU-or-NPU tensors, inputs)
CASES = [
    ("add", lambda a, b: a + b, (A, B)),
    ("add_alpha", lambda a, b: torch.add(a, b, alpha=0.5), (A, B)),
    ("add_broadcast", lambda a, b: a + b, (A, ROW)),
    ("add_scalar", lambda a: a + 1.5, (A,)),
    ("add_Scalar_overload", lambda a: torch.ops.aten.add.Scalar(a, 2.0), (A,)),
    ("sub", lambda a, b: a - b, (A, B)),
    ("rsub_scalar", lambda a: 2.0 - a, (A,)),
    ("mul", lambda a, b: a * b, (A, B)),
    ("mul_scalar", lambda a: a * 0.25, (A,)),
    ("mul_Scalar_overload", lambda a: torch.ops.aten.mul.Scalar(a, 3.0), (A,)),
    ("div", lambda a, b: a / b, (A, POS)),
    ("maximum", torch.maximum, (A, B)),
    ("minimum", torch.minimum, (A, B)),
    ("pow", lambda a: a ** 2, (A,)),
    ("neg", torch.neg, (A,)),
    ("exp", torch.exp, (A,)),
    ("log", torch.log, (POS,)),
    ("sqrt", torch.sqrt, (POS,)),
    ("rsqrt", torch.rsqrt, (POS,)),
    ("abs", torch.abs, (A,)),
    ("reciprocal", torch.reciprocal, (POS,)),
    ("relu", torch.relu, (A,)),
    ("sigmoid", torch.sigmoid, (A,)),
    ("tanh", torch.tanh, (A,)),
    ("gelu", torch.nn.functional.gelu, (A,)),
    ("silu", torch.nn.functional.silu, (A,)),
    ("eq", lambda a, b: a == b, (A, A)),
    ("eq_scalar", lambda a: a == 0.0, (torch.relu(A),)),
    ("ne", lambda a, b: a != b, (A, B)),
    ("lt", lambda a, b: a < b, (A, B)),
    ("lt_scalar", lambda a: a < 0.5, (A,)),
    ("le", lambda a, b: a <= b, (A, B)),
    ("gt", lambda a, b: a > b, (A, B)),
    ("gt_scalar", lambda a: a > 0.5, (A,)),
    ("ge", lambda a, b: a >= b, (A, B)),
    ("where", lambda a, b: torch.where(a > b, a, b), (A, B)),
    ("sum_all", torch.sum, (A,)),
    ("sum_dim", lambda a: a.sum(dim=1), (A,)),
    ("sum_keepdim", lambda a: a.sum(dim=0, keepdim=True), (A,)),
    ("mean_all", torch.mean, (A,)),
    ("mean_dim", lambda a: a.mean(dim=-1), (A,)),
    ("amax", lambda a: a.amax(dim=1), (A,)),
    ("amin", lambda a: a.amin(dim=0), (A,)),
    ("softmax", lambda a: a.softmax(dim=-1), (A,)),
    ("log_softmax", lambda a: a.log_softmax(dim=1), (A,)),
    ("mm", torch.mm, (torch.randn(16, 24), torch.randn(24, 8))),
    ("bmm", torch.bmm, (torch.randn(3, 16, 24), torch.randn(3, 24, 8))),
    ("addmm", torch.addmm, (torch.randn(8), torch.randn(16, 24), torch.randn(24, 8))),
    ("linear", torch.nn.functional.linear, (torch.randn(4, 24), torch.randn(8, 24), torch.randn(8))),
]

# Half-precision inputs run the same kernels at lower precision: a subset covers them.
LOW_PRECISION = {"add", "mul_scalar", "exp", "relu", "sigmoid", "softmax", "sum_dim", "mm", "where"}
TOL = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float16: dict(atol=2e-3, rtol=2e-3),
       torch.bfloat16: dict(atol=2e-2, rtol=2e-2)}
MATMUL_TOL = {torch.float32: dict(atol=1e-4, rtol=1e-4)}

PARAMS = [pytest.param(name, fn, args, torch.float32, id=f"{name}-f32") for name, fn, args in CASES]
PARAMS += [pytest.param(name, fn, args, dtype, id=f"{name}-{str(dtype)[6:]}") for name, fn, args in CASES
           for dtype in (torch.float16, torch.bfloat16) if name in LOW_PRECISION]


@pytest.mark.parametrize("name, fn, args, dtype", PARAMS)
def test_matches_cpu(eager_stats, name, fn, args, dtype):
    args = [a.to(dtype) for a in args]
    expected = fn(*args)
    got = fn(*[a.npu() for a in args])
    assert got.device.type == "npu"
    tol = MATMUL_TOL.get(dtype, TOL[dtype]) if name in ("mm", "bmm", "addmm", "linear") else TOL[dtype]
    if expected.dtype == torch.bool:
        assert torch.equal(got.cpu(), expected)
    else:
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got.cpu(), expected, **tol)
    assert_no_fallback()
