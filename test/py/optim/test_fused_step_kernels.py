"""The per-chunk steps of torch.optim's fused Adam / AdamW / SGD and of torch_npu.optim's fused
optimizers (frontend/references/fused_optim.py) come out of the pipeline as one vector kernel over
every state - split over the cores by the simulator too, with AscendC - plus (Adam) two one-element
kernels for the bias corrections; the results a caller drops are empty (no kernel writes them)."""

from __future__ import annotations

import pytest
import torch
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend.references.fused_optim import (
    _npu_fused_adam_tensor_step,
    _npu_fused_adamp_moments,
    _npu_fused_bert_adam,
    _npu_fused_rmsprop,
    _npu_fused_sgd_tensor_step,
    _npu_lerp_scalar,
)
from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from npu_mlir.targets import launch_list
from npu_mlir.targets.sim.cache import cache_root

CHUNK = 65536  # csrc/aten/MultiTensorApply.h kChunkElements


def _scalar() -> torch.Tensor:
    return torch.tensor(0.9, dtype=torch.float64)


def _adam(scaled: bool, amsgrad: bool):
    def step(p, g, m, v, v_max, t, scale, found, zeros, lr, beta1, beta2, wd, eps):
        return _npu_fused_adam_tensor_step(p, g, m, v, v_max, t, scale, found, zeros, lr, beta1, beta2, wd, eps,
                                           amsgrad, False, True, scaled)
    chunks = [torch.randn(CHUNK) for _ in range(5)]
    return step, chunks + [torch.ones(()), torch.ones(()), torch.zeros(()), torch.zeros(CHUNK)] + \
        [_scalar() for _ in range(5)]


def _sgd(scaled: bool, first: bool):
    def step(p, g, buf, scale, found, zeros, wd, momentum, lr, dampening):
        return _npu_fused_sgd_tensor_step(p, g, buf, scale, found, zeros, wd, momentum, lr, dampening, False, False,
                                          first, True, scaled)
    return step, [torch.randn(CHUNK) for _ in range(3)] + [torch.ones(()), torch.zeros(()), torch.zeros(CHUNK)] + \
        [_scalar() for _ in range(4)]


def _bert_adam():
    return _npu_fused_bert_adam, [torch.randn(CHUNK) for _ in range(4)] + [torch.ones(())] + [_scalar() for _ in range(5)]


def _rmsprop_centered_momentum():
    def step(p, g, square_avg, grad_avg, buf, lr, alpha, eps, wd, momentum):
        return _npu_fused_rmsprop(p, g, square_avg, grad_avg, buf, lr, alpha, eps, wd, momentum, True, True, False,
                                  False, False)
    return step, [torch.randn(CHUNK) for _ in range(5)] + [_scalar() for _ in range(5)]


def _adamp_nesterov():
    def step(g, m, v, beta1, beta2, eps, bc2):
        return _npu_fused_adamp_moments(g, m, v, beta1, beta2, eps, bc2, True)
    return step, [torch.randn(CHUNK) for _ in range(3)] + [_scalar() for _ in range(4)]


def _lerp(large_weight: bool):
    def step(x, y, weight):
        return _npu_lerp_scalar(x, y, weight, large_weight)
    return step, [torch.randn(CHUNK) for _ in range(2)] + [_scalar()]


def _launches(fn, args: list[torch.Tensor]):
    text = str(import_fx_graph(fn, args).module)
    context = ir.Context()
    load_ascend(context)
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False, until="tile"))
        cache = cache_root() / "fused_step_kernels"
        cache.mkdir(parents=True, exist_ok=True)
        return launch_list.build(module, len(args), [None] * len(args), cache, results_may_alias_inputs=False)


# The float32 cases: a result is also what the update reads (the block split recomputes its slice there).
@pytest.mark.parametrize("case, dropped, n_launches", [
    ("adamw", (1, 4), 3),
    ("adamw_scaled_amsgrad", (), 3),
    ("sgd_first_step", (1,), 1),
    ("bert_adam", (), 1),
    ("rmsprop_centered_momentum", (), 2),  # and a one-element kernel: 1 - alpha, which two moments read
    ("adamp_nesterov", (), 1),
    ("lerp", (), 1),  # torch.optim foreach Adam's first moment
    ("lerp_large_weight", (), 1),
])
def test_step_is_one_split_vector_kernel_with_ascendc(case, dropped, n_launches):
    fn, args = {"adamw": _adam(False, False), "adamw_scaled_amsgrad": _adam(True, True),
                "sgd_first_step": _sgd(False, True), "bert_adam": _bert_adam(),
                "rmsprop_centered_momentum": _rmsprop_centered_momentum(), "adamp_nesterov": _adamp_nesterov(),
                "lerp": _lerp(False), "lerp_large_weight": _lerp(True)}[case]
    built = _launches(fn, args)
    assert len(built.launches) == n_launches, [k.symbol for k in built.launches]
    for launch in built.launches:
        assert launch.ascendc_error == "", launch.ascendc_error
    main = max(built.launches, key=lambda k: k.block_dim)
    assert main.block_dim > 1  # the simulator split it over the cores (each block's slice stays in cache)
    assert [k for k, (shape, _) in enumerate(built.outputs) if 0 in shape] == list(dropped)
