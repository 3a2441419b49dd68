"""torch_npu's custom ops (torch.ops.npu.*): numbers and gradients vs plain-torch CPU references,
one compiled kernel per call (forward and backward), bad arguments rejected with an ERR code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

import torch_npu
import torch_npu._C as _C
from npu_mlir.frontend import references as custom_ops
from torch_npu.ops import reference_kernels

from conftest import assert_no_fallback

# Half types round the output once; the references compute in float32 like the kernels do.
TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float16: dict(atol=2e-3, rtol=2e-3),
             torch.bfloat16: dict(atol=1.6e-2, rtol=1.6e-2)}
DTYPES = list(TOLERANCE)


def close(got: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype = torch.float32) -> None:
    assert got.device.type == "npu"
    torch.testing.assert_close(got.cpu(), expected, **TOLERANCE[dtype])


def assert_one_kernel_per_call(stats: dict, op: str, n_calls: int) -> None:
    row = stats.get(op)
    assert row is not None, f"{op} never reached the eager dispatcher: {sorted(stats)}"
    assert (row["compiled"], row["fallback"]) == (n_calls, 0), row


def assert_only_custom_kernels_ran(stats: dict) -> None:
    """Forward and backward were the fused kernels alone: no aten op ran a kernel of its own."""
    others = {op: row["compiled"] for op, row in stats.items() if row["compiled"] and not op.startswith("npu::")}
    assert not others, f"aten kernels ran besides the custom ops: {others}"


# ---------------------------------------------------------------- plumbing


def test_custom_ops_are_registered_in_the_npu_namespace():
    schema = str(torch.ops.npu.npu_swiglu.default._schema)
    assert schema == "npu::npu_swiglu(Tensor self, int dim=-1) -> Tensor"
    assert "npu_swiglu" in torch_npu.__all__ and torch_npu.npu_swiglu is torch_npu.ops.npu_swiglu


def _generator():
    path = Path(__file__).resolve().parents[3] / "python/torch_npu/csrc/aten/gen_native_registrations.py"
    spec = importlib.util.spec_from_file_location("gen_native_registrations", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_defines_custom_schemas_in_the_npu_library():
    gen = _generator()
    text = gen.render(gen.parse("supported:\n  - relu\ncustom:\n"
                                "  - npu_foo(Tensor self, str mode='a') -> (Tensor, Tensor)\n"
                                "  - npu_foo.bar(Tensor self) -> Tensor\n"))
    assert ("TORCH_LIBRARY(npu, m) {\n  m.def(\"npu_foo(Tensor self, str mode='a') -> (Tensor, Tensor)\");\n"
            "  m.def(\"npu_foo.bar(Tensor self) -> Tensor\");\n}") in text
    assert 'registerCompiled<at::_ops::relu>(m, "relu")' in text  # a one-Tensor op, registered unboxed
    assert "TORCH_LIBRARY_IMPL(npu" not in text  # public ops have hand-written kernels
    assert "TORCH_LIBRARY(npu" not in gen.render(gen.parse("supported:\n  - relu\ncustom:\n"))


def test_generator_gives_internal_custom_ops_the_compiled_kernel():
    gen = _generator()
    text = gen.render(gen.parse("custom:\n  - npu_foo(Tensor self) -> Tensor\n"
                                "  - _npu_foo_kernel.out2(Tensor self) -> (Tensor, Tensor)\n"))
    impls = text.split("TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {\n")[1].split("}")[0]
    assert impls.strip() == ('m.impl("_npu_foo_kernel.out2", '
                             'torch::CppFunction::makeFromBoxedFunction<&torch_npu::eager::compiledKernel>());')


@pytest.mark.parametrize("entries, message", [
    (["npu_foo"], "is not a schema"),
    (['npu_foo(str s="x") -> Tensor'], "is not a schema"),
    (["npu_foo(Tensor a) -> Tensor", "npu_foo(Tensor b) -> Tensor"], "duplicate custom ops: \\['npu_foo'\\]"),
])
def test_generator_rejects_bad_custom_entries(entries, message):
    gen = _generator()
    with pytest.raises(SystemExit, match=message):
        gen.render({"custom": entries})


def test_every_reference_has_its_op():
    for name in custom_ops.references():
        assert reference_kernels._overload(name) is not None, f"{name} has a reference but no schema in the yaml"


def test_reference_runs_on_cpu_with_autograd_and_on_meta():
    x = torch.randn(3, 8, requires_grad=True)
    a, b = x.detach().chunk(2, -1)
    y = torch_npu.npu_swiglu(x)
    torch.testing.assert_close(y, torch.nn.functional.silu(a) * b)
    y.sum().backward()
    xr = x.detach().requires_grad_()
    ar, br = xr.chunk(2, -1)
    (torch.nn.functional.silu(ar) * br).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad)
    assert torch.ops.npu.npu_swiglu(torch.empty(5, 4, 6, device="meta"), 1).shape == (5, 2, 6)


def test_a_call_the_compiler_rejects_runs_the_reference_on_cpu(monkeypatch, eager_stats):
    def rejected(self, dim=-1):
        raise NotImplementedError("no kernel for this call")

    monkeypatch.setitem(custom_ops._table, "npu_swiglu", rejected)  # what plan.py traces, not the CPU kernel
    x = torch.randn(3, 14)  # a shape no other test compiles: the rejection is remembered per key
    y = torch_npu.npu_swiglu(x.npu())
    close(y, swiglu_reference(x, -1))
    row = eager_stats()["npu::npu_swiglu"]
    assert (row["compiled"], row["fallback"]) == (0, 1), row
    assert "no kernel for this call" in row["fallback_reason"]
    _C._eager_clear_memory_cache()


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
    assert_only_custom_kernels_ran(stats)
    assert_no_fallback()


def test_swiglu_other_dim_and_hit_path(eager_stats):
    x = torch.randn(6, 10, 3)
    for _ in range(3):
        y = torch_npu.npu_swiglu(x.npu(), dim=0)
    close(y, swiglu_reference(x, 0))
    row = eager_stats()["npu::npu_swiglu"]
    assert (row["misses"], row["hits"], row["compiled"]) == (1, 2, 3), row


def test_swiglu_of_a_non_contiguous_input(eager_stats):
    x = torch.randn(8, 6)
    y = torch_npu.npu_swiglu(x.npu().t())  # strides (1, 6): the kernel reads them as given
    close(y, swiglu_reference(x.t(), -1))
    assert_no_fallback()


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


# ---------------------------------------------------------------- npu_rms_norm


def rms_norm_reference(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    rstd = torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return x * rstd * gamma, rstd


@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_forward_and_backward(dtype, eager_stats):
    x = torch.randn(3, 5, 32).to(dtype)
    gamma = torch.randn(32).to(dtype)
    dy = torch.randn(3, 5, 32).to(dtype)
    xn, gn = x.npu().requires_grad_(), gamma.npu().requires_grad_()
    y, rstd = torch_npu.npu_rms_norm(xn, gn, epsilon=1e-5)
    y.backward(dy.npu())
    xc, gc = x.float().requires_grad_(), gamma.float().requires_grad_()
    expected, expected_rstd = rms_norm_reference(xc, gc, 1e-5)
    expected.backward(dy.float())
    assert (y.dtype, rstd.dtype, rstd.shape) == (dtype, torch.float32, (3, 5, 1))
    close(y.detach(), expected.detach().to(dtype), dtype)
    close(rstd, expected_rstd.detach())
    close(xn.grad, xc.grad.to(dtype), dtype)
    assert gn.grad.dtype == dtype
    close(gn.grad, gc.grad.to(dtype), dtype)
    stats = eager_stats()
    assert_one_kernel_per_call(stats, "npu::npu_rms_norm", 1)
    assert_one_kernel_per_call(stats, "npu::npu_rms_norm_backward", 1)
    assert_only_custom_kernels_ran(stats)
    assert_no_fallback()


def test_rms_norm_over_two_dims_epsilon_is_a_parameter(eager_stats):
    x = torch.randn(2, 4, 8) * 0.01  # small enough that epsilon shows in the result
    gamma = torch.randn(4, 8)
    for eps in (1e-6, 1e-3):
        y, rstd = torch_npu.npu_rms_norm(x.npu(), gamma.npu(), eps)
        expected, expected_rstd = rms_norm_reference(x, gamma, eps)
        close(y, expected)
        close(rstd, expected_rstd, torch.float16)  # rsqrt of a mean: a few float32 ulps
    assert rstd.shape == (2, 1, 1)
    row = eager_stats()["npu::npu_rms_norm"]
    # A new epsilon reuses the kernel: it is a kernel argument, not compiled in.
    assert (row["misses"], row["hits"], row["compiled"]) == (1, 1, 2), row


@pytest.mark.parametrize("make, message", [
    (lambda: torch_npu.npu_rms_norm(torch.randn(2, 4).npu(), torch.randn(5).npu()),
     r"npu_rms_norm: gamma has shape \[5\], expected the last dims of self \[4\]"),
    (lambda: torch_npu.npu_rms_norm(torch.randn(2, 4).npu(), torch.randn(4).half().npu()),
     "npu_rms_norm: gamma has dtype Half, expected Float"),
    (lambda: torch_npu.npu_rms_norm(torch.randn(2, 4).npu(), torch.randn(4)),
     r"npu_rms_norm: gamma is on cpu; move it to the NPU with \.npu\(\)"),
    (lambda: torch_npu.npu_rms_norm(torch.randn(2, 4).double().npu(), torch.randn(4).double().npu()),
     "npu_rms_norm: self has dtype Double"),
    (lambda: torch.ops.npu.npu_rms_norm_backward(torch.randn(2, 4).npu(), torch.randn(2, 4).npu(),
                                                 torch.randn(4).npu(), torch.randn(2, 4).npu()),
     r"npu_rms_norm_backward: rstd has shape \[2, 4\], expected \[2, 1\]"),
])
def test_rms_norm_rejects_bad_arguments(make, message):
    with pytest.raises(RuntimeError, match=message) as err:
        make()
    assert "ERR0100" in str(err.value)


# ---------------------------------------------------------------- npu_rotary_mul


def rotary_reference(x: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, mode: str) -> torch.Tensor:
    if mode == "half":
        x1, x2 = torch.chunk(x, 2, -1)
        rotated = torch.cat((-x2, x1), dim=-1)
    else:
        rotated = torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).reshape(x.shape)
    return x * r1 + rotated * r2


@pytest.mark.parametrize("dtype, mode", [(torch.float32, "half"), (torch.float16, "half"),
                                         (torch.bfloat16, "half"), (torch.float32, "interleave")])
def test_rotary_mul_forward_and_backward(dtype, mode, eager_stats):
    # BSND activations with [1, S, 1, D] cos / sin, as attention layers call it.
    x = torch.randn(2, 6, 3, 16).to(dtype)
    r1, r2 = torch.randn(1, 6, 1, 16).to(dtype), torch.randn(1, 6, 1, 16).to(dtype)
    grad = torch.randn(2, 6, 3, 16).to(dtype)
    leaves = [t.npu().requires_grad_() for t in (x, r1, r2)]
    y = torch_npu.npu_rotary_mul(*leaves, rotary_mode=mode)
    y.backward(grad.npu())
    cpu_leaves = [t.float().requires_grad_() for t in (x, r1, r2)]
    expected = rotary_reference(*cpu_leaves, mode)
    expected.backward(grad.float())
    close(y.detach(), expected.detach().to(dtype), dtype)
    for got, want in zip(leaves, cpu_leaves):
        assert got.grad.shape == want.shape
        close(got.grad, want.grad.to(dtype), dtype)
    stats = eager_stats()
    assert_one_kernel_per_call(stats, "npu::npu_rotary_mul", 1)
    assert_one_kernel_per_call(stats, "npu::npu_rotary_mul_backward", 1)
    assert_only_custom_kernels_ran(stats)
    assert_no_fallback()


@pytest.mark.parametrize("make, message", [
    (lambda: torch_npu.npu_rotary_mul(torch.randn(2, 4).npu(), torch.randn(4).npu(), torch.randn(4).npu(), "quarter"),
     "npu_rotary_mul: rotary_mode is 'quarter'; expected 'half' or 'interleave'"),
    (lambda: torch_npu.npu_rotary_mul(torch.randn(2, 5).npu(), torch.randn(5).npu(), torch.randn(5).npu()),
     "npu_rotary_mul: self has shape .*its last dim must be even"),
    (lambda: torch_npu.npu_rotary_mul(torch.randn(2, 4).npu(), torch.randn(3, 4).npu(), torch.randn(4).npu()),
     r"npu_rotary_mul: r1 has shape \[3, 4\], which does not broadcast to self's shape \[2, 4\]"),
    (lambda: torch_npu.npu_rotary_mul(torch.randn(2, 4).npu(), torch.randn(4).npu(), torch.randn(4).half().npu()),
     "npu_rotary_mul: r2 has dtype Half, expected Float"),
])
def test_rotary_mul_rejects_bad_arguments(make, message):
    with pytest.raises(RuntimeError, match=message) as err:
        make()
    assert "ERR0100" in str(err.value)
