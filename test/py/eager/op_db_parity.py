"""Run one PyTorch OpInfo (op_db entry) on npu and on the CPU, and say whether npu matched natively.

An op passes when, for each checked dtype, its first SAMPLES sample inputs (LOW_PRECISION_SAMPLES
in float16/bfloat16; without empty tensors) give the CPU's results (forward, and input gradients
where the op is differentiable) with zero calls through the CPU fallback. Shared by test_op_db.py (the ops that pass) and bench/op_coverage.py (how many pass).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


def check_dtype(info: Any, dtype: torch.dtype) -> None:
    """Raise AssertionError (or the op's error) unless the first samples match the CPU in dtype.

    A sample that draws random numbers on npu (scaled_dot_product_attention with dropout_p > 0)
    cannot give the CPU's bits even after op_db's wrapper_set_seed: the npu generator is a Philox
    counter like CUDA's, not the CPU's mt19937 (PyTorch skips test_compare_cpu for these ops for
    that reason). Such samples are skipped, up to twice the limit, and at least one deterministic
    sample must be compared.
    """
    grad = info.supports_autograd and dtype == torch.float32
    limit = SAMPLES if dtype == torch.float32 else LOW_PRECISION_SAMPLES
    samples = [s for s in info.sample_inputs("cpu", dtype, requires_grad=grad) if not _has_empty(s)][:2 * limit]
    if not samples:
        raise AssertionError(f"no sample inputs for {dtype}")
    compared = 0
    for sample in samples:
        cpu_out, cpu_grads = _run(info, sample, "cpu", grad)
        draws = _philox_calls()
        npu_out, npu_grads = _run(info, sample, "npu", grad)
        if not _ran_on_npu(sample, npu_out):
            raise AssertionError("no result on npu")
        if _philox_calls() != draws:
            continue
        _compare(npu_out, cpu_out, dtype)
        _compare(npu_grads, cpu_grads, dtype)
        compared += 1
        if compared == limit:
            return
    if not compared:
        raise AssertionError(f"every sample of the first {len(samples)} draws random numbers on npu; "
                             "its Philox stream is not the CPU's, so none can be compared")


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
