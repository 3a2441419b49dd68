"""torch's foreach ops on npu tensors: one multi-tensor launch per device and dtype group
(csrc/aten/ForeachOps.cpp), every list element written as on the CPU, including a tensor longer
than one chunk with a tail, a float16 group beside a float32 one, and a non-contiguous element
(which runs through its per-tensor op); lerp_.Scalar through npu::_npu_lerp_scalar."""

from __future__ import annotations

import pytest
import torch

# (the call, its CPU twin's arguments are the same); each writes `xs` or returns a list.
CALLS = {
    "add_.List": lambda xs, ys, zs: torch._foreach_add_(xs, ys, alpha=0.5),
    "mul_.Scalar": lambda xs, ys, zs: torch._foreach_mul_(xs, 0.75),
    "div_.ScalarList": lambda xs, ys, zs: torch._foreach_div_(xs, [1.5 + i for i in range(len(xs))]),
    "lerp_.Scalar": lambda xs, ys, zs: torch._foreach_lerp_(xs, ys, 0.1),
    "addcmul_.Scalar": lambda xs, ys, zs: torch._foreach_addcmul_(xs, ys, zs, value=0.3),
    "addcdiv_.ScalarList": lambda xs, ys, zs: torch._foreach_addcdiv_(xs, ys, zs, [0.5 * (i + 1) for i in range(len(xs))]),
    "maximum_.List": lambda xs, ys, zs: torch._foreach_maximum_(xs, ys),
    "sqrt": lambda xs, ys, zs: torch._foreach_sqrt([x.abs() for x in xs]),
    "add.List": lambda xs, ys, zs: torch._foreach_add(xs, ys, alpha=-2.0),
    "mul.Scalar": lambda xs, ys, zs: torch._foreach_mul(xs, -3.0),
}
SHAPES = [(3, 5), (15,), (5, 3)]  # one chunk length: one compile per op


def _lists(device: str, dtype: torch.dtype, shapes=SHAPES) -> tuple[list, list, list]:
    gen = torch.Generator().manual_seed(1)
    make = lambda: [(torch.rand(s, generator=gen) + 0.5).to(dtype).to(device) for s in shapes]  # noqa: E731
    return make(), make(), make()


def _close(got: list, want: list, dtype: torch.dtype) -> None:
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w, **tol)


@pytest.mark.parametrize("name", CALLS)
def test_foreach_matches_cpu_in_one_launch(no_fallback, name):
    results = {}
    for device in ("npu", "cpu"):
        lists = _lists(device, torch.float32)
        out = CALLS[name](*lists)
        results[device] = (lists, out)
    (npu_lists, npu_out), (cpu_lists, cpu_out) = results["npu"], results["cpu"]
    for got, want in zip(npu_lists, cpu_lists):  # every argument, written or not
        _close(got, want, torch.float32)
    if cpu_out is not None:
        _close(npu_out, cpu_out, torch.float32)
    stats = no_fallback()
    assert stats[f"aten::_foreach_{name}"]["compiled"] == 1  # one launch for the three tensors
    per_tensor = [op for op, row in stats.items() if row["compiled"] and "_foreach_" not in op and "abs" not in op]
    assert not per_tensor, f"per-tensor launches: {per_tensor}"


def test_chunks_tails_dtype_groups_and_a_strided_element(no_fallback):
    shapes = [(70000,), (4464,)]  # 70000 = one 65536-element chunk + a 4464-element tail
    results = {}
    for device in ("npu", "cpu"):
        xs, ys, _ = _lists(device, torch.float32, shapes)
        hs, gs, _ = _lists(device, torch.float16, [(3, 5), (15,)])
        strided = torch.arange(12.0, device=device).reshape(3, 4).t()  # not contiguous: its own launch
        xs_all, ys_all = xs + hs + [strided], ys + gs + [torch.ones(4, 3, device=device)]
        torch._foreach_add_(xs_all, ys_all, alpha=0.25)
        results[device] = xs_all
    for got, want in zip(results["npu"], results["cpu"]):
        _close([got], [want], got.dtype)
    stats = no_fallback()
    assert stats["aten::_foreach_add_.List"]["compiled"] == 2  # a float32 and a float16 launch
    assert stats["aten::add_.Tensor"]["compiled"] == 1  # the strided element


def test_mismatched_lists_raise_torchs_message():
    xs, ys, _ = _lists("npu", torch.float32)
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors, got 3 and 2"):
        torch._foreach_add_(xs, ys[:2])
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        torch._foreach_mul_(xs, [1.0, 2.0])
    torch._foreach_mul_(xs, 2.0)  # the device stays usable
    torch.npu.synchronize()


def test_lerp_scalar_takes_torchs_formula_for_the_weight(no_fallback):
    # aten's lerp: self + w * (end - self) for |w| < 0.5, end - (end - self) * (1 - w) otherwise (npu: each a
    # compiled-in formula of one split vector kernel); float16 computes in float32, as on the CPU.
    for weight in (0.1, 0.7):
        results = {}
        for device in ("npu", "cpu"):
            xs, ys, _ = _lists(device, torch.float32)
            hs, gs, _ = _lists(device, torch.float16)
            torch._foreach_lerp_(xs + hs, ys + gs, weight)
            results[device] = xs + hs
        for got, want in zip(results["npu"], results["cpu"]):
            _close([got], [want], got.dtype)
    stats = no_fallback()
    assert stats["aten::_foreach_lerp_.Scalar"]["compiled"] == 4  # a float32 and a float16 launch per call
