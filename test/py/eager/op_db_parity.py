"""Run one PyTorch OpInfo (op_db entry) on npu and on the CPU, and say whether npu matched natively.

An op passes when, for each checked dtype, its first SAMPLES sample inputs (LOW_PRECISION_SAMPLES
in float16/bfloat16; without empty tensors) give the CPU's results (forward, and input gradients
where the op is differentiable) with zero calls through the CPU fallback. Shared by test_op_db.py (the ops that pass) and bench/op_coverage.py (how many pass).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import torch
from torch.utils._pytree import tree_flatten, tree_map

import torch_npu  # noqa: F401

SAMPLES = 3
# float16/bfloat16 run the float32 kernels' structure at lower precision: one sample keeps make test
# within its time budget as the list grows.
LOW_PRECISION_SAMPLES = 1
LOW_PRECISION = (torch.float16, torch.bfloat16)
TOL = {torch.float32: dict(atol=1e-4, rtol=1e-4), torch.float16: dict(atol=1e-2, rtol=1e-2),
       torch.bfloat16: dict(atol=5e-2, rtol=5e-2)}


@dataclass
class Outcome:
    passed: bool
    reason: str = ""
    fallbacks: dict[str, int] = field(default_factory=dict)
    compiled: list[str] = field(default_factory=list)  # aten ops that ran compiled kernels


def op_id(info: Any) -> str:
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


def _to(device: str, value: Any) -> Any:
    def move(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            moved = x.detach().to(device)
            return moved.requires_grad_(x.requires_grad)
        return x
    return tree_map(move, value)


def _float_leaves(value: Any) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(value)
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.is_floating_point()]


def _on_device(kwargs: dict, device: str) -> dict:
    # Factory samples name the CPU as their device: on npu the op is asked to create npu tensors.
    if "device" in kwargs and device != "cpu":
        kwargs = dict(kwargs, device=device)
    return kwargs


def _run(info: Any, sample: Any, device: str, grad: bool) -> tuple[Any, list]:
    inp, args, kwargs = _to(device, (sample.input, sample.args, sample.kwargs))
    kwargs = _on_device(kwargs, device)
    out = info.op(inp, *args, **kwargs)
    if not grad:
        return out, []
    leaves = [t for t in _float_leaves((inp, args, kwargs)) if t.requires_grad]
    outs = [o for o in _float_leaves(out) if o.requires_grad]
    if not leaves or not outs:
        return out, []
    # Fixed pseudo-random output gradients: ones would hide errors that cancel in a plain sum.
    gen = torch.Generator().manual_seed(7)
    grads = [torch.randn(o.shape, generator=gen, dtype=o.dtype).to(device) for o in outs]
    return out, list(torch.autograd.grad(outs, leaves, grads, allow_unused=True))


def _compare(npu: Any, cpu: Any, dtype: torch.dtype) -> None:
    torch.testing.assert_close(_to("cpu", npu), cpu, equal_nan=True, **TOL.get(dtype, {}))


def _has_empty(sample: Any) -> bool:
    # The eager dispatcher runs calls on empty tensors through the CPU fallback on purpose: there is
    # no work for a kernel. Such samples say nothing about compiled kernels, so they are skipped.
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return any(isinstance(t, torch.Tensor) and t.numel() == 0 for t in leaves)


def _ran_on_npu(sample: Any, npu_out: Any) -> bool:
    """Whether the npu run computed on npu (else it would compare the CPU with itself)."""
    results = [t for t in tree_flatten(npu_out)[0] if isinstance(t, torch.Tensor)]
    if results:
        return any(t.device.type == "npu" for t in results)
    # A Python result (item, equal, allclose) read from npu inputs.
    inputs, _ = tree_flatten((sample.input, sample.args, sample.kwargs))
    return any(isinstance(t, torch.Tensor) for t in inputs)


def _philox_calls() -> int:
    """Calls so far of the npu's random-number kernels (every npu draw runs one of them)."""
    return sum(row["compiled"] + row["fallback"] for op, row in torch.npu.eager_stats().items()
               if op.startswith("npu::_npu_philox_"))


# A sample that draws random numbers is run this many times on each device for its distribution.
RANDOM_DRAWS = 16
# Two-sample Kolmogorov-Smirnov bound at significance 1e-4: sqrt(-ln(1e-4 / 2) / 2).
KS_COEFFICIENT = 2.23


def _drawn(value: Any) -> torch.Tensor:
    """Every number of a result, as one float64 CPU vector."""
    leaves = [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]
    return torch.cat([t.detach().cpu().to(torch.float64).reshape(-1) for t in leaves])


def _ks_statistic(a: torch.Tensor, b: torch.Tensor) -> float:
    """sup |F_a - F_b| of the two samples' empirical distribution functions (ties counted as one step)."""
    a, b = a.sort().values, b.sort().values
    points = torch.cat([a, b])
    fa = torch.searchsorted(a, points, right=True).to(torch.float64) / a.numel()
    fb = torch.searchsorted(b, points, right=True).to(torch.float64) / b.numel()
    return float((fa - fb).abs().max())


def _draws(info: Any, sample: Any, device: str, seed: int, runs: int) -> torch.Tensor:
    """The numbers of `runs` runs of the sample, the k-th under its own seed from `seed` on. op_db's
    random ops reseed every call with 42 (wrapper_set_seed, which also restores the CPU's generator
    after it): torch.manual_seed hands out the next seed of the sequence instead."""
    real_seed = torch.manual_seed
    seeds = itertools.count(seed)
    numbers = []
    with mock.patch.object(torch, "manual_seed", lambda _ignored: real_seed(next(seeds))):
        for _ in range(runs):
            torch.manual_seed(0)  # for ops op_db does not wrap (dropout)
            numbers.append(_drawn(_run(info, sample, device, False)[0]))
    return torch.cat(numbers)


def _check_random(info: Any, sample: Any, cpu_out: Any, npu_out: Any, distribution: bool) -> None:
    """A sample that draws on npu, checked as PyTorch checks CUDA's random ops (its Philox stream is
    not the CPU's mt19937, so values cannot be compared): results shaped and typed as the CPU's, the
    same draws again after the same seed, and (if `distribution`) the distribution of RANDOM_DRAWS
    runs indistinguishable from the CPU's by a two-sample Kolmogorov-Smirnov test. The draws run no
    backward."""
    cpu_leaves = [t for t in tree_flatten(cpu_out)[0] if isinstance(t, torch.Tensor)]
    npu_leaves = [t for t in tree_flatten(npu_out)[0] if isinstance(t, torch.Tensor)]
    assert [(t.shape, t.dtype) for t in npu_leaves] == [(t.shape, t.dtype) for t in cpu_leaves]
    assert all(t.device.type == "npu" for t in npu_leaves), "a random result is not on npu"
    first, again = _draws(info, sample, "npu", 7, 2), _draws(info, sample, "npu", 7, 2)
    torch.testing.assert_close(again, first, rtol=0, atol=0, equal_nan=True, msg="the same seed drew other numbers")
    if not distribution:
        return
    cpu = _draws(info, sample, "cpu", 100, RANDOM_DRAWS)
    npu = _draws(info, sample, "npu", 100, RANDOM_DRAWS)
    bound = KS_COEFFICIENT * ((cpu.numel() + npu.numel()) / (cpu.numel() * npu.numel())) ** 0.5
    statistic = _ks_statistic(npu, cpu)
    assert statistic < bound, f"npu draws are not distributed as the CPU's: KS statistic {statistic:.3f} >= {bound:.3f}"


def check_dtype(info: Any, dtype: torch.dtype) -> None:
    """Raise AssertionError (or the op's error) unless the first samples match the CPU in dtype.

    A sample that draws random numbers on npu (the random ops, dropout, scaled_dot_product_attention
    with dropout_p > 0) cannot give the CPU's bits even after op_db's wrapper_set_seed: the npu
    generator is a Philox counter like CUDA's, not the CPU's mt19937 (PyTorch skips test_compare_cpu
    for these ops for that reason). It is checked by _check_random instead.
    """
    grad = info.supports_autograd and dtype == torch.float32
    limit = SAMPLES if dtype == torch.float32 else LOW_PRECISION_SAMPLES
    samples = [s for s in info.sample_inputs("cpu", dtype, requires_grad=grad) if not _has_empty(s)][:limit]
    if not samples:
        raise AssertionError(f"no sample inputs for {dtype}")
    # One distribution test per op, in float32, keeps the suite's time (each costs 2 x RANDOM_DRAWS runs);
    # float16 / bfloat16 draws run the same kernels' structure.
    tested_distribution = dtype != torch.float32
    for sample in samples:
        cpu_out, cpu_grads = _run(info, sample, "cpu", grad)
        draws = _philox_calls()
        npu_out, npu_grads = _run(info, sample, "npu", grad)
        if not _ran_on_npu(sample, npu_out):
            raise AssertionError("no result on npu")
        if _philox_calls() != draws:
            _check_random(info, sample, cpu_out, npu_out, distribution=not tested_distribution)
            tested_distribution = True
            continue
        _compare(npu_out, cpu_out, dtype)
        _compare(npu_grads, cpu_grads, dtype)


def dtypes_of(info: Any) -> list[torch.dtype]:
    supported = info.supported_dtypes("cpu")
    return [d for d in (torch.float32, *LOW_PRECISION) if d in supported]


def check(info: Any) -> dict[torch.dtype, Outcome]:
    """The outcome per dtype of dtypes_of(info), with the fallback calls seen on the way."""
    outcomes = {}
    for dtype in dtypes_of(info):
        torch.npu.reset_eager_stats()
        try:
            check_dtype(info, dtype)
        except Exception as err:  # any failure of the op (numbers, errors) means it does not pass
            text = str(err).strip()
            outcomes[dtype] = Outcome(False, f"{type(err).__name__}: {text.splitlines()[0][:200] if text else ''}",
                                      _fallbacks(), _compiled())
            continue
        fallbacks = _fallbacks()
        outcomes[dtype] = Outcome(not fallbacks, "fallback calls" if fallbacks else "", fallbacks, _compiled())
    return outcomes


def _compiled() -> list[str]:
    return sorted(op for op, row in torch.npu.eager_stats().items() if row["compiled"])


def _fallbacks() -> dict[str, int]:
    return {op: row["fallback"] for op, row in torch.npu.eager_stats().items() if row["fallback"]}
