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
    ("clamp_max_number", lambda a: a.clamp_max(0.5), (A,)),
    ("clamp_max_number_in_place", lambda a: a.clone().clamp_max_(0.5), (A,)),
    ("clamp_max_tensor_in_place", lambda a, b: a.clone().clamp_max_(b), (A, B)),
    ("clamp_min_number_out", lambda a: torch.clamp_min(a, 0.5, out=torch.empty_like(a)), (A,)),
    ("clamp_max_number_out", lambda a: torch.clamp_max(a, 0.5, out=torch.empty_like(a)), (A,)),
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


# Ops real model code reaches (issue 10): forward and input gradients vs CPU, in every float dtype.
IDX = torch.randint(0, 33, (6, 5), generator=torch.Generator().manual_seed(1))
MODEL_CASES = [
    ("cat", lambda a, b: torch.cat([a, b[:2]], 0), (A, B)),
    ("where", lambda a, b: torch.where(a > 0, a, b), (A, B)),
    ("all", lambda a: a + (a > -1).all(1, keepdim=True) + (a > -9).all(), (A,)),
    ("gather", lambda a: torch.gather(a, 1, IDX.to(a.device)), (A,)),
    ("hardswish_", lambda a: torch.nn.functional.hardswish(a * 1.0, inplace=True), (A,)),
    ("gelu_tanh", lambda a: torch.nn.functional.gelu(a * 3, approximate="tanh"), (A,)),
    # GPT-2's gelu_new; x ** 2 / 3 / -2 are products, as on the CPU (decompositions/powers.py)
    ("gelu_new", lambda a: 0.5 * a * (1 + torch.tanh(0.7978845608 * (a + 0.044715 * torch.pow(a, 3.0)))), (A,)),
    ("pow_products", lambda a: a ** 3 + a ** 2.0 + (a * 0.5 + 2) ** -2, (A,)),
    ("clamp_max", lambda a: a.clamp(max=0.3), (A,)),
    ("prod", lambda a: (a * 0.2 + 1).prod(1), (A,)),
    ("cumsum", lambda a: a.cumsum(1) + a.cumsum(0), (A,)),
    ("cumsum_int", lambda a: (a > 0).cumsum(1) * a, (A,)),
    ("mse_loss", lambda a, b: torch.nn.functional.mse_loss(a, b), (A, B)),
    ("topk", lambda a: a.topk(4, 1).values + a.topk(3, 0, largest=False).values.sum(), (A,)),
    ("sort", lambda a: a.sort(1, descending=True).values * a.sort(1)[1], (A,)),
    ("scatter_add", lambda a: torch.zeros(6, 33, device=a.device, dtype=a.dtype).scatter_add(1, IDX.to(a.device),
                                                                                              a[:, :5]), (A,)),
    ("scatter", lambda a: a.scatter(1, IDX.to(a.device), a[:, 5:10] * 2), (A,)),
]
MODEL_PARAMS = [pytest.param(fn, args, dtype, id=f"{name}-{str(dtype)[6:]}") for name, fn, args in MODEL_CASES
                for dtype in (torch.float32, torch.float16, torch.bfloat16)]
GRAD_TOL = {torch.float32: dict(atol=1e-4, rtol=1e-4), torch.float16: dict(atol=1e-2, rtol=1e-2),
            torch.bfloat16: dict(atol=5e-2, rtol=5e-2)}


@pytest.mark.parametrize("fn, args, dtype", MODEL_PARAMS)
def test_model_op_forward_backward_matches_cpu(eager_stats, fn, args, dtype):
    cpu = [a.to(dtype).requires_grad_() for a in args]
    npu = [a.to(dtype).npu().requires_grad_() for a in args]
    expected, got = fn(*cpu), fn(*npu)
    torch.testing.assert_close(got.cpu(), expected.detach(), **GRAD_TOL[dtype])
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(2)).to(dtype)
    expected_grads = torch.autograd.grad(expected, cpu, grad)
    got_grads = torch.autograd.grad(got, npu, grad.npu())
    for g, e in zip(got_grads, expected_grads):
        torch.testing.assert_close(g.cpu(), e, **GRAD_TOL[dtype])
    assert_no_fallback()


# Calls whose every result is empty from non-empty inputs: nothing to compute, so no kernel is built
# (torch-mlir's lowering of a zero-size result divided by it: SIGFPE in the compile worker).
EMPTY_RESULT_CASES = [
    ("repeat_0", lambda a: a.repeat(0, 2)),
    ("repeat_0d_0", lambda a: a[0, 0].repeat(0)),
    ("repeat_0_3d", lambda a: a.repeat(2, 0, 1)),
    ("narrow_copy_0", lambda a: a.narrow_copy(1, 3, 0)),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in EMPTY_RESULT_CASES])
def test_empty_result_of_non_empty_input(eager_stats, fn):
    expected, got = fn(A), fn(A.npu())
    assert got.device.type == "npu" and got.shape == expected.shape and got.dtype == expected.dtype
    stats = eager_stats()
    assert not any(row["fallback"] for row in stats.values()), stats
    torch.testing.assert_close((A.npu() + 1).cpu(), A + 1)  # the device and the workers still run


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_an_empty_result_is_keyed_by_the_numbers_that_made_it(dtype):
    # An empty arange's cache entry was keyed without its bounds: every later arange of the
    # dtype hit it and came back empty.
    for start, end, step in [(0, 0, 2), (0, 9, 2), (3, 3, 1), (1, 5, 1), (5, 0, -2)]:
        torch.testing.assert_close(torch.arange(start, end, step, dtype=dtype, device="npu").cpu(),
                                   torch.arange(start, end, step, dtype=dtype))


@pytest.mark.parametrize("k,dim", [(7, 0), (0, 0), (5, 1)])
def test_kthvalue_out_of_range_raises_as_on_cpu(k, dim):
    # Compiled, it returned zeros: the range check is the CPU kernel's, not the meta function's.
    x = torch.rand(5, 4)
    with pytest.raises(RuntimeError, match="k out of range.*ERR01001"):
        torch.kthvalue(x.npu(), k, dim)
    torch.testing.assert_close(torch.kthvalue(x.npu(), 3, 0).values.cpu(), torch.kthvalue(x, 3, 0).values)


def test_a_refusal_of_some_numbers_leaves_the_ops_other_calls_compiled(eager_stats):
    # arange(0, 5, 0) is refused by the plan (its meta function raises); keyed without its numbers,
    # the refusal sent every later arange of the dtype to the CPU (trace's backward among them).
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0, device="npu")
    torch.testing.assert_close(torch.arange(0, 23, 7, device="npu").cpu(), torch.arange(0, 23, 7))
    row = eager_stats()["aten::arange.start_step"]
    assert row["fallback"] == 1 and row["compiled"] == 1, row  # the refused call alone ran on the CPU


# Layer / group norm backwards with a masked-off gradient (a frozen or absent affine parameter, an
# input that needs no gradient): compiled, and every gradient autograd asks for matches the CPU.
NORM_CASES = [
    ("layer_norm", lambda x, w, b: torch.nn.functional.layer_norm(x, (33,), w, b)),
    ("layer_norm_no_affine", lambda x, w, b: torch.nn.functional.layer_norm(x, (33,)) * w),
    ("group_norm", lambda x, w, b: torch.nn.functional.group_norm(x.view(6, 3, 11), 3, w[:3], b[:3])),
    ("group_norm_no_affine", lambda x, w, b: torch.nn.functional.group_norm(x.view(6, 3, 11), 3).view(6, 33) * w),
]
NEEDS_GRAD = {"input_only": (True, False, False), "params_only": (False, True, True), "no_bias": (True, True, False)}


@pytest.mark.parametrize("needs", list(NEEDS_GRAD.values()), ids=list(NEEDS_GRAD))
@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in NORM_CASES])
def test_norm_backward_with_masked_gradients(eager_stats, fn, needs):
    args = (A, torch.randn(33, generator=torch.Generator().manual_seed(3)), ROW)
    cpu = [a.detach().clone().requires_grad_(n) for a, n in zip(args, needs)]
    npu = [a.detach().npu().requires_grad_(n) for a, n in zip(args, needs)]
    expected, got = fn(*cpu), fn(*npu)
    torch.testing.assert_close(got.cpu(), expected.detach(), **GRAD_TOL[torch.float32])
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(2))
    wanted = [i for i, n in enumerate(needs) if n]
    expected_grads = torch.autograd.grad(expected, [cpu[i] for i in wanted], grad, allow_unused=True)
    got_grads = torch.autograd.grad(got, [npu[i] for i in wanted], grad.npu(), allow_unused=True)
    for g, e in zip(got_grads, expected_grads):
        assert (g is None) == (e is None)
        if e is not None:
            torch.testing.assert_close(g.cpu(), e, **GRAD_TOL[torch.float32])
    assert_no_fallback()


# The norm backwards called directly: each returns what the CPU's kernel returns, None for every
# gradient output_mask leaves out (callers other than autograd test for it), a tensor of the CPU's
# dtype, shape and values for the others.
def _layer_norm_backward(dy, x, w, b, mask):
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [33], w, b, 1e-5)
    return torch.ops.aten.native_layer_norm_backward(dy, x, [33], mean, rstd, w, b, mask)


def _group_norm_backward(dy, x, w, b, mask):
    x, dy = x.view(6, 3, 11), dy.view(6, 3, 11)
    _, mean, rstd = torch.ops.aten.native_group_norm(x, w[:3], b[:3], 6, 3, 11, 3, 1e-5)
    return torch.ops.aten.native_group_norm_backward(dy, x, mean, rstd, w[:3], 6, 3, 11, 3, mask)


def _batch_norm_backward(train):
    def run(dy, x, w, b, mask):
        x, dy, w, b = x.view(6, 3, 11), dy.view(6, 3, 11), w[:3], b[:3]
        running_mean, running_var = b.detach().clone(), w.detach().abs() + 0.5
        _, save_mean, save_invstd = torch.ops.aten.native_batch_norm(x, w, b, running_mean, running_var, train,
                                                                     0.1, 1e-5)
        return torch.ops.aten.native_batch_norm_backward(dy, x, w, running_mean, running_var, save_mean, save_invstd,
                                                         train, 1e-5, mask)
    return run


NORM_BACKWARDS = [("layer_norm", _layer_norm_backward), ("group_norm", _group_norm_backward),
                  ("batch_norm_train", _batch_norm_backward(True)), ("batch_norm_eval", _batch_norm_backward(False))]
MASKS = {"input_only": [True, False, False], "params_only": [False, True, True], "no_bias": [True, True, False]}


@pytest.mark.parametrize("mask", list(MASKS.values()), ids=list(MASKS))
@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in NORM_BACKWARDS])
def test_norm_backward_returns_none_where_cpu_does(eager_stats, fn, mask):
    args = (B, A, torch.randn(33, generator=torch.Generator().manual_seed(3)), ROW)
    expected = fn(*args, mask)
    got = fn(*(a.npu() for a in args), mask)
    assert [g is None for g in got] == [e is None for e in expected] == [not m for m in mask]
    for g, e in zip(got, expected):
        if e is not None:
            torch.testing.assert_close(g.cpu(), e, check_stride=True, **GRAD_TOL[torch.float32])
    assert_no_fallback()
